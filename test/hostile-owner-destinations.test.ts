// Issue 17: a hostile owner cannot point the gateway at the gateway host. A real gateway process
// with every QUARRY_ALLOW_* switch off (the default) is asked, over HTTP, for Postgres connections
// whose destination hides in libpq's `?host=` parameter (a loopback address, the host's unix
// socket directory) or is a unix socket outright, for a MySQL connection on loopback, for a
// DuckDB file on the host and for BigQuery with the gateway's own cloud identity. Before the fix
// the `?host=` connections were accepted (201), tested ok, and an analytic on one ran as the
// local superuser (`pg_read_file('/etc/hostname')` returned the host's file).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';

const http = createHttpClient();
let dir: string;
let gateway: GatewayProcess;
let key: string;

function createConnection(name: string, type: string, config: Record<string, unknown>) {
  return http.request(gateway.url, 'POST', '/v1/owner/connections', { key, json: { name, type, config } });
}

describe('hostile owner connections, every QUARRY_ALLOW_* switch off', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-hostile-'));
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dir,
        QUARRY_DEMO: 'false',
        QUARRY_LOG_LEVEL: 'warn',
        // Management calls share a small bucket by default; this test makes a dozen of them.
        QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
      },
      readyTimeoutMs: 90_000,
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: 'hostile-owner@e2e.quarry.test', name: 'Hostile owner' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it.each([
    ['loopback in ?host=', 'postgres://postgres@8.8.8.8/test?host=127.0.0.1'],
    [
      'the unix socket directory in ?host=',
      'postgres://postgres@8.8.8.8/test?host=%2Fvar%2Frun%2Fpostgresql',
    ],
    ['a host list in ?host=', 'postgres://postgres@8.8.8.8/test?host=8.8.4.4,127.0.0.1'],
    ['loopback as the URL host', 'postgres://postgres@127.0.0.1:5432/test'],
  ])(
    'refuses a Postgres connection string with %s (403), so no analytic can run on it',
    async (_label, url) => {
      const name = `pg-${Math.random().toString(36).slice(2, 8)}`;
      const response = await createConnection(name, 'postgres', { connectionString: url });
      expectErrorEnvelope(response, 403, 'FORBIDDEN');
      expect(response.body.error.message).not.toContain('postgres://');
      const list = await http.request(gateway.url, 'GET', '/v1/owner/connections', { key });
      expect(list.status, list.text).toBe(200);
      expect(list.body.connections.map((c: { name: string }) => c.name)).not.toContain(name);
    },
  );

  it('refuses a Postgres unix socket given as the host field (403)', async () => {
    const response = await createConnection('pg-socket', 'postgres', {
      host: '/var/run/postgresql',
      database: 'test',
      user: 'postgres',
    });
    expectErrorEnvelope(response, 403, 'FORBIDDEN');
    expect(response.body.error.message).toMatch(/unix socket/);
  });

  it('refuses a MySQL connection to loopback and a cloud metadata address (403)', async () => {
    for (const host of ['127.0.0.1', '169.254.169.254', 'metadata.google.internal']) {
      const response = await createConnection(`my-${host.length}`, 'mysql', {
        host,
        database: 'test',
        user: 'root',
      });
      expectErrorEnvelope(response, 403, 'FORBIDDEN');
    }
  });

  it('refuses a Trino server on loopback and BigQuery with the host identity (403)', async () => {
    const trino = await createConnection('trino-local', 'trino', {
      server: 'http://127.0.0.1:8080',
      user: 'x',
    });
    expectErrorEnvelope(trino, 403, 'FORBIDDEN');
    const bigquery = await createConnection('bq-adc', 'bigquery', {
      projectId: 'my-project-1',
      applicationDefaultCredentials: true,
    });
    expectErrorEnvelope(bigquery, 403, 'FORBIDDEN');
    expect(bigquery.body.error.message).toMatch(/credentials/);
  });

  it("refuses a DuckDB connection reading the gateway's own files (403)", async () => {
    const response = await createConnection('duck-root', 'duckdb', {
      path: ':memory:',
      files: { keys: join(dir, 'secret-key.json') },
      allowedDirectories: ['/'],
    });
    expectErrorEnvelope(response, 403, 'FORBIDDEN');
  });
});

// The old single switch also handed owners the host's files and cloud identity: with it on, a
// DuckDB connection with `allowedDirectories: ["/"]` read the data dir's secret-key.json through
// an analytic (reproduced on the old code). Private networks alone now grant neither.
describe('hostile owner connections, QUARRY_ALLOW_PRIVATE_NETWORKS on and nothing else', () => {
  let privateDir: string;
  let privateGateway: GatewayProcess;
  let ownerKey: string;

  beforeAll(async () => {
    privateDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-hostile-private-'));
    privateGateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: privateDir,
        QUARRY_DEMO: 'false',
        QUARRY_LOG_LEVEL: 'warn',
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      readyTimeoutMs: 90_000,
    });
    const signUp = await http.request(privateGateway.url, 'POST', '/v1/accounts', {
      json: { email: 'hostile-private@e2e.quarry.test', name: 'Hostile owner' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    ownerKey = signUp.body.key.secret;
  }, 120_000);

  afterAll(async () => {
    await privateGateway?.stop();
    if (privateDir) await rm(privateDir, { recursive: true, force: true });
  }, 30_000);

  it("refuses DuckDB over the gateway's disk and BigQuery as the gateway (403)", async () => {
    const create = (name: string, type: string, config: Record<string, unknown>) =>
      http.request(privateGateway.url, 'POST', '/v1/owner/connections', {
        key: ownerKey,
        json: { name, type, config },
      });
    const keys = await create('keys', 'duckdb', { path: ':memory:', allowedDirectories: ['/'] });
    expectErrorEnvelope(keys, 403, 'FORBIDDEN');
    expect(keys.body.error.message).toContain("gateway's own files");
    const adc = await create('adc', 'bigquery', {
      projectId: 'my-project-1',
      applicationDefaultCredentials: true,
    });
    expectErrorEnvelope(adc, 403, 'FORBIDDEN');
  });
});
