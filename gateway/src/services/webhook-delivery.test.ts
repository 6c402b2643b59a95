// The deliverer against a real store (PGlite) and real HTTP servers on loopback: back-off with
// jitter inside the retry window, redirects not followed, at most 64 KiB of an answer read, the
// 5 s time limit, and the destination guard at delivery (a name that rebinds from a public address
// to loopback after the endpoint was created is refused when the deliverer connects).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { PUBLIC_ONLY } from '@quarry/sdk-connector';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import { createPgliteClient } from '../store/pglite-client.js';
import type { SqlClient } from '../store/sql-client.js';
import { createWebhookDeliverer, nextAttemptAt, type WebhookDeliverer } from './webhook-delivery.js';

const LOOPBACK_OK = { privateNetworks: true, hostFiles: false, hostIdentity: false };
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const logger = pino({ level: 'silent' });

let sql: SqlClient;
let store: ControlPlaneStore;
let server: Server;
let port: number;
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('ok');
const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];

beforeAll(async () => {
  sql = await createPgliteClient();
  await migrate(sql);
  store = createControlPlaneStore(sql, {
    secretBox: createSecretBox({ keys: { k: randomBytes(32) }, current: 'k' }),
  });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await sql.close();
});

async function deliverOnce(
  url: string,
  options: {
    policy?: typeof PUBLIC_ONLY;
    resolve?: (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;
  } = {},
) {
  const account = await store.accounts.create({
    email: `d-${randomBytes(4).toString('hex')}@example.com`,
    name: 'd',
  });
  const endpoint = await store.webhooks.create({
    accountId: account.id,
    url,
    description: '',
    eventTypes: [],
    secret: SECRET,
  });
  const eventId = (await store.webhooks.emit({
    accountId: account.id,
    type: 'webhook.test',
    data: { n: 1 },
  })) as string;
  const deliverer: WebhookDeliverer = createWebhookDeliverer({
    repository: store.webhooks,
    destinations: options.policy ?? LOOPBACK_OK,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    instance: 'test',
    logger,
    pollMs: 60_000,
    leaseMs: 30_000,
    retryBaseMs: 60_000,
    retryWindowMs: 3 * 86_400_000,
  });
  deliverer.kick();
  for (let i = 0; i < 200; i++) {
    const [log] = await store.webhooks.deliveries(account.id, endpoint.id, 1);
    if (log !== undefined && log.attempts > 0 && (log.lastStatus !== null || log.lastError !== null)) {
      await deliverer.close();
      return { log, eventId };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  await deliverer.close();
  throw new Error('no attempt recorded');
}

describe('webhook delivery', () => {
  it('backs off exponentially with jitter and gives up past the retry window', () => {
    const created = new Date(0);
    const opts = { retryBaseMs: 5_000, retryWindowMs: 3 * 86_400_000 };
    const low = () => 0;
    const high = () => 0.999999;
    expect(nextAttemptAt(1, created, 0, opts, low)?.getTime()).toBe(3_750);
    expect(nextAttemptAt(1, created, 0, opts, high)?.getTime()).toBeCloseTo(6_250, -1);
    expect(nextAttemptAt(4, created, 0, opts, low)?.getTime()).toBe(30_000);
    // Capped at 12 h between attempts; nothing past 3 days after the event.
    expect(nextAttemptAt(30, created, 0, opts, low)?.getTime()).toBe(0.75 * 12 * 3_600_000);
    expect(nextAttemptAt(30, created, 3 * 86_400_000 - 1000, opts, low)).toBeNull();
  });

  it('signs by the Standard Webhooks scheme: the standardwebhooks library verifies it', async () => {
    handler = (_req, res) => res.end('ok');
    const { log, eventId } = await deliverOnce(`http://127.0.0.1:${port}/signed`);
    expect(log).toMatchObject({ status: 'delivered', lastStatus: 200, attempts: 1 });
    const got = seen.find((s) => s.path === '/signed');
    expect(got?.headers['webhook-id']).toBe(eventId);
    const payload = new Webhook(SECRET).verify(got?.body ?? '', {
      'webhook-id': String(got?.headers['webhook-id']),
      'webhook-timestamp': String(got?.headers['webhook-timestamp']),
      'webhook-signature': String(got?.headers['webhook-signature']),
    });
    expect(payload).toMatchObject({ type: 'webhook.test', data: { n: 1 } });
  });

  it('does not follow a redirect', async () => {
    handler = (req, res) => {
      if (req.url === '/moved') res.writeHead(302, { location: '/elsewhere' }).end();
      else res.end('ok');
    };
    const { log } = await deliverOnce(`http://127.0.0.1:${port}/moved`);
    expect(log).toMatchObject({ status: 'pending', lastStatus: 302 });
    expect(log.lastError).toMatch(/redirect/);
    expect(seen.some((s) => s.path === '/elsewhere')).toBe(false);
  });

  it('reads at most 64 KiB of an answer: a 20 MiB one is delivered without reading it all', async () => {
    let written = 0;
    handler = (_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (written < 20 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => {});
      pump();
    };
    const { log } = await deliverOnce(`http://127.0.0.1:${port}/big`);
    expect(log).toMatchObject({ status: 'delivered', lastStatus: 200 });
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it('gives up on an attempt after 5 s without an answer', async () => {
    handler = () => {};
    const started = Date.now();
    const { log } = await deliverOnce(`http://127.0.0.1:${port}/hang`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(log.status).toBe('pending');
    expect(log.lastError).toMatch(/no answer within 5 s/);
  }, 15_000);

  it('refuses at delivery a name that resolved to a public address at creation and to loopback now', async () => {
    handler = (_req, res) => res.end('ok');
    const before = seen.length;
    // The endpoint was created when the name pointed elsewhere; now it rebinds to loopback.
    const { log } = await deliverOnce(`http://rebind.example.com:${port}/rebound`, {
      policy: PUBLIC_ONLY,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    expect(log.status).toBe('pending');
    expect(log.lastError).toMatch(/loopback/);
    expect(seen.length).toBe(before);
  });

  it('connects to the address it checked: a resolver answering public, then loopback, never reaches loopback', async () => {
    handler = (_req, res) => res.end('ok');
    const before = seen.length;
    let calls = 0;
    const { log } = await deliverOnce(`http://flip.example.com:${port}/flip`, {
      policy: PUBLIC_ONLY,
      resolve: async () =>
        calls++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
    });
    expect(log.status).toBe('pending');
    expect(log.lastError).toMatch(/loopback/);
    expect(seen.length).toBe(before);
  });

  it("disables an endpoint failing for the retry window and tells the account's other endpoints", async () => {
    handler = (_req, res) => res.end('ok');
    const account = await store.accounts.create({
      email: `x-${randomBytes(4).toString('hex')}@example.com`,
      name: 'x',
    });
    const broken = await store.webhooks.create({
      accountId: account.id,
      url: `http://127.0.0.1:${port}/broken`,
      description: '',
      eventTypes: ['webhook.test'],
      secret: SECRET,
    });
    const healthy = await store.webhooks.create({
      accountId: account.id,
      url: `http://127.0.0.1:${port}/healthy`,
      description: '',
      eventTypes: ['webhook.endpoint_disabled'],
      secret: SECRET,
    });
    await sql.query("UPDATE webhook_endpoints SET failing_since = now() - interval '4 days' WHERE id = $1", [
      broken.id,
    ]);
    const deliverer = createWebhookDeliverer({
      repository: store.webhooks,
      destinations: LOOPBACK_OK,
      instance: 'disabler',
      logger,
      pollMs: 60_000,
      leaseMs: 30_000,
      retryBaseMs: 60_000,
      retryWindowMs: 3 * 86_400_000,
    });
    try {
      deliverer.kick();
      for (let i = 0; i < 100 && !seen.some((d) => d.path === '/healthy'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        if (i % 10 === 9) deliverer.kick();
      }
    } finally {
      await deliverer.close();
    }
    const endpoint = await store.webhooks.get(account.id, broken.id);
    expect(endpoint).toMatchObject({ enabled: false });
    expect(endpoint?.disabledReason).toMatch(/every delivery failed since/);
    const told = seen.find((d) => d.path === '/healthy');
    expect(JSON.parse(told?.body ?? '{}')).toMatchObject({
      type: 'webhook.endpoint_disabled',
      data: { endpoint_id: broken.id },
    });
    expect((await store.webhooks.get(account.id, healthy.id))?.enabled).toBe(true);
    // Enabled again by its owner: the failing streak starts over.
    const again = await store.webhooks.update(account.id, broken.id, { enabled: true });
    expect(again).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  });
});
