// A protocol-level fake of a Trino coordinator (test code), speaking exactly what trino-client
// 0.2.9 sends and parses, with DuckDB executing the SQL behind it. It listens on 127.0.0.1 on an
// ephemeral port (named `hostName` in the URLs it answers with, when given).
//
// Faked (Trino's client REST protocol):
// - POST /v1/statement: body = SQL text; reads X-Trino-User (400 without it), -Catalog, -Schema
//   (`USE catalog.schema` in DuckDB; the in-memory database is catalog `memory`, schema `main`),
//   -Session (`query_max_execution_time` is enforced: the query fails with EXCEEDED_TIME_LIMIT),
//   -Time-Zone (the DuckDB TimeZone; without it the "coordinator's" zone, America/Los_Angeles),
//   -Source and Authorization (basic or bearer, when the fake is given credentials: 401 with
//   WWW-Authenticate otherwise). Answers QUEUED with `id`, `infoUri`, `nextUri`, `stats`.
// - GET nextUri (`/v1/statement/queued/{id}/{slug}/{token}`, then `/executing/…`): QUEUED for
//   `queuedPolls` answers, then RUNNING without data `runningPolls` times and for as long as
//   DuckDB runs (each a long poll of `pollWaitMs`), then `pageSize` rows per page with `columns` (Trino type names and client type signatures) on
//   every page, the last data page followed by a FINISHED page without `nextUri`. Tokens are
//   idempotent: the same nextUri gives the same page. A failed query answers a page with
//   `error` = {message, errorCode, errorName, errorType, failureInfo, errorLocation} and no
//   `nextUri` (Trino's StandardErrorCode names, numbers and types); `failAfterPages` makes a
//   query fail after some data pages, as a Trino query can.
// - DELETE /v1/query/{id} (trino-client's cancel) and DELETE of a nextUri: DuckDB interrupt(),
//   the query ends FAILED with USER_CANCELED; 204.
// - GET /v1/query (the list of queries with `queryId`, `state`, `query`; `?state=` filters), GET
//   /v1/query/{id}, GET /v1/info.
// - SQL (fake-trino-engine.ts, fake-trino-sql.ts): EXECUTE IMMEDIATE '<sql>' USING <literals> is
//   parsed, the literals evaluated in DuckDB with `SELECT <lit>, …`, the inner SQL prepared and
//   those values bound with their types. `;` anywhere outside strings fails with SYNTAX_ERROR, as in Trino. The
//   Trino → DuckDB translations are listed in fake-trino-sql.ts; values are written as Trino
//   writes them (fake-trino-wire.ts), BIGINTs as full-precision JSON numbers.
// - Test hooks: `responseHeaders` (sent on every statement response, e.g. X-Trino-Set-Session),
//   `refuseNext(status)`, `failAfterPages`, `dropConnections()`, and the recorded `requests`.
//
// Left out: the spooling protocol, X-Trino-Client-Capabilities (answers are always for a client
// without PARAMETRIC_DATETIME, which is trino-client), PREPARE/DEALLOCATE and the
// X-Trino-Prepared-Statement header, transactions, roles, OAuth2 redirects, TLS, resource
// groups and real queueing, query stats beyond `state`, most of Trino's SQL (DuckDB's dialect
// answers anything the translations do not cover), and Trino's abandoned-query timeout.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type DuckDBConnection, DuckDBInstance, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';
import {
  durationMs,
  errorBody,
  header,
  runStatement,
  sessionProperties,
  trinoErrorOf,
} from './fake-trino-engine.js';
import { FakeTrinoError } from './fake-trino-sql.js';
import { pageJson, type WireColumn, wireColumn, wireValue } from './fake-trino-wire.js';

/** Options of {@link startFakeTrino}. */
export interface FakeTrinoOptions {
  /** Credentials the fake requires (basic user/password, or a bearer token); none by default. */
  readonly auth?: { readonly user: string; readonly password: string } | { readonly token: string };
  /** Rows per data page (default 3: small, so results span several pages). */
  readonly pageSize?: number;
  /** QUEUED answers before a query reports RUNNING (default 1). */
  readonly queuedPolls?: number;
  /** RUNNING answers without data before the first result page, even when DuckDB is done (default 1). */
  readonly runningPolls?: number;
  /** How long a nextUri GET waits for a running query before answering RUNNING without data (default 100 ms). */
  readonly pollWaitMs?: number;
  /** The session time zone without X-Trino-Time-Zone (default America/Los_Angeles). */
  readonly defaultTimeZone?: string;
  /** The host name in `url` and every URL the fake answers with (default `127.0.0.1`). */
  readonly hostName?: string;
}

