// OWASP API7:2023 Server Side Request Forgery. An owner's connection config names where the
// gateway connects: every spelling of the gateway host and its private networks is refused with
// 403 when QUARRY_ALLOW_PRIVATE_NETWORKS is off (decimal, octal and hex IPv4, short forms, IPv6
// with an embedded IPv4, localhost, a host hidden in libpq's ?host=), for every network
// connector; cloud metadata addresses are refused even when private networks are allowed; and a
// refusal leaves no connection behind. (Redirects and nextUri off the warehouse's origin, DNS
// rebinding and result chunks on other hosts are attacked in the connectors' own tests and in
// test/hostile-owner-destinations.test.ts.)
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from '../support/error-envelope.js';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let closed: AttackWorld;
let open: AttackWorld;

beforeAll(async () => {
  [closed, open] = await Promise.all([
    createAttackWorld({
      label: 'ssrf_closed',
      warehouse: false,
      env: { QUARRY_ALLOW_PRIVATE_NETWORKS: 'false', QUARRY_ALLOW_HOST_FILES: 'false' },
    }),
    createAttackWorld({ label: 'ssrf_open' }),
  ]);
}, 180_000);
afterAll(async () => {
  await Promise.all([closed?.stop(), open?.stop()]);
}, 60_000);

const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  'localhost',
  '::1',
  '::ffff:127.0.0.1',
  '0.0.0.0',
  '10.0.0.1',
  '192.168.1.1',
  '172.16.0.1',
];
const METADATA = ['169.254.169.254', 'metadata.google.internal', 'fd00:ec2::254', '100.100.100.200'];

function configFor(type: string, host: string): Record<string, unknown> {
  const bracketed = host.includes(':') ? `[${host}]` : host;
  switch (type) {
    case 'postgres':
      return { host, port: 5432, database: 'test', user: 'postgres' };
    case 'mysql':
      return { host, port: 3306, database: 'test', user: 'root' };
    case 'trino':
      return { server: `http://${bracketed}:8080`, user: 'x' };
    default:
      throw new Error(type);
  }
}

async function expectRefused(world: AttackWorld, type: string, config: Record<string, unknown>) {
  const name = `ssrf-${Math.random().toString(36).slice(2, 8)}`;
  const res = await world.call('POST', '/v1/owner/connections', {
    key: world.attacker.key,
    json: { name, type, config },
  });
  expect(res.status, `${type} ${JSON.stringify(config)}: ${res.text}`).toBe(403);
  expectErrorEnvelope(res, 403, 'FORBIDDEN');
  const list = await world.call('GET', '/v1/owner/connections', { key: world.attacker.key });
  expect(list.body.connections.map((c: { name: string }) => c.name)).not.toContain(name);
}

describe('API7 server side request forgery', () => {
  it.each(['postgres', 'mysql', 'trino'])(
    'refuses every spelling of loopback and private addresses for %s when private networks are off',
    async (type) => {
      for (const host of LOOPBACK_SPELLINGS) await expectRefused(closed, type, configFor(type, host));
    },
  );

  it('refuses a host hidden in a connection string, and a unix socket', async () => {
    for (const connectionString of [
      'postgres://postgres@8.8.8.8/test?host=127.0.0.1',
      'postgres://postgres@8.8.8.8/test?host=%2Fvar%2Frun%2Fpostgresql',
      'postgres://postgres@[::1]/test',
    ]) {
      await expectRefused(closed, 'postgres', { connectionString });
    }
    await expectRefused(closed, 'postgres', { host: '/var/run/postgresql', database: 'test', user: 'x' });
  });

  it.each(['postgres', 'mysql', 'trino'])(
    'refuses cloud metadata for %s even with private networks allowed',
    async (type) => {
      for (const host of METADATA) await expectRefused(open, type, configFor(type, host));
    },
  );

  it("refuses BigQuery and Snowflake endpoints on private or metadata hosts, and the host's identity", async () => {
    await expectRefused(closed, 'bigquery', { projectId: 'p-123456', applicationDefaultCredentials: true });
    await expectRefused(closed, 'bigquery', {
      projectId: 'p-123456',
      apiEndpoint: 'https://169.254.169.254',
      credentials: {
        client_email: 'x@p-123456.iam.gserviceaccount.com',
        private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
          type: 'pkcs8',
          format: 'pem',
        }),
      },
    });
    await expectRefused(closed, 'snowflake', {
      account: 'acme',
      accessUrl: 'http://127.0.0.1:8080',
      username: 'u',
      password: 'p',
      warehouse: 'w',
      database: 'd',
    });
  });

  it("refuses DuckDB on the gateway's files when host files are off", async () => {
    await expectRefused(closed, 'duckdb', { path: '/etc/passwd' });
    await expectRefused(closed, 'duckdb', { path: ':memory:', allowedDirectories: ['/'] });
  });
});
