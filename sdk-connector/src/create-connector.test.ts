import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Connector, QueryRequest } from './connector.js';
import { ConnectorError } from './connector-error.js';
import type { ConnectorLogger } from './connector-plugin.js';
import { createConnector } from './create-connector.js';
import { createDestinationGuard } from './destination-guard.js';
import { OPERATOR_TRUSTED } from './destination-policy.js';
import { noopLogger } from './noop-logger.js';
import type { ParamValues } from './param-types.js';
import { parseTemplate } from './sql-template.js';
import { createMemoryPlugin, type MemoryPlugin, type MemoryTable } from './testing/memory-plugin.js';

const sales: MemoryTable = {
  columns: [
    { name: 'region', type: 'string' },
    { name: 'revenue', type: 'decimal' },
    { name: 'orders', type: 'integer' },
    { name: 'day', type: 'date' },
  ],
  rows: [
    ['EU', '1234.50', '9007199254740993', '2024-01-31'],
    ['US', '99.00', 12n, new Date(Date.UTC(2024, 1, 1))],
    ['EU', '12345678901234567.1', 3, '2024-02-02'],
    ['APAC', '5', 4, '2024-02-03'],
    ['LATAM', '6.25', 5, '2024-02-04'],
  ],
};

const open: Connector[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(0)));
});

async function connect(plugin: MemoryPlugin, options: Parameters<typeof createConnector>[2] = {}) {
  const connector = await createConnector(plugin, { database: 'test', password: 'hunter22secret' }, options);
  open.push(connector);
  return connector;
}

function request(plugin: MemoryPlugin, sql: string, extra: Partial<QueryRequest> = {}): QueryRequest {
  return { template: parseTemplate(sql, plugin.dialect), params: {}, ...extra };
}

async function failureOf(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectorError);
    return error as ConnectorError;
  }
  throw new Error('expected the call to fail');
}

