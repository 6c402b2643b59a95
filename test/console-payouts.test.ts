// Being paid as an owner in the web console, end to end: Debian's Chromium (playwright-core)
// against a real gateway process with the demo (DuckDB warehouse, example analytics, the demo
// account that owns them) and the sandbox payment provider (QUARRY_PAYMENTS=sandbox: the gateway's
// own onboarding page, no money moves). The control plane is a schema of the local PostgreSQL
// rather than the embedded store, so the test can move the month's calls into last month (the
// ledger's rows), as test/payments-stripe.test.ts does: the gateway has no clock to set.
// - the demo account (its key from $QUARRY_DATA_DIR/demo-key) sets a password and logs in;
// - another account on SMB calls the demo's analytic until the owner's 80% passes the 10.00 USD
//   minimum;
// - Statements → Payouts: "not set up yet"; Set up payouts leads to the sandbox onboarding page;
//   Complete onboarding comes back with `?onboarding=done`, which the console strips, and the
//   section says "Payouts set up";
// - the calls move to last month, the operator closes it, and the Payouts section lists that
//   month as paid with its sandbox transfer reference; the month's statement shows it too, and
//   its printable page prints clean (print media: no navigation, no buttons);
// - at a phone's 390 px nothing scrolls sideways.
// Writes docs/screenshots/payouts.png and statement-print.png.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { rebuildLedgerRollups } from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await chromiumAvailable());
const SCREENSHOTS = join(REPO_ROOT, 'docs/screenshots');
const PASSWORD = 'correct horse battery staple';
const DEMO_EMAIL = 'examples@demo.quarry.dev';
const suffix = uniqueSuffix();
const ADMIN = `admin-${suffix}-operator-token`;
/** Polls until the page shows it: a busy machine can take seconds (vitest's default is 1 s). */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

/** Last month as YYYY-MM, and a moment in its middle (UTC). */
const now = new Date();
const lastMonthMid = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15, 12));
const lastMonth = lastMonthMid.toISOString().slice(0, 7);

