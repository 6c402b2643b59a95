// Webhooks in the web console, end to end: Debian's Chromium (playwright-core) against a real
// gateway process (embedded store, private networks allowed so the receiver on loopback may be
// an endpoint) and a receiver process. An account adds an endpoint (the secret shown once),
// sends a test, reads the delivery log and replays a delivery: the receiver gets the same
// webhook-id twice, signed with the secret the page showed. The usage page shows the same alert
// as the usage.threshold webhook once the month passed a threshold.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { expectStatus } from './support/metering-fixture.js';
import { serviceUp, uniqueSuffix } from './support/test-services.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const up = serviceUp(await chromiumAvailable());
const http = createHttpClient();
const suffix = uniqueSuffix();
const PASSWORD = 'correct horse battery staple';
const EMAIL = `hooks-${suffix}@example.com`;
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

describe.skipIf(!up)('webhooks in the web console', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let receiver: WebhookReceiver;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-console-hooks-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 1_000 });
    receiver = await startWebhookReceiver();
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_LOG_LEVEL: 'warn',
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
        QUARRY_WEBHOOK_POLL_MS: '100',
        QUARRY_FREE_CREDITS: '10',
        QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
      },
      readyTimeoutMs: 90_000,
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    await receiver?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('adds an endpoint, tests it, shows the delivery log and replays; the usage page shows the alert', async () => {
    const account = expectStatus(
      await http.request(gateway.url, 'POST', '/v1/accounts', { json: { email: EMAIL, name: 'Hooks' } }),
      201,
      'sign-up',
    ).body;
    const key = account.key.secret as string;
    expectStatus(
      await http.request(gateway.url, 'PUT', '/v1/account/password', { key, json: { password: PASSWORD } }),
      204,
      'password',
    );
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${gateway.url}/#/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(EMAIL);

    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByLabel('URL').fill(receiver.hook('console'));
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByTestId('secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expect.poll(() => page.getByTestId('endpoint').count()).toBe(1);

    await page.getByRole('button', { name: /^Send a test/ }).click();
    const [first] = await receiver.waitFor((all) => all.length >= 1, 20_000, 'console');
    const verify = (d: NonNullable<typeof first>) =>
      new Webhook(secret).verify(d.body, {
        'webhook-id': d.id,
        'webhook-timestamp': d.timestamp,
        'webhook-signature': d.signature,
      });
    expect(verify(first as NonNullable<typeof first>)).toMatchObject({ type: 'webhook.test' });

    await page.getByRole('button', { name: /^Deliveries/ }).click();
    await poll(async () => (await page.getByTestId('delivery').first().textContent()) ?? '').toContain(
      'delivered',
    );
    await page.getByRole('button', { name: /^Replay/ }).click();
    const both = await receiver.waitFor((all) => all.length >= 2, 20_000, 'console');
    expect(both[1]?.id).toBe(first?.id);

    // 8 of the Free plan's 10 credits: the usage page shows the 80% alert.
    for (let i = 0; i < 8; i++) {
      expectStatus(
        await http.request(gateway.url, 'POST', '/v1/query', {
          key,
          json: { source: 'top-products', params: { category: 'Books', limit: i + 1 } },
        }),
        200,
        'query',
      );
    }
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await poll(async () => (await page.getByTestId('usage-alert').textContent()) ?? '').toMatch(
      /past your 80% alert/,
    );
    expect(errors).toEqual([]);
  }, 120_000);
});
