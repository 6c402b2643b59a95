// Checks the connector's lifecycle: sessions killed by the server are replaced without failing
// the next query, close() is idempotent and drains, and an unreachable warehouse fails test()
// promptly with CONNECT_FAILED and without leaking a secret from the config.
import { expect } from 'vitest';
import type { Connector } from '../connector.js';
import { type ConnectorPlugin, createConnector, secretFieldsOf } from '../index.js';
import { CONFORMANCE_ROWS } from './conformance-fixture.js';
import {
  type ConformanceHarness,
  connectorOptions,
  describeOutcome,
  expectConnectorError,
  typed,
} from './conformance-harness.js';

const TEST_TIMEOUT_MS = 30_000;
/** How soon an unreachable warehouse must be reported. */
const UNREACHABLE_WITHIN_MS = 5_000;

/** Registers the lifecycle checks (10–12 of the kit). */
export function registerLifecycleConformance(h: ConformanceHarness): void {
  const killSessions = h.options.killSessions;
  h.check(
    'killSessions',
    'replaces sessions killed on the server: the next queries succeed',
    killSessions === undefined
      ? 'no killSessions probe given (an engine without server sessions)'
      : async () => {
          const connector = h.connector();
          const sql = h.sql.echo('integer', false) as string;
          const batch = async (): Promise<void> => {
            const results = await Promise.all(
              Array.from({ length: h.poolMax }, (_, i) => h.query(sql, { v: typed('integer', i + 1) })),
            );
            expect(results.map((result) => result.rows)).toEqual(results.map((_, i) => [{ v: i + 1 }]));
          };
          await batch(); // leaves idle sessions in the pool
          const created = connector.stats().created;
          await killSessions();
          await batch();
          expect(
            connector.stats().created,
            'killed sessions must have been replaced by new ones',
          ).toBeGreaterThan(created);
          expect(await h.count()).toBe(CONFORMANCE_ROWS.length);
        },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'close',
    'closes idempotently: drains in-flight work, ends with no sessions, refuses later queries with CLOSED',
    async () => {
      const connector: Connector = await h.extraConnector();
      const sql = h.sql.echo('integer', false) as string;
      const params = { v: typed('integer', 7) };
      await h.query(sql, params, {}, connector);
      expect(connector.stats().total, 'a session was opened').toBeGreaterThan(0);

      const inFlight = h.query(sql, params, {}, connector);
      const closing = [connector.close(), connector.close()];
      const drained = await inFlight.then(
        (result) => result.rows.length,
        (error: unknown) => describeOutcome(error),
      );
      expect(drained, 'a query started before close() must complete').toBe(1);
      await Promise.all(closing);
      await connector.close();
      expect(connector.stats().total, 'no session left open').toBe(0);
      await expectConnectorError(h.query(sql, params, {}, connector), 'CLOSED', 'query after close()');
    },
    TEST_TIMEOUT_MS,
  );

  const unreachableConfig = h.options.unreachableConfig;
  h.check(
    'unreachable',
    'fails test() promptly with CONNECT_FAILED on an unreachable warehouse, without leaking secrets',
    unreachableConfig === undefined
      ? 'no unreachableConfig given'
      : async () => {
          const raw = await unreachableConfig();
          const secrets = secretsOf(raw, h.options.plugin);
          const started = performance.now();
          let outcome: unknown = 'success';
          let connector: Connector | undefined;
          try {
            connector = await createConnector(h.options.plugin, raw, connectorOptions(h.options));
            await connector.test();
          } catch (error) {
            outcome = error;
          } finally {
            await connector?.close();
          }
          const elapsed = performance.now() - started;
          await expectConnectorError(
            Promise.reject(outcome),
            'CONNECT_FAILED',
            'test() on an unreachable config',
          );
          expect(elapsed, `CONNECT_FAILED within ${UNREACHABLE_WITHIN_MS} ms`).toBeLessThan(
            UNREACHABLE_WITHIN_MS,
          );
          const error = outcome as Error & { details?: unknown };
          const visible = `${String(error)}\n${error.message}\n${JSON.stringify(error.details ?? [])}`;
          for (const secret of secrets) {
            expect(
              visible.includes(secret),
              `the error must not contain the secret ${JSON.stringify(secret)}`,
            ).toBe(false);
          }
        },
    TEST_TIMEOUT_MS,
  );
}

const SECRET_KEY = /pass|pwd|secret|token|credential|private|api_?key/i;

/** Secret strings in a raw config: fields the schema marks secret, secret-looking keys, URL passwords. */
function secretsOf(raw: unknown, plugin: ConnectorPlugin): string[] {
  const found = new Set<string>();
  const marked = new Set(secretFieldsOf(plugin.configSchema));
  const visit = (value: unknown, path: string, key: string): void => {
    if (typeof value === 'string') {
      if (marked.has(path) || SECRET_KEY.test(key)) found.add(value);
      const url = /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:([^@\s/]+)@/i.exec(value);
      if (url?.[1] !== undefined) found.add(decodeURIComponent(url[1]));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, path === '' ? k : `${path}.${k}`, k);
    }
  };
  visit(raw, '', '');
  return [...found].filter((secret) => secret.length >= 3);
}
