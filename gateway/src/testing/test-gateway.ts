// Test harness for in-process gateway tests (Hono style: app.request(), no server). Builds a real
// gateway over an embedded store in a fresh temp data dir, with the DuckDB demo warehouse and the
// repo's example analytics, and captures its logs in memory so tests can read them. It records
// every response body it hands out, so a test can scan everything a caller ever saw.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { seedDemoWarehouse } from '@quarry/examples';
import { SCOPES } from '../auth/principal.js';
import { DEMO_WAREHOUSE_FILE } from '../bootstrap/demo.js';
import { loadConfig } from '../config.js';
import { type CreateGatewayOptions, createGateway, type Gateway } from '../create-gateway.js';
import { createLogger } from '../observability/logger.js';
import { createQueryCallHandler } from '../query/query-call.js';
import type { QueryService } from '../query/query-service.js';
import type { GatewayServices } from '../services/gateway-services.js';

/** Rows in the test demo warehouse: enough for every example analytic to return data. */
export const TEST_DEMO_ROWS = 5_000;

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const EXAMPLE_ANALYTICS_DIR = join(REPO_ROOT, 'examples/analytics');

/** Shared by every test file of a run (each vitest worker is its own process): seeded once. */
const SEEDED_WAREHOUSE = join(tmpdir(), 'quarry-gateway-tests', `demo-${TEST_DEMO_ROWS}.duckdb`);
let seeding: Promise<unknown> | undefined;

/** In-memory log sink: pino writes one JSON line per record. */
export interface LogCapture {
  /** Everything logged so far, as raw text. */
  text(): string;
  /** Every record logged so far, parsed. */
  records(): readonly Record<string, unknown>[];
}

function createLogCapture(): { stream: Writable; capture: LogCapture } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const text = () => chunks.join('');
  return {
    stream,
    capture: {
      text,
      records: () =>
        text()
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
    },
  };
}

export interface CallOptions {
  /** API key (or any bearer token) sent as `Authorization: Bearer …`. */
  readonly key?: string;
  /** A JSON value (sent with Content-Type: application/json) or raw text (sent as is). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). The tests' view is untyped on purpose. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
  readonly json: any;
}

export interface SignedUp {
  readonly accountId: string;
  readonly email: string;
  /** The first key's secret (every scope). */
  readonly key: string;
  readonly keyId: string;
}

export interface TestGateway {
  readonly gateway: Gateway;
  readonly logs: LogCapture;
  /**
   * A consumer's key (a second account on the enterprise plan, made by this harness): it calls
   * the demo account's analytics as any caller would.
   */
  readonly demoKey: string;
  /** A key of the demo account, which owns the `demo` DuckDB connection and the example analytics. */
  readonly ownerKey: string;
  readonly ownerId: string;
  readonly dataDir: string;
  /** Every response body handed out by call(), in order. */
  readonly bodies: readonly string[];
  /** Sends one request through app.request() and records the body. */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** Signs up a fresh account (unique email) and returns its first key. */
  signUp(name?: string): Promise<SignedUp>;
  close(): Promise<void>;
}

let accountCounter = 0;

/**
 * A gateway for tests: temp QUARRY_DATA_DIR, private hosts allowed, demo on, a small demo
 * warehouse, the repo's example analytics. `env` overrides or adds variables (undefined removes).
 */
export async function createTestGateway(
  env: Readonly<Record<string, string | undefined>> = {},
  options: Omit<CreateGatewayOptions, 'logger'> = {},
): Promise<TestGateway> {
  seeding ??= seedDemoWarehouse(SEEDED_WAREHOUSE, { rows: TEST_DEMO_ROWS });
  await seeding;
  const dataDir = await mkdtemp(join(tmpdir(), 'quarry-gw-test-'));
  await mkdir(dataDir, { recursive: true });
  // A copy per gateway: tests never share a warehouse file across processes.
  await copyFile(SEEDED_WAREHOUSE, join(dataDir, DEMO_WAREHOUSE_FILE));
  const config = loadConfig({
    QUARRY_DATA_DIR: dataDir,
    // The test owners' warehouses are the local servers and DuckDB files.
    QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
    QUARRY_ALLOW_HOST_FILES: 'true',
    QUARRY_DEMO: 'true',
    QUARRY_ANALYTICS_DIR: EXAMPLE_ANALYTICS_DIR,
    QUARRY_LOG_LEVEL: 'info',
    QUARRY_SHUTDOWN_GRACE_MS: '1000',
    // Generous limits: these tests are about the contract, not the meter (its own tests set theirs).
    QUARRY_FREE_CALLS: '1000000',
    QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 100000, window_seconds: 60, burst: 100000 } }),
    // app.request() has no socket: every sign-up counts against one unknown address.
    QUARRY_SIGNUPS_PER_HOUR: '1000000',
    ...env,
  });
  const { stream, capture } = createLogCapture();
  const gateway = await createGateway(config, {
    changeFeedIntervalMs: 200,
    ...options,
    logger: createLogger({ level: config.logLevel, destination: stream }),
  });
  const demo = gateway.demo;
  if (demo === undefined) {
    await gateway.close();
    throw new Error('createTestGateway: demo mode is off, so there is no demo key');
  }
  const owner = await gateway.services.accounts.createKey(
    { accountId: demo.accountId, scopes: SCOPES },
    { name: 'test-owner' },
  );
  const consumerAccount = await gateway.services.store.accounts.create({
    email: `consumer-${process.pid}-${Date.now()}-${++accountCounter}@example.com`,
    name: 'Demo consumer',
    plan: 'enterprise',
  });
  const consumer = await gateway.services.accounts.createKey(
    { accountId: consumerAccount.id, scopes: SCOPES },
    { name: 'demo' },
  );
  const bodies: string[] = [];

  const call: TestGateway['call'] = async (method, path, callOptions = {}) => {
    const headers = new Headers(callOptions.headers);
    if (callOptions.key !== undefined) headers.set('authorization', `Bearer ${callOptions.key}`);
    let body: string | undefined;
    if (callOptions.body !== undefined) {
      if (typeof callOptions.body === 'string') body = callOptions.body;
      else {
        body = JSON.stringify(callOptions.body);
        if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      }
    }
    const response = await gateway.app.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    bodies.push(text);
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  return {
    gateway,
    logs: capture,
    demoKey: consumer.secret,
    ownerKey: owner.secret,
    ownerId: demo.accountId,
    dataDir,
    bodies,
    call,
    async signUp(name = 'Test user') {
      accountCounter += 1;
      const email = `user${accountCounter}-${process.pid}-${Date.now()}@example.com`;
      const res = await call('POST', '/v1/accounts', { body: { email, name } });
      if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`);
      return { accountId: res.json.account.id, email, key: res.json.key.secret, keyId: res.json.key.id };
    },
    async close() {
      await gateway.close(1_000);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `services` with the query service replaced (e.g. to count or fail warehouse runs), and the
 * query call rebuilt on it, for an app built with createApp(…).
 */
export function withQueries(services: GatewayServices, queries: QueryService): GatewayServices {
  return {
    ...services,
    queries,
    queryCall: createQueryCallHandler({
      ...services,
      queries,
      idempotency: services.store.idempotency,
      previews: {
        rows: services.config.previewRows,
        perDay: services.config.previewsPerDay,
        listings: services.previewListings,
      },
    }),
  };
}
