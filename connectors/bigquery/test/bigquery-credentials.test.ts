// Credentials end to end, through the official driver against the fake BigQuery and its token
// endpoint: one token per session from the key file's token_uri, a session whose token is refused
// replaced, a key the endpoint does not trust failing test() before any API call, and no connection
// to anything but the fake (sockets and DNS watched).
import dns from 'node:dns';
import net from 'node:net';
import { createConnector } from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bigqueryPlugin } from '../src/bigquery-plugin.js';
import { type FakeBigquery, startFakeBigquery } from './fake-bigquery-server.js';
import {
  failure,
  OpenConnectors,
  PROJECT,
  query,
  SLOW_SQL,
  startTrustedFake,
  type TrustedFake,
} from './protocol-fixture.js';
import { createTestServiceAccount } from './test-service-account.js';

let main: TrustedFake;
let fake: FakeBigquery;
const connectors = new OpenConnectors();

function connect() {
  return connectors.open(main);
}

beforeAll(async () => {
  main = await startTrustedFake();
  fake = main.fake;
});

afterEach(async () => {
  await connectors.closeAll();
});

afterAll(async () => {
  await fake.close();
});

describe('credentials', () => {
  it('gets one token per session from the key file token_uri and reuses it', async () => {
    const before = fake.tokenRequests();
    const connector = await connect();
    for (let i = 0; i < 5; i++) await query(connector, 'SELECT 1 AS one');
    expect(connector.stats().created).toBe(1);
    expect(fake.tokenRequests() - before).toBe(1);
  });

  it('replaces a session whose token BigQuery stops accepting with one holding a fresh token', async () => {
    const connector = await connect();
    await query(connector, 'SELECT 1 AS one');
    const tokens = fake.tokenRequests();
    fake.revokeTokens();
    expect((await query(connector, 'SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
    expect(connector.stats().created).toBe(2);
    expect(fake.tokenRequests()).toBe(tokens + 1);
  });

  it('fails test() with CONNECT_FAILED when the token endpoint refuses the key, and never calls the API', async () => {
    const strangerFake = await startFakeBigquery({ projectId: PROJECT });
    try {
      // The same account name, but a key the token endpoint does not trust: the signature fails.
      const impostor = createTestServiceAccount(strangerFake.tokenUri);
      strangerFake.addServiceAccount(
        impostor.email,
        createTestServiceAccount(strangerFake.tokenUri).publicKeyPem,
      );
      const connector = connectors.track(
        await createConnector(bigqueryPlugin, {
          projectId: PROJECT,
          apiEndpoint: strangerFake.url,
          credentials: impostor.keyFile,
        }),
      );
      const error = await failure(connector.test());
      expect([error.code, error.driverCode]).toEqual(['CONNECT_FAILED', 'invalid_grant']);
      expect(error.message).not.toContain(impostor.keyFile.private_key?.slice(40, 80));
      expect(strangerFake.requests.map((r) => r.path)).toEqual(['/token']);
    } finally {
      await connectors.closeAll();
      await strangerFake.close();
    }
  });

  it('never opens a connection to anything but the fake, and never resolves a host name', async () => {
    const targets: string[] = [];
    const lookups: string[] = [];
    const connectSocket = net.Socket.prototype.connect;
    const lookup = dns.lookup;
    net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
      // net.connect(…) hands the socket its normalised [options, callback] pair.
      const [first, second] = (Array.isArray(args[0]) ? args[0] : args) as [unknown, unknown];
      const options = (
        typeof first === 'object' && first !== null ? first : { port: first, host: second }
      ) as {
        host?: unknown;
        port?: unknown;
        path?: unknown;
      };
      // http.Agent passes `path: null` for TCP sockets; a string path is a Unix socket.
      targets.push(
        typeof options.path === 'string' ? options.path : `${String(options.host)}:${String(options.port)}`,
      );
      return (connectSocket as (...a: unknown[]) => net.Socket).apply(this, args);
    } as typeof connectSocket;
    dns.lookup = ((hostname: string, ...rest: unknown[]) => {
      lookups.push(hostname);
      return (lookup as (...a: unknown[]) => unknown)(hostname, ...rest);
    }) as typeof dns.lookup;
    try {
      const connector = await connect();
      await connector.test();
      await Promise.all([1, 2, 3].map((n) => query(connector, `SELECT ${n} AS n`)));
      await failure(query(connector, SLOW_SQL, {}, { timeoutMs: 300 }));
      await connector.close();
    } finally {
      net.Socket.prototype.connect = connectSocket;
      dns.lookup = lookup;
    }
    const fakeAddress = new URL(fake.url).host;
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => target !== fakeAddress)).toEqual([]);
    expect(lookups).toEqual([]);
  });
});
