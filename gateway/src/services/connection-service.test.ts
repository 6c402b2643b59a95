// The connection service with the real connector plugins, loaded by module specifier the way the
// gateway loads them: connections that would use the gateway host's own files (DuckDB, SQLite)
// or credentials (BigQuery application-default credentials) need the operator's opt-in, and a
// saved connection that can no longer be opened (file deleted, connector unregistered, host gone)
// is 503 SOURCE_UNAVAILABLE for callers, while creation-time problems stay 400/403.
import { generateKeyPairSync } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import {
  type DestinationPolicy,
  type HostResolver,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
  parseTemplate,
} from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadPlugins, type PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError } from '../errors/api-error.js';
import { toApiError } from '../http/error-response.js';
import type { Connection, ConnectionRepository, NewConnection } from '../store/connection-repository.js';
import { type ConnectionService, createConnectionService } from './connection-service.js';

/** A real, small connection repository in memory (secrets kept as given: no sealing here). */
function createMemoryConnections(): ConnectionRepository {
  const rows = new Map<string, { connection: Connection; secrets: Record<string, string> }>();
  let next = 0;
  const mine = (accountId: string, id: string) => {
    const row = rows.get(id);
    return row !== undefined && row.connection.accountId === accountId ? row : undefined;
  };
  return {
    async create(input: NewConnection) {
      next += 1;
      const now = new Date();
      const connection: Connection = {
        id: `con_${next}`,
        accountId: input.accountId,
        name: input.name,
        type: input.type,
        config: input.config,
        secretFields: Object.keys(input.secrets ?? {}),
        createdAt: now,
        updatedAt: now,
      };
      rows.set(connection.id, { connection, secrets: { ...input.secrets } });
      return connection;
    },
    list: async (accountId) =>
      [...rows.values()].map((r) => r.connection).filter((c) => c.accountId === accountId),
    get: async (accountId, id) => mine(accountId, id)?.connection ?? null,
    findByName: async (accountId, name) =>
      [...rows.values()].find((r) => r.connection.accountId === accountId && r.connection.name === name)
        ?.connection ?? null,
    async readSecrets(accountId, id) {
      const row = mine(accountId, id);
      if (row === undefined) throw new Error(`no connection ${id}`);
      return row.secrets;
    },
    async update(accountId, id, change) {
      const row = mine(accountId, id);
      if (row === undefined) throw new Error(`no connection ${id}`);
      const connection: Connection = {
        ...row.connection,
        config: change.config,
        secretFields: Object.keys(change.secrets),
        updatedAt: new Date(),
      };
      rows.set(id, { connection, secrets: { ...change.secrets } });
      return connection;
    },
    async delete(_accountId, id) {
      rows.delete(id);
    },
  };
}

interface LogRecord {
  readonly level: string;
  readonly obj: Record<string, unknown>;
  readonly msg: string | undefined;
}

