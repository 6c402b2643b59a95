// The client address a per-address limit (the sign-up throttle) counts against. By default it is
// the socket's peer: X-Forwarded-For is written by whoever sends the request, so trusting it
// would let one client pose as any number of addresses. Behind proxies the operator says how
// many (QUARRY_TRUST_PROXY=N): each proxy appends the address it saw, so the client is the N-th
// entry from the right; entries left of it were written by the client and are ignored.
// IPv6 clients are counted per /64, the block one subscriber usually gets: counting single
// addresses would give one subscriber 2^64 allowances.
import { isIP } from 'node:net';

/** The address of a request without a socket (in-process `app.request()`). */
export const UNKNOWN_ADDRESS = 'unknown';

/**
 * The address to count: from `forwardedFor` (the X-Forwarded-For value, repeated headers joined
 * by commas) when `trustedProxies` > 0 and it holds a usable entry, else the socket's.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxies: number,
): string {
  const socket = normalise(socketAddress) ?? UNKNOWN_ADDRESS;
  if (trustedProxies <= 0 || forwardedFor === undefined) return socket;
  const hops = forwardedFor
    .split(',')
    .map((hop) => hop.trim())
    .filter((hop) => hop !== '');
  if (hops.length === 0) return socket;
  // Fewer entries than trusted proxies: the farthest one there is (a hop that added none).
  const seen = hops[Math.max(0, hops.length - trustedProxies)];
  // A trusted proxy writes addresses; anything else is counted as the proxy itself, never as a
  // bucket of its own the client could name.
  return normalise(seen) ?? socket;
}

/** An IPv4 address, or an IPv6 /64 (`2001:db8:0:1::/64`); undefined when it is not an address. */
function normalise(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const address = stripPort(raw);
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** `1.2.3.4:5678` → `1.2.3.4`; `[2001:db8::1]:443` → `2001:db8::1`; a zone id is dropped. */
function stripPort(raw: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(raw);
  const address = bracketed?.[1] ?? (/^[\d.]+:\d+$/.test(raw) ? raw.slice(0, raw.lastIndexOf(':')) : raw);
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const toGroups = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          // An embedded IPv4 tail is two groups.
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const gap = address.indexOf('::');
  const head = toGroups(gap === -1 ? address : address.slice(0, gap));
  const tail = gap === -1 ? [] : toGroups(address.slice(gap + 2));
  const zeros = Array.from({ length: 8 - head.length - tail.length }, () => '0');
  return [...head, ...zeros, ...tail].map((group) => Number.parseInt(group, 16).toString(16));
}