function capturingLogger(): ConnectorLogger & { readonly lines: string[] } {
  const lines: string[] = [];
  const log = (obj: object, msg?: string) => {
    lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  return { lines, debug: log, info: log, warn: log, error: log };
}

describe('createConnector: results', () => {
  it('returns JSON-safe rows keyed by column name, typed by column', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const result = await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(result.columns.map((c) => c.name)).toEqual(['region', 'revenue', 'orders', 'day']);
    expect(result.rows[0]).toEqual({
      region: 'EU',
      revenue: 1234.5,
      orders: '9007199254740993',
      day: '2024-01-31',
    });
    expect(result.rows[1]).toEqual({ region: 'US', revenue: 99, orders: 12, day: '2024-02-01' });
    expect(result.rows[2]?.revenue).toBe('12345678901234567.1');
    expect(result.rowCount).toBe(5);
    expect(result.truncated).toBe(false);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('binds compiled params rather than splicing them', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const params: ParamValues = { region: { type: 'string', array: false, value: 'EU' } };
    const result = await connector.query(
      request(plugin, 'SELECT * FROM sales WHERE region = :region', { params }),
    );
    expect(result.rows.map((r) => r.revenue)).toEqual([1234.5, '12345678901234567.1']);
    expect(plugin.control.sessions[0]?.lastSql).toBe('SELECT * FROM sales WHERE region = $1');
  });

  it('hands maxBytesBilled to the session only when given, and refuses a bad one before any session', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    await connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxBytesBilled: 10_000 });
    expect(plugin.control.sessions[0]?.lastMaxBytesBilled).toBe(10_000);
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(plugin.control.sessions[0]?.lastMaxBytesBilled).toBeUndefined();
    const executes = plugin.control.sessions[0]?.executes;
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
      await expect(
        connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxBytesBilled: bad }),
      ).rejects.toMatchObject({ code: 'PARAM_INVALID' });
    }
    expect(plugin.control.sessions[0]?.executes).toBe(executes);
  });

  it('fails a result past maxResultBytes with RESULT_TOO_LARGE, and the session lives on', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const all = await connector.query(request(plugin, 'SELECT * FROM sales'));
    const json = JSON.stringify(all.rows).length;
    // The yardstick is about the rows' JSON (numbers count 8) plus 64 bytes a row: twice the
    // JSON and the rows' 64 fit, the JSON alone does not, nor does half of it.
    const bound = 2 * json + 5 * 64;
    const fits = await connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxResultBytes: bound });
    expect(fits.rowCount).toBe(5);
    expect(plugin.control.sessions[0]?.lastMaxResultBytes).toBe(bound);
    const bare = connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxResultBytes: json });
    expect((await failureOf(bare)).code).toBe('RESULT_TOO_LARGE');
    const failure = await failureOf(
      connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxResultBytes: Math.floor(json / 2) }),
    );
    expect(failure.code).toBe('RESULT_TOO_LARGE');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toContain(`${Math.floor(json / 2)} bytes`);
    // The same session answers the next query.
    expect((await connector.query(request(plugin, 'SELECT * FROM sales'))).rowCount).toBe(5);
    expect(plugin.control.sessions).toHaveLength(1);
    for (const bad of [0, -5, 2.5]) {
      await expect(
        connector.query({ ...request(plugin, 'SELECT * FROM sales'), maxResultBytes: bad }),
      ).rejects.toMatchObject({ code: 'PARAM_INVALID' });
    }
  });

  it('passes on RESULT_TOO_LARGE from a session that stopped early, and keeps the session', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    plugin.control.failQueries(new ConnectorError('RESULT_TOO_LARGE', 'past 100 bytes'));
    expect((await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')))).code).toBe(
      'RESULT_TOO_LARGE',
    );
    expect((await connector.query(request(plugin, 'SELECT * FROM sales'))).rowCount).toBe(5);
    expect(plugin.control.sessions).toHaveLength(1);
  });

  it.each([
    [5, 5, false],
    [6, 5, false],
    [4, 4, true],
    [1, 1, true],
    [0, 0, true],
  ])('maxRows %i over 5 rows → %i rows, truncated %s', async (maxRows, count, truncated) => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const result = await connector.query(request(plugin, 'SELECT * FROM sales', { maxRows }));
    expect(result.rows).toHaveLength(count);
    expect(result.rowCount).toBe(count);
    expect(result.truncated).toBe(truncated);
    // The driver is asked for one row more than the cap, so truncation is exact and cheap.
    expect(plugin.control.sessions[0]?.lastRowLimit).toBe(maxRows + 1);
  });

  it('uses options.defaultMaxRows when the request does not say', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin, { defaultMaxRows: 2 });
    const result = await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(result.rows).toHaveLength(2);
    expect(result.truncated).toBe(true);
  });

  it('refuses a template whose params are missing with PARAM_INVALID', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales WHERE region = :region')),
    );
    expect(error.code).toBe('PARAM_INVALID');
    expect(plugin.control.createAttempts).toBe(0);
  });
});

