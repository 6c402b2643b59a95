// Buying a plan in the web console, end to end: Debian's Chromium (playwright-core) against a real
// gateway process started as `npm start` starts it (embedded store, demo marketplace) with the
// sandbox payment provider (QUARRY_PAYMENTS=sandbox: the gateway's own checkout page, no money
// moves), the Free plan lowered to 3 credits (QUARRY_FREE_CREDITS) so they are quickly spent.
// - a new person signs up, spends the Free credits through the API with the key the sign-up
//   showed, and the next call is refused (429 QUOTA_EXCEEDED, mentioning an upgrade);
// - the Usage page shows the spent-credits notice and the plans side by side (also at a phone's
//   390 px, without sideways scrolling);
// - Upgrade on SMB leads to the sandbox checkout; Decline comes back with "nothing was charged"
//   and the plan stays Free; Upgrade again, Pay, and back in the console the plan becomes SMB
//   (the page polls GET /v1/billing), the notice is gone, and the next API call answers 200;
// - Add a card (Pay as you Go) saves a card on the sandbox page and the account moves to Pay as
//   you Go, with its budget form;
// - on a gateway that takes no payments (QUARRY_PAYMENTS=none) the Plan section says the
//   operator sets plans and offers no button.
// Writes docs/screenshots/billing-plans.png, sandbox-checkout.png and billing-upgraded.png.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());
const SCREENSHOTS = join(REPO_ROOT, 'docs/screenshots');
const PASSWORD = 'correct horse battery staple';
const FREE_CREDITS = 3;
const suffix = uniqueSuffix();
/** Polls until the page shows it: a busy machine can take seconds (vitest's default is 1 s). */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