/** Trino's query states the fake goes through. */
export type FakeQueryState = 'QUEUED' | 'RUNNING' | 'FINISHED' | 'FAILED';

/** One query the fake received. */
export interface FakeQuery {
  readonly id: string;
  /** The statement text as POSTed. */
  readonly sql: string;
  /** The POST's headers. */
  readonly headers: IncomingHttpHeaders;
  readonly state: FakeQueryState;
  /** nextUri GETs answered with a result page (data, the final page, or the failure). */
  readonly pagesServed: number;
  /** What each answer to this query was: QUEUED, RUNNING (no data), DATA, FINISHED or FAILED. */
  readonly served: readonly string[];
  /** Whether a DELETE (of the query or a nextUri) arrived. */
  readonly deleted: boolean;
}

/** One HTTP request the fake received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/** A running fake coordinator. */
export interface FakeTrino {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Headers added to every statement response (POST and nextUri GETs). */
  responseHeaders: Record<string, string>;
  /** The queries received so far, oldest first. */
  queries(): readonly FakeQuery[];
  /** Runs SQL directly in the fake's DuckDB (fixtures; e.g. ATTACH ':memory:' AS hive). */
  sql(statement: string): Promise<void>;
  /** Queries whose text contains `marker` that are QUEUED or RUNNING. */
  runningQueries(marker: string): number;
  /** Makes queries whose text contains `marker` fail with DIVISION_BY_ZERO after `pages` data pages. */
  failAfterPages(marker: string, pages: number): void;
  /** Answers the next `count` POSTs with this HTTP status and a text body. */
  refuseNext(status: number, count?: number): void;
  /** Destroys every open client connection, as a restarting coordinator would. */
  dropConnections(): void;
  close(): Promise<void>;
}

interface QueryRecord {
  readonly id: string;
  readonly slug: string;
  readonly sql: string;
  readonly headers: IncomingHttpHeaders;
  readonly served: string[];
  state: FakeQueryState;
  pagesServed: number;
  deleted: boolean;
  cancelled: boolean;
  timedOut: boolean;
  queuedLeft: number;
  runningLeft: number;
  connection: DuckDBConnection | undefined;
  columns: WireColumn[] | undefined;
  types: DuckDBType[];
  rows: DuckDBValue[][];
  failure: FakeTrinoError | undefined;
  failAfterPages: number | undefined;
  readonly done: Promise<void>;
}

function queryId(sequence: number): string {
  const now = new Date().toISOString().replace(/[-:T]/g, '');
  return `${now.slice(0, 8)}_${now.slice(8, 14)}_${String(sequence).padStart(5, '0')}_${randomBytes(3).toString('hex').slice(0, 5)}`;
}