describe.skipIf(!up)('payouts in the web console (sandbox payments)', () => {
  let dataDir: string;
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-payouts-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 2_000 });
    store = await createControlPlaneSchema(`quarry_payouts_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_DATA_DIR: dataDir,
        QUARRY_DEMO: 'true',
        QUARRY_PAYMENTS: 'sandbox',
        QUARRY_ADMIN_TOKEN: ADMIN,
        // The operator closes last month in the test, after its calls were moved into it.
        QUARRY_AUTO_CLOSE: 'false',
        QUARRY_RATE_LIMITS: JSON.stringify(
          Object.fromEntries(
            ['free', 'smb', 'enterprise', 'payg'].map((p) => [
              p,
              { limit: 100_000, window_seconds: 60, burst: 100_000 },
            ]),
          ),
        ),
        QUARRY_LOG_LEVEL: 'warn',
      },
      readyTimeoutMs: 90_000,
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    await store?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function apiCall(method: string, path: string, key: string, body?: unknown, headers = {}) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response shapes.
    let json: Record<string, any> = {};
    try {
      json = JSON.parse(text);
    } catch {
      json = { text };
    }
    return { status: response.status, json };
  }

  it('the demo owner sets up payouts in the sandbox, and a closed month shows as paid with its transfer; the statement prints clean', async () => {
    // The demo account: its key is in the data directory; it sets a password for the console.
    const demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    const password = await apiCall('PUT', '/v1/account/password', demoKey, { password: PASSWORD });
    expect(password.status, JSON.stringify(password.json)).toBeLessThan(300);
    const demo = (await apiCall('GET', '/v1/account', demoKey)).json.account as { id: string; email: string };
    expect(demo.email).toBe(DEMO_EMAIL);

    // Another account on SMB (a credit costs $0.196; the owner earns $0.1568 a call) calls the
    // demo's analytic past the 10.00 USD minimum.
    const caller = await fetch(`${gateway.url}/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `payer-${suffix}@example.com`, name: 'Pat Payer' }),
    }).then((r) => r.json() as Promise<{ account: { id: string }; key: { secret: string } }>);
    const moved = await apiCall('PUT', `/v1/admin/accounts/${caller.account.id}/plan`, ADMIN, {
      plan: 'smb',
    });
    expect(moved.status, JSON.stringify(moved.json)).toBe(200);
    const CALLS = 70;
    for (let i = 0; i < CALLS; i++) {
      const call = await apiCall(
        'GET',
        `/v1/analytics/sales-by-region?year=${2000 + i}`,
        caller.key.secret,
        undefined,
        {
          'cache-control': 'no-cache',
        },
      );
      expect(call.status, JSON.stringify(call.json)).toBe(200);
    }

    // The owner logs in: Statements → Payouts says not set up.
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    await page.goto(`${gateway.url}/#/login`);
    await page.getByLabel('Email').fill(DEMO_EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(DEMO_EMAIL);
    await page.getByRole('link', { name: 'Statements', exact: true }).click();
    await poll(() => page.getByTestId('statement-calls').textContent()).toBe(String(CALLS));
    const section = page.getByRole('region', { name: 'Payouts' });
    await poll(() => section.getByTestId('payout-account').textContent()).toContain(
      'Payouts are not set up yet.',
    );
    expect(await section.getByTestId('payout-minimum').textContent()).toBe(
      'Payouts below $10.00 are held and carried to the next month.',
    );
    expect(await section.getByText('Sandbox payments: no money moves.').count()).toBe(1);

    // Set up payouts: the sandbox onboarding page, Complete onboarding, and back.
    await section.getByRole('button', { name: 'Set up payouts' }).click();
    await page.waitForURL(/\/billing\/sandbox\/onboarding\//);
    await poll(() => page.getByText('Sandbox: no money moves').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Complete onboarding' }).click();
    await page.waitForURL(`${gateway.url}/**`);
    await poll(() => page.getByTestId('onboarding-note').textContent()).toMatch(
      /^(Payouts set up: each closed month is paid to your account\.|Back from setting up payouts — checking with the payment provider…)$/,
    );
    await poll(() => section.getByTestId('payout-account').textContent()).toContain('Payouts set up.');
    await poll(() => page.getByTestId('onboarding-note').textContent()).toBe(
      'Payouts set up: each closed month is paid to your account.',
    );
    // The console strips `onboarding=` from the address once read.
    await poll(() => page.url()).toBe(`${gateway.url}/#/statements`);
    expect(await section.getByRole('button', { name: 'Update payout details' }).count()).toBe(1);
    const account = await apiCall('GET', '/v1/owner/payouts/account', demoKey);
    expect(account.json).toMatchObject({ provider: 'sandbox', status: 'complete', payouts_enabled: true });

    // The month ends: the calls move to last month in the ledger, which the operator closes.
    await withPg((c) =>
      c.query(
        `UPDATE ${store.schema}.usage_events SET period = $2, reserved_at = $3, completed_at = $3 WHERE account_id = $1`,
        [caller.account.id, lastMonth, lastMonthMid],
      ),
    );
    await rebuildLedgerRollups(store.schema);
    const closed = await apiCall('POST', `/v1/admin/periods/${lastMonth}/close`, ADMIN);
    expect(closed.status, JSON.stringify(closed.json)).toBe(200);
    // The sandbox's transfer may land after the close: asked until it is paid.
    type Row = { period: string; status: string; transfer_id: string | null; payout_cents: number };
    let paid: Row | undefined;
    await poll(async () => {
      const payouts = await apiCall('GET', '/v1/owner/payouts', demoKey);
      paid = (payouts.json.payouts as Row[] | undefined)?.find((p) => p.period === lastMonth);
      return `${payouts.status} ${paid?.status ?? JSON.stringify(payouts.json)}`;
    }).toBe('200 paid');
    // 70 calls × 0.8 × $0.196 = $10.976: paid, in whole cents.
    expect(paid, JSON.stringify(paid)).toMatchObject({ status: 'paid', payout_cents: 1_097 });
    expect(paid?.transfer_id).toMatch(/^tr_sandbox_/);

    // The Payouts section lists it as paid with its reference.
    await page.reload();
    const row = section.getByTestId(`payout-${lastMonth}`);
    await poll(() => row.locator('[data-status]').getAttribute('data-status')).toBe('paid');
    expect(await row.getByTestId('transfer-id').textContent()).toBe(paid?.transfer_id);
    expect(await row.textContent()).toContain('$10.97');
    await poll(() => section.getByTestId('payout-balance').textContent()).toMatch(/^\$0\.00\d*$/);
    await section.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, 'payouts.png'), fullPage: true });

    // Last month's statement: closed, its payout paid with the reference, and a Print link.
    await page.goto(`${gateway.url}/#/statements/${lastMonth}`);
    await poll(() => page.getByTestId('statement-status').textContent()).toContain(`${lastMonth} closed on`);
    await poll(() => page.getByTestId('statement-transfer-id').textContent()).toBe(paid?.transfer_id);
    expect(await page.getByTestId('statement-payout').textContent()).toContain('$10.97');
    await page.getByTestId('print-link').click();
    await poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(
      `Owner statement — ${lastMonth}`,
    );
    await poll(() => page.getByTestId('print-transfer-id').textContent()).toBe(paid?.transfer_id);
    expect(await page.getByTestId('print-owner').textContent()).toContain(DEMO_EMAIL);
    expect(await page.getByTestId('print-earnings').textContent()).toBe('$10.976');
    expect(await page.getByTestId('print-payout').textContent()).toContain('$10.97');
    expect(
      await page.locator('table', { hasText: 'Earnings per analytic' }).locator('tbody tr').count(),
    ).toBe(1);
    await page.getByLabel('Include the per-day lines').check();
    await poll(() => page.locator('table', { hasText: 'Per day (UTC) and analytic' }).count()).toBe(1);
    await page.getByLabel('Include the per-day lines').uncheck();

    // Printed: no navigation and no buttons, black text on white.
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('nav').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Print' }).isVisible()).toBe(false);
    expect(await page.getByRole('link', { name: 'Back to statements' }).isVisible()).toBe(false);
    expect(
      await page.evaluate<string[]>(
        "[getComputedStyle(document.querySelector('.statement-print')).color, getComputedStyle(document.body).backgroundColor]",
      ),
    ).toEqual(['rgb(0, 0, 0)', 'rgb(255, 255, 255)']);
    await page.screenshot({ path: join(SCREENSHOTS, 'statement-print.png'), fullPage: true });
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 4).toString()).toBe('%PDF');
    await page.emulateMedia({ media: 'screen' });

    // At a phone's width, neither page scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await poll(() => page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.goto(`${gateway.url}/#/statements`);
    await poll(() => section.getByTestId(`payout-${lastMonth}`).count()).toBe(1);
    await poll(() => page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
  }, 240_000);
});
