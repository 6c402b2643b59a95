import { describe, expect, it } from 'vitest';
import { clientAddress, UNKNOWN_ADDRESS } from './client-address.js';

describe('clientAddress', () => {
  it('is the socket peer unless proxies are trusted, whatever X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.7', undefined, 0)).toBe('203.0.113.7');
    expect(clientAddress('203.0.113.7', '198.51.100.1', 0)).toBe('203.0.113.7');
    expect(clientAddress(undefined, '198.51.100.1', 0)).toBe(UNKNOWN_ADDRESS);
    expect(clientAddress('::ffff:203.0.113.7', undefined, 0)).toBe('203.0.113.7');
  });

  it('with N trusted proxies, takes the N-th entry from the right and ignores what the client prepended', () => {
    expect(clientAddress('10.0.0.1', '198.51.100.1', 1)).toBe('198.51.100.1');
    expect(clientAddress('10.0.0.1', '6.6.6.6, 198.51.100.1', 1)).toBe('198.51.100.1');
    expect(clientAddress('10.0.0.1', '6.6.6.6,198.51.100.1, 10.0.0.2', 2)).toBe('198.51.100.1');
    // Fewer entries than proxies: the farthest there is.
    expect(clientAddress('10.0.0.1', '198.51.100.1', 3)).toBe('198.51.100.1');
    // No header (a request that did not come through the proxy): the socket.
    expect(clientAddress('10.0.0.1', undefined, 1)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', ' , ', 1)).toBe('10.0.0.1');
  });

  it('never lets a trusted entry that is not an address name a bucket', () => {
    expect(clientAddress('10.0.0.1', 'evil-bucket-1', 1)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', '198.51.100.1:4711', 1)).toBe('198.51.100.1');
    expect(clientAddress('10.0.0.1', '[2001:db8::1]:443', 1)).toBe('2001:db8:0:0::/64');
  });

  it('counts an IPv6 client per /64', () => {
    expect(clientAddress('2001:db8:1:2:aaaa::1', undefined, 0)).toBe('2001:db8:1:2::/64');
    expect(clientAddress('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee', undefined, 0)).toBe('2001:db8:1:2::/64');
    expect(clientAddress('::1', undefined, 0)).toBe('0:0:0:0::/64');
    expect(clientAddress('fe80::1%eth0', undefined, 0)).toBe('fe80:0:0:0::/64');
    expect(clientAddress('64:ff9b::192.0.2.1', undefined, 0)).toBe('64:ff9b:0:0::/64');
  });
});
