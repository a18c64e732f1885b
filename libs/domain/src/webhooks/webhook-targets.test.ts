import { checkTargetAddress, checkTargetUrl } from './webhook-targets';

const strict = { allowPrivate: false };
const development = { allowPrivate: true };

describe('checkTargetAddress (decision 28)', () => {
  test.each([
    ['a public IPv4 address', '93.184.215.14'],
    ['a public IPv4 address next to a private range', '172.32.0.1'],
    ['a public IPv6 address', '2606:4700:4700::1111'],
    ['a public IPv4 address mapped into IPv6', '::ffff:93.184.215.14'],
    ['a public IPv4 address behind the NAT64 well-known prefix', '64:ff9b::5db8:d70e'],
  ])('when the address is %s, then it is allowed', (_case, address) => {
    expect(checkTargetAddress(address, strict)).toEqual({ outcome: 'allowed' });
  });

  test.each([
    ['IPv4 loopback', '127.0.0.1', 'a loopback address'],
    ['IPv4 loopback elsewhere in 127/8', '127.255.0.9', 'a loopback address'],
    ['IPv6 loopback', '::1', 'a loopback address'],
    ['private 10/8', '10.1.2.3', 'a private network address'],
    ['private 172.16/12', '172.31.255.255', 'a private network address'],
    ['private 192.168/16', '192.168.0.10', 'a private network address'],
    ['IPv4 link-local', '169.254.10.20', 'a link-local address'],
    ['IPv6 link-local', 'fe80::1', 'a link-local address'],
    ['IPv6 unique-local', 'fd12:3456::1', 'a private network address'],
    ['IPv6 site-local (deprecated)', 'fec0::1', 'a private network address'],
    ['carrier-grade NAT 100.64/10', '100.64.0.1', 'a shared (carrier-grade NAT) address'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1', 'a loopback address'],
    ['IPv4-mapped private, in hexadecimal form', '::ffff:a00:1', 'a private network address'],
    ['IPv4-mapped CGNAT', '::ffff:100.127.0.1', 'a shared (carrier-grade NAT) address'],
    ['NAT64 of a private address', '64:ff9b::10.0.0.1', 'a private network address'],
    ['NAT64 of loopback', '64:ff9b::7f00:1', 'a loopback address'],
  ])('when the address is %s, then it is refused without the flag and allowed with it', (_case, address, kind) => {
    expect(checkTargetAddress(address, strict)).toEqual({ outcome: 'refused', reason: `the target is ${kind}` });
    expect(checkTargetAddress(address, development)).toEqual({ outcome: 'allowed' });
  });

  const METADATA = 'a cloud metadata address';
  const UNREACHABLE = 'an address that cannot receive webhooks';
  test.each([
    ['the IPv4 cloud metadata address', '169.254.169.254', METADATA],
    ['the IPv4 cloud metadata address mapped into IPv6', '::ffff:169.254.169.254', METADATA],
    ['the IPv4 cloud metadata address behind NAT64', '64:ff9b::a9fe:a9fe', METADATA],
    ['the AWS IPv6 metadata address', 'fd00:ec2::254', METADATA],
    ['the AWS IPv6 metadata address, written in full', 'fd00:0ec2:0000:0000:0000:0000:0000:0254', METADATA],
    ['the Alibaba Cloud metadata address', '100.100.100.200', METADATA],
    ['IPv4 unspecified', '0.0.0.0', UNREACHABLE],
    ['elsewhere in 0/8', '0.1.2.3', UNREACHABLE],
    ['IPv6 unspecified', '::', UNREACHABLE],
    ['IPv4 broadcast', '255.255.255.255', UNREACHABLE],
    ['IPv4 multicast', '224.0.0.1', UNREACHABLE],
    ['IPv6 multicast', 'ff02::1', UNREACHABLE],
    ['IPv4 documentation (TEST-NET-1)', '192.0.2.1', UNREACHABLE],
    ['IPv4 benchmarking', '198.18.0.1', UNREACHABLE],
    ['IPv4 reserved 240/4', '240.0.0.1', UNREACHABLE],
    ['IPv6 documentation', '2001:db8::1', UNREACHABLE],
    ['IPv6 discard', '100::1', UNREACHABLE],
    ['IPv4-compatible IPv6 (outside 2000::/3)', '::7f00:1', UNREACHABLE],
    ['IPv4-translated IPv6', '::ffff:0:a00:1', UNREACHABLE],
    ['a local-use NAT64 prefix', '64:ff9b:1::a00:1', UNREACHABLE],
    ['6to4', '2002:a00:1::1', UNREACHABLE],
    ['Teredo', '2001:0:4136:e378::1', UNREACHABLE],
  ])('when the address is %s, then it is refused even with the flag', (_case, address, kind) => {
    const refusal = { outcome: 'refused', reason: `the target is ${kind}` };
    expect(checkTargetAddress(address, strict)).toEqual(refusal);
    expect(checkTargetAddress(address, development)).toEqual(refusal);
  });

  test('when the text is not an IP address, then it is refused', () => {
    expect(checkTargetAddress('example.com', development)).toEqual({ outcome: 'refused', reason: 'the target is not an IP address' });
  });
});

describe('checkTargetUrl (decision 28)', () => {
  test('when the URL is https to a name, with a port, a path and a query, then it is allowed, to be resolved', () => {
    expect(checkTargetUrl('https://Hooks.Example.com:8443/rs/score?tenant=7', strict)).toEqual({
      outcome: 'allowed',
      href: 'https://hooks.example.com:8443/rs/score?tenant=7',
      hostname: 'hooks.example.com',
      port: 8443,
      isAddressLiteral: false,
    });
  });

  test('when the URL has no port, then the scheme default is given', () => {
    expect(checkTargetUrl('https://hooks.example.com', strict)).toMatchObject({
      outcome: 'allowed',
      href: 'https://hooks.example.com/',
      port: 443,
    });
    expect(checkTargetUrl('http://localhost:3000/hook', development)).toMatchObject({
      outcome: 'allowed',
      hostname: 'localhost',
      port: 3000,
    });
    expect(checkTargetUrl('http://receiver/hook', development)).toMatchObject({ outcome: 'allowed', port: 80 });
  });

  test('when the host is a public address literal, then it is allowed and needs no resolution; IPv6 loses its brackets', () => {
    expect(checkTargetUrl('https://93.184.215.14/hook', strict)).toMatchObject({
      outcome: 'allowed',
      hostname: '93.184.215.14',
      isAddressLiteral: true,
    });
    expect(checkTargetUrl('https://[2606:4700:4700::1111]:8443/', strict)).toMatchObject({
      outcome: 'allowed',
      hostname: '2606:4700:4700::1111',
      port: 8443,
      isAddressLiteral: true,
    });
  });

  test.each([
    ['http', 'http://hooks.example.com/', 'the URL must use https'],
    ['another scheme', 'ftp://hooks.example.com/', 'the URL must use https'],
    ['no scheme', 'hooks.example.com/hook', 'the URL is not a valid absolute URL'],
    ['an empty string', '', 'the URL is not a valid absolute URL'],
    ['a user name', 'https://user@hooks.example.com/', 'the URL must not contain credentials'],
    ['a user name and password', 'https://user:secret@hooks.example.com/', 'the URL must not contain credentials'],
    ['localhost', 'https://localhost/hook', 'the URL names the local host'],
    ['a subdomain of localhost, with a trailing dot', 'https://api.localhost./hook', 'the URL names the local host'],
    ['a loopback literal', 'https://127.0.0.1/hook', 'the target is a loopback address'],
    ['a loopback literal in a short form', 'https://127.1/hook', 'the target is a loopback address'],
    ['a loopback literal as one number', 'https://2130706433/hook', 'the target is a loopback address'],
    ['a loopback literal in hexadecimal', 'https://0x7f.0.0.1/hook', 'the target is a loopback address'],
    ['an IPv6 loopback literal', 'https://[::1]/hook', 'the target is a loopback address'],
    ['an IPv4-mapped private literal', 'https://[::ffff:192.168.1.1]/', 'the target is a private network address'],
    ['the metadata literal', 'https://169.254.169.254/latest/meta-data/', 'the target is a cloud metadata address'],
    ['the unspecified address as 0', 'https://0/hook', 'the target is an address that cannot receive webhooks'],
  ])('when the URL has %s, then it is refused without the flag', (_case, url, reason) => {
    expect(checkTargetUrl(url, strict)).toEqual({ outcome: 'refused', reason });
  });

  test('when the URL is longer than 2048 characters, then it is refused before it is parsed', () => {
    const url = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length + 1)}`;

    expect(checkTargetUrl(url, strict)).toEqual({ outcome: 'refused', reason: 'the URL is longer than 2048 characters' });
    expect(checkTargetUrl(url.slice(0, -1), strict)).toMatchObject({ outcome: 'allowed' });
  });

  test('when private targets are allowed, then http, localhost and private literals are, but not other schemes, credentials or metadata', () => {
    expect(checkTargetUrl('http://127.0.0.1:4000/hook', development)).toMatchObject({ outcome: 'allowed', isAddressLiteral: true });
    expect(checkTargetUrl('https://[fd00::5]/hook', development)).toMatchObject({ outcome: 'allowed' });
    expect(checkTargetUrl('ftp://127.0.0.1/', development)).toEqual({ outcome: 'refused', reason: 'the URL must use https or http' });
    expect(checkTargetUrl('http://u:p@127.0.0.1/', development)).toEqual({
      outcome: 'refused',
      reason: 'the URL must not contain credentials',
    });
    expect(checkTargetUrl('http://169.254.169.254/', development)).toEqual({
      outcome: 'refused',
      reason: 'the target is a cloud metadata address',
    });
  });
});
