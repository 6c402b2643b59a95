/// <reference lib="dom" />
// The alerts in the web console, on the pages they concern (docs/webhooks.md, "In the console"):
// Debian's Chromium (playwright-core) against a real gateway process over the real PostgreSQL,
// paying through the Stripe protocol fake (the official SDK), an owner's warehouse behind the
// fault proxy.
//   - an analytic whose warehouse refuses connections turns failing: `health` says so on the
//     owner's analytics (the list and the single one), and the studio shows the notice;
//   - a month closed: the owner's payout under the minimum is held, and the Statements page says
//     so; the Pay as you Go payer whose card was declined sees the failed invoice on the Usage page.
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type FakeStripe, startFakeStripe } from './support/fake-stripe/fake-stripe.js';
import { createFaultProxy, type FaultProxy } from './support/fault-proxy.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  expectStatus,
  rebuildLedgerRollups,
  signUp,
  type TestAccount,
} from './support/metering-fixture.js';
import { paymentsFixture, servedCalls, stripeEnv, waitFor } from './support/payments-fixture.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await chromiumAvailable());
const suffix = uniqueSuffix();
const ADMIN = `admin-${randomBytes(8).toString('hex')}`;
const PASSWORD = 'correct horse battery staple';
const http = createHttpClient({ localAddress: '127.0.0.1' });
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

let store: ControlPlaneSchema;
let stripe: FakeStripe;
let gateway: GatewayProcess;
let browser: Browser;
const contexts: BrowserContext[] = [];

const { buy, customerOf, connectedAccountOf } = paymentsFixture(http, () => stripe);

