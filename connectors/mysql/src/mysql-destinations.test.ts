// Where a MySQL session connects (issue 17): only to a host the destination guard allows, and to
// the address it checked (mysql2 would otherwise resolve the name again for every session).
// Against the real local MariaDB.
import {
  createConnector,
  createDestinationGuard,
  isDestinationRefusal,
  noopLogger,
  OPERATOR_TRUSTED,
  PUBLIC_ONLY,
} from '@quarry/sdk-connector';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMysqlDriver, mysqlPlugin } from './mysql-plugin.js';
import { mysqlAvailable, mysqlTestTarget } from './mysql-test-server.js';

let availability: true | string = 'not checked';

beforeAll(async () => {
  availability = await mysqlAvailable();
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('mysql destinations', () => {
  it('refuses loopback and metadata hosts when private networks are off, before connecting', async () => {
    for (const host of ['127.0.0.1', 'localhost', '169.254.169.254']) {
      const config = mysqlPlugin.configSchema.parse({ host, database: 'test', user: 'root' });
      expect(mysqlPlugin.destinations?.(config)).toEqual([{ kind: 'host', host, port: 3306 }]);
      const driver = createMysqlDriver(config, {
        logger: noopLogger,
        destinations: createDestinationGuard(PUBLIC_ONLY),
      });
      expect(isDestinationRefusal(await failure(driver.createSession())), host).toBe(true);
    }
  });

  it('connects to the address the guard resolved, not to a second DNS answer', async (context) => {
    if (availability !== true) context.skip(availability);
    const target = mysqlTestTarget();
    // No DNS knows this name; only the guard's answer lets the session reach MariaDB.
    const connector = await createConnector(
      mysqlPlugin,
      { ...target, host: 'warehouse.quarry.invalid' },
      { destinations: OPERATOR_TRUSTED, resolve: async () => [{ address: target.host, family: 4 }] },
    );
    try {
      await connector.test();
    } finally {
      await connector.close();
    }
  });
});
