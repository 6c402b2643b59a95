// The one way a connector reaches the outside world: every host, unix socket, file and ambient
// identity a driver would use goes through a DestinationGuard first. A host is resolved ONCE per
// check, every address it resolves to is judged, and the driver connects to the returned address
// (not the name), so a DNS answer that changes between the check and the connect (rebinding)
// cannot land anywhere the check did not see. A new session checks again.
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isAbsolute } from 'node:path';
import { ConnectorError, isConnectorError } from './connector-error.js';
import {
  addressAllowed,
  classifyAddress,
  type DestinationPolicy,
  isMetadataHostName,
} from './destination-policy.js';

/** One address a host name resolves to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has (the default asks the system resolver). */
export type HostResolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** A host that passed the guard, and the address to connect to. */
export interface CheckedHost {
  /** The host name as configured: keep it for TLS (`servername`) and `Host` headers. */
  readonly host: string;
  /** The checked IP address: connect to this, never to `host`. */
  readonly address: string;
  readonly family: 4 | 6;
  readonly port: number;
}

/**
 * Checks destinations against the gateway's {@link DestinationPolicy}. Drivers get one in their
 * {@link DriverContext}; refusals are `ConnectorError('CONNECT_FAILED')` with `driverCode`
 * `DESTINATION_NOT_ALLOWED` and `retryable: false` (see {@link isDestinationRefusal}).
 */
export interface DestinationGuard {
  /** What this guard allows. */
  readonly policy: DestinationPolicy;
  /**
   * Resolves `host` once (an IP literal is not resolved), refuses it when any address is not
   * allowed, and returns the first address: connect to `address`, verify TLS against `host`.
   * Cloud metadata names and addresses are refused whatever the policy.
   */
  checkHost(host: string, port: number): Promise<CheckedHost>;
  /** {@link checkHost} for an `http:`/`https:` URL's host and port (default 80/443). */
  checkUrl(url: string | URL): Promise<CheckedHost>;
  /** Refuses a unix-domain socket path unless private networks are allowed (it is this host). */
  checkSocket(path: string): void;
  /** Refuses a path on the gateway host unless host files are allowed. */
  checkFile(path: string): void;
  /** Refuses the gateway host's own identity (`what` names it) unless host identity is allowed. */
  checkIdentity(what: string): void;
  /**
   * A `lookup` for `net.connect`, `tls.connect` and `http.Agent` options that resolves through
   * {@link checkHost}: the socket connects to the checked address. An IP literal host never calls
   * `lookup` in Node, so check those with {@link checkHost} yourself (the guarded agents do).
   */
  readonly lookup: LookupFunction;
}

/** Options of {@link createDestinationGuard}. */
export interface DestinationGuardOptions {
  /** Replaces the system resolver (tests, or a resolver the operator controls). */
  readonly resolve?: HostResolver;
}

/** The `driverCode` of a refused destination. */
export const DESTINATION_NOT_ALLOWED = 'DESTINATION_NOT_ALLOWED';

/** A refused destination as the connector error drivers throw (the message is safe to show). */
export function destinationRefused(message: string): ConnectorError {
  return new ConnectorError('CONNECT_FAILED', message, {
    retryable: false,
    driverCode: DESTINATION_NOT_ALLOWED,
  });
}

/** True when `error` is a destination the guard refused (not a warehouse that is down). */
export function isDestinationRefusal(error: unknown): error is ConnectorError {
  return isConnectorError(error, 'CONNECT_FAILED') && error.driverCode === DESTINATION_NOT_ALLOWED;
}

const HOST_NAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const systemResolve: HostResolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => ({
    address: entry.address,
    family: entry.family === 6 ? 6 : 4,
  }));

/** Creates the guard for one policy. */
export function createDestinationGuard(
  policy: DestinationPolicy,
  options: DestinationGuardOptions = {},
): DestinationGuard {
  const resolve = options.resolve ?? systemResolve;
  const privateHint = policy.privateNetworks
    ? ''
    : ' (private networks need the operator to set QUARRY_ALLOW_PRIVATE_NETWORKS)';

  async function checkHost(host: string, port: number): Promise<CheckedHost> {
    const name = host
      .trim()
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    const literal = classifyAddress(name);
    if (literal === undefined && isMetadataHostName(name)) {
      throw destinationRefused(`host "${host}" is a cloud metadata service, never a warehouse`);
    }
    if (literal === undefined && !HOST_NAME.test(name)) {
      throw destinationRefused(`"${host}" is not a single host name or IP address`);
    }
    let addresses: readonly ResolvedAddress[];
    try {
      addresses = literal === undefined ? await resolve(name) : [{ address: literal.address, family: 4 }];
    } catch (error) {
      throw new ConnectorError('CONNECT_FAILED', `host "${host}" does not resolve`, {
        cause: error,
        driverCode: 'HOST_UNRESOLVABLE',
      });
    }
    if (addresses.length === 0) {
      throw new ConnectorError('CONNECT_FAILED', `host "${host}" does not resolve`, {
        driverCode: 'HOST_UNRESOLVABLE',
      });
    }
    let first: CheckedHost | undefined;
    // Every address must pass: a resolver may hand the driver any of them.
    for (const entry of addresses) {
      const verdict = classifyAddress(entry.address);
      if (verdict === undefined || !addressAllowed(verdict, policy)) {
        const what = verdict === undefined ? 'not an IP address' : `a ${verdict.label} address`;
        const subject =
          literal === undefined ? `host "${host}" resolves to ${entry.address},` : `${entry.address} is`;
        throw destinationRefused(
          `${subject} ${what}; warehouses must be on a public address${verdict?.class === 'private' ? privateHint : ''}`,
        );
      }
      const family = verdict.address.includes(':') ? 6 : 4;
      first ??= { host: name, address: verdict.address, family, port };
    }
    return first!;
  }

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    checkHost(hostname, 0).then(
      ({ address, family }) => {
        if (lookupOptions.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };

  return {
    policy,
    checkHost,
    async checkUrl(url) {
      const parsed = typeof url === 'string' ? new URL(url) : url;
      if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
        throw destinationRefused(`${parsed.protocol} URLs are not allowed; use http(s)`);
      }
      const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
      return checkHost(parsed.hostname, port);
    },
    checkSocket(path) {
      if (!policy.privateNetworks) {
        throw destinationRefused(`unix socket ${JSON.stringify(path)} is on the gateway host${privateHint}`);
      }
    },
    checkFile(path) {
      if (!policy.hostFiles) {
        throw destinationRefused(
          `${isAbsolute(path) ? 'files' : 'paths'} on the gateway host are not allowed (the operator has not set QUARRY_ALLOW_HOST_FILES)`,
        );
      }
    },
    checkIdentity(what) {
      if (!policy.hostIdentity) {
        throw destinationRefused(
          `${what} would use the gateway host's own identity (the operator has not set QUARRY_ALLOW_HOST_IDENTITY)`,
        );
      }
    },
    lookup,
  };
}
