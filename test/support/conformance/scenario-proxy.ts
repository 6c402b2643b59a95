// The conformance suite's HTTP proxy in front of one real gateway. A client under test is given
// the base URL `<proxy>/s/<runner>/<case>`: the proxy strips that prefix, forwards the request,
// records it in that case's log, and plays the case's scenario (clients/conformance/README.md):
//   pass                the gateway's answer as it is
//   slow                every answer 3 s late (a client's overall timeout)
//   short-token         the token endpoint's `expires_in` cut to 3 s (refresh before expiry)
//   reject-first-token  the first API call answered 401 as if its token were revoked
//   lose-first-query    the first POST /v1/query served by the gateway, then the connection
//                       dropped before the client sees the answer (a retry must not charge twice)
// `GET <proxy>/__check/<runner>/<case>` checks the case's `traffic` expectations against the log
// and answers `{ok, problems, log}`, so every language's runner asserts the same rules.
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConformanceCase, Scenario } from './conformance-cases.js';
import { checkTraffic, type LoggedRequest } from './traffic-check.js';

export interface ScenarioProxy {
  readonly url: string;
  /** The log of one case as one runner played it. */
  log(runner: string, caseName: string): readonly LoggedRequest[];
  close(): Promise<void>;
}

const SLOW_MS = 3000;
const SHORT_TOKEN_SECONDS = 3;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function retryAfterOf(body: string): number | null {
  try {
    const value = (JSON.parse(body) as { error?: { retry_after?: unknown } }).error?.retry_after;
    return typeof value === 'number' ? value : null;
  } catch {
    return null;
  }
}

/** The token's last 12 characters: enough to tell two tokens apart without logging either. */
function bearerOf(req: IncomingMessage): string | null {
  const value = req.headers.authorization;
  return typeof value === 'string' && value.startsWith('Bearer ') ? value.slice(-12) : null;
}

export async function startScenarioProxy(
  target: string,
  cases: readonly ConformanceCase[],
): Promise<ScenarioProxy> {
  const upstream = new URL(target);
  const scenarios = new Map<string, Scenario>(cases.map((c) => [c.name, c.scenario ?? 'pass']));
  const byName = new Map(cases.map((c) => [c.name, c]));
  const logs = new Map<string, LoggedRequest[]>();
  const logOf = (runner: string, name: string) => {
    const key = `${runner}/${name}`;
    let log = logs.get(key);
    if (!log) {
      log = [];
      logs.set(key, log);
    }
    return log;
  };

  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    scenario: Scenario,
    entry: LoggedRequest,
  ) {
    const headers = { ...req.headers, host: upstream.host };
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          const status = answer.statusCode ?? 0;
          entry.retry_after = retryAfterOf(body.toString('utf8'));
          const responseHeaders = { ...answer.headers };
          if (scenario === 'lose-first-query' && entry.method === 'POST' && entry.path === '/v1/query') {
            const log = logOf(entry.runner, entry.case);
            if (log.filter((e) => e.path === '/v1/query').length === 1) {
              entry.status = 'lost';
              entry.line = `${entry.method} ${entry.path} lost`;
              entry.answered_ms = performance.now();
              res.socket?.destroy();
              return;
            }
          }
          if (scenario === 'short-token' && path === '/oauth/token' && status === 200) {
            const token = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
            body = Buffer.from(JSON.stringify({ ...token, expires_in: SHORT_TOKEN_SECONDS }));
            responseHeaders['content-length'] = String(body.length);
          }
          entry.status = status;
          entry.line = `${entry.method} ${entry.path} ${status}`;
          res.writeHead(status, responseHeaders);
          res.end(body, () => {
            entry.answered_ms = performance.now();
          });
        });
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const parts = url.pathname.split('/');
    if (parts[1] === '__check' && parts.length === 4) {
      const [runner, name] = [parts[2] ?? '', parts[3] ?? ''];
      const found = byName.get(name);
      if (!found) return sendJson(res, 404, { ok: false, problems: [`no case named ${name}`], log: [] });
      const log = logOf(runner, name);
      const problems = checkTraffic(found.traffic ?? {}, log, runner);
      return sendJson(res, 200, { ok: problems.length === 0, problems, log: log.map((e) => e.line) });
    }
    if (parts[1] !== 's' || parts.length < 5 || !scenarios.has(parts[3] ?? '')) {
      return sendJson(res, 404, {
        error: { code: 'NOT_FOUND', message: `not a conformance path: ${url.pathname}` },
      });
    }
    const [runner, name] = [parts[2] ?? '', parts[3] ?? ''];
    const scenario = scenarios.get(name) ?? 'pass';
    const path = `/${parts.slice(4).join('/')}${url.search}`;
    const log = logOf(runner, name);
    const key = req.headers['idempotency-key'];
    const entry: LoggedRequest = {
      runner,
      case: name,
      method: req.method ?? '',
      path,
      status: 0,
      line: `${req.method} ${path} (no answer)`,
      idempotency_key: typeof key === 'string' ? key : null,
      bearer: bearerOf(req),
      retry_after: null,
      received_ms: performance.now(),
      answered_ms: 0,
    };
    log.push(entry);
    const apiCalls = log.filter((e) => e.path !== '/oauth/token');
    if (scenario === 'reject-first-token' && path !== '/oauth/token' && apiCalls.length === 1) {
      req.resume();
      entry.status = 401;
      entry.line = `${entry.method} ${path} 401`;
      sendJson(
        res,
        401,
        {
          error: {
            code: 'UNAUTHENTICATED',
            message: 'The access token was refused (conformance proxy: as if it had been revoked).',
            request_id: 'req_conformance_proxy',
            details: [],
          },
        },
        { 'www-authenticate': 'Bearer error="invalid_token"' },
      );
      entry.answered_ms = performance.now();
      return;
    }
    if (scenario === 'slow') {
      setTimeout(() => forward(req, res, path, scenario, entry), SLOW_MS);
      return;
    }
    forward(req, res, path, scenario, entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log: (runner, name) => logOf(runner, name),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