/** Starts a fake coordinator with an in-memory DuckDB (catalog `memory`, schema `main`). */
export async function startFakeTrino(options: FakeTrinoOptions = {}): Promise<FakeTrino> {
  const pageSize = options.pageSize ?? 3;
  const queuedPolls = options.queuedPolls ?? 1;
  const runningPolls = options.runningPolls ?? 1;
  const pollWaitMs = options.pollWaitMs ?? 100;
  const defaultTimeZone = options.defaultTimeZone ?? 'America/Los_Angeles';
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const admin = await db.connect();
  const queries = new Map<string, QueryRecord>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const failures = new Map<string, number>();
  let refusals: { status: number; count: number } | undefined;
  let sequence = 0;
  let base = '';

  function authorized(headers: IncomingHttpHeaders): boolean {
    const auth = options.auth;
    if (auth === undefined) return true;
    const given = header(headers, 'authorization') ?? '';
    if ('token' in auth) return given === `Bearer ${auth.token}`;
    return given === `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  }

  async function run(query: QueryRecord): Promise<void> {
    if (query.cancelled) throw new FakeTrinoError('USER_CANCELED', 'Query was canceled');
    query.state = 'RUNNING';
    const connection = await db.connect();
    query.connection = connection;
    const limit = durationMs(
      sessionProperties(query.headers['x-trino-session']).get('query_max_execution_time') ?? '',
    );
    const timer =
      limit === undefined
        ? undefined
        : setTimeout(() => {
            query.timedOut = true;
            void interruptUntilSettled(query);
          }, limit);
    // A stop that came in between two statements must not let the next one run.
    const checkStopped = (): void => {
      if (query.cancelled || query.timedOut) throw new Error('INTERRUPT Error: Interrupted!');
    };
    try {
      const result = await runStatement(connection, query.sql, query.headers, defaultTimeZone, checkStopped);
      query.types = result.types;
      query.columns = result.types.map((type, i) => wireColumn(result.names[i] ?? `_col${i}`, type));
      query.rows = result.rows;
      query.state = 'FINISHED';
    } finally {
      clearTimeout(timer);
      query.connection = undefined;
      connection.closeSync();
    }
  }

  function startQuery(sql: string, headers: IncomingHttpHeaders): QueryRecord {
    let resolve!: () => void;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const marker = [...failures.keys()].find((m) => sql.includes(m));
    const query: QueryRecord = {
      id: queryId(++sequence),
      slug: randomBytes(8).toString('hex'),
      sql,
      headers,
      served: [],
      state: 'QUEUED',
      pagesServed: 0,
      deleted: false,
      cancelled: false,
      timedOut: false,
      queuedLeft: queuedPolls,
      runningLeft: runningPolls,
      connection: undefined,
      columns: undefined,
      types: [],
      rows: [],
      failure: undefined,
      failAfterPages: marker === undefined ? undefined : failures.get(marker),
      done,
    };
    queries.set(query.id, query);
    setImmediate(() => {
      run(query)
        .catch((error: unknown) => {
          query.failure = trinoErrorOf(error, query.timedOut);
          query.state = 'FAILED';
        })
        .finally(resolve);
    });
    return query;
  }

  function stats(state: string): object {
    return {
      state,
      queued: state === 'QUEUED',
      scheduled: state !== 'QUEUED',
      nodes: 1,
      totalSplits: 0,
      queuedSplits: 0,
      runningSplits: 0,
      completedSplits: 0,
      cpuTimeMillis: 0,
      wallTimeMillis: 0,
      queuedTimeMillis: 0,
      elapsedTimeMillis: 0,
      processedRows: 0,
      processedBytes: 0,
      physicalInputBytes: 0,
      peakMemoryBytes: 0,
      spilledBytes: 0,
    };
  }

  function uri(query: QueryRecord, phase: 'queued' | 'executing', token: number): string {
    return `${base}/v1/statement/${phase}/${query.id}/${query.slug}/${token}`;
  }

  /** The answer for nextUri token `token` of `phase` (pages are a function of the token: idempotent). */
  async function page(query: QueryRecord, phase: string, token: number): Promise<string> {
    const head = { id: query.id, infoUri: `${base}/ui/query.html?${query.id}` };
    if (phase === 'queued' && query.queuedLeft > 0 && query.state !== 'FAILED') {
      query.queuedLeft--;
      query.served.push('QUEUED');
      return pageJson(
        { ...head, nextUri: uri(query, 'queued', token + 1), stats: stats('QUEUED'), warnings: [] },
        undefined,
      );
    }
    const index = phase === 'queued' ? 0 : token;
    if (query.state === 'QUEUED' || query.state === 'RUNNING') {
      await Promise.race([query.done, sleep(pollWaitMs)]);
    }
    if (
      query.state === 'QUEUED' ||
      query.state === 'RUNNING' ||
      (query.runningLeft > 0 && query.state === 'FINISHED')
    ) {
      // Still running (or told to say so): the same page is asked for again with the next token.
      query.runningLeft = Math.max(0, query.runningLeft - 1);
      query.served.push('RUNNING');
      return pageJson(
        { ...head, nextUri: uri(query, 'executing', index), stats: stats('RUNNING'), warnings: [] },
        undefined,
      );
    }
    query.pagesServed++;
    const failAt = query.failAfterPages;
    if (query.failure !== undefined || (failAt !== undefined && index >= failAt)) {
      const failure = query.failure ?? new FakeTrinoError('DIVISION_BY_ZERO', 'Division by zero');
      query.served.push('FAILED');
      return pageJson(
        { ...head, stats: stats('FAILED'), error: errorBody(failure), warnings: [] },
        undefined,
      );
    }
    const slice = query.rows.slice(index * pageSize, (index + 1) * pageSize);
    const columns = query.columns;
    if (slice.length === 0) {
      query.served.push('FINISHED');
      return pageJson({ ...head, columns, stats: stats('FINISHED'), warnings: [] }, undefined);
    }
    query.served.push('DATA');
    const data = `[${slice.map((row) => `[${row.map((v, c) => wireValue(v, query.types[c]!)).join(',')}]`).join(',')}]`;
    return pageJson(
      {
        ...head,
        nextUri: uri(query, 'executing', index + 1),
        columns,
        stats: stats('RUNNING'),
        warnings: [],
      },
      data,
    );
  }

  /**
   * Interrupts the query's DuckDB connection until the query settles: DuckDB forgets an interrupt
   * that arrives before its statement starts, so one call could be lost.
   */
  async function interruptUntilSettled(query: QueryRecord): Promise<void> {
    while (query.state === 'QUEUED' || query.state === 'RUNNING') {
      query.connection?.interrupt();
      await Promise.race([query.done, sleep(10)]);
    }
  }

  function cancel(query: QueryRecord): void {
    query.deleted = true;
    if (query.state === 'FINISHED' || query.state === 'FAILED') return;
    query.cancelled = true;
    void interruptUntilSettled(query);
  }

  function listing(query: QueryRecord): object {
    return {
      queryId: query.id,
      state: query.state,
      query: query.sql,
      self: `${base}/v1/query/${query.id}`,
      session: {
        user: header(query.headers, 'x-trino-user'),
        source: header(query.headers, 'x-trino-source'),
      },
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    requests.push({ method, path, headers: req.headers });
    const json = (status: number, text: string, extra: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...extra });
      res.end(text);
    };
    if (method === 'GET' && path === '/v1/info') {
      json(
        200,
        JSON.stringify({
          nodeVersion: { version: '476-fake' },
          environment: 'test',
          coordinator: true,
          starting: false,
          uptime: '1.00m',
        }),
      );
      return;
    }
    if (!authorized(req.headers)) {
      const scheme = options.auth !== undefined && 'token' in options.auth ? 'Bearer' : 'Basic realm="Trino"';
      res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': scheme });
      res.end('Unauthorized');
      return;
    }
    if (method === 'POST' && path === '/v1/statement') {
      if (refusals !== undefined && refusals.count > 0) {
        refusals.count--;
        res.writeHead(refusals.status, { 'Content-Type': 'text/plain' });
        res.end('refused by the fake');
        return;
      }
      if (header(req.headers, 'x-trino-user') === undefined) {
        res.writeHead(400, { 'Content-Type': 'text/plain' });
        res.end('User must be set');
        return;
      }
      const query = startQuery(body, req.headers);
      json(
        200,
        pageJson(
          {
            id: query.id,
            infoUri: `${base}/ui/query.html?${query.id}`,
            nextUri: uri(query, 'queued', 1),
            stats: stats('QUEUED'),
            warnings: [],
          },
          undefined,
        ),
        fake.responseHeaders,
      );
      return;
    }
    const statement = /^\/v1\/statement\/(queued|executing)\/([^/]+)\/([^/]+)\/(\d+)$/.exec(path);
    if (statement !== null) {
      const query = queries.get(statement[2]!);
      if (query === undefined || query.slug !== statement[3]) {
        json(404, JSON.stringify({ message: 'Query not found' }));
      } else if (method === 'DELETE') {
        cancel(query);
        res.writeHead(204).end();
      } else {
        json(200, await page(query, statement[1]!, Number(statement[4])), fake.responseHeaders);
      }
      return;
    }
    const one = /^\/v1\/query\/([^/]+)$/.exec(path);
    if (one !== null) {
      const query = queries.get(one[1]!);
      if (query === undefined) json(404, JSON.stringify({ message: 'Query not found' }));
      else if (method === 'DELETE') {
        cancel(query);
        res.writeHead(204).end();
      } else json(200, JSON.stringify(listing(query)));
      return;
    }
    if (method === 'GET' && path === '/v1/query') {
      const state = url.searchParams.get('state')?.toUpperCase();
      const list = [...queries.values()].filter((q) => state === undefined || q.state === state);
      json(200, JSON.stringify(list.map(listing)));
      return;
    }
    json(404, JSON.stringify({ message: `no route for ${method} ${path}` }));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end(String(error));
      });
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://${options.hostName ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;

  const fake: FakeTrino = {
    url: base,
    requests,
    responseHeaders: {},
    queries: () =>
      [...queries.values()].map((q) => ({
        id: q.id,
        sql: q.sql,
        headers: q.headers,
        state: q.state,
        pagesServed: q.pagesServed,
        served: [...q.served],
        deleted: q.deleted,
      })),
    async sql(statement: string) {
      await admin.run(statement);
    },
    runningQueries(marker: string) {
      return [...queries.values()].filter(
        (q) => (q.state === 'QUEUED' || q.state === 'RUNNING') && q.sql.includes(marker),
      ).length;
    },
    failAfterPages(marker: string, pages: number) {
      failures.set(marker, pages);
    },
    refuseNext(status: number, count = 1) {
      refusals = { status, count };
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    async close() {
      for (const query of queries.values()) cancel(query);
      await Promise.all([...queries.values()].map((q) => q.done));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      admin.closeSync();
      db.closeSync();
    },
  };
  return fake;
}