describe('createConnector: time limits and cancellation', () => {
  it('times out, cancels on the server, and destroys the session', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 10_000 });
    const connector = await connect(plugin);
    const started = Date.now();
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { timeoutMs: 100 })),
    );
    expect(error.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(2_000);
    const [session] = plugin.control.sessions;
    expect(session?.cancels).toBe(1);
    expect(session?.closed).toBe(true);
    expect(connector.stats()).toMatchObject({ total: 0, destroyed: 1 });
    // The next query gets a fresh session.
    plugin.control.delayMs = 0;
    const result = await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(result.rowCount).toBe(5);
    expect(plugin.control.sessions).toHaveLength(2);
  });

  it('fails a query on a warehouse that stopped answering at its time limit + 0.5 s, and destroys the session', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 60_000 });
    const connector = await connect(plugin);
    // Open one session first: the warehouse goes silent while the query runs on it.
    plugin.control.delayMs = 0;
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    plugin.control.delayMs = 60_000;
    plugin.control.unresponsive = true;
    const started = performance.now();
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { timeoutMs: 200 })),
    );
    const took = performance.now() - started;
    expect(error.code).toBe('QUERY_TIMEOUT');
    expect(took).toBeGreaterThanOrEqual(195);
    expect(took).toBeLessThan(200 + 500 + 100);
    const [session] = plugin.control.sessions;
    expect(session?.cancels).toBe(1);
    await vi.waitFor(() => expect(session?.closed).toBe(true));
    expect(connector.stats()).toMatchObject({ total: 0, destroyed: 1 });
  });

  it('fails with CONNECT_FAILED when a session does not open within pool.connectTimeoutMs', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    plugin.control.unresponsive = true;
    const connector = await connect(plugin, { pool: { connectTimeoutMs: 150 } });
    const started = performance.now();
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { timeoutMs: 5_000 })),
    );
    expect(error.code).toBe('CONNECT_FAILED');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('aborts on the caller signal with QUERY_ABORTED and cancels on the server', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 10_000 });
    const connector = await connect(plugin);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { signal: controller.signal })),
    );
    expect(error.code).toBe('QUERY_ABORTED');
    expect(plugin.control.sessions[0]?.cancels).toBe(1);
    expect(plugin.control.sessions[0]?.closed).toBe(true);
  });

  it('does not run a query whose signal is already aborted', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { signal: AbortSignal.abort() })),
    );
    expect(error.code).toBe('QUERY_ABORTED');
    expect(plugin.control.sessions.every((s) => s.executes === 0)).toBe(true);
  });

  it('counts time waiting for a session against the time limit', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 400 });
    const connector = await connect(plugin, { pool: { max: 1 } });
    const first = connector.query(request(plugin, 'SELECT * FROM sales'));
    const error = await failureOf(
      connector.query(request(plugin, 'SELECT * FROM sales', { timeoutMs: 100 })),
    );
    expect(error.code).toBe('QUERY_TIMEOUT');
    expect((await first).rowCount).toBe(5);
  });
});

describe('createConnector: time limits of concurrent queries', () => {
  it('times out a short-limit query on time while a longer one keeps running', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin, { pool: { max: 2 } });
    const long = connector.query(request(plugin, 'SELECT sleep(0.6)', { timeoutMs: 5_000 }));
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const error = await failureOf(connector.query(request(plugin, 'SELECT sleep(10)', { timeoutMs: 100 })));
    expect(error.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(500);
    expect(plugin.control.runningQueries('sleep(10)')).toBe(0);
    expect((await long).rowCount).toBe(1);
  });

  it("gives each query a signal that only that query's stop aborts", async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const real = await plugin.createDriver(
      { database: 'x' },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    const seen: boolean[] = [];
    let staleListenerCalls = 0;
    const wrapped: MemoryPlugin = {
      ...plugin,
      createDriver: () => ({
        async createSession() {
          const inner = await real.createSession();
          return {
            execute(query, options) {
              seen.push(options.signal.aborted);
              // A careless session that never removes its listener.
              if (seen.length === 1) options.signal.addEventListener('abort', () => staleListenerCalls++);
              return inner.execute(query, options);
            },
            validate: () => true,
            cancel: () => inner.cancel?.() ?? Promise.resolve(),
            close: () => inner.close(),
          };
        },
      }),
    };
    const connector = await connect(wrapped);
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(
      await failureOf(connector.query(request(plugin, 'SELECT sleep(10)', { timeoutMs: 50 }))),
    ).toMatchObject({
      code: 'QUERY_TIMEOUT',
    });
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(seen).toEqual([false, false, false, false]);
    expect(staleListenerCalls).toBe(0);
  });
});

