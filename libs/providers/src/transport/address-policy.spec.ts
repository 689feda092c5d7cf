import { AllowlistError, checkResolvedAddresses, checkUrl, classifyAddress, parseAllowlist } from './address-policy';

// Pure rules on literal addresses and URL forms: nothing here resolves a name or connects.

describe('the address policy on literal addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['100.127.255.255', 'shared (carrier-grade NAT)'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['168.63.129.16', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    // IPv4-mapped IPv6, in both spellings: judged by the IPv4 address inside.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    // IPv4-compatible (deprecated) and IPv4-translated forms.
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::ffff:0:a00:1', 'private'],
    ['::8.8.8.8', 'reserved'],
    // NAT64 and 6to4 reach the IPv4 address they embed.
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['64:ff9b:1::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'], // outside global unicast
    // Not plain addresses: the rule fails closed (URLs normalise these forms before they get here).
    ['2130706433', 'not an IP address'],
    ['0177.0.0.1', 'not an IP address'],
    ['0x7f.0.0.1', 'not an IP address'],
    ['localhost', 'not an IP address'],
    ['', 'not an IP address'],
  ])('refuses %s as %s', (address, category) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, category });
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '223.255.255.255', '2606:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    'allows the public address %s',
    (address) => {
      expect(classifyAddress(address)).toEqual({ allowed: true });
    },
  );

  it('reads every IPv6 spelling of the same address as that address', () => {
    for (const spelling of ['::ffff:127.0.0.1', '0:0:0:0:0:ffff:7f00:0001', '0000:0000:0000:0000:0000:FFFF:7F00:0001']) {
      expect(classifyAddress(spelling)).toEqual({ allowed: false, category: 'loopback' });
    }
    expect(classifyAddress('fe80::1%25eth0')).toEqual({ allowed: false, category: 'link-local' });
    // The deprecated IPv4-compatible form is not the IPv4-mapped one: a public address inside it is still refused.
    expect(classifyAddress('::8.8.8.8%eth0')).toEqual({ allowed: false, category: 'reserved' });
    expect(classifyAddress('1:2:3:4:5:6:7:8:9')).toEqual({ allowed: false, category: 'not an IP address' });
    expect(classifyAddress('::ffff:300.0.0.1')).toEqual({ allowed: false, category: 'not an IP address' });
  });

  it('refuses a name if any one of its addresses is forbidden', () => {
    expect(checkResolvedAddresses(['93.184.216.34', '2606:2800::1'])).toEqual({ allowed: true });
    expect(checkResolvedAddresses(['93.184.216.34', '10.0.0.7'])).toEqual({
      allowed: false,
      detail: 'has a host name that resolves to a private address, which the gateway does not fetch',
    });
    expect(checkResolvedAddresses(['::ffff:169.254.169.254'])).toEqual({
      allowed: false,
      detail: 'has a host name that resolves to a cloud metadata address, which the gateway does not fetch',
    });
    expect(checkResolvedAddresses([])).toMatchObject({ allowed: false });
  });
});

