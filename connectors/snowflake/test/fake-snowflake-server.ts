// TEST CODE: a protocol-level fake of the Snowflake service, for the connector's tests. It speaks
// the REST protocol snowflake-sdk 3.3.0 actually uses (read from its lib/services/sf.js,
// lib/connection/statement.js and lib/connection/result/*) and runs the SQL in an in-memory DuckDB.
//
// What it fakes, on 127.0.0.1 over plain HTTP (point the driver at it with `accessUrl`):
// - POST /session/v1/login-request: password login, and key-pair login (AUTHENTICATOR
//   SNOWFLAKE_JWT): the JWT's RS256 signature is verified against the public key the test
//   registered, and its `iss` (ACCOUNT.USER.SHA256:<key fingerprint>), `sub` and `exp` checked.
//   Wrong credentials get the real 390100 / 390144 answers. The answer carries session and master
//   tokens and the session parameters (TIMEZONE America/Los_Angeles, the output formats, the
//   client's SESSION_PARAMETERS echoed back, e.g. JS_TREAT_INTEGER_AS_BIGINT).
// - Session token checks on every other call: an unknown token gets the real "session expired"
//   answer (HTTP 200, code 390112, success false); POST /session/token-request renews with the
//   master token, or answers 390114 when that is unknown too. expireSessionTokens() expires the
//   session tokens only; killSessions() forgets every token (as SYSTEM$ABORT_SESSION would) and
//   interrupts their queries.
// - POST /queries/v1/query-request: `sqlText`, `bindings` ({"1": {type, value}}: TEXT, FIXED,
//   REAL, BOOLEAN), statement `parameters` STATEMENT_TIMEOUT_IN_SECONDS (the statement is
//   interrupted and answered 000630), MULTI_STATEMENT_COUNT (a count mismatch is refused with
//   000008 before anything runs; default 1) and TIMEZONE (DuckDB's TimeZone for the statement).
//   A statement still running after `holdMs` (the service holds ~45 s) is answered 333333 with
//   `getResultUrl`, and GET /queries/{id}/result holds and answers the same way, so the driver
//   polls. Results use the JSON result format (`rowtype`, text `rowset`, see
//   fake-snowflake-results.ts); rows past `inlineRows` are paged into chunks of `chunkRows`,
//   downloaded from GET /chunks/{id}/{n} with the `qrmk` key header, as from cloud storage.
//   Failed statements get the real error shape (success false, code, sqlState, queryId).
// - POST /queries/v1/abort-request ({requestId}) and POST /queries/{id}/abort-request: the
//   statement's DuckDB connection is interrupted and the pending request answered 000604.
// - POST /session/heartbeat, POST /telemetry/send (recorded), POST /session?delete=true (logout).
// - Every request is recorded in `requests` (method, path, decoded JSON body, authorization).
//
// What it leaves out: HTTPS/OCSP, OAuth/SSO/MFA, Arrow results, real S3/GCS/Azure chunk storage,
// encrypted chunks, PUT/GET file transfer, array and stage binds, multi-statement execution,
// query monitoring endpoints, retry-count handling, warehouses, roles and grants (any registered
// user may run anything: the connector must refuse writes itself, which the tests prove). SQL
// is translated to DuckDB only where the tests need it (see fake-snowflake-sql.ts); each
// Snowflake session is one DuckDB connection running one statement at a time. Answers are shaped
// in fake-snowflake-answers.ts, key-pair logins checked in fake-snowflake-auth.ts, statements run
// in fake-snowflake-statements.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type Answer,
  duckdbFailure,
  failure,
  inProgress,
  ok,
  SESSION_EXPIRED,
} from './fake-snowflake-answers.js';
import { jwtProblem } from './fake-snowflake-auth.js';
import type { WireBind } from './fake-snowflake-results.js';
import { FAKE_WAIT_MACRO } from './fake-snowflake-sql.js';
import {
  type Paging,
  parametersOf,
  type Query,
  runStatement,
  SESSION_DEFAULTS,
  type Session,
  stopStatement,
} from './fake-snowflake-statements.js';

