// One owner's regular expression must not stall every tenant (issue 17). A param `pattern` is owner
// text, and a backtracking engine takes exponential time on patterns like `(a+)+$`: before the fix,
// a caller's value of 31 `a`s and `!` held a real gateway's event loop for 9.45 s, and a concurrent
// /healthz waited 9.39 s. Here a real gateway process deploys that pattern on a real Postgres
// connection; the hostile values must be refused promptly with 400 INVALID_PARAMS while /healthz
// keeps answering, a matching value must still pass, and a pattern the linear-time engine cannot
// run (a backreference) must be refused at deploy, naming the param.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
/**
 * Only a hang guard, not a timing assertion: a backtracking engine needs 9 s and more for the
 * 32-character value on this machine (and longer than the universe has for the 1,000-character
 * one), a linear-time engine a few milliseconds.
 */
const HANG_GUARD_MS = 5000;

/** A request that gives up after the hang guard, so a stalled gateway fails the test instead of hanging it. */
async function guarded(
  base: string,
  method: string,
  path: string,
  options: { key?: string; json?: unknown } = {},
): Promise<HttpResponse> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(options.key === undefined ? {} : { authorization: `Bearer ${options.key}` }),
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
    signal: AbortSignal.timeout(HANG_GUARD_MS),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

describe.runIf(pgUp)('owner patterns run in linear time', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let key: string;
  const analytic = `pattern-stall-${suffix}`;

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_patterns_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
      },
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `patterns-${suffix}@e2e.quarry.test`, name: 'Patterns' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
    const pgUrl = new URL(TEST_PG_URL);
    const connection = await http.request(gateway.url, 'POST', '/v1/owner/connections', {
      key,
      json: {
        name: 'pg',
        type: 'postgres',
        config: {
          host: pgUrl.hostname,
          port: Number(pgUrl.port || 5432),
          user: decodeURIComponent(pgUrl.username),
          ...(pgUrl.password ? { password: decodeURIComponent(pgUrl.password) } : {}),
          database: pgUrl.pathname.slice(1),
        },
      },
    });
    expect(connection.status, connection.text).toBe(201);
  }, 120_000);

  afterAll(async () => {
    // A gateway stuck in a backtracking match cannot run its SIGTERM handler: stop() kills it after 10 s.
    await gateway?.stop();
    await store?.drop();
  }, 60_000);

  it('deploys the catastrophic pattern (a+)+$: RE2 syntax, so it is accepted', async () => {
    const created = await http.request(gateway.url, 'POST', '/v1/owner/analytics', {
      key,
      json: {
        name: analytic,
        connection: 'pg',
        sql: 'SELECT :code AS code',
        params: { code: { type: 'string', required: true, pattern: '(a+)+$' } },
      },
    });
    expect(created.status, created.text).toBe(201);
  });

  it('refuses hostile values promptly with INVALID_PARAMS while /healthz answers', async () => {
    for (const value of [`${'a'.repeat(31)}!`, `${'a'.repeat(999)}!`]) {
      const call = guarded(gateway.url, 'POST', '/v1/query', {
        key,
        json: { source: analytic, params: { code: value } },
      });
      // Sent while the call is (or would be) validated: a blocked event loop would hold it too.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const health = guarded(gateway.url, 'GET', '/healthz');
      const [refused, healthz] = await Promise.all([call, health]);
      expect(healthz.status, healthz.text).toBe(200);
      expectErrorEnvelope(refused, 400, 'INVALID_PARAMS');
      expect(refused.body.error.details).toEqual([
        { param: 'code', message: 'must match the pattern (a+)+$' },
      ]);
    }
  }, 30_000);

  it('still answers a value the pattern matches, whole value only', async () => {
    const ok = await guarded(gateway.url, 'POST', '/v1/query', {
      key,
      json: { source: analytic, params: { code: 'aaaa' } },
    });
    expect(ok.status, ok.text).toBe(200);
    expect((ok.body as { results: unknown }).results).toEqual([{ code: 'aaaa' }]);
    const partial = await guarded(gateway.url, 'POST', '/v1/query', {
      key,
      json: { source: analytic, params: { code: 'baaa' } },
    });
    expectErrorEnvelope(partial, 400, 'INVALID_PARAMS');
  });

  it('refuses at deploy a pattern the linear-time engine cannot run, naming the param', async () => {
    const refused = await http.request(gateway.url, 'POST', '/v1/owner/analytics', {
      key,
      json: {
        name: `pattern-backref-${suffix}`,
        connection: 'pg',
        sql: 'SELECT :twice AS twice',
        params: { twice: { type: 'string', pattern: '(ab)\\1' } },
      },
    });
    expectErrorEnvelope(refused, 400, 'INVALID_REQUEST');
    expect(refused.body.error.details).toEqual([
      { field: 'params.twice', message: expect.stringContaining('backreference') },
    ]);
    expect(refused.body.error.message).toContain('params.twice');
  });
});
