// The driver's requests through the connection's pinned HTTP, against a scripted endpoint: the
// request as sent (URL, query string, JSON body, bearer token), answers and failures in the shape
// the driver and the error mapping read, retries of 5xx and unanswered requests as the driver's
// own stack made them, and no retry of a destination the guard refused.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BigQuery } from '@google-cloud/bigquery';
import {
  createDestinationGuard,
  isDestinationRefusal,
  OPERATOR_TRUSTED,
  parseConnectorConfig,
} from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bigqueryHosts, createBigqueryClient } from './bigquery-driver.js';
import { mapBigqueryError } from './bigquery-errors.js';
import { type BigqueryHttp, createBigqueryHttp } from './bigquery-http.js';
import { bigqueryPlugin } from './bigquery-plugin.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

type Script = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let port = 0;
let seen: Seen[] = [];
/** How the API answers, one entry per request (the last one repeats). */
let script: Script[] = [];
const opened: BigqueryHttp[] = [];
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

function json(status: number, body: unknown): Script {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
}

const hangUp: Script = (req) => req.socket.destroy();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      if (req.url === '/token') {
        json(200, { access_token: 'ya29.test', expires_in: 3600 })(req, res);
        return;
      }
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      });
      const answer = script[Math.min(seen.length - 1, script.length - 1)] ?? json(200, {});
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  for (const http of opened.splice(0)) http.destroy();
  seen = [];
  script = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(
  extra: Record<string, unknown> = {},
  guard = createDestinationGuard(OPERATOR_TRUSTED),
): BigQuery {
  const config = parseConnectorConfig(bigqueryPlugin, {
    projectId: 'quarry-test',
    apiEndpoint: `http://127.0.0.1:${port}`,
    credentials: {
      client_email: 'reader@quarry-test.iam.gserviceaccount.com',
      private_key: privateKey,
      token_uri: `http://127.0.0.1:${port}/token`,
    },
    ...extra,
  });
  const http = createBigqueryHttp(guard, bigqueryHosts(config));
  opened.push(http);
  return createBigqueryClient(config, http);
}

/** `client.request` as a promise of `[error, body]`. */
function request(bigquery: BigQuery, options: Record<string, unknown>): Promise<[Error | null, unknown]> {
  return new Promise((resolve) => {
    bigquery.request(options as unknown as Parameters<BigQuery['request']>[0], (error, body) =>
      resolve([error ?? null, body]),
    );
  });
}

describe('requests through the pinned transport', () => {
  it('sends the URL, query string, JSON body and bearer token the driver asked for', async () => {
    script = [json(200, { kind: 'bigquery#job', jobReference: { jobId: 'j1' } })];
    const [error, body] = await request(client(), {
      method: 'POST',
      uri: '/jobs',
      qs: { location: 'EU', skip: undefined, fields: ['a', 'b'], autoPaginate: true },
      json: { configuration: { query: { query: 'SELECT 1' } }, autoPaginate: false },
    });
    expect(error).toBeNull();
    expect(body).toEqual({ kind: 'bigquery#job', jobReference: { jobId: 'j1' } });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/bigquery/v2/projects/quarry-test/jobs?location=EU&fields=a&fields=b&prettyPrint=false',
        authorization: 'Bearer ya29.test',
        body: JSON.stringify({ configuration: { query: { query: 'SELECT 1' } } }),
      },
    ]);
  });

  it("answers BigQuery's errors as the driver's ApiError: status, reasons, message", async () => {
    script = [
      json(409, {
        error: {
          code: 409,
          message: 'Already Exists: Job quarry-test:US.j1',
          errors: [{ reason: 'duplicate' }],
        },
      }),
    ];
    const [error] = await request(client(), { method: 'POST', uri: '/jobs', json: {} });
    expect(error).toMatchObject({ code: 409, errors: [{ reason: 'duplicate' }] });
    expect(error?.message).toBe('Already Exists: Job quarry-test:US.j1');
    // Not JSON (a proxy's page): the status alone.
    script = [(_req, res) => res.writeHead(404, 'Not Found').end('<html>nope</html>')];
    const [plain] = await request(client(), { uri: '/queries/j1' });
    expect(mapBigqueryError(plain)).toMatchObject({ code: 'QUERY_FAILED', driverCode: 'HTTP_404' });
  });

  it('retries 5xx and unanswered requests up to maxRetries, and no more', async () => {
    script = [json(503, { error: { code: 503, message: 'busy' } }), hangUp, json(200, { ok: 1 })];
    const [error, body] = await request(client({ maxRetries: 2 }), { uri: '/queries/j1' });
    expect([error, body]).toEqual([null, { ok: 1 }]);
    expect(seen).toHaveLength(3);
    seen = [];
    script = [json(503, { error: { code: 503, message: 'busy' } })];
    const [refused] = await request(client({ maxRetries: 0 }), { uri: '/queries/j1' });
    expect(mapBigqueryError(refused)).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'HTTP_503' });
    expect(seen).toHaveLength(1);
  });

  it('gives up on a request past its time limit with CONNECT_FAILED', async () => {
    script = [() => {}];
    const [error] = await request(client({ maxRetries: 0 }), { uri: '/queries/j1', timeout: 200 });
    expect(mapBigqueryError(error)).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'REQUEST_TIMEOUT' });
  });

  it('never retries a destination the guard refused, and reports the refusal itself', async () => {
    // The token endpoint is an address (allowed); the API's name now resolves to cloud metadata.
    const asked: string[] = [];
    const guard = createDestinationGuard(OPERATOR_TRUSTED, {
      resolve: async (host) => {
        asked.push(host);
        return [{ address: '169.254.169.254', family: 4 }];
      },
    });
    const bigquery = client({ apiEndpoint: `http://localhost:${port}`, maxRetries: 2 }, guard);
    const [error] = await request(bigquery, { uri: '/queries/j1' });
    expect(isDestinationRefusal(error), String(error)).toBe(true);
    expect(String(error)).toContain('169.254.169.254');
    expect(asked).toEqual(['localhost']);
    expect(seen).toEqual([]);
  });
});
