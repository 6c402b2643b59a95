// Where a Postgres session connects (issue 17): the host the guard checked, wherever the config
// put it (libpq's `?host=` included), and to the checked address rather than a second DNS answer.
// Against the real local PostgreSQL, so "refused" also means no session was opened.
import {
  createConnector,
  createDestinationGuard,
  isDestinationRefusal,
  noopLogger,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
  parseTemplate,
} from '@quarry/sdk-connector';
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresConfigSchema, resolvePostgresSettings } from './postgres-config.js';
import { postgresPlugin } from './postgres-plugin.js';
import { createPostgresSession, postgresTarget } from './postgres-session.js';
import { pgAvailable, requirePg, TEST_PG_URL } from './postgres-test-server.js';

let availability: true | string = 'not checked';
const strict = createDestinationGuard(PUBLIC_ONLY);

function settings(connectionString: string) {
  return resolvePostgresSettings(postgresConfigSchema.parse({ connectionString, connectTimeoutMs: 2_000 }));
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

beforeAll(async () => {
  availability = await pgAvailable();
});

describe('postgres destinations', () => {
  it.each([
    ['?host=127.0.0.1', 'postgres://postgres@8.8.8.8/test?host=127.0.0.1'],
    ['?host= a socket directory', 'postgres://postgres@8.8.8.8/test?host=%2Fvar%2Frun%2Fpostgresql'],
    ['?host= a host list', 'postgres://postgres@8.8.8.8/test?host=8.8.4.4,127.0.0.1'],
    ['a loopback URL host', 'postgres://postgres@127.0.0.1:5432/test'],
  ])('declares and refuses %s when private networks are off', async (_label, url) => {
    const config = postgresConfigSchema.parse({ connectionString: url });
    const declared = postgresPlugin.destinations?.(config) ?? [];
    expect(declared).toHaveLength(1);
    expect(declared[0]).not.toMatchObject({ host: '8.8.8.8' });
    expect(
      isDestinationRefusal(await failure(createPostgresSession(settings(url), noopLogger, strict))),
    ).toBe(true);
  });

  it('reaches the unix socket only with private networks, and then really uses it', async (context) => {
    requirePg(availability, context.skip);
    const url = 'postgres://postgres@8.8.8.8/test?host=%2Fvar%2Frun%2Fpostgresql';
    const onlyPrivate = createDestinationGuard({ ...PUBLIC_ONLY, privateNetworks: true });
    const session = await createPostgresSession(settings(url), noopLogger, onlyPrivate);
    await session.close();
  });

  it('connects to the address the guard resolved, verifying TLS against the configured name', async (context) => {
    requirePg(availability, context.skip);
    // No DNS knows this name; only the guard's answer lets the session reach PostgreSQL.
    const guard = createDestinationGuard(OPERATOR_TRUSTED, {
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const port = new URL(TEST_PG_URL).port || '5432';
    const named = settings(`postgres://postgres@warehouse.quarry.invalid:${port}/test`);
    const session = await createPostgresSession(named, noopLogger, guard);
    await session.close();
    const tls = resolvePostgresSettings(
      postgresConfigSchema.parse({ connectionString: 'postgres://u@warehouse.quarry.invalid/d', ssl: true }),
    );
    await expect(postgresTarget(tls, guard)).resolves.toEqual({
      host: '127.0.0.1',
      ssl: { servername: 'warehouse.quarry.invalid' },
    });
  });

  it('through createConnector: a gateway policy reaches the driver, and each session checks again', async () => {
    let answer = '127.0.0.1';
    const connector = await createConnector(
      postgresPlugin,
      { connectionString: 'postgres://postgres@warehouse.quarry.invalid/test', connectTimeoutMs: 2_000 },
      {
        destinations: PUBLIC_ONLY,
        resolve: async () => [{ address: answer, family: 4 }],
        pool: { max: 1, acquireTimeoutMs: 3_000 },
      },
    );
    try {
      expect(isDestinationRefusal(await failure(connector.test()))).toBe(true);
      answer = '169.254.169.254';
      const query = connector.query({ template: parseTemplate('SELECT 1 AS one'), params: {} });
      expect(String(await failure(query))).toMatch(/cloud metadata|not allowed|refused/i);
    } finally {
      await connector.close();
    }
  });
});
