import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;
export type AddressRange = [Address, number];

/**
 * A CIDR range or a single address (taken as /32 or /128). IPv4 must be written in four-part
 * decimal, so an operator's typo is rejected instead of read as some other address.
 */
export function parseAddressRange(text: string): AddressRange | undefined {
  const cidr = text.includes('/');
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return [ipaddr.IPv4.parse(text), 32];
  if (cidr && ipaddr.IPv4.isValidCIDRFourPartDecimal(text)) return ipaddr.IPv4.parseCIDR(text);
  if (!cidr && ipaddr.IPv6.isValid(text)) return asIPv4IfMapped([ipaddr.IPv6.parse(text), 128]);
  if (cidr && ipaddr.IPv6.isValidCIDR(text)) return asIPv4IfMapped(ipaddr.IPv6.parseCIDR(text));
  return undefined;
}

/** The caller's address with IPv4-mapped IPv6 (`::ffff:10.0.0.1`) read as the IPv4 address it carries. */
export function parseClientAddress(ip: string | undefined): Address | undefined {
  if (ip === undefined || !ipaddr.isValid(ip)) return undefined;
  return ipaddr.process(ip);
}

export function inAnyRange(address: Address, ranges: readonly AddressRange[]): boolean {
  return ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}

/** Client addresses are compared in IPv4 form, so a mapped range must be too. */
function asIPv4IfMapped([network, bits]: [ipaddr.IPv6, number]): AddressRange {
  if (network.isIPv4MappedAddress() && bits >= 96) return [network.toIPv4Address(), bits - 96];
  return [network, bits];
}

/**
 * Decision 22: an authorization's allow list. None (null) allows every address; with one, an
 * address that cannot be read is refused, like the edge policy's lists.
 */
export function addressAllowed(allowedCidrs: readonly string[] | null | undefined, clientIp: string | undefined): boolean {
  if (!allowedCidrs) return true;
  const address = parseClientAddress(clientIp);
  if (!address) return false;
  return inAnyRange(
    address,
    allowedCidrs.map(parseAddressRange).filter((range): range is AddressRange => range !== undefined),
  );
}
