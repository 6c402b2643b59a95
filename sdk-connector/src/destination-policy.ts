// What an owner's connection may reach, and how an address is judged. Owners are strangers: a
// connection config is attacker input, so by default a connector reaches public addresses only.
// The operator opts in to three separate powers (docs/design.md §8): private networks (loopback, RFC 1918,
// unique-local, unix sockets), the gateway host's files, and the gateway host's cloud identity.
// Cloud metadata endpoints, link-local, multicast and reserved ranges are never reachable:
// no warehouse lives there, and the metadata services hand out the host's credentials.
// Address classes come from ipaddr.js, not hand-written ranges.
import ipaddr from 'ipaddr.js';

/**
 * What a connector may reach beyond public network addresses. The gateway builds one from its
 * configuration for owner connections; every field defaults to `false` there.
 */
export interface DestinationPolicy {
  /** Loopback, private (RFC 1918, CGNAT, unique-local IPv6) addresses and unix sockets. */
  readonly privateNetworks: boolean;
  /** Files on the gateway host (an embedded engine's database file, Parquet/CSV files). */
  readonly hostFiles: boolean;
  /** The gateway host's own identity: ambient cloud credentials (e.g. application-default). */
  readonly hostIdentity: boolean;
}

/** Nothing but public addresses: what an owner's connection gets unless the operator opts in. */
export const PUBLIC_ONLY: DestinationPolicy = Object.freeze({
  privateNetworks: false,
  hostFiles: false,
  hostIdentity: false,
});

/**
 * Everything an operator may allow (cloud metadata stays refused even here): the default of
 * {@link createConnector} for callers that are the operator (tests, tools, the gateway's demo).
 */
export const OPERATOR_TRUSTED: DestinationPolicy = Object.freeze({
  privateNetworks: true,
  hostFiles: true,
  hostIdentity: true,
});

/** How an address is treated: reachable always, only with `privateNetworks`, or never. */
export type AddressClass = 'public' | 'private' | 'forbidden';

/** The verdict on one IP address, with a label for messages (e.g. `loopback`). */
export interface AddressVerdict {
  readonly class: AddressClass;
  readonly label: string;
  /** The address in canonical form (`127.0.0.1` for `127.1`): what a driver must connect to. */
  readonly address: string;
}

/**
 * Cloud metadata and instance-identity endpoints, refused whatever the policy says: AWS/GCP/Azure/
 * Oracle (169.254.169.254, and AWS's IPv6 fd00:ec2::254), ECS task credentials (169.254.170.2),
 * Alibaba (100.100.100.200) and Azure's WireServer (168.63.129.16, a public-looking address).
 */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  '169.254.169.254',
  '169.254.170.2',
  '169.254.169.253',
  '100.100.100.200',
  '168.63.129.16',
  'fd00:ec2::254',
  'fd00:ec2::23',
]);

/** Host names of metadata services, refused before they are even resolved. */
const METADATA_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** ipaddr.js range names reachable with `privateNetworks`; any other non-unicast range is never. */
const PRIVATE_RANGES: Readonly<Record<string, string>> = {
  loopback: 'loopback',
  private: 'private',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique local (private)',
  deprecatedSiteLocal: 'site-local (private)',
  // 0.0.0.0 and :: reach the host itself when connected to.
  unspecified: 'unspecified (this host)',
};

/** IPv6 forms carrying an IPv4 address that the network may deliver to that IPv4 address. */
function embeddedIPv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const bytes = address.toByteArray();
  const v4 = (offset: number) => new ipaddr.IPv4(bytes.slice(offset, offset + 4));
  if (range === 'rfc6052' || range === 'rfc6145') return v4(12);
  if (range === '6to4') return v4(2);
  if (range === 'teredo') return new ipaddr.IPv4(bytes.slice(12, 16).map((b) => b ^ 0xff));
  // The deprecated IPv4-compatible form ::a.b.c.d (but not :: and ::1 themselves).
  if (bytes.slice(0, 12).every((b) => b === 0) && bytes[12] !== 0) return v4(12);
  return undefined;
}

function judge(address: ipaddr.IPv4 | ipaddr.IPv6): Omit<AddressVerdict, 'address'> {
  if (METADATA_ADDRESSES.has(address.toNormalizedString()) || METADATA_ADDRESSES.has(address.toString())) {
    return { class: 'forbidden', label: 'cloud metadata' };
  }
  const range = address.range();
  if (range === 'unicast') return { class: 'public', label: 'public' };
  const privateLabel = PRIVATE_RANGES[range];
  if (privateLabel !== undefined) return { class: 'private', label: privateLabel };
  return { class: 'forbidden', label: range.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase() };
}

/**
 * Classifies an IP literal (IPv4, IPv6, `::ffff:` and other IPv6 forms embedding IPv4, optionally
 * `[bracketed]` or with a `%zone`); `undefined` when `text` is not an IP address. An IPv6 address
 * that embeds an IPv4 one (NAT64, 6to4, Teredo, IPv4-compatible) gets the stricter verdict of the two.
 */
export function classifyAddress(text: string): AddressVerdict | undefined {
  const literal = text.replace(/^\[(.*)\]$/, '$1').split('%')[0] ?? '';
  // ipaddr.js accepts IPv4 shorthand (127.1, 0x7f.1, 2130706433) as the network stack does.
  if (!ipaddr.isValid(literal)) return undefined;
  const parsed = ipaddr.process(literal);
  const own = { ...judge(parsed), address: parsed.toString() };
  if (parsed.kind() !== 'ipv6') return own;
  const inner = embeddedIPv4(parsed as ipaddr.IPv6, parsed.range());
  if (inner === undefined) return own;
  // Translation prefixes (NAT64, 6to4, Teredo) deliver to the IPv4 address they carry: judge that.
  const carried = judge(inner);
  if (own.class === 'public' && carried.class === 'public') return own;
  return {
    class: carried.class === 'public' && own.class === 'private' ? 'private' : carried.class,
    label: carried.class === 'public' ? own.label : `${carried.label} (in IPv6 form)`,
    address: own.address,
  };
}

/** True for host names of cloud metadata services (compared without case or a trailing dot). */
export function isMetadataHostName(host: string): boolean {
  return METADATA_NAMES.has(host.toLowerCase().replace(/\.$/, ''));
}

/** Whether `policy` lets a connector reach an address of `verdict`. */
export function addressAllowed(verdict: AddressVerdict, policy: DestinationPolicy): boolean {
  return verdict.class === 'public' || (verdict.class === 'private' && policy.privateNetworks);
}
