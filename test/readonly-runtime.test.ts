// "Every call runs read-only" holds at run time, whatever the deploy flags (issue 29, item 5).
// `?check=false` saves an analytic without asking the warehouse, and a MariaDB session made
// `READ ONLY` still writes files (`SELECT … INTO OUTFILE`), so before this the call wrote a file
// on the database host. A real gateway process, connections with the FILE privilege (MariaDB
// root, secure_file_priv empty on the test server) and a Postgres superuser: analytics that
// write or read host files, deployed unchecked, are refused when called, with a clear error in
// the envelope, nothing charged, and no file written.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  mysqlAvailable,
  pgAvailable,
  serviceUp,
  TEST_MYSQL_URL,
  TEST_PG_URL,
  uniqueSuffix,
} from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const mysqlUp = serviceUp(await mysqlAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();

describe.runIf(pgUp && mysqlUp)('every call runs read-only, even when deployed with ?check=false', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let key: string;
  const pgUrl = new URL(TEST_PG_URL);
  const mysqlUrl = new URL(TEST_MYSQL_URL);
  /** Files an analytic would write; none may exist after its call. */
  const files: string[] = [];
  const tmpFile = (what: string): string => {
    const path = `/tmp/quarry-${what}-${suffix}-${randomBytes(4).toString('hex')}`;
    files.push(path);
    return path;
  };

  /** Deploys `sql` on `connection` unchecked, calls it, and returns the call's response. */
  async function deployAndCall(name: string, connection: string, sql: string) {
    const deployed = await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${name}?check=false`, {
      key,
      json: { connection, sql },
    });
    expect(deployed.status, deployed.text).toBe(200);
    return http.request(gateway.url, 'POST', '/v1/query', { key, json: { source: name } });
  }

  async function calls(): Promise<number> {
    const usage = await http.request(gateway.url, 'GET', '/v1/account/usage', { key });
    expect(usage.status, usage.text).toBe(200);
    return usage.body.totals.calls;
  }

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_readonly_cp_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
      },
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `readonly-${suffix}@e2e.quarry.test`, name: 'Read-only at run time' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
    const connections = [
      {
        name: 'pg',
        type: 'postgres',
        config: {
          host: pgUrl.hostname,
          port: Number(pgUrl.port || 5432),
          user: decodeURIComponent(pgUrl.username) || 'postgres',
          database: pgUrl.pathname.slice(1),
        },
      },
      {
        // root has the FILE privilege: only the gateway stands between an analytic and the disk.
        name: 'maria',
        type: 'mysql',
        config: {
          host: mysqlUrl.hostname,
          port: Number(mysqlUrl.port || 3306),
          user: decodeURIComponent(mysqlUrl.username) || 'root',
          database: mysqlUrl.pathname.slice(1) || 'test',
        },
      },
    ];
    for (const json of connections) {
      const created = await http.request(gateway.url, 'POST', '/v1/owner/connections', { key, json });
      expect(created.status, created.text).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    for (const file of files) rmSync(file, { force: true });
    await store?.drop();
  }, 60_000);

  it('refuses SELECT … INTO OUTFILE / DUMPFILE on MariaDB at call time, and writes no file', async () => {
    const before = await calls();
    const outfile = tmpFile('outfile');
    const dumpfile = tmpFile('dumpfile');
    const cases = [
      ['outfile', `SELECT 1 INTO OUTFILE '${outfile}'`],
      ['dumpfile', `select 'x' /* why not */ into   dumpfile '${dumpfile}'`],
      ['load-file', "SELECT LOAD_FILE('/etc/hostname') AS f"],
    ] as const;
    const answers = [];
    for (const [name, sql] of cases) answers.push(await deployAndCall(`maria-${name}`, 'maria', sql));
    // Files first: on a gateway without the run-time check these are what the calls left behind.
    expect(existsSync(outfile), outfile).toBe(false);
    expect(existsSync(dumpfile), dumpfile).toBe(false);
    for (const [i, res] of answers.entries()) {
      expectErrorEnvelope(res, 502, 'UPSTREAM_ERROR');
      expect(res.body.error.message, cases[i]?.[1]).toContain('read-only');
    }
    expect(await calls()).toBe(before);
    // The owner sees why on a checked deploy, in the same words.
    const checked = await http.request(gateway.url, 'PUT', '/v1/owner/analytics/maria-outfile', {
      key,
      json: { connection: 'maria', sql: `SELECT 1 INTO OUTFILE '${outfile}'` },
    });
    expectErrorEnvelope(checked, 400, 'INVALID_REQUEST');
    expect(checked.body.error.details[0].message).toContain('INTO OUTFILE');
    expect(existsSync(outfile), outfile).toBe(false);
  });

  it('refuses COPY … TO PROGRAM and pg_read_file on Postgres at call time', async () => {
    const before = await calls();
    const touched = tmpFile('program');
    const cases = [
      ['program', `COPY (SELECT 1) TO PROGRAM 'touch ${touched}'`],
      ['read-file', "SELECT pg_read_file('/etc/hostname') AS f"],
    ] as const;
    const answers = [];
    for (const [name, sql] of cases) answers.push(await deployAndCall(`pg-${name}`, 'pg', sql));
    expect(existsSync(touched), touched).toBe(false);
    for (const [i, res] of answers.entries()) {
      expectErrorEnvelope(res, 502, 'UPSTREAM_ERROR');
      expect(res.body.error.message, cases[i]?.[1]).toContain('read-only');
    }
    expect(await calls()).toBe(before);
  });

  it('still answers a plain read deployed unchecked', async () => {
    const res = await deployAndCall('maria-plain', 'maria', "SELECT 'INTO OUTFILE' AS words, 1 AS one");
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toEqual([{ words: 'INTO OUTFILE', one: 1 }]);
  });
});