describe('createConnector: pooling', () => {
  it('never runs more than pool.max queries at once, and runs them all', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 30 });
    const connector = await connect(plugin, { pool: { max: 2 } });
    const results = await Promise.all(
      Array.from({ length: 10 }, () => connector.query(request(plugin, 'SELECT * FROM sales'))),
    );
    expect(results.every((r) => r.rowCount === 5)).toBe(true);
    expect(plugin.control.maxConcurrent).toBe(2);
    expect(plugin.control.sessions).toHaveLength(2);
    expect(connector.stats()).toMatchObject({ total: 2, idle: 2, busy: 0, waiting: 0, created: 2 });
  });

  it('fails with POOL_EXHAUSTED when no session frees up within acquireTimeoutMs', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 400 });
    const connector = await connect(plugin, { pool: { max: 1, acquireTimeoutMs: 100 } });
    const first = connector.query(request(plugin, 'SELECT * FROM sales'));
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('POOL_EXHAUSTED');
    expect(error.retryable).toBe(true);
    expect((await first).rowCount).toBe(5);
  });

  it('fails with POOL_EXHAUSTED at once when the wait queue is full', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 300 });
    const connector = await connect(plugin, { pool: { max: 1, maxWaiting: 0 } });
    const first = connector.query(request(plugin, 'SELECT * FROM sales'));
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('POOL_EXHAUSTED');
    expect(Date.now() - started).toBeLessThan(200);
    await first;
  });

  it('fails with CONNECT_FAILED, without spinning, while creates keep failing', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    plugin.control.failCreates(Number.POSITIVE_INFINITY);
    const connector = await connect(plugin, { pool: { acquireTimeoutMs: 60_000 } });
    const started = Date.now();
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('CONNECT_FAILED');
    expect(error.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Keep asking for a second; attempts must stay bounded by the exponential back-off.
    const deadline = Date.now() + 1_000;
    while (Date.now() < deadline) {
      const again = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
      expect(again.code).toBe('CONNECT_FAILED');
    }
    expect(plugin.control.createAttempts).toBeLessThanOrEqual(12);
    expect(plugin.control.createAttempts).toBeGreaterThanOrEqual(2);
  });

  it('recovers once creates succeed again', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    plugin.control.failCreates(2);
    const connector = await connect(plugin, { pool: { createRetryBaseMs: 20 } });
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('CONNECT_FAILED');
    let result: Awaited<ReturnType<Connector['query']>> | undefined;
    for (let i = 0; i < 20 && !result; i++) {
      result = await connector.query(request(plugin, 'SELECT * FROM sales')).catch(() => undefined);
      if (!result) await new Promise((r) => setTimeout(r, 25));
    }
    expect(result?.rowCount).toBe(5);
  });

  it('replaces a session the server killed while idle (validate on borrow)', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    plugin.control.killSessions();
    const result = await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(result.rowCount).toBe(5);
    expect(plugin.control.sessions).toHaveLength(2);
    expect(plugin.control.sessions[0]).toMatchObject({ killed: true, closed: true, executes: 1 });
  });

  it('retries once on a fresh session when an idle session turns out dead mid-query', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin, { pool: { validateOnBorrow: false } });
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    plugin.control.killSessions();
    const result = await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(result.rowCount).toBe(5);
    expect(plugin.control.sessions[0]?.executes).toBe(2);
    expect(plugin.control.sessions[1]?.executes).toBe(1);
  });

  it('does not retry a dead session that was freshly created', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    plugin.control.failQueries(new ConnectorError('CONNECT_FAILED', 'connection reset'));
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('CONNECT_FAILED');
    expect(plugin.control.sessions).toHaveLength(1);
  });
});

