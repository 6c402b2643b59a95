// What the clients' conformance cases run against: one gateway process on the embedded defaults,
// an owner with the two fixture analytics (conformance-types: a 64-bit integer and a wide decimal
// that arrive as strings; conformance-echo: a list param through the query string), and for each
// runner its own accounts and credentials, so runners in parallel never share a quota or a rate
// limit. The runners get it as JSON in QUARRY_CONFORMANCE (clients/conformance/README.md).
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';

/** How a runner authenticates in a case: an API key, or an OAuth client. */
export type Credential =
  | { readonly api_key: string }
  | { readonly client_id: string; readonly client_secret: string };

/** What one runner is given (QUARRY_CONFORMANCE). */
export interface RunnerFixture {
  /** Prefix of every case's base URL: `${base_url}/${case}`. */
  readonly base_url: string;
  /** Prefix of every case's traffic check: `${check_url}/${case}`. */
  readonly check_url: string;
  readonly credentials: Readonly<Record<string, Credential>>;
  /** Analytics of this runner alone, named in cases as `$fixture.sources.<name>`. */
  readonly sources: Readonly<Record<string, string>>;
}

/** The calls on the Free plan in this gateway (QUARRY_FREE_CALLS): the `exhausted` account spends them. */
export const FREE_CALLS = 2;

export function conformanceGatewayEnv(dataDir: string, adminToken: string): Record<string, string> {
  return {
    QUARRY_DATA_DIR: dataDir,
    QUARRY_DEMO: 'false',
    QUARRY_ADMIN_TOKEN: adminToken,
    // The fixture analytics run on an in-memory DuckDB connection, which opens a file on the host.
    QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
    QUARRY_ALLOW_HOST_FILES: 'true',
    QUARRY_FREE_CALLS: String(FREE_CALLS),
    // The fixture signs up an account per language and role from one address.
    QUARRY_SIGNUPS_PER_HOUR: '1000',
    QUARRY_LOG_LEVEL: 'warn',
  };
}

async function call(
  base: string,
  method: string,
  path: string,
  bearer: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.ok, `${method} ${path}: ${response.status} ${text}`).toBe(true);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

interface SignedUp {
  readonly accountId: string;
  readonly keyId: string;
  readonly key: string;
}