/** A user the fake accepts: a password, a public key (PEM) for key-pair login, or both. */
export interface FakeSnowflakeUser {
  readonly password?: string;
  readonly publicKeyPem?: string;
}

/** Options of {@link startFakeSnowflake}. */
export interface FakeSnowflakeOptions {
  /** Account name logins must give (case-insensitive; default `QUARRY_TEST`). */
  readonly account?: string;
  /** Users by login name (case-insensitive). */
  readonly users: Readonly<Record<string, FakeSnowflakeUser>>;
  /** How long a query request is held before the 333333 "in progress" answer (default 45,000 ms). */
  readonly holdMs?: number;
  /** Rows sent inline with the first answer; the rest are paged into chunks (default 1,000). */
  readonly inlineRows?: number;
  /** Rows per downloaded chunk (default 1,000). */
  readonly chunkRows?: number;
  /**
   * The origin result chunks are addressed on, from the fake's own URL (default: that URL). A
   * hostile service would name another host here; the fake still serves the chunks itself.
   */
  readonly chunkOrigin?: (url: string) => string;
}

/** One request the fake received. */
export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

/** A running fake. */
export interface FakeSnowflakeServer {
  /** `http://127.0.0.1:<port>`, for the connector's `accessUrl`. */
  readonly url: string;
  readonly account: string;
  /** Every request received, in order. */
  readonly requests: FakeRequest[];
  /** Runs SQL directly in the fake's DuckDB (fixtures), bypassing the protocol. */
  run(sql: string): Promise<void>;
  /** Statements queued or running whose text contains `marker`. */
  runningQueries(marker: string): number;
  /** Invalidates every session's tokens and interrupts their statements. */
  killSessions(): void;
  /** Expires every session token (as after an hour); master tokens still renew them. */
  expireSessionTokens(): void;
  /** Sessions logged in and not logged out or killed. */
  sessionCount(): number;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let raw = Buffer.concat(chunks);
  // snowflake-sdk gzips bodies asynchronously and may label a body gzip it sent plain: sniff.
  if (raw[0] === 0x1f && raw[1] === 0x8b) raw = gunzipSync(raw);
  return raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
}

function tokenOf(req: IncomingMessage): string | undefined {
  return /^Snowflake Token="([^"]*)"$/.exec(req.headers.authorization ?? '')?.[1];
}

