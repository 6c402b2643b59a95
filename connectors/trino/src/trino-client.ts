// Creates trino-client instances the way the connector needs them. trino-client 0.2.9 keeps one
// axios config per instance and rewrites its headers from every response (Set-Session,
// Added-Prepare, Set-Catalog, …), so an instance shared by several queries would carry one
// query's session state into the next: every query gets a fresh instance. trino-client offers no
// option for what the connector must control, so four fields of that axios config are set
// directly (the only use of trino-client internals, checked when an instance is created):
// `transformResponse` (exact BIGINTs, and each page seen as it arrives), the driver's shared
// keep-alive agents (instances come and go, connections stay), `signal` (cancel a pending
// long poll) and `timeout`; `proxy: false` keeps environment proxies out of the request path.
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
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
}

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
  /** Called with every parsed response body (e.g. to learn a query's id from the POST). */
  readonly onResponse?: (body: QueryResult) => void;
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
      if (onResponse !== undefined && body !== null && typeof body === 'object')
        onResponse(body as QueryResult);
      return body;
    },
  ];
  config.httpAgent = agents.http;
  config.httpsAgent = agents.https;
  config.timeout = options.timeoutMs;
  config.proxy = false;
  if (options.signal !== undefined) config.signal = options.signal;
  return trino;
}
