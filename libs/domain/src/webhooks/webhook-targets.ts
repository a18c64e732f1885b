import { MAX_WEBHOOK_URL_LENGTH } from '@rsd/contracts';
import ipaddr from 'ipaddr.js';

/**
 * Decision 28: where a webhook may be sent. The URL is checked when a subscription is created; every
 * address its host resolves to is checked at creation and again before each attempt (DNS rebinding).
 * Reasons are written for the caller's error message: they name the kind of address, never the
 * address a name resolved to.
 */
export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (development and tests): also http, and loopback and private addresses. */
  allowPrivate: boolean;
}

export type TargetUrlCheck =
  | {
      outcome: 'allowed';
      /** The URL as WHATWG normalizes it (lower-case host, IPv4 in dotted decimal, default port dropped). */
      href: string;
      /** What to resolve and to send as Host and SNI; an IPv6 literal without its brackets. */
      hostname: string;
      port: number;
      /** The host is an address literal, already checked: nothing to resolve. */
      isAddressLiteral: boolean;
    }
  | { outcome: 'refused'; reason: string };

export type TargetAddressCheck = { outcome: 'allowed' } | { outcome: 'refused'; reason: string };

/** Allowed with `allowPrivate`; refused otherwise. */
const PRIVATE_KINDS = {
  loopback: 'a loopback address',
  private: 'a private network address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a private network address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  deprecatedSiteLocal: 'a private network address',
} as const;

/** Never useful as a target, whatever the policy. */
const NOT_A_TARGET = 'an address that cannot receive webhooks';
const CLOUD_METADATA = 'a cloud metadata address';

/** Instance metadata: AWS, GCP and Azure (IPv4), AWS over IPv6, Alibaba Cloud. Refused even with `allowPrivate`. */
const METADATA_ADDRESSES = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((text) => ipaddr.parse(text));

/** RFC 6052's well-known NAT64 prefix: on an IPv6-only network DNS64 answers with it, so the IPv4 address inside decides. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
/** IANA's global unicast space: everything else in IPv6 is reserved, local or special. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

export function checkTargetUrl(text: string, policy: TargetPolicy): TargetUrlCheck {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return refused(`the URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`);
  const url = URL.parse(text);
  if (!url) return refused('the URL is not a valid absolute URL');
  if (url.protocol !== 'https:' && !(policy.allowPrivate && url.protocol === 'http:')) {
    return refused(policy.allowPrivate ? 'the URL must use https or http' : 'the URL must use https');
  }
  if (url.username !== '' || url.password !== '') return refused('the URL must not contain credentials');
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const isAddressLiteral = ipaddr.IPv6.isValid(literal) || ipaddr.IPv4.isValidFourPartDecimal(literal);
  if (isAddressLiteral) {
    const address = checkTargetAddress(literal, policy);
    if (address.outcome === 'refused') return address;
  } else if (!policy.allowPrivate && isLoopbackName(literal)) {
    return refused('the URL names the local host');
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { outcome: 'allowed', href: url.href, hostname: literal, port, isAddressLiteral };
}

/**
 * One resolved address (or an address literal). Only public unicast is allowed without
 * `allowPrivate`; an IPv4 address carried in IPv6 (mapped, or behind the NAT64 well-known prefix) is
 * judged as the IPv4 address it reaches.
 */
export function checkTargetAddress(text: string, policy: TargetPolicy): TargetAddressCheck {
  if (!ipaddr.isValid(text)) return refused('the target is not an IP address');
  const address = embeddedIPv4(ipaddr.parse(text));
  if (METADATA_ADDRESSES.some((metadata) => sameAddress(address, metadata))) return refusedAs(CLOUD_METADATA);
  const range = rangeOf(address);
  if (range === 'unicast') return { outcome: 'allowed' };
  if (isPrivateKind(range)) return policy.allowPrivate ? { outcome: 'allowed' } : refusedAs(PRIVATE_KINDS[range]);
  return refusedAs(NOT_A_TARGET);
}

/** ipaddr.js's range name, with IPv6 outside 2000::/3 reported as reserved (ipaddr.js calls `::7f00:1` unicast). */
function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = address.range();
  if (address.kind() === 'ipv6' && range === 'unicast' && !address.match(GLOBAL_UNICAST_V6)) return 'reserved';
  return range;
}

function embeddedIPv4(address: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  if (address.kind() === 'ipv4') return address;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  if (v6.match(NAT64_WELL_KNOWN)) {
    const bytes = v6.toByteArray().slice(12);
    return new ipaddr.IPv4(bytes);
  }
  return v6;
}

function sameAddress(a: ipaddr.IPv4 | ipaddr.IPv6, b: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

function isPrivateKind(range: string): range is keyof typeof PRIVATE_KINDS {
  return Object.hasOwn(PRIVATE_KINDS, range);
}

/** RFC 6761: `localhost` and its subdomains always resolve to loopback. */
function isLoopbackName(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name === 'localhost' || name.endsWith('.localhost');
}

function refused(reason: string): { outcome: 'refused'; reason: string } {
  return { outcome: 'refused', reason };
}

function refusedAs(kind: string): { outcome: 'refused'; reason: string } {
  return refused(`the target is ${kind}`);
}