describe('the address policy on URLs', () => {
  it.each([
    // WHATWG URL normalises decimal, octal, hex and shortened IPv4 hosts to dotted form; the policy judges that form.
    ['http://2130706433/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['http://%31%32%37.0.0.1/', 'loopback'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://[::1]:8080/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:127.0.0.1]/', 'loopback'],
    ['http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'cloud metadata'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://2852039166/', 'cloud metadata'], // 169.254.169.254 as one number
    ['https://10.0.0.1/a.mp3', 'private'],
    ['http://0xa.0.0.1/', 'private'],
    ['http://012.0.0.1/', 'private'],
    ['http://172.16.5.4:9000/', 'private'],
    ['http://192.168.0.1/', 'private'],
    ['http://3232235521/', 'private'], // 192.168.0.1
    ['http://[fe80::1]/', 'link-local'],
    ['http://[fd00::1]/', 'unique-local'],
    ['http://224.0.0.251/', 'multicast'],
  ])('refuses %s, whose host is %s', (url, category) => {
    const verdict = checkUrl(url, []);
    expect(verdict).toMatchObject({ allowed: false, refusal: 'forbidden-address' });
    expect(verdict.allowed || verdict.detail).toMatch(new RegExp(`^names an? ${category.replace(/[()]/g, '\\$&')} address, which the gateway does not fetch$`));
  });

  it.each([
    ['file:///etc/passwd', 'unsupported-scheme', 'is not an http or https URL (got file)'],
    ['ftp://example.com/a.mp3', 'unsupported-scheme', 'is not an http or https URL (got ftp)'],
    ['gopher://example.com:70/_GET', 'unsupported-scheme', 'is not an http or https URL (got gopher)'],
    ['data:audio/mpeg;base64,AAAA', 'unsupported-scheme', 'is not an http or https URL (got data)'],
    ['javascript:alert(1)', 'unsupported-scheme', 'is not an http or https URL (got javascript)'],
    ['/relative/a.mp3', 'invalid-url', 'is not a valid absolute URL'],
    ['http://[fe80::1%25eth0]/', 'invalid-url', 'is not a valid absolute URL'],
    ['http://exa mple.com/', 'invalid-url', 'is not a valid absolute URL'],
    ['http://user:secret@example.com/a.mp3', 'credentials-in-url', 'carries a user name or password'],
    ['http://example.com@127.0.0.1/', 'credentials-in-url', 'carries a user name or password'],
  ])('refuses %s (%s)', (url, refusal, detail) => {
    expect(checkUrl(url, [])).toEqual({ allowed: false, refusal, detail });
  });

  it('lets a public literal address through, and leaves a host name to be resolved', () => {
    expect(checkUrl('https://8.8.8.8/a.mp3', [])).toMatchObject({ allowed: true, allowlisted: false, literalAddress: '8.8.8.8' });
    expect(checkUrl('https://[2606:4700::1111]/a.mp3', [])).toMatchObject({ allowed: true, allowlisted: false, literalAddress: '2606:4700::1111' });
    const named = checkUrl('https://media.example.com/a.mp3', []);
    expect(named).toMatchObject({ allowed: true, allowlisted: false });
    expect(named.allowed && named.literalAddress).toBeUndefined();
  });

  it('allows an allowlisted host on any port, and a host:port entry on that port only', () => {
    const allowlist = parseAllowlist('minio.internal, 127.0.0.1:9000, [::1]:9001');
    expect(checkUrl('http://minio.internal:9000/bucket/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true });
    expect(checkUrl('https://MINIO.internal./bucket/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true });
    expect(checkUrl('http://127.0.0.1:9000/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true, literalAddress: '127.0.0.1' });
    expect(checkUrl('http://2130706433:9000/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true });
    expect(checkUrl('http://[::1]:9001/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true });
    expect(checkUrl('http://127.0.0.1:9001/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'forbidden-address' });
    expect(checkUrl('http://127.0.0.1/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'forbidden-address' });
    expect(checkUrl('http://127.0.0.2:9000/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'forbidden-address' });
    expect(checkUrl('http://[::1]:9000/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'forbidden-address' });
    // The allowlist never opens other schemes or credentials.
    expect(checkUrl('ftp://minio.internal/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'unsupported-scheme' });
    expect(checkUrl('http://u:p@minio.internal/a.mp3', allowlist)).toMatchObject({ allowed: false, refusal: 'credentials-in-url' });
  });

  it('matches an entry without a port against the scheme default too', () => {
    const allowlist = parseAllowlist('files.internal:80');
    expect(checkUrl('http://files.internal/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: true });
    expect(checkUrl('https://files.internal/a.mp3', allowlist)).toMatchObject({ allowed: true, allowlisted: false });
  });
});

describe('MEDIA_FETCH_ALLOWLIST', () => {
  it('reads host and host:port entries, normalising hosts as URLs do', () => {
    expect(parseAllowlist(undefined)).toEqual([]);
    expect(parseAllowlist(' ')).toEqual([]);
    expect(parseAllowlist('Minio.Internal, 127.0.0.1:9000,,[::1]:80, 2130706433, [0:0:0:0:0:0:0:1]')).toEqual([
      { host: 'minio.internal' },
      { host: '127.0.0.1', port: 9000 },
      { host: '[::1]', port: 80 },
      { host: '127.0.0.1' },
      { host: '[::1]' },
    ]);
  });

  it.each(['http://minio.internal', 'minio.internal:99999', 'minio.internal:0', '::1', 'user@host', 'a b', 'host:port', 'minio.internal/path'])('refuses the entry %j', (entry) => {
    expect(() => parseAllowlist(entry)).toThrow(AllowlistError);
    expect(() => parseAllowlist(entry)).toThrow(/^MEDIA_FETCH_ALLOWLIST: ".*" is not a host or host:port/);
  });
});