/** A page of the console, logged in as `account` (its password set with its key first). */
async function loggedIn(account: TestAccount, label: string): Promise<Page> {
  expectStatus(
    await http.request(gateway.url, 'PUT', '/v1/account/password', {
      key: account.key,
      json: { password: PASSWORD },
    }),
    204,
    'password',
  );
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const email = `${label}-${suffix}@metering.quarry.test`;
  await page.goto(`${gateway.url}/#/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(email);
  return page;
}

describe.skipIf(!up)('alerts on the console pages they concern', () => {
  beforeAll(async () => {
    stripe = await startFakeStripe();
    store = await createControlPlaneSchema(`quarry_console_alerts_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        ...stripeEnv(stripe),
        QUARRY_ADMIN_TOKEN: ADMIN,
        // No free credits: a call answered 200 was charged to the plan paid for.
        QUARRY_FREE_CREDITS: '0',
        QUARRY_AUTO_CLOSE: 'false',
        // The fault proxy is on loopback.
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
        QUARRY_BREAKER_OPEN_MS: '300',
        QUARRY_LOG_LEVEL: 'warn',
      },
    });
    stripe.setWebhookUrl(`${gateway.url}/v1/billing/stripe-webhook`);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    await stripe?.close();
    await store?.drop();
  }, 60_000);

  it('a failing analytic shows in its health and as a notice in the studio', async () => {
    const owner = await signUp(http, gateway, 'studio', suffix);
    const pg = new URL(TEST_PG_URL);
    const proxy: FaultProxy = await createFaultProxy({
      targetHost: pg.hostname,
      targetPort: pg.port === '' ? 5432 : Number(pg.port),
    });
    try {
      const name = `failing-${suffix}`;
      expectStatus(
        await http.request(gateway.url, 'POST', '/v1/owner/connections', {
          key: owner.key,
          json: {
            name: 'proxied',
            type: 'postgres',
            config: {
              host: '127.0.0.1',
              port: proxy.port,
              database: pg.pathname.slice(1) || 'test',
              user: decodeURIComponent(pg.username) || 'postgres',
            },
          },
        }),
        201,
        'proxied connection',
      );
      await deployAnalytic(http, gateway, owner.key, {
        name,
        connection: 'proxied',
        sql: 'SELECT 1 AS one',
        visibility: 'private',
        limits: { timeout_ms: 500 },
      });
      const call = () =>
        http.request(gateway.url, 'POST', '/v1/query', { key: owner.key, json: { source: name } });
      const health = async () =>
        expectStatus(
          await http.request(gateway.url, 'GET', `/v1/owner/analytics/${name}`, { key: owner.key }),
          200,
          'analytic',
        ).body.analytic.health;
      for (let i = 0; i < 5; i++) expect((await call()).status).toBe(200);
      expect(await health()).toEqual({ state: 'ok', since: null, error_rate_percent: null });

      // The warehouse goes away: every query fails, the analytic turns failing.
      await proxy.set({ kind: 'blackhole' });
      for (let i = 0; i < 8; i++) expect((await call()).status).toBeGreaterThanOrEqual(500);
      const failing = await waitFor(health, (h) => h.state === 'failing');
      expect(failing.error_rate_percent).toBeGreaterThan(50);
      expect(Date.parse(failing.since)).toBeLessThanOrEqual(Date.now());
      const listed = expectStatus(
        await http.request(gateway.url, 'GET', '/v1/owner/analytics', { key: owner.key }),
        200,
        'analytics',
      ).body.analytics;
      expect(listed.find((a: { name: string }) => a.name === name)?.health).toEqual(failing);

      const page = await loggedIn(owner, 'studio');
      await page.getByRole('link', { name: 'Studio', exact: true }).click();
      const notice = page.getByTestId('analytic-failing');
      await poll(async () => (await notice.textContent()) ?? '').toContain(`${name} is failing`);
      expect(await notice.textContent()).toContain(`${failing.error_rate_percent}% of its warehouse queries`);
    } finally {
      await proxy.close();
    }
  }, 90_000);

  it('a held payout shows on the Statements page, a failed invoice on the Usage page', async () => {
    const owner = await signUp(http, gateway, 'owner', suffix);
    const payer = await signUp(http, gateway, 'payer', suffix);
    const analytic = `small-${suffix}`;
    await connectTestPostgres(http, gateway, owner.key, 'pg');
    await deployAnalytic(http, gateway, owner.key, {
      name: analytic,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
    expectStatus(
      await http.request(gateway.url, 'POST', '/v1/owner/payouts/onboarding', { key: owner.key }),
      200,
      'onboarding',
    );
    await stripe.completeOnboarding(connectedAccountOf(owner.id).id);
    await buy(gateway, payer.key, 'payg');
    await waitFor(
      () => http.request(gateway.url, 'POST', '/v1/query', { key: payer.key, json: { source: analytic } }),
      (r) => r.status === 200,
      3_000,
    );
    stripe.setCardDeclines(customerOf(payer.id).id, true);
    await servedCalls(store.schema, [payer.id], 1);

    // The call moves to last month, which the operator closes.
    const now = new Date();
    const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15, 12));
    const period = at.toISOString().slice(0, 7);
    await withPg((c) =>
      c.query(
        `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3 WHERE account_id = $1`,
        [payer.id, period, at],
      ),
    );
    await rebuildLedgerRollups(store.schema);
    const closed = expectStatus(
      await http.request(gateway.url, 'POST', `/v1/admin/periods/${period}/close`, { key: ADMIN }),
      200,
      'close',
    ).body;
    expect(closed.invoices).toMatchObject({ invoiced: 1, failed: 1 });
    expect(closed.payouts).toMatchObject({ held: 1 });

    const ownerPage = await loggedIn(owner, 'owner');
    await ownerPage.getByRole('link', { name: 'Statements', exact: true }).click();
    await poll(async () => (await ownerPage.getByTestId('payout-alert').textContent()) ?? '').toMatch(
      new RegExp(`Your payout for ${period} \\(\\$?0\\.40( USD)?\\) is held: below the 10\\.00 USD minimum`),
    );

    const payerPage = await loggedIn(payer, 'payer');
    await payerPage.getByRole('link', { name: 'Usage', exact: true }).click();
    await poll(async () => (await payerPage.getByTestId('invoice-alert').textContent()) ?? '').toMatch(
      new RegExp(`invoice for ${period} \\(\\$?0\\.50( USD)?\\) could not be charged`),
    );
  }, 90_000);
});