function createLogSink() {
  const records: LogRecord[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      records.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return { records, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

/** A file that passes the SQLite connector's creation check (the header); no session opens it here. */
async function writeSqliteHeader(path: string): Promise<void> {
  await writeFile(path, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(496)]));
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const ACCOUNT = 'acc_owner';
const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const serviceAccountKey = {
  type: 'service_account',
  client_email: 'reader@my-project.iam.gserviceaccount.com',
  private_key: privateKey,
};

let plugins: PluginRegistry;
let dir: string;
let dbFile: string;
const services: ConnectionService[] = [];

/** This machine has no public DNS: Google's API names get a public address, others the system's. */
const offlineResolve: HostResolver = async (host) => {
  if (host.endsWith('.googleapis.com')) return [{ address: '142.250.1.1', family: 4 }];
  return (await lookup(host, { all: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));
};

/** `true`: every QUARRY_ALLOW_* switch on; `false`: all off; or the switches that are on. */
function service(
  allow: boolean | Partial<DestinationPolicy>,
  extra: { resolve?: HostResolver; maxLivePools?: number } = {},
) {
  const repository = createMemoryConnections();
  const logs = createLogSink();
  const destinations =
    typeof allow === 'boolean' ? (allow ? OPERATOR_TRUSTED : PUBLIC_ONLY) : { ...PUBLIC_ONLY, ...allow };
  const created = createConnectionService({
    repository,
    plugins,
    destinations,
    logger: logs.logger,
    resolve: offlineResolve,
    ...extra,
  });
  services.push(created);
  // These tests are about what may be saved and opened, often with files and hosts that are not
  // warehouses: saving untested unless a test asks (test/deploy-sql-check.test.ts proves the test).
  const service: ConnectionService = {
    ...created,
    create: (accountId, request, options) => created.create(accountId, request, { test: false, ...options }),
  };
  return { service, repository, logs };
}

beforeAll(async () => {
  plugins = await loadPlugins([
    '@quarry/connector-postgres',
    '@quarry/connector-duckdb',
    '@quarry/connector-bigquery',
    'quarry-connector-sqlite',
  ]);
  dir = await mkdtemp(join(tmpdir(), 'quarry-connection-service-'));
  dbFile = join(dir, 'shop.sqlite');
  await writeSqliteHeader(dbFile);
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close(1_000)));
  await writeSqliteHeader(dbFile);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("connections that use the gateway host's own files or credentials", () => {
  it('refuses sqlite exactly like duckdb without the operator opt-in, and stores nothing', async () => {
    const { service: connections, repository } = service(false);
    for (const [type, config] of [
      ['duckdb', { path: join(dir, 'w.duckdb') }],
      ['sqlite', { path: dbFile }],
    ] as const) {
      const error = await rejection(connections.create(ACCOUNT, { name: type, type, config }));
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: 'FORBIDDEN',
        message: `Connections of type "${type}" read the gateway's own files; the operator has not allowed them.`,
      });
    }
    expect(await repository.list(ACCOUNT)).toEqual([]);
  });

  it('refuses BigQuery with application-default credentials, but takes a service-account key', async () => {
    const { service: connections, repository } = service(false);
    const adc = await rejection(
      connections.create(ACCOUNT, {
        name: 'bq-adc',
        type: 'bigquery',
        config: { projectId: 'my-project', applicationDefaultCredentials: true },
      }),
    );
    expect(adc).toMatchObject({
      code: 'FORBIDDEN',
      message:
        "This bigquery connection would use the gateway's own credentials; the operator has not allowed that. Give the connection credentials of its own.",
    });
    const keyed = await connections.create(ACCOUNT, {
      name: 'bq-key',
      type: 'bigquery',
      config: { projectId: 'my-project', credentials: serviceAccountKey },
    });
    expect(keyed).toMatchObject({ name: 'bq-key', type: 'bigquery', secretFields: ['credentials'] });
    expect((await repository.list(ACCOUNT)).map((c) => c.name)).toEqual(['bq-key']);
  });

  it('allows all three when the operator opted in with QUARRY_ALLOW_HOST_FILES and _HOST_IDENTITY', async () => {
    const { service: connections } = service({ hostFiles: true, hostIdentity: true });
    await connections.create(ACCOUNT, {
      name: 'duck',
      type: 'duckdb',
      config: { path: join(dir, 'w.duckdb') },
    });
    await connections.create(ACCOUNT, { name: 'lite', type: 'sqlite', config: { path: dbFile } });
    await connections.create(ACCOUNT, {
      name: 'bq',
      type: 'bigquery',
      config: { projectId: 'my-project', applicationDefaultCredentials: true },
    });
    expect((await connections.list(ACCOUNT)).map((c) => c.type)).toEqual(['duckdb', 'sqlite', 'bigquery']);
  });
});

describe('a saved connection that can no longer be opened', () => {
  it('keeps a missing file at creation a 400 listing the problem', async () => {
    const { service: connections } = service(true);
    const error = await rejection(
      connections.create(ACCOUNT, {
        name: 'gone',
        type: 'sqlite',
        config: { path: join(dir, 'none.sqlite') },
      }),
    );
    const mapped = toApiError(error, createLogSink().logger);
    expect(mapped.code).toBe('INVALID_REQUEST');
    expect(mapped.details).toEqual([{ param: 'path', message: 'no file exists at this path' }]);
  });

  it('answers callers 503 SOURCE_UNAVAILABLE once its file is deleted, tells the owner why, and recovers', async () => {
    const { service: connections, logs } = service(true);
    const created = await connections.create(ACCOUNT, {
      name: 'lite',
      type: 'sqlite',
      config: { path: dbFile },
    });
    await unlink(dbFile);

    const error = await rejection(connections.connectorFor(ACCOUNT, created.id));
    const mapped = toApiError(error, createLogSink().logger);
    expect(mapped).toMatchObject({
      code: 'SOURCE_UNAVAILABLE',
      message: "The analytic's data source is unavailable right now.",
      retryAfter: 5,
      details: [],
    });
    const warning = logs.records.find((r) => r.msg === 'a saved connection cannot be opened');
    expect(warning?.obj).toMatchObject({ connection: created.id, type: 'sqlite' });
    expect(warning?.level).toBe('warn');

    // The owner's test says what is wrong, still as the source being unavailable.
    const tested = toApiError(await rejection(connections.test(ACCOUNT, created.id)), createLogSink().logger);
    expect(tested).toMatchObject({
      code: 'SOURCE_UNAVAILABLE',
      message: 'The connection cannot be opened: its saved config is no longer valid.',
      details: [{ param: 'path', message: 'no file exists at this path' }],
    });

    // A failure is not cached: the restored file is used on the next call.
    await writeSqliteHeader(dbFile);
    const connector = await connections.connectorFor(ACCOUNT, created.id);
    expect(connector.type).toBe('sqlite');
  });

  it('is 503 when its connector type is no longer registered', async () => {
    const { service: connections, repository } = service(true);
    const saved = await repository.create({ accountId: ACCOUNT, name: 'old', type: 'oracle', config: {} });
    const mapped = toApiError(
      await rejection(connections.connectorFor(ACCOUNT, saved.id)),
      createLogSink().logger,
    );
    expect(mapped).toMatchObject({ code: 'SOURCE_UNAVAILABLE', retryAfter: 5 });
    const tested = await rejection(connections.test(ACCOUNT, saved.id));
    expect(tested).toMatchObject({
      code: 'SOURCE_UNAVAILABLE',
      message:
        'The connection cannot be opened: its connector type "oracle" is not registered on this gateway.',
    });
  });

  it('is 503 when its host no longer resolves, and 403 (no retry) when it now resolves to a private address', async () => {
    const answers = new Map<string, string[]>([['warehouse.example.com', ['203.0.114.10']]]);
    const resolve: HostResolver = async (host) => {
      const addresses = answers.get(host);
      if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`);
      return addresses.map((address) => ({ address, family: 4 }));
    };
    const { service: connections } = service(false, { resolve });
    const created = await connections.create(ACCOUNT, {
      name: 'pg',
      type: 'postgres',
      config: { host: 'warehouse.example.com', database: 'd', user: 'u', password: 'p' },
    });

    answers.set('warehouse.example.com', ['10.1.2.3']);
    const rebound = toApiError(
      await rejection(connections.connectorFor(ACCOUNT, created.id)),
      createLogSink().logger,
    );
    expect(rebound).toMatchObject({ code: 'FORBIDDEN', retryAfter: undefined });
    expect(rebound.message).not.toContain('10.1.2.3');
    // Its owner is told which setting would allow it.
    const forOwner = await rejection(connections.test(ACCOUNT, created.id));
    expect(forOwner).toMatchObject({ code: 'FORBIDDEN' });
    expect((forOwner as Error).message).toContain('QUARRY_ALLOW_PRIVATE_NETWORKS');

    answers.delete('warehouse.example.com');
    const vanished = toApiError(
      await rejection(connections.connectorFor(ACCOUNT, created.id)),
      createLogSink().logger,
    );
    expect(vanished).toMatchObject({ code: 'SOURCE_UNAVAILABLE', retryAfter: 5 });

    // At creation the same problems stay the owner's to fix: 403 for a private address, 400 for no address.
    for (const [host, code] of [
      ['10.0.0.1', 'FORBIDDEN'],
      ['nowhere.example.com', 'INVALID_REQUEST'],
    ] as const) {
      const refused = await rejection(
        connections.create(ACCOUNT, {
          name: host,
          type: 'postgres',
          config: { host, database: 'd', user: 'u' },
        }),
      );
      expect(refused).toMatchObject({ code, details: [{ field: 'config.host' }] });
    }
  });
});

describe('the address a driver connects to (DNS rebinding)', () => {
  it('is the one the guard checked, not a second answer of the system resolver', async () => {
    // The guard's resolver says "localhost" is 127.0.0.2, where nothing listens; the system
    // resolver says 127.0.0.1, where the real PostgreSQL answers. A driver that resolves the
    // name again reaches PostgreSQL; one that connects to the checked address cannot.
    const resolve: HostResolver = async (host) =>
      host === 'localhost' ? [{ address: '127.0.0.2', family: 4 }] : [];
    const { service: connections } = service({ privateNetworks: true }, { resolve });
    const created = await connections.create(ACCOUNT, {
      name: 'rebound',
      type: 'postgres',
      config: { host: 'localhost', port: 5432, database: 'test', user: 'postgres', connectTimeoutMs: 2_000 },
    });
    const error = await rejection(connections.test(ACCOUNT, created.id));
    // The owner is told what the driver saw: the checked address refused the connection.
    expect(error).toMatchObject({ code: 'SOURCE_UNAVAILABLE' });
    expect((error as Error).message).toContain('127.0.0.2');
  });
});

describe('the three switches are separate', () => {
  it("private networks alone give neither the host's files nor its cloud identity", async () => {
    const { service: connections, repository } = service({ privateNetworks: true });
    const files = await rejection(
      connections.create(ACCOUNT, {
        name: 'keys',
        type: 'duckdb',
        config: { path: ':memory:', allowedDirectories: ['/'] },
      }),
    );
    expect(files).toMatchObject({ code: 'FORBIDDEN' });
    const identity = await rejection(
      connections.create(ACCOUNT, {
        name: 'adc',
        type: 'bigquery',
        config: {
          projectId: 'my-project',
          applicationDefaultCredentials: true,
          apiEndpoint: 'https://bigquery.example.com',
        },
      }),
    );
    expect(identity).toMatchObject({ code: 'FORBIDDEN' });
    expect(await repository.list(ACCOUNT)).toEqual([]);
  });
});

describe('host files are not probed for an owner without the switch', () => {
  it("answers 403 whether or not the file exists, so the gateway's disk cannot be mapped", async () => {
    const { service: connections } = service({ privateNetworks: true });
    for (const path of [dbFile, join(dir, 'missing.sqlite'), '/etc/hostname', '/root']) {
      const error = await rejection(
        connections.create(ACCOUNT, { name: 'probe', type: 'sqlite', config: { path } }),
      );
      expect(error, path).toMatchObject({ code: 'FORBIDDEN' });
    }
  });
});

describe('changing a connection in place', () => {
  it('lets a query in flight finish on the old pool, and the next call opens the new config', async () => {
    const { service: connections } = service(true);
    await seedDemoWarehouse(join(dir, 'a.duckdb'), { rows: 10 });
    await seedDemoWarehouse(join(dir, 'b.duckdb'), { rows: 10 });
    const created = await connections.create(ACCOUNT, {
      name: 'wh',
      type: 'duckdb',
      config: { path: join(dir, 'a.duckdb') },
    });
    const old = await connections.connectorFor(ACCOUNT, created.id);
    const dialect = plugins.get('duckdb')?.dialect;
    if (dialect === undefined) throw new Error('duckdb is loaded');
    const inFlight = old.query({
      template: parseTemplate('SELECT count(*) AS n FROM range(100000000)', dialect),
      params: {},
      timeoutMs: 30_000,
      maxRows: 10,
    });
    const updated = await connections.update(
      ACCOUNT,
      created.id,
      { config: { path: join(dir, 'b.duckdb') } },
      { test: false },
    );
    expect(updated.config).toMatchObject({ path: join(dir, 'b.duckdb') });
    const answered = await inFlight;
    expect(answered.rows).toHaveLength(1);
    expect(Number(answered.rows[0]?.n)).toBe(100_000_000);
    const next = await connections.connectorFor(ACCOUNT, created.id);
    expect(next).not.toBe(old);
  });
});

describe('live pools', () => {
  it('keeps at most maxLivePools, closing the least recently used one', async () => {
    const { service: connections } = service(true, { maxLivePools: 2 });
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const created = await connections.create(ACCOUNT, { name, type: 'sqlite', config: { path: dbFile } });
      ids.push(created.id);
    }
    const [a, b, c] = ids as [string, string, string];
    const first = await connections.connectorFor(ACCOUNT, a);
    await connections.connectorFor(ACCOUNT, b);
    await connections.connectorFor(ACCOUNT, a); // a is now more recent than b
    await connections.connectorFor(ACCOUNT, c);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      connections
        .pools()
        .map((p) => p.connection)
        .sort(),
    ).toEqual([a, c].sort());
    // a stayed (it was used after b), b was closed; b opens a new pool when used again.
    expect(first).toBe(await connections.connectorFor(ACCOUNT, a));
    const again = await connections.connectorFor(ACCOUNT, b);
    expect(connections.pools()).toHaveLength(2);
    await again.close();
  });
});