describe.skipIf(!up)('buying a plan in the web console (sandbox payments)', () => {
  const dataDirs: string[] = [];
  const gateways: GatewayProcess[] = [];
  let gateway: GatewayProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function startWithPayments(payments: 'sandbox' | 'none'): Promise<GatewayProcess> {
    const dataDir = await mkdtemp(join(tmpdir(), `quarry-e2e-billing-${payments}-`));
    dataDirs.push(dataDir);
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 2_000 });
    const started = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_PAYMENTS: payments,
        QUARRY_FREE_CREDITS: String(FREE_CREDITS),
        QUARRY_SIGNUPS_PER_HOUR: '1000',
        // The Free plan's rate limit (10 a minute, 5 at once) is not what this test is about.
        QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
        QUARRY_LOG_LEVEL: 'warn',
      },
      readyTimeoutMs: 90_000,
    });
    gateways.push(started);
    return started;
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    gateway = await startWithPayments('sandbox');
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    for (const g of gateways) await g.stop();
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  async function newPage(width = 1200): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Script errors only: the browser also logs the expected 401 of GET /v1/session before sign-up.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    return { page, errors };
  }

  /** Signs up in the browser; resolves with the first key's secret as the page showed it. */
  async function signUp(page: Page, base: string, email: string): Promise<string> {
    await page.goto(`${base}/#/signup`);
    await page.getByLabel('Name').fill('Bea Buyer');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    const secret = await page.getByTestId('secret').inputValue();
    expect(secret).toMatch(/^qry_live_/);
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(email);
    return secret;
  }

  async function apiCall(base: string, method: string, path: string, key: string) {
    const response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response shapes.
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  }

  /** One paid call of the demo marketplace's analytic (a new year each time: never a cache hit). */
  let year = 2000;
  const call = (key: string) =>
    apiCall(gateway.url, 'GET', `/v1/analytics/sales-by-region?year=${year++}`, key);

  /** The Upgrade button of a plan's card in the Plan section's list. */
  const upgradeButton = (page: Page, name: string) =>
    page.getByRole('list', { name: 'Plans' }).getByRole('button', { name: `Upgrade to ${name}` });

  it('a Free account spends its credits, declines a checkout (nothing changes), then pays for SMB and its next call succeeds', async () => {
    const { page, errors } = await newPage();
    const key = await signUp(page, gateway.url, `buyer-${suffix}@example.com`);

    // The Free plan's credits, spent through the API; the next call is refused and says how out.
    for (let i = 0; i < FREE_CREDITS; i++) expect((await call(key)).status).toBe(200);
    const refused = await call(key);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('QUOTA_EXCEEDED');
    expect(refused.json.error.message).toMatch(/upgrad/i);

    // The usage page: the notice, and the plans side by side with the current one marked.
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await poll(() => page.getByTestId('credits-left').textContent()).toBe('0');
    const notice = page.getByTestId('quota-notice');
    await poll(() => notice.getByRole('heading').textContent()).toBe("You have used this month's credits");
    // The billing view loads beside the usage: its button comes when it has.
    await poll(() => notice.getByRole('button', { name: /^Upgrade to SMB/ }).count()).toBe(1);
    const plans = page.getByRole('list', { name: 'Plans' });
    await poll(() => plans.getByRole('listitem').count()).toBe(4);
    expect(await page.getByTestId('billing-plan').textContent()).toBe('Forever Free');
    expect(await page.getByTestId('plan-free').getAttribute('aria-current')).toBe('true');
    expect(await page.getByTestId('plan-free').textContent()).toContain('Your plan');
    expect(await page.getByTestId('plan-smb').textContent()).toContain('250 credits a month');
    expect(await page.getByTestId('plan-smb').textContent()).toContain('$49.00 a month');
    expect(await page.getByTestId('plan-smb').textContent()).toContain('A credit costs $0.196');
    expect(await page.getByTestId('plan-payg').textContent()).toContain('$0.50 a credit');
    expect(await plans.getByRole('button', { name: 'Add a card' }).count()).toBe(1);
    expect(await upgradeButton(page, 'Enterprise').count()).toBe(1);
    expect(await page.getByText('Sandbox payments: no money moves.').count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'billing-plans.png'), fullPage: true });

    // At a phone's width the cards stack and nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await poll(() => page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    const [first, second] = await Promise.all([
      page.getByTestId('plan-free').boundingBox(),
      page.getByTestId('plan-smb').boundingBox(),
    ]);
    expect(second?.y ?? 0).toBeGreaterThan((first?.y ?? 0) + (first?.height ?? 0) - 1);
    await page.setViewportSize({ width: 1200, height: 900 });

    // Decline on the sandbox page: back in the console, nothing charged, still Free.
    await upgradeButton(page, 'SMB').click();
    await page.waitForURL(/\/billing\/sandbox\/checkout\//);
    await poll(() => page.getByText('Sandbox: no money moves').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Decline' }).click();
    await poll(() => page.getByTestId('checkout-note').textContent()).toBe(
      'Checkout cancelled; nothing was charged.',
    );
    // The console strips `checkout=` from the address once read.
    await poll(() => page.url()).toBe(`${gateway.url}/#/usage`);
    await poll(() => page.getByTestId('billing-plan').textContent()).toBe('Forever Free');
    const stillFree = await apiCall(gateway.url, 'GET', '/v1/billing', key);
    expect(stillFree.status).toBe(200);
    expect(stillFree.json.plan.id).toBe('free');
    expect((await call(key)).status).toBe(429);

    // Upgrade again and pay: the console waits for the plan to change, then shows SMB.
    await upgradeButton(page, 'SMB').click();
    await page.waitForURL(/\/billing\/sandbox\/checkout\//);
    await poll(() => page.getByText('Sandbox: no money moves').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'sandbox-checkout.png'), fullPage: true });
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(`${gateway.url}/**`);
    await poll(() => page.getByTestId('checkout-note').textContent()).toMatch(
      /^Payment received(: you are on SMB now\.| — your plan is changing…)$/,
    );
    await poll(() => page.getByTestId('billing-plan').textContent()).toBe('SMB');
    await poll(() => page.getByTestId('checkout-note').textContent()).toBe(
      'Payment received: you are on SMB now.',
    );
    expect(page.url()).toBe(`${gateway.url}/#/usage`);
    // The usage was refreshed: the SMB plan, its credits left, no notice.
    await poll(() => page.getByTestId('plan').textContent()).toBe('SMB');
    await poll(() => page.getByTestId('quota-notice').count()).toBe(0);
    expect(await page.getByTestId('plan-smb').getAttribute('aria-current')).toBe('true');
    expect(await page.getByRole('button', { name: 'Manage billing' }).count()).toBe(1);
    expect(await page.getByTestId('billing-status').textContent()).toMatch(/Active; renews on /);
    await page.screenshot({ path: join(SCREENSHOTS, 'billing-upgraded.png'), fullPage: true });

    const billing = await apiCall(gateway.url, 'GET', '/v1/billing', key);
    expect(billing.json).toMatchObject({ provider: 'sandbox', plan: { id: 'smb' }, status: 'active' });
    const next = await call(key);
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    expect(errors).toEqual([]);
  }, 180_000);

  it('Add a card moves a Free account to Pay as you Go once the sandbox saved the card', async () => {
    const { page, errors } = await newPage();
    const key = await signUp(page, gateway.url, `payg-${suffix}@example.com`);
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByRole('list', { name: 'Plans' }).getByRole('button', { name: 'Add a card' }).click();
    await page.waitForURL(/\/billing\/sandbox\/checkout\//);
    await page.getByRole('button', { name: 'Save card' }).click();
    await poll(() => page.getByTestId('billing-plan').textContent()).toBe('Pay as you Go');
    await poll(() => page.getByTestId('checkout-note').textContent()).toBe(
      'Payment received: you are on Pay as you Go now.',
    );
    expect(await page.getByTestId('billing-status').textContent()).toContain('A card is on file.');
    await poll(() => page.getByTestId('plan').textContent()).toBe('Pay as you Go');
    await poll(() => page.getByRole('heading', { name: 'Pay as you Go budget' }).count()).toBe(1);
    const billing = await apiCall(gateway.url, 'GET', '/v1/billing', key);
    expect(billing.json).toMatchObject({ plan: { id: 'payg' }, card_on_file: true });
    expect((await call(key)).status).toBe(200);
    expect(errors).toEqual([]);
  }, 180_000);

  it('with payments off, the Plan section says the operator sets plans and offers no button', async () => {
    const noPayments = await startWithPayments('none');
    const { page, errors } = await newPage();
    const key = await signUp(page, noPayments.url, `operator-set-${suffix}@example.com`);
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await poll(() => page.getByTestId('billing-plan').textContent()).toBe('Forever Free');
    const section = page.getByRole('region', { name: 'Plan' });
    expect(await section.getByText('Plans are set by the operator of this gateway.').count()).toBe(1);
    await poll(() => page.getByRole('list', { name: 'Plans' }).getByRole('listitem').count()).toBe(4);
    expect(await section.getByRole('button').count()).toBe(0);
    const checkout = await fetch(`${noPayments.url}/v1/billing/checkout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'smb' }),
    });
    expect(checkout.status).toBe(409);
    expect(((await checkout.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');
    expect(errors).toEqual([]);
  }, 180_000);
});
