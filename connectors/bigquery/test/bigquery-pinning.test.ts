// DNS rebinding (issue 17): every request of a BigQuery session — token exchange, the session's
// dry run, job insert, result polls and pages, cancel — goes to the address the destination guard
// checked, never to a second answer for the same name. The guard's resolver (injected here) says
// `localhost` is 127.0.0.2, where the fake BigQuery listens; the system resolver says 127.0.0.1,
// where a decoy on the same port stands in for whatever a rebound name would reach (a metadata
// service, an internal API). A driver that resolves the name again reaches the decoy.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createConnector,
  type HostResolver,
  isDestinationRefusal,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
} from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bigqueryPlugin } from '../src/bigquery-plugin.js';
import { type FakeBigquery, startFakeBigquery } from './fake-bigquery-server.js';
import { DATASET, failure, OpenConnectors, PROJECT, query, SLOW_SQL } from './protocol-fixture.js';
import { createTestServiceAccount, type TestServiceAccount } from './test-service-account.js';

/** Where the guard says `localhost` is, and where the fake listens. */
const CHECKED = '127.0.0.2';

let fake: FakeBigquery;
let account: TestServiceAccount;
/** The decoy on the system resolver's address for `localhost`, same port as the fake. */
let decoy: Server;
const decoyHits: string[] = [];
const connectors = new OpenConnectors();

/** A resolver for the guard: `localhost` is `answers[i]` on its i-th question (the last one after). */
function resolverAnswering(...answers: string[]): { resolve: HostResolver; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      if (host !== 'localhost') return [];
      const address = answers[Math.min(asked.length - 1, answers.length - 1)] as string;
      return [{ address, family: 4 }];
    },
  };
}

function configFor(target: FakeBigquery, key: TestServiceAccount): Record<string, unknown> {
  return {
    projectId: PROJECT,
    dataset: DATASET,
    apiEndpoint: target.url,
    credentials: key.keyFile,
    maxRetries: 0,
    connectTimeoutMs: 3_000,
  };
}

beforeAll(async () => {
  // Jobs last 300 ms, so results are polled; pages hold 3 rows, so a 7-row result takes three.
  fake = await startFakeBigquery({
    projectId: PROJECT,
    datasets: [DATASET],
    address: CHECKED,
    hostName: 'localhost',
    minJobMs: 300,
    maxWaitMs: 100,
  });
  account = createTestServiceAccount(fake.tokenUri);
  fake.addServiceAccount(account.email, account.publicKeyPem);
  await fake.exec('CREATE TABLE seven AS SELECT range::BIGINT AS n FROM range(1, 8)', DATASET);
  decoy = createServer((req, res) => {
    decoyHits.push(`${req.method} ${req.url}`);
    req.resume();
    // Not BigQuery: a service that happens to answer on the address the name rebound to.
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 404, message: 'decoy', errors: [{ reason: 'notFound' }] } }));
  });
  await new Promise<void>((resolve, reject) => {
    decoy.once('error', reject);
    decoy.listen(Number(new URL(fake.url).port), '127.0.0.1', resolve);
  });
});

beforeEach(() => {
  decoyHits.length = 0;
});

afterEach(async () => {
  await connectors.closeAll();
});

afterAll(async () => {
  await new Promise((resolve) => decoy.close(resolve));
  await fake.close();
});

describe('the address BigQuery requests go to (DNS rebinding)', () => {
  it('is the one the guard checked for every request of a session, never a second DNS answer', async () => {
    expect(new URL(fake.url).hostname).toBe('localhost');
    expect((decoy.address() as AddressInfo).address).toBe('127.0.0.1');
    const { resolve, asked } = resolverAnswering(CHECKED);
    const connector = connectors.track(
      await createConnector(bigqueryPlugin, configFor(fake, account), {
        destinations: OPERATOR_TRUSTED,
        resolve,
      }),
    );
    const outcome = await (async () => {
      await connector.test();
      const paged = await query(connector, 'SELECT n FROM seven ORDER BY n');
      const stopped = await failure(query(connector, SLOW_SQL, {}, { timeoutMs: 500 }));
      return { rows: paged.rows.map((row) => row.n), stopped: stopped.code };
    })().catch((error: unknown) => error);
    // The cancel request may still be on its way when the caller is answered.
    const seen = () => fake.requests.map((r) => `${r.method} ${r.path.replace(/quarry_[0-9a-f]+/, 'JOB')}`);
    const cancel = `POST /bigquery/v2/projects/${PROJECT}/jobs/JOB/cancel`;
    for (let waited = 0; !seen().includes(cancel) && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Nothing reached the address the system resolver gives for the name.
    expect(decoyHits).toEqual([]);
    expect(outcome).toEqual({ rows: [1, 2, 3, 4, 5, 6, 7], stopped: 'QUERY_TIMEOUT' });
    expect(seen()).toContain('POST /token');
    expect(seen()).toContain(`POST /bigquery/v2/projects/${PROJECT}/jobs`);
    expect(seen()).toContain(cancel);
    // Three pages of the 7-row result, and polls while the jobs ran.
    expect(seen().filter((s) => s.endsWith('/queries/JOB')).length).toBeGreaterThanOrEqual(4);
    expect(asked.every((host) => host === 'localhost')).toBe(true);
  });

  it('refuses a name that rebinds to cloud metadata after the session checked it, reaching nothing', async () => {
    // The session's own checks (API endpoint, token endpoint) see the good address; the sockets
    // the driver opens then ask again and get 169.254.169.254.
    const { resolve } = resolverAnswering(CHECKED, CHECKED, '169.254.169.254');
    const before = fake.requests.length;
    const connector = connectors.track(
      await createConnector(bigqueryPlugin, configFor(fake, account), {
        destinations: OPERATOR_TRUSTED,
        resolve,
      }),
    );
    const error = await connector.test().catch((e: unknown) => e);
    expect(isDestinationRefusal(error), String(error)).toBe(true);
    expect(String(error)).toContain('169.254.169.254');
    expect(fake.requests.length).toBe(before);
    expect(decoyHits).toEqual([]);
  });

  it("refuses Google's token endpoint when the guard resolves it to a forbidden address", async () => {
    // A key without token_uri gets https://oauth2.googleapis.com/token.
    const { token_uri: _unused, ...googleKey } = account.keyFile;
    const before = fake.requests.length;
    for (const [address, policy] of [
      ['169.254.169.254', OPERATOR_TRUSTED],
      ['10.1.2.3', PUBLIC_ONLY],
    ] as const) {
      const connector = connectors.track(
        await createConnector(
          bigqueryPlugin,
          {
            ...configFor(fake, account),
            apiEndpoint: 'https://bigquery.googleapis.com',
            credentials: googleKey,
          },
          { destinations: policy, resolve: async () => [{ address, family: 4 }] },
        ),
      );
      const error = await connector.test().catch((e: unknown) => e);
      expect(isDestinationRefusal(error), `${address}: ${String(error)}`).toBe(true);
    }
    expect(fake.requests.length).toBe(before);
    expect(decoyHits).toEqual([]);
  });
});
