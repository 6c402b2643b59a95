import { describe, expect, it } from 'vitest';
import { assertPublicHost, classifyAddress } from './private-address.js';
import { isSecurityError } from './security-error.js';

async function refusal(host: string, options: Parameters<typeof assertPublicHost>[1] = {}): Promise<unknown> {
  try {
    await assertPublicHost(host, options);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('assertPublicHost', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.10.20', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['100.100.100.200', 'cloud metadata'],
    ['0.0.0.0', '"this network"'],
    ['0.1.2.3', '"this network"'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback address in IPv4-mapped'],
    ['::ffff:7f00:1', 'loopback address in IPv4-mapped'],
    ['0:0:0:0:0:ffff:10.0.0.1', 'private address in IPv4-mapped'],
    ['::ffff:169.254.169.254', 'cloud metadata address in IPv4-mapped'],
    ['::127.0.0.1', 'loopback address in IPv4-compatible'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata address in NAT64'],
    ['2002:c0a8:0101::1', 'private address in 6to4'],
  ])('refuses %s (%s)', async (host, label) => {
    const error = await refusal(host);
    expect(isSecurityError(error, 'ADDRESS_NOT_ALLOWED')).toBe(true);
    expect(String(error)).toContain(label);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2a00::1',
  ])('accepts the public address %s', async (host) => {
    const expected = host.replace(/^\[|\]$/g, '');
    await expect(assertPublicHost(host)).resolves.toEqual([expected]);
  });

  it('refuses localhost, which resolves to 127.0.0.1 (real DNS)', async () => {
    const error = await refusal('localhost');
    expect(isSecurityError(error, 'ADDRESS_NOT_ALLOWED')).toBe(true);
    expect(String(error)).toMatch(/host "localhost" resolves to (127\.0\.0\.1|::1), a loopback address/);
  });

  it('refuses a name when any one of its addresses is private (DNS rebinding)', async () => {
    const lookup = async () => ['93.184.216.34', '10.0.0.5'];
    const error = await refusal('warehouse.example.com', { lookup });
    expect(String(error)).toContain('resolves to 10.0.0.5, a private address');
    await expect(
      assertPublicHost('warehouse.example.com', {
        lookup: async () => ['93.184.216.34', '2606:2800:220:1::1'],
      }),
    ).resolves.toEqual(['93.184.216.34', '2606:2800:220:1::1']);
  });

  it('reports a name that does not resolve', async () => {
    const lookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const error = await refusal('nowhere.invalid', { lookup });
    expect(isSecurityError(error, 'HOST_UNRESOLVABLE')).toBe(true);
    expect(isSecurityError(await refusal('  '), 'HOST_UNRESOLVABLE')).toBe(true);
  });

  it('with allowPrivate, lets private and loopback hosts through but never metadata endpoints', async () => {
    await expect(assertPublicHost('127.0.0.1', { allowPrivate: true })).resolves.toEqual(['127.0.0.1']);
    await expect(assertPublicHost('10.0.0.7', { allowPrivate: true })).resolves.toEqual(['10.0.0.7']);
    const error = await refusal('169.254.169.254', { allowPrivate: true });
    expect(String(error)).toContain('cloud metadata');
    expect(String(await refusal('::ffff:169.254.169.254', { allowPrivate: true }))).toContain(
      'cloud metadata',
    );
  });

  it('classifies literals without DNS', () => {
    expect(classifyAddress('8.8.8.8')).toBeNull();
    expect(classifyAddress('192.168.0.1')).toBe('private address');
    expect(classifyAddress('not-an-ip')).toBe('not an IP address');
  });
});