function sleep(ms: number): { promise: Promise<undefined>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Starts the fake on 127.0.0.1 with an ephemeral port and an empty in-memory DuckDB. */
export async function startFakeSnowflake(options: FakeSnowflakeOptions): Promise<FakeSnowflakeServer> {
  const account = options.account ?? 'QUARRY_TEST';
  const holdMs = options.holdMs ?? 45_000;
  const inlineRows = options.inlineRows ?? 1_000;
  const chunkRows = options.chunkRows ?? 1_000;
  const users = new Map(Object.entries(options.users).map(([name, user]) => [name.toUpperCase(), user]));
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const admin = await instance.connect();
  await admin.run(FAKE_WAIT_MACRO);
  const requests: FakeRequest[] = [];
  const sessions = new Set<Session>();
  const bySessionToken = new Map<string, Session>();
  const byMasterToken = new Map<string, Session>();
  const queries = new Map<string, Query>();
  const byRequestId = new Map<string, Query>();
  /** DuckDB connections of ended sessions, closing once their last statement settled. */
  const closing: Promise<void>[] = [];
  let nextSessionId = 1_000_000;
  const paging: Paging = {
    inlineRows,
    chunkRows,
    chunkUrl: (queryId, index) =>
      `${options.chunkOrigin?.(server.url) ?? server.url}/chunks/${queryId}/${index}`,
  };

  function issueTokens(session: Session): void {
    bySessionToken.delete(session.token);
    byMasterToken.delete(session.master);
    session.token = `ST-${randomBytes(24).toString('hex')}`;
    session.master = `MT-${randomBytes(24).toString('hex')}`;
    bySessionToken.set(session.token, session);
    byMasterToken.set(session.master, session);
  }

  function endSession(session: Session): void {
    if (!session.alive) return;
    session.alive = false;
    sessions.delete(session);
    bySessionToken.delete(session.token);
    byMasterToken.delete(session.master);
    for (const query of queries.values()) if (query.session === session) stopStatement(query, 'cancel');
    // Close once its running statement (if any) has settled.
    closing.push(session.queue.then(() => session.connection.closeSync()));
  }

  async function login(body: unknown, search: URLSearchParams): Promise<Answer> {
    const data = ((body as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<
      string,
      unknown
    >;
    const userName = String(data.LOGIN_NAME ?? '');
    const user = users.get(userName.toUpperCase());
    const sameAccount = String(data.ACCOUNT_NAME ?? '').toUpperCase() === account.toUpperCase();
    if (data.AUTHENTICATOR === 'SNOWFLAKE_JWT') {
      const problem = sameAccount
        ? jwtProblem(data.TOKEN, account, userName, user?.publicKeyPem)
        : 'wrong account';
      if (problem !== undefined) {
        return failure('390144', `JWT token is invalid. [${problem}]`, {
          nextAction: 'RETRY_LOGIN',
          authnMethod: 'KEY_PAIR',
          signInOptions: {},
        });
      }
    } else if (!sameAccount || user?.password === undefined || data.PASSWORD !== user.password) {
      return failure('390100', 'Incorrect username or password was specified.', {
        nextAction: 'RETRY_LOGIN',
        authnMethod: 'USERNAME_PASSWORD',
        signInOptions: {},
      });
    }
    const connection = await instance.connect();
    const clientParams = (data.SESSION_PARAMETERS ?? {}) as Record<string, unknown>;
    const session: Session = {
      id: nextSessionId++,
      token: '',
      master: '',
      connection,
      params: { ...SESSION_DEFAULTS, ...clientParams },
      context: {
        databaseName: search.get('databaseName'),
        schemaName: search.get('schemaName'),
        warehouseName: search.get('warehouse'),
        roleName: search.get('roleName') ?? 'PUBLIC',
      },
      timezone: '',
      queue: Promise.resolve(),
      alive: true,
    };
    issueTokens(session);
    sessions.add(session);
    return ok({
      masterToken: session.master,
      token: session.token,
      validityInSeconds: 3600,
      masterValidityInSeconds: 14_400,
      displayUserName: userName.toUpperCase(),
      serverVersion: '9.0.0-fake',
      firstLogin: false,
      remMeToken: null,
      remMeValidityInSeconds: 0,
      healthCheckInterval: 45,
      newClientForUpgrade: null,
      sessionId: session.id,
      parameters: parametersOf(session, {}),
      sessionInfo: session.context,
      idToken: null,
      idTokenValidityInSeconds: 0,
      responseData: null,
      mfaToken: null,
      mfaTokenValidityInSeconds: 0,
    });
  }

  function submit(session: Session, body: Record<string, unknown>, requestId: string): Query {
    let settle: (answer: Answer) => void = () => {};
    const query: Query = {
      id: randomUUID(),
      requestId,
      sql: String(body.sqlText ?? ''),
      session,
      state: 'queued',
      stopped: undefined,
      timeoutSeconds: 0,
      answer: undefined,
      done: new Promise<Answer>((resolve) => {
        settle = resolve;
      }),
      chunks: [],
      qrmk: randomBytes(32).toString('base64'),
    };
    const previous = session.queue;
    session.queue = query.done;
    const statementParams = (body.parameters ?? {}) as Record<string, unknown>;
    const bindings = (body.bindings ?? {}) as Record<string, WireBind>;
    runStatement(query, previous, statementParams, bindings, paging)
      .catch((error: unknown) => duckdbFailure(query.id, error))
      .then((answer) => {
        query.state = 'done';
        query.answer = answer;
        settle(answer);
      });
    queries.set(query.id, query);
    byRequestId.set(requestId, query);
    return query;
  }

  /** The query's answer if it settles within the hold time, else the 333333 "in progress" answer. */
  async function answerWithin(query: Query): Promise<Answer> {
    if (query.answer !== undefined) return query.answer;
    const hold = sleep(holdMs);
    try {
      return (await Promise.race([query.done, hold.promise])) ?? inProgress(query.id);
    } finally {
      hold.cancel();
    }
  }

  function sessionOf(req: IncomingMessage): Session | undefined {
    const token = tokenOf(req);
    return token === undefined ? undefined : bySessionToken.get(token);
  }

  async function route(
    req: IncomingMessage,
    path: string,
    search: URLSearchParams,
    body: unknown,
  ): Promise<Answer> {
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/session/v1/login-request') return login(body, search);
    if (method === 'POST' && path === '/session/token-request') {
      const session = byMasterToken.get(tokenOf(req) ?? '');
      if (session === undefined || !session.alive) {
        return failure('390114', 'Authentication token has expired.  The user must authenticate again.');
      }
      issueTokens(session);
      return ok({
        sessionToken: session.token,
        validityInSecondsST: 3600,
        masterToken: session.master,
        validityInSecondsMT: 14_400,
        sessionId: session.id,
      });
    }
    const chunk = /^\/chunks\/([0-9a-f-]+)\/(\d+)$/.exec(path);
    if (method === 'GET' && chunk !== null) {
      const query = queries.get(chunk[1] as string);
      const text = query?.chunks[Number(chunk[2])];
      if (query === undefined || text === undefined) return { status: 404, body: 'no such chunk' };
      if (req.headers['x-amz-server-side-encryption-customer-key'] !== query.qrmk)
        return { status: 403, body: 'bad key' };
      return { status: 200, body: text };
    }
    const session = sessionOf(req);
    if (session === undefined) return SESSION_EXPIRED;
    if (method === 'POST' && path === '/session/heartbeat') return ok(null);
    if (method === 'POST' && path === '/telemetry/send') return ok('Log Received');
    if (method === 'POST' && path === '/session' && search.get('delete') === 'true') {
      endSession(session);
      return ok(null);
    }
    if (method === 'POST' && path === '/queries/v1/query-request') {
      const query = submit(
        session,
        (body ?? {}) as Record<string, unknown>,
        search.get('requestId') ?? randomUUID(),
      );
      return answerWithin(query);
    }
    if (method === 'POST' && path === '/queries/v1/abort-request') {
      const query = byRequestId.get(String((body as { requestId?: unknown } | undefined)?.requestId));
      if (query !== undefined && query.session === session) stopStatement(query, 'cancel');
      return ok(null);
    }
    const byId = /^\/queries\/([0-9a-f-]+)\/(result|abort-request)$/.exec(path);
    const query = byId === null ? undefined : queries.get(byId[1] as string);
    if (byId !== null && (query === undefined || query.session !== session)) {
      return failure('000709', `Statement ${byId[1]} not found`);
    }
    if (query !== undefined && method === 'GET' && byId?.[2] === 'result') return answerWithin(query);
    if (query !== undefined && method === 'POST' && byId?.[2] === 'abort-request') {
      stopStatement(query, 'cancel');
      return ok(null);
    }
    return { status: 404, body: { data: null, code: '404', message: 'not faked', success: false } };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    let answer: Answer;
    try {
      const body = await readBody(req);
      requests.push({
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        body,
      });
      answer = await route(req, url.pathname, url.searchParams, body);
    } catch (error) {
      answer = { status: 500, body: { success: false, message: String(error) } };
    }
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    res.writeHead(answer.status, {
      'content-type': typeof answer.body === 'string' ? 'application/octet-stream' : 'application/json',
    });
    res.end(text);
  }

  const http = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const server = { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };

  return {
    url: server.url,
    account,
    requests,
    async run(sql) {
      await admin.run(sql);
    },
    runningQueries(marker) {
      let count = 0;
      for (const query of queries.values()) if (query.state !== 'done' && query.sql.includes(marker)) count++;
      return count;
    },
    killSessions() {
      for (const session of [...sessions]) endSession(session);
    },
    expireSessionTokens() {
      bySessionToken.clear();
    },
    sessionCount: () => sessions.size,
    async close() {
      for (const query of queries.values()) stopStatement(query, 'cancel');
      for (const session of [...sessions]) endSession(session);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.allSettled([...queries.values()].map((query) => query.done));
      await Promise.allSettled(closing);
      admin.closeSync();
      instance.closeSync();
    },
  };
}