describe('createConnector: errors', () => {
  it('never surfaces driver text with credentials, and logs it redacted', async () => {
    const logger = capturingLogger();
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin, { logger });
    plugin.control.failQueries(
      Object.assign(new Error('could not reach postgres://u:secretpw@h:5432/db (password hunter22secret)'), {
        code: '08006',
      }),
    );
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('QUERY_FAILED');
    expect(error.driverCode).toBe('08006');
    const shown = `${error.message} ${JSON.stringify(error)} ${JSON.stringify(error.details)}`;
    expect(shown).not.toContain('secretpw');
    expect(shown).not.toContain('hunter22secret');
    const logged = logger.lines.join('\n');
    expect(logged).toContain('08006');
    expect(logged).not.toContain('secretpw');
    expect(logged).not.toContain('hunter22secret');
  });

  it("uses the plugin's mapError, and still redacts the config's secrets from it", async () => {
    const plugin = createMemoryPlugin({
      tables: { sales },
      mapError: (e) =>
        new ConnectorError('QUERY_FAILED', `warehouse said: ${(e as Error).message}`, {
          driverCode: '42601',
        }),
    });
    const connector = await connect(plugin);
    plugin.control.failQueries(new Error('syntax error near "hunter22secret"'));
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.message).toBe('warehouse said: syntax error near "***"');
    expect(error.driverCode).toBe('42601');
  });

  it('keeps the session after an ordinary query error, destroys it after an unknown one', async () => {
    const plugin = createMemoryPlugin({ tables: { sales } });
    const connector = await connect(plugin);
    plugin.control.failQueries(new ConnectorError('QUERY_FAILED', 'division by zero'));
    await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    await connector.query(request(plugin, 'SELECT * FROM sales'));
    expect(plugin.control.sessions).toHaveLength(1);
    plugin.control.failQueries(new TypeError('socket is undefined'));
    await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(plugin.control.sessions[0]?.closed).toBe(true);
  });

  it('rejects an invalid config with CONFIG_INVALID before opening anything', async () => {
    const plugin = createMemoryPlugin();
    const error = await failureOf(createConnector(plugin, { database: '', password: 5 }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.details.map((d) => d.param).sort()).toEqual(['database', 'password']);
    expect(plugin.control.createAttempts).toBe(0);
  });
});

describe('createConnector: test() and close()', () => {
  it('test() opens and validates a session, or fails with CONNECT_FAILED', async () => {
    const plugin = createMemoryPlugin();
    const connector = await connect(plugin);
    await connector.test();
    expect(plugin.control.sessions[0]?.validates).toBeGreaterThanOrEqual(1);
    const down = createMemoryPlugin();
    down.control.failCreates(Number.POSITIVE_INFINITY);
    const error = await failureOf((await connect(down)).test());
    expect(error.code).toBe('CONNECT_FAILED');
  });

  it('close() waits for running queries, closes every session, and is idempotent', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 150 });
    const connector = await connect(plugin, { pool: { max: 3 } });
    const running = Promise.all([1, 2, 3].map(() => connector.query(request(plugin, 'SELECT * FROM sales'))));
    await new Promise((r) => setTimeout(r, 20));
    const first = connector.close(5_000);
    const second = connector.close(5_000);
    const results = await running;
    await Promise.all([first, second]);
    expect(results.map((r) => r.rowCount)).toEqual([5, 5, 5]);
    expect(plugin.control.sessions.every((s) => s.closed)).toBe(true);
    expect(plugin.control.destroyed).toBe(true);
    expect(connector.stats()).toMatchObject({ total: 0, busy: 0 });
    const error = await failureOf(connector.query(request(plugin, 'SELECT * FROM sales')));
    expect(error.code).toBe('CLOSED');
    await connector.close();
  });

  it('close() with a short grace does not wait for a slow query', async () => {
    const plugin = createMemoryPlugin({ tables: { sales }, delayMs: 10_000 });
    const connector = await connect(plugin);
    const running = connector.query(request(plugin, 'SELECT * FROM sales')).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    await connector.close(50);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(plugin.control.sessions[0]?.closed).toBe(true);
    expect(await running).toBeInstanceOf(ConnectorError);
  });
});
