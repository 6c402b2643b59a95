// SSRF guard for owner-supplied warehouse hosts: resolves the name and refuses it when any
// address it resolves to is loopback, private, link-local, CGNAT, multicast, reserved, or a
// cloud metadata endpoint, including the IPv6 forms that embed an IPv4 address (::ffff:a.b.c.d,
// NAT64, 6to4). Connect to one of the returned addresses, not the name, or a second lookup
// (DNS rebinding) could still land somewhere private.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { SecurityError } from './security-error.js';

/** Options for {@link assertPublicHost}. */
export interface PublicHostOptions {
  /**
   * Allows private, loopback and link-local addresses (self-hosted setups, the demo). Cloud
   * metadata endpoints stay refused: they are never a warehouse.
   */
  readonly allowPrivate?: boolean;
  /** Resolves a name to addresses; defaults to the system resolver (all addresses). */
  readonly lookup?: (host: string) => Promise<readonly string[]>;
}

interface Range {
  readonly bytes: Uint8Array;
  readonly bits: number;
  readonly label: string;
}

function parseIPv4(text: string): Uint8Array | null {
  return isIPv4(text) ? Uint8Array.from(text.split('.').map(Number)) : null;
}

function parseIPv6(text: string): Uint8Array | null {
  let address = text.split('%')[0] ?? '';
  if (!isIPv6(address)) return null;
  if (address.includes('.')) {
    // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two hex groups.
    const cut = address.lastIndexOf(':') + 1;
    const v4 = parseIPv4(address.slice(cut));
    if (v4 === null) return null;
    address = `${address.slice(0, cut)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [left = '', right] = address.split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const groups =
    right === undefined ? head : [...head, ...Array(8 - head.length - tail.length).fill('0'), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}

function range(cidr: string, label: string): Range {
  const [address = '', bits = ''] = cidr.split('/');
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (bytes === null) throw new Error(`bad range ${cidr}`);
  return { bytes, bits: Number(bits), label };
}

function inRange(address: Uint8Array, candidate: Range): boolean {
  if (address.length !== candidate.bytes.length) return false;
  for (let bit = 0; bit < candidate.bits; bit += 8) {
    const mask = candidate.bits - bit >= 8 ? 0xff : (0xff << (8 - (candidate.bits - bit))) & 0xff;
    const index = bit / 8;
    if (((address[index] ?? 0) & mask) !== ((candidate.bytes[index] ?? 0) & mask)) return false;
  }
  return true;
}

// Refused even with allowPrivate.
const METADATA: readonly Range[] = [
  range('169.254.169.254/32', 'cloud metadata'),
  range('169.254.170.2/32', 'container metadata'),
  range('100.100.100.200/32', 'cloud metadata'),
  range('fd00:ec2::254/128', 'cloud metadata'),
];

const PRIVATE: readonly Range[] = [
  range('0.0.0.0/8', '"this network"'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'carrier-grade NAT'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'IETF protocol assignment'),
  range('192.0.2.0/24', 'documentation'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'benchmarking'),
  range('198.51.100.0/24', 'documentation'),
  range('203.0.113.0/24', 'documentation'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('100::/64', 'discard-only'),
  range('2001:db8::/32', 'documentation'),
  range('fc00::/7', 'unique local (private)'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'site-local'),
  range('ff00::/8', 'multicast'),
];

// IPv6 forms that carry an IPv4 address, and where in the 16 bytes it sits.
const EMBEDDING: readonly (Range & { readonly offset: number })[] = [
  { ...range('::ffff:0:0/96', 'IPv4-mapped'), offset: 12 },
  { ...range('::/96', 'IPv4-compatible'), offset: 12 },
  { ...range('64:ff9b::/96', 'NAT64'), offset: 12 },
  { ...range('2002::/16', '6to4'), offset: 2 },
];

/** Why `address` (an IP literal) is not public, or null when it is public. */
export function classifyAddress(
  address: string,
  options: { readonly allowPrivate?: boolean } = {},
): string | null {
  const bytes = parseIPv4(address) ?? parseIPv6(address);
  if (bytes === null) return 'not an IP address';
  const check = (candidate: Uint8Array): string | null => {
    const hit =
      METADATA.find((r) => inRange(candidate, r)) ??
      (options.allowPrivate ? undefined : PRIVATE.find((r) => inRange(candidate, r)));
    return hit === undefined ? null : `${hit.label} address`;
  };
  if (bytes.length === 16) {
    const embedding = EMBEDDING.find((r) => inRange(bytes, r));
    // ::1 and :: themselves fall in ::/96; they are judged as IPv6 below.
    const v4 = embedding === undefined ? undefined : bytes.subarray(embedding.offset, embedding.offset + 4);
    if (
      embedding !== undefined &&
      v4 !== undefined &&
      (embedding.label !== 'IPv4-compatible' || (v4[0] ?? 0) !== 0)
    ) {
      const why = check(Uint8Array.from(v4));
      if (why !== null) return `${why} in ${embedding.label} form`;
    }
  }
  return check(bytes);
}

async function systemLookup(host: string): Promise<readonly string[]> {
  return (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

/**
 * Resolves `host` and returns its addresses when every one is public; otherwise throws a
 * SecurityError: ADDRESS_NOT_ALLOWED naming the offending address, or HOST_UNRESOLVABLE.
 */
export async function assertPublicHost(
  host: string,
  options: PublicHostOptions = {},
): Promise<readonly string[]> {
  const name = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  if (name === '') throw new SecurityError('HOST_UNRESOLVABLE', 'the host is empty');
  const literal = isIPv4(name) || isIPv6(name.split('%')[0] ?? '');
  let addresses: readonly string[];
  try {
    addresses = literal ? [name] : await (options.lookup ?? systemLookup)(name);
  } catch (error) {
    throw new SecurityError('HOST_UNRESOLVABLE', `host "${host}" does not resolve`, { cause: error });
  }
  if (addresses.length === 0) throw new SecurityError('HOST_UNRESOLVABLE', `host "${host}" does not resolve`);
  for (const address of addresses) {
    const why = classifyAddress(address, options);
    if (why !== null) {
      const subject = literal ? `host ${address} is` : `host "${host}" resolves to ${address},`;
      throw new SecurityError(
        'ADDRESS_NOT_ALLOWED',
        `${subject} a ${why}; warehouses must be reachable on a public address`,
      );
    }
  }
  return addresses;
}