async function signUp(base: string, email: string): Promise<SignedUp> {
  const response = await fetch(`${base}/v1/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, name: email.split('@')[0] }),
  });
  const text = await response.text();
  expect(response.status, text).toBe(201);
  const body = JSON.parse(text) as { account: { id: string }; key: { id: string; secret: string } };
  return { accountId: body.account.id, keyId: body.key.id, key: body.key.secret };
}

const TYPES_SQL = [
  'SELECT CAST(9007199254740993 AS BIGINT) AS big_id,',
  'CAST(12345678901234567890.25 AS DECIMAL(38, 2)) AS big_amount,',
  "CAST(:n AS INTEGER) AS n, 1.5 AS ratio, DATE '2024-02-29' AS day, :label AS label,",
  'true AS flag, CAST(NULL AS INTEGER) AS nothing',
].join(' ');

/** An owner with an in-memory DuckDB connection and the public fixture analytics; resolves with its key. */
export async function deployFixtureAnalytics(
  base: string,
  adminToken: string,
  suffix: string,
): Promise<string> {
  const owner = await signUp(base, `owner-${suffix}@conformance.test`);
  // More owner calls than the Free plan's rate limit allows.
  await call(base, 'PUT', `/v1/admin/accounts/${owner.accountId}/plan`, adminToken, { plan: 'enterprise' });
  await call(base, 'POST', '/v1/owner/connections', owner.key, {
    name: 'mem',
    type: 'duckdb',
    config: { path: ':memory:' },
  });
  // conformance-slow's own: its time-outs are warehouse faults, and five runners timing out in a
  // row would open the circuit of the connection every other case queries (503 for them).
  await call(base, 'POST', '/v1/owner/connections', owner.key, {
    name: 'mem-slow',
    type: 'duckdb',
    config: { path: ':memory:' },
  });
  await call(base, 'PUT', '/v1/owner/analytics/conformance-types', owner.key, {
    name: 'conformance-types',
    connection: 'mem',
    sql: TYPES_SQL,
    params: {
      n: { type: 'integer', required: true },
      label: { type: 'string', default: 'x', maxLength: 32 },
    },
    insights: { shape: 'single' },
    price: 1,
    visibility: 'public',
  });
  // Listed on the marketplace, with previews (the marketplace and try-token cases).
  await call(base, 'PUT', '/v1/owner/analytics/conformance-types/listing', owner.key, {
    title: 'Conformance types',
    description: 'Typed values of every kind, for the clients conformance suite.',
    category: 'testing',
    example_params: { n: 1 },
    previews: true,
  });
  // More listings than one small page, published one after the other (the search-all case walks
  // them two at a time: most popular first, all equal, so the newest first).
  for (const i of [1, 2, 3, 4, 5]) {
    const name = `conformance-page-${i}`;
    await call(base, 'PUT', `/v1/owner/analytics/${name}`, owner.key, {
      name,
      connection: 'mem',
      sql: `SELECT ${i} AS page`,
      price: 1,
      visibility: 'public',
    });
    await call(base, 'PUT', `/v1/owner/analytics/${name}/listing`, owner.key, {
      title: `Conformance page ${i}`,
      description: 'One of the listings the search-all case walks page by page.',
      category: 'paging',
    });
  }
  await call(base, 'PUT', '/v1/owner/analytics/conformance-echo', owner.key, {
    name: 'conformance-echo',
    connection: 'mem',
    sql: "SELECT :year AS year, array_to_string(:tags, '|') AS tags, len(:tags) AS tag_count",
    params: {
      year: { type: 'integer', required: true, min: 2000, max: 2100 },
      tags: { type: 'array', items: { type: 'string', maxLength: 16 }, minItems: 1, maxItems: 5 },
    },
    insights: { shape: 'single' },
    price: 2,
    visibility: 'public',
  });
  // Queried by the calls every-page case alone, so an account's calls of it are that case's; not
  // listed (its calls would make it more popular than the paging listings, whose order counts).
  await call(base, 'PUT', '/v1/owner/analytics/conformance-calls', owner.key, {
    name: 'conformance-calls',
    connection: 'mem',
    sql: 'SELECT 1 AS one',
    price: 1,
    visibility: 'public',
  });
  // Rows of three regions, one when `region` is given: an embed token fixing it sees only its own.
  await call(base, 'PUT', '/v1/owner/analytics/conformance-regions', owner.key, {
    name: 'conformance-regions',
    connection: 'mem',
    sql: "SELECT region, n FROM (VALUES ('EU', 1), ('NA', 2), ('AP', 3)) AS t(region, n) WHERE :region IS NULL OR region = :region ORDER BY n",
    params: { region: { type: 'string', pattern: '^[A-Z]{2}$' } },
    price: 1,
    visibility: 'public',
  });
  // One analytic per error family a warehouse can cause: the SQL fails (502), the result is
  // over QUARRY_MAX_RESULT_BYTES (422), the query outlives its time limit (504). The unreachable
  // warehouse (503) is one per runner: see createRunnerFixture.
  const failures = [
    {
      name: 'conformance-fails',
      connection: 'mem',
      sql: 'SELECT CAST(:s AS INTEGER) AS v',
      params: { s: { type: 'string', required: true } },
    },
    {
      name: 'conformance-big',
      connection: 'mem',
      sql: "SELECT repeat('x', 1000000) AS blob FROM range(:rows)",
      params: { rows: { type: 'integer', required: true, min: 1, max: 20 } },
    },
    {
      name: 'conformance-slow',
      connection: 'mem-slow',
      sql: 'SELECT count(*) AS n FROM range(100000) a, range(:m) b WHERE (a.range * b.range) % 7 = 3',
      params: { m: { type: 'integer', required: true } },
      limits: { timeout_ms: 300 },
    },
  ];
  for (const analytic of failures) {
    await call(base, 'PUT', `/v1/owner/analytics/${analytic.name}`, owner.key, {
      ...analytic,
      price: 1,
      visibility: 'public',
    });
  }
  return owner.key;
}

/**
 * A Postgres connection to a port nothing listens on, and an analytic on it, for one runner:
 * the session pool backs off after each failed connect (up to 5 s), so runners sharing one
 * would wait on each other's failures instead of getting their 503 at once.
 */
async function deployUnreachable(base: string, ownerKey: string, runner: string): Promise<string> {
  // Saved untested: a connection is tried before it is saved, and this one is meant to fail.
  await call(base, 'POST', '/v1/owner/connections?test=false', ownerKey, {
    name: `down-${runner}`,
    type: 'postgres',
    config: { host: '127.0.0.1', port: 1, database: 'none', user: 'none' },
  });
  const name = `conformance-down-${runner}`;
  await call(base, 'PUT', `/v1/owner/analytics/${name}?check=false`, ownerKey, {
    name,
    connection: `down-${runner}`,
    sql: 'SELECT 1 AS one',
    price: 1,
    visibility: 'public',
  });
  return name;
}

/** One runner's accounts and credentials, on `base` (the gateway), reached through `proxyUrl`. */
export async function createRunnerFixture(
  base: string,
  adminToken: string,
  proxyUrl: string,
  runner: string,
  suffix: string,
  ownerKey: string,
): Promise<RunnerFixture> {
  const email = (role: string) => `${runner}-${role}-${suffix}@conformance.test`;
  const setPlan = (id: string) =>
    call(base, 'PUT', `/v1/admin/accounts/${id}/plan`, adminToken, { plan: 'enterprise' });

  const main = await signUp(base, email('main'));
  await setPlan(main.accountId);
  const keysOnly = (await call(base, 'POST', '/v1/keys', main.key, { name: 'keys-only', scopes: ['keys'] }))
    .key as { secret: string };
  const oauth = (await call(base, 'POST', '/v1/oauth/clients', main.key, {
    name: 'conformance',
    scopes: ['query'],
  })) as {
    client: { client_id: string };
    client_secret: string;
  };

  const limited = await signUp(base, email('limited'));
  await setPlan(limited.accountId);
  await call(base, 'PUT', `/v1/admin/keys/${limited.keyId}/rate-limit`, adminToken, {
    // One call per 2 s: a second call right after the first is refused even when a loaded
    // machine makes the first one slow.
    limit: 1,
    window_seconds: 2,
    burst: 1,
  });

  const exhausted = await signUp(base, email('exhausted'));
  for (let n = 0; n < FREE_CALLS; n++) {
    await call(base, 'POST', '/v1/query', exhausted.key, { source: 'conformance-types', params: { n } });
  }

  const down = await deployUnreachable(base, ownerKey, runner);

  // An owner of its own (the deploy-to-statement case): its statement shows only that case's calls.
  const owner = await signUp(base, email('owner'));
  await setPlan(owner.accountId);

  return {
    base_url: `${proxyUrl}/s/${runner}`,
    check_url: `${proxyUrl}/__check/${runner}`,
    credentials: {
      main: { api_key: main.key },
      keys_only: { api_key: keysOnly.secret },
      unknown_key: { api_key: `qry_live_${randomBytes(14).toString('hex')}` },
      limited: { api_key: limited.key },
      exhausted: { api_key: exhausted.key },
      oauth: { client_id: oauth.client.client_id, client_secret: oauth.client_secret },
      oauth_wrong_secret: { client_id: oauth.client.client_id, client_secret: `qcs_${'0'.repeat(43)}` },
      owner: { api_key: owner.key },
    },
    // `own`: the name the deploy-to-statement case deploys (`{runner}` in its expected traffic).
    // `lab`: the every-resource case's analytic; `signup_email`: the address it signs up;
    // `sunset`: when it deprecates `lab`'s first version (30 days ahead, as the gateway prints it).
    sources: {
      down,
      own: `conformance-own-${runner}`,
      lab: `conformance-lab-${runner}`,
      signup_email: email('signup'),
      sunset: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    },
  };
}
