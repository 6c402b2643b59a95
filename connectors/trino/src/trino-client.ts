// Creates trino-client instances the way the connector needs them. trino-client 0.2.9 keeps one
// axios config per instance and rewrites its headers from every response (Set-Session,
// Added-Prepare, Set-Catalog, …), so an instance shared by several queries would carry one
// query's session state into the next: every query gets a fresh instance. trino-client offers no
// option for what the connector must control, so four fields of that axios config are set
// directly (the only use of trino-client internals, checked when an instance is created):
// `transformResponse` (exact BIGINTs, and each page seen as it arrives), the driver's shared
// guarded keep-alive agents (instances come and go, connections stay; every socket goes to a
// checked address of the configured host), `signal` (cancel a pending long poll) and
// `timeout`; `proxy: false` keeps environment proxies out of the request path, `maxRedirects: 0`
// and `maxContentLength` keep a hostile coordinator from sending us elsewhere or flooding us.
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { ConnectorError } from '@quarry/sdk-connector';
import { BasicAuth, type ConnectionOptions, type QueryResult, Trino } from 'trino-client';
import type { TrinoSettings } from './trino-config.js';
import { parseTrinoJson } from './trino-json.js';

/** The axios config fields of a trino-client instance that the connector sets. */
interface AxiosConfigSlots {
  baseURL?: unknown;
  transformResponse?: ((data: unknown) => unknown)[];
  httpAgent?: HttpAgent;
  httpsAgent?: HttpsAgent;
  signal?: AbortSignal;
  timeout?: number;
  proxy?: false;
  maxRedirects?: number;
  maxContentLength?: number;
}

/**
 * The largest response the connector reads (decompressed): a Trino page is about 1 MB by
 * default (`target-result-size`, at most 128 MB when raised); 64 MiB leaves room for raised
 * settings and keeps a hostile server from filling the gateway's heap.
 */
export const TRINO_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Keep-alive agents shared by every request of one connector. */
export interface TrinoAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
}

/** Per-client options. */
export interface TrinoClientOptions {
  /** Aborts every pending request of this client. */
  readonly signal?: AbortSignal;
  /** axios's per-request timeout, in ms. */
  readonly timeoutMs: number;
  /** The configured server's origin: a response whose `nextUri` leaves it fails the request. */
  readonly origin?: string;
  /** Called with every parsed response body (e.g. to learn a query's id from the POST). */
  readonly onResponse?: (body: QueryResult) => void;
}

/**
 * A `nextUri` is the server's to choose, so it is attacker input: followed only on the
 * configured origin (the guarded agents would refuse another host too; this names the problem).
 */
function checkNextUri(configured: string, nextUri: string): void {
  let origin: string | undefined;
  try {
    origin = new URL(nextUri, configured).origin;
  } catch {
    origin = undefined;
  }
  if (origin !== configured) {
    throw new ConnectorError(
      'QUERY_FAILED',
      'the Trino server sent a nextUri on another origin than the configured server; it was not followed',
      { driverCode: 'NEXT_URI_OFF_ORIGIN' },
    );
  }
}

/** The axios config inside a trino-client instance; throws when trino-client's internals changed. */
function axiosConfigOf(trino: Trino): AxiosConfigSlots {
  const client = (trino as unknown as { client?: { clientConfig?: unknown } }).client;
  const config = client?.clientConfig;
  if (typeof config !== 'object' || config === null || !('baseURL' in config)) {
    throw new Error(
      'trino-client internals changed (Trino.client.clientConfig is missing): the Trino connector is written for trino-client 0.2.9',
    );
  }
  return config as AxiosConfigSlots;
}

/** The connection options every client of a connector shares. */
export function trinoConnectionOptions(settings: TrinoSettings): ConnectionOptions {
  const headers: Record<string, string> = {
    // trino-client defaults X-Trino-User to the gateway process's OS user ($USER) otherwise.
    'X-Trino-User': settings.user,
    // Timestamps without a zone and date arithmetic follow the session zone: pin it, as the
    // other connectors do, whatever the coordinator's JVM zone is.
    'X-Trino-Time-Zone': 'UTC',
  };
  if (settings.auth.kind === 'jwt') headers.Authorization = `Bearer ${settings.auth.token}`;
  return {
    server: settings.server,
    source: settings.source,
    ...(settings.catalog === undefined ? {} : { catalog: settings.catalog }),
    ...(settings.schema === undefined ? {} : { schema: settings.schema }),
    ...(settings.auth.kind === 'basic' ? { auth: new BasicAuth(settings.user, settings.auth.password) } : {}),
    extraHeaders: headers,
  };
}

/** A fresh trino-client instance with exact numbers, the shared agents, and `options` applied. */
export function createTrinoClient(
  connection: ConnectionOptions,
  agents: TrinoAgents,
  options: TrinoClientOptions,
): Trino {
  const trino = Trino.create(connection);
  const config = axiosConfigOf(trino);
  const onResponse = options.onResponse;
  config.transformResponse = [
    (data: unknown): unknown => {
      if (typeof data !== 'string' || data.length === 0) return data;
      let body: unknown;
      try {
        body = parseTrinoJson(data);
      } catch {
        return data; // an HTML or text error page: axios reports its status
      }
      if (body === null || typeof body !== 'object') return body;
      // Thrown here, the request rejects with it before trino-client can follow the nextUri.
      const next = (body as QueryResult).nextUri;
      if (options.origin !== undefined && typeof next === 'string') checkNextUri(options.origin, next);
      onResponse?.(body as QueryResult);
      return body;
    },
  ];
  config.httpAgent = agents.http;
  config.httpsAgent = agents.https;
  config.timeout = options.timeoutMs;
  config.proxy = false;
  // The coordinator never needs to send us elsewhere: no redirect is followed (a 3xx fails).
  config.maxRedirects = 0;
  config.maxContentLength = TRINO_MAX_RESPONSE_BYTES;
  if (options.signal !== undefined) config.signal = options.signal;
  return trino;
}
