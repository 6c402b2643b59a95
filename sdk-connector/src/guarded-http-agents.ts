// HTTP(S) agents for connectors whose driver speaks HTTP (Trino, Snowflake, BigQuery's token
// endpoint). Every new socket goes through the DestinationGuard: a name is resolved by the
// guard's `lookup` and the socket connects to that checked address (TLS still verifies the
// name), an IP literal is judged before connecting, a host outside the connection's own hosts
// is refused (redirects and server-supplied URLs stay on the configured origin), and a response
// body past a byte bound is cut. The same checks as request-filtering-agent, with the gateway's
// policy and metadata list rather than a second copy of them.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConnectorError } from './connector-error.js';
import { type DestinationGuard, destinationRefused, isDestinationRefusal } from './destination-guard.js';
import { addressAllowed, classifyAddress } from './destination-policy.js';

/** Options of {@link createGuardedAgents}. */
export interface GuardedAgentOptions {
  /**
   * The only host names requests may go to (as in URLs; compared without case), e.g. the
   * configured server's. A request to any other host fails before connecting. Omit to allow
   * any host the guard allows.
   */
  readonly hosts?: readonly string[];
  /** The largest response body, in bytes as received; a larger one fails the request. */
  readonly maxResponseBytes?: number;
  /** Keep sockets open between requests (default true). */
  readonly keepAlive?: boolean;
  /**
   * Called with every refusal, as the request fails with it: a host outside `hosts`, a refused
   * IP literal, or a name the guard's lookup refuses for a new socket (it resolved to a forbidden
   * address since the last check). For drivers that retry failed requests on their own
   * (snowflake-sdk retries result chunks for minutes): fail the query now. Also the way to get
   * the refusal itself when the HTTP client reports socket errors by code and message only.
   */
  readonly onRefused?: (error: Error) => void;
}

/** A guarded agent per protocol; hand both to the driver, and `destroy()` them with it. */
export interface GuardedAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
  /** Closes every socket of both agents. */
  destroy(): void;
}

/** The agent options Node hands `createConnection` (host is the URL's host name). */
type ConnectOptions = http.ClientRequestArgs & { host?: string | null };
type ConnectCallback = (error: Error | null, socket?: Duplex) => void;

/** The part of Node's Agent that places a request (public in Node, missing from @types/node). */
interface RequestPlacing {
  addRequest(request: http.ClientRequest, options: unknown): void;
}

function refuseLater(callback: ConnectCallback, error: Error): undefined {
  // Node's Agent expects the callback after createConnection returns, never a throw.
  process.nextTick(() => callback(error));
  return undefined;
}

/**
 * Creates guarded `http` and `https` agents for one connection. Pass them to the HTTP client
 * (axios `httpAgent`/`httpsAgent`, a driver's agent hook) and set the client's own redirect and
 * size limits too where it has them.
 *
 * @example
 * const agents = createGuardedAgents(context.destinations, {
 *   hosts: [new URL(config.server).hostname],
 *   maxResponseBytes: 64 * 1024 * 1024,
 * });
 */
export function createGuardedAgents(
  guard: DestinationGuard,
  options: GuardedAgentOptions = {},
): GuardedAgents {
  const hosts = options.hosts?.map((h) => h.replace(/^\[(.*)\]$/, '$1').toLowerCase());
  const keepAlive = options.keepAlive ?? true;

  /** Why a connection to `host` must not be made, or undefined; literals are judged here. */
  function refusal(host: string): Error | undefined {
    const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    let error: Error | undefined;
    if (hosts !== undefined && !hosts.includes(name)) {
      error = destinationRefused(
        `the warehouse sent the connector to another host (${JSON.stringify(name)}); only the configured host is used`,
      );
    } else {
      const literal = classifyAddress(name);
      if (literal !== undefined && !addressAllowed(literal, guard.policy)) {
        error = destinationRefused(`${literal.address} is a ${literal.label} address; it is not allowed`);
      }
    }
    if (error !== undefined) options.onRefused?.(error);
    return error;
  }

  // The guard's lookup, reporting its refusals as the others are.
  const onRefused = options.onRefused;
  const lookup: LookupFunction =
    onRefused === undefined
      ? guard.lookup
      : (hostname, lookupOptions, callback) =>
          guard.lookup(hostname, lookupOptions, (error, address, family) => {
            if (isDestinationRefusal(error)) onRefused(error);
            callback(error, address, family);
          });

  function bound(agent: http.Agent): void {
    const max = options.maxResponseBytes;
    if (max === undefined) return;
    const placing = agent as unknown as RequestPlacing;
    const place = placing.addRequest.bind(agent);
    placing.addRequest = (request, requestOptions) => {
      // Registered before the HTTP client's own listener, which attaches its reader in the same
      // turn: no chunk is missed, and the body is cut once it passes the bound.
      request.once('response', (response: http.IncomingMessage) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > max) {
            response.destroy(
              new ConnectorError('QUERY_FAILED', `the warehouse sent a response larger than ${max} bytes`, {
                driverCode: 'RESPONSE_TOO_LARGE',
              }),
            );
          }
        });
      });
      place(request, requestOptions);
    };
  }

  class GuardedHttpAgent extends http.Agent {
    override createConnection(connect: ConnectOptions, callback: ConnectCallback): Duplex | undefined {
      const error = refusal(connect.host ?? 'localhost');
      if (error !== undefined) return refuseLater(callback, error);
      return super.createConnection({ ...connect, lookup }, callback) ?? undefined;
    }
  }
  class GuardedHttpsAgent extends https.Agent {
    override createConnection(connect: ConnectOptions, callback: ConnectCallback): Duplex | undefined {
      const error = refusal(connect.host ?? 'localhost');
      if (error !== undefined) return refuseLater(callback, error);
      return super.createConnection({ ...connect, lookup }, callback) ?? undefined;
    }
  }

  const agents = {
    http: new GuardedHttpAgent({ keepAlive }),
    https: new GuardedHttpsAgent({ keepAlive }),
  };
  bound(agents.http);
  bound(agents.https);
  return {
    ...agents,
    destroy() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
