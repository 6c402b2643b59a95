// The web console end to end: Debian's Chromium (playwright-core) against a real gateway process
// (embedded store, demo marketplace) and the local PostgreSQL as an owner's warehouse.
// - a visitor signs up, sees its key once, browses and searches the marketplace, tries an
//   analytic (a free preview), creates a second key, calls the API with it, and sees the call on
//   the usage page;
// - an owner connects PostgreSQL, checks an analytic with a typo'd table and sees its warehouse's
//   error before deploying (the dry run), fixes, checks and deploys it, publishes it, and after
//   another account's calls sees them on its statement in credits and USD;
// - a CSRF attempt from another origin, a session cookie replayed after logout, and an owner
//   description holding <script> all fail.
// The screenshots in docs/screenshots/ (shown in the README) are taken here.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { freePort, type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';
import { createPostgresWarehouse, type PostgresWarehouse } from './support/warehouses.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await chromiumAvailable());
const SCREENSHOTS = join(REPO_ROOT, 'docs/screenshots');
const PASSWORD = 'correct horse battery staple';
const ADMIN_TOKEN = `admin-${uniqueSuffix()}-operator-token`;
const suffix = uniqueSuffix();
/** Polls until the page shows it: a busy machine can take seconds (vitest's default is 1 s). */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

describe.skipIf(!up)('the web console in a browser', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let warehouse: PostgresWarehouse;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-console-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 5_000 });
    warehouse = await createPostgresWarehouse(`console_wh_${suffix}`, 2_000);
    await mkdir(SCREENSHOTS, { recursive: true });
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
        QUARRY_SIGNUPS_PER_HOUR: '1000',
        QUARRY_LOG_LEVEL: 'warn',
        QUARRY_ADMIN_TOKEN: ADMIN_TOKEN,
      },
      readyTimeoutMs: 90_000,
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    await warehouse?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    return page;
  }

  /** Signs up in the browser; resolves with the first key's secret as the page showed it. */
  async function signUp(page: Page, email: string, name: string): Promise<string> {
    await page.goto(`${gateway.url}/#/signup`);
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    const secret = await page.getByTestId('secret').inputValue();
    expect(secret).toMatch(/^qry_live_[0-9A-Za-z]{28}$/);
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(email);
    return secret;
  }

  async function apiCall(method: string, path: string, key: string, body?: unknown) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response shapes.
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  }

  /** Moves the account of `key` to `plan` (the operator's admin API). */
  async function setPlan(key: string, plan: string): Promise<void> {
    const { json } = await apiCall('GET', '/v1/account', key);
    const moved = await apiCall('PUT', `/v1/admin/accounts/${json.account.id}/plan`, ADMIN_TOKEN, { plan });
    expect(moved.status, JSON.stringify(moved.json)).toBe(200);
  }

  it('serves the console at / with a CSP that allows no inline script and no framing', async () => {
    const response = await fetch(`${gateway.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('a visitor signs up, sees a key once, tries an analytic for free, makes a key, calls the API, and sees the call on the usage chart', async () => {
    const page = await newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Script errors only: the browser also logs the expected 401 of GET /v1/session before sign-up.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    const email = `visitor-${suffix}@example.com`;
    const firstKey = await signUp(page, email, 'Vera Visitor');

    // The marketplace: listings with owner and price; search narrows them.
    await page.getByRole('link', { name: 'Marketplace', exact: true }).click();
    await poll(() => page.locator('.card').count()).toBeGreaterThan(3);
    await page.getByLabel('Search').fill('region');
    await poll(() => page.locator('.card h2').allTextContents()).toContain('Revenue by region');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Sort by').selectOption('newest');
    await poll(() => page.locator('.card').count()).toBeGreaterThan(3);
    await page.screenshot({ path: join(SCREENSHOTS, 'marketplace.png') });

    // A listing: params, price on each plan, examples; try it (a preview: 0 credits).
    await page.goto(`${gateway.url}/#/listing/sales-by-region`);
    await poll(() => page.getByTestId('price').textContent()).toBe('1 credit');
    // What a credit, and so this call of 1 credit, costs on each plan (the default price list).
    await poll(() =>
      page
        .locator('table', { hasText: 'What a call costs on each plan' })
        .locator('tbody tr')
        .allTextContents(),
    ).toEqual([
      'Forever Free30 a month$0.00$0.00',
      'SMB250 a month for $49.00$0.196$0.196',
      'Enterprise2000 a month for $199.00$0.0995$0.0995',
      'Pay as you Gonone: billed per credit, within your budget$0.50$0.50',
    ]);
    for (const language of ['curl', 'TypeScript', 'Python', 'Go', 'PHP', 'Ruby']) {
      expect(await page.locator('summary', { hasText: new RegExp(`^${language}$`) }).count()).toBe(1);
    }
    expect(await page.getByLabel('year (required)').inputValue()).toBe('2024');
    await page.getByRole('button', { name: 'Run preview' }).click();
    await poll(() => page.getByTestId('try-meta').textContent()).toMatch(/rows · 0 credits · preview/);
    await poll(() => page.getByTestId('try-result').locator('canvas').count()).toBeGreaterThan(0);
    await poll(() => page.getByTestId('try-result').locator('tbody tr').count()).toBeGreaterThan(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'listing-try-it.png'), fullPage: true });

    // A second key: its secret shown once; the list shows prefixes only.
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByLabel('Key name').fill('reporting');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secondKey = await page.getByTestId('secret').inputValue();
    expect(secondKey).toMatch(/^qry_live_/);
    expect(secondKey).not.toBe(firstKey);
    await poll(() => page.locator('table', { hasText: 'Your keys' }).locator('tbody tr').count()).toBe(2);
    await page.reload();
    await poll(() => page.locator('table', { hasText: 'Your keys' }).locator('tbody tr').count()).toBe(2);
    expect(await page.getByTestId('secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secondKey);

    // The API, called with the new key: one credit.
    const answer = await apiCall('POST', '/v1/query', secondKey, {
      source: 'sales-by-region',
      params: { year: 2024 },
    });
    expect(answer.status).toBe(200);
    expect(answer.json.meta.credits).toBe(1);

    // The usage page: the call's credit (Free plan: worth $0), what is left, the preview apart.
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await poll(() => page.getByTestId('credits-used').textContent()).toBe('1');
    expect(await page.getByTestId('plan').textContent()).toBe('Forever Free');
    expect(await page.getByTestId('credits-left').textContent()).toBe('29');
    expect(await page.getByTestId('amount-due').textContent()).toBe('$0.00');
    expect(
      await page.locator('table', { hasText: 'Calls by origin' }).locator('tbody tr').allTextContents(),
    ).toEqual(['0110']);
    await poll(() => page.locator('canvas').count()).toBeGreaterThan(0);
    expect(
      await page.locator('table', { hasText: 'Per analytic' }).locator('tbody tr').allTextContents(),
    ).toEqual(['sales-by-region11$0.00']);
    expect(await page.getByRole('heading', { name: 'Pay as you Go budget' }).count()).toBe(0);

    // On Pay as you Go: a call costs $0.50, and the budget is set here; above the operator's cap
    // the API's message is shown.
    await setPlan(firstKey, 'payg');
    const paid = await apiCall('POST', '/v1/query', secondKey, {
      source: 'sales-by-region',
      params: { year: 2023 },
    });
    expect(paid.status).toBe(200);
    await page.reload();
    await poll(() => page.getByTestId('plan').textContent()).toBe('Pay as you Go');
    await poll(() => page.getByTestId('credits-used').textContent()).toBe('2');
    expect(await page.getByTestId('amount-due').textContent()).toBe('$0.50');
    await poll(() => page.getByTestId('budget-state').textContent()).toContain('$0.50 spent of $100.00');
    const budget = page.getByLabel('Budget (USD a month)');
    await budget.fill('20000');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await poll(() => page.getByRole('alert').textContent()).toMatch(/10000|10,000/);
    await budget.fill('20');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await poll(() => page.getByTestId('budget-saved').count()).toBe(1);
    await poll(() => page.getByTestId('budget-state').textContent()).toContain('$0.50 spent of $20.00');
    expect((await apiCall('GET', '/v1/account/budget', firstKey)).json.budget.budget_usd).toBe(20);
    await page.screenshot({ path: join(SCREENSHOTS, 'usage.png'), fullPage: true });
    expect(errors).toEqual([]);
  }, 120_000);

  const analytic = `e2e-channels-${suffix}`;
  const definition = (table: string) =>
    [
      `name: ${analytic}`,
      'title: Revenue by channel',
      'connection: wh',
      'sql: |',
      `  SELECT channel, sum(amount) AS revenue FROM ${table} WHERE year = :year GROUP BY channel ORDER BY revenue DESC`,
      'params:',
      '  year: {type: integer, required: true, min: 2000, max: 2100}',
      'insights: {shape: keyed, key: channel}',
      'price: 2',
      'visibility: public',
      'example_params: {year: 2024}',
      '',
    ].join('\n');
  const HOSTILE =
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">Revenue per sales channel.';

  it('an owner connects PostgreSQL, sees its warehouse error for a typo, deploys, publishes, and sees another account’s calls on its statement', async () => {
    const page = await newPage();
    await signUp(page, `owner-${suffix}@example.com`, 'Olga Owner');
    await page.getByRole('link', { name: 'Studio', exact: true }).click();

    // A connection from the connector's config schema, then tested.
    await page.getByLabel('Connection name').fill('wh');
    await page.getByLabel('Warehouse type').selectOption('postgres');
    await page.getByRole('radio', { name: 'A connection URL' }).check();
    await page.getByLabel('Connection URL', { exact: true }).fill(TEST_PG_URL);
    await page.getByLabel('Schema (optional)').fill(warehouse.schema);
    await page.getByRole('button', { name: 'Test and add connection' }).click();
    await poll(() => page.getByTestId('connection-saved').textContent()).toBe(
      'Added wh: the warehouse answered the test.',
    );
    await page.getByRole('button', { name: 'Test wh' }).click();
    await poll(() => page.getByTestId('test-wh').textContent()).toMatch(/^Reachable \(\d+ ms\)$/);

    // A typo'd table: the check (a dry run) shows what PostgreSQL said, before any deploy; a
    // deploy is refused the same way.
    await page.getByLabel('Analytic definition (YAML)').fill(definition('salez'));
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await poll(() => page.getByRole('alert').first().textContent()).toMatch(
      /relation "salez" does not exist/,
    );
    await page.getByRole('button', { name: 'Deploy' }).click();
    await poll(() => page.getByRole('alert').first().textContent()).toMatch(
      /relation "salez" does not exist/,
    );
    expect(await page.getByTestId('deployed').count()).toBe(0);

    // Fixed: the check passes and says what the deploy would do; deployed, version 1 runs.
    await page.getByLabel('Analytic definition (YAML)').fill(definition('sales'));
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await poll(() => page.getByTestId('checked').textContent()).toMatch(
      new RegExp(`^Check passed: deploying would leave ${analytic} created\\.`),
    );
    await page.getByRole('button', { name: 'Deploy' }).click();
    await poll(() => page.getByTestId('deployed').textContent()).toContain(
      `Deployed ${analytic}, version 1.`,
    );
    await page.getByRole('button', { name: `Test run ${analytic}` }).click();
    await poll(() => page.getByTestId('test-run-result').locator('tbody tr').count()).toBe(3);

    // Published, with a description an attacker would write.
    const listing = page.getByRole('form', { name: `Listing of ${analytic}` });
    await listing.getByLabel('Description').fill(HOSTILE);
    await listing.getByLabel('Category').fill('Sales');
    await listing.getByRole('button', { name: 'Publish…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Publish now' }).click();
    await poll(() => listing.locator('h4').textContent()).toBe('Listing (published)');

    // Another account calls it three times through the API.
    const caller = await fetch(`${gateway.url}/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `caller-${suffix}@example.com`, name: 'Cal Caller' }),
    }).then((r) => r.json() as Promise<{ key: { secret: string } }>);
    // On SMB a credit costs 49 USD / 250 = $0.196: each call of 2 credits $0.392, of which the
    // owner earns 80% ($0.3136) and 0.8 of each credit.
    await setPlan(caller.key.secret, 'smb');
    for (const year of [2023, 2024, 2025]) {
      const call = await apiCall('POST', '/v1/query', caller.key.secret, {
        source: analytic,
        params: { year },
      });
      expect(call.status, JSON.stringify(call.json)).toBe(200);
      expect(call.json.meta.credits).toBe(2);
    }

    await page.getByRole('link', { name: 'Statements', exact: true }).click();
    // The three calls, and the owner's own test run of version 2 (a preview: free, earns nothing).
    await poll(() => page.getByTestId('statement-calls').textContent()).toBe('4');
    expect(await page.getByTestId('statement-credits').textContent()).toBe('6');
    expect(await page.getByTestId('statement-value').textContent()).toBe('$1.176');
    expect(await page.getByTestId('statement-earnings').textContent()).toBe('4.8');
    expect(await page.getByTestId('statement-earnings-usd').textContent()).toBe('$0.9408');
    // analytic, calls, paid, free, previews, own, credits, paid USD, share in credits, USD, platform's.
    expect(
      await page.locator('table', { hasText: 'Per analytic' }).locator('tbody tr').allTextContents(),
    ).toEqual([`${analytic}430106$1.1764.8$0.9408$0.2352`, 'total430106$1.1764.8$0.9408$0.2352']);
    // The earnings chart is by day (today's bar) and analytic.
    const period = new Date().toISOString().slice(0, 7);
    await poll(() =>
      page.getByRole('img', { name: `Your earnings in credits per day and analytic in ${period}` }).count(),
    ).toBe(1);
    // No month closed yet: no payouts (test/console-payouts.test.ts goes through payouts).
    await poll(() => page.getByTestId('payouts-none').count()).toBe(1);
    await poll(() => page.locator('canvas').count()).toBeGreaterThan(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'statement.png'), fullPage: true });
    // The operator closes last month (nothing earned in it): its statement says it is closed.
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))
      .toISOString()
      .slice(0, 7);
    const closed = await apiCall('POST', `/v1/admin/periods/${lastMonth}/close`, ADMIN_TOKEN);
    expect(closed.status, JSON.stringify(closed.json)).toBe(200);
    await page.goto(`${gateway.url}/#/statements/${lastMonth}`);
    await poll(() => page.getByTestId('statement-status').textContent()).toContain(`${lastMonth} closed on`);
    expect(await page.getByTestId('statement-calls').textContent()).toBe('0');
  }, 120_000);

  it('refuses a CSRF attempt from another origin, a session cookie replayed after logout, and never runs an owner’s <script>', async () => {
    const page = await newPage();
    const email = `victim-${suffix}@example.com`;
    const key = await signUp(page, email, 'Vic Victim');
    const keysBefore = (await apiCall('GET', '/v1/keys', key)).json.keys.length as number;

    // Another origin (same site: 127.0.0.1 on another port, so SameSite alone would not stop it).
    const evilPort = await freePort();
    const target = `${gateway.url}/v1/keys`;
    const evilPage = `<!doctype html><body><form id="f" method="POST" action="${target}" enctype="text/plain">
      <input name='{"name":"csrf","x":"' value='"}'></form>
      <script>
        window.__results = [];
        fetch(${JSON.stringify(target)}, { method: 'POST', credentials: 'include', mode: 'no-cors',
          headers: { 'content-type': 'text/plain' }, body: '{"name":"csrf-fetch"}' })
          .then(() => window.__results.push('fetch sent'), (e) => window.__results.push(String(e)));
      </script></body>`;
    const evil: Server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(evilPage),
    );
    await new Promise<void>((resolve) => evil.listen(evilPort, '127.0.0.1', resolve));
    try {
      const csrfPage = await page.context().newPage();
      await csrfPage.goto(`http://127.0.0.1:${evilPort}/`);
      await poll(() => csrfPage.evaluate('window.__results.length')).toBe(1);
      const refused = csrfPage.waitForResponse((r) => r.url() === target && r.request().method() === 'POST');
      await csrfPage.evaluate("document.getElementById('f').submit()");
      const answer = await refused;
      expect(answer.status()).toBe(403);
      expect(await answer.text()).toContain('FORBIDDEN');
    } finally {
      await new Promise((resolve) => evil.close(resolve));
    }
    expect((await apiCall('GET', '/v1/keys', key)).json.keys.length).toBe(keysBefore);

    // The session cookie, copied, then the user logs out: the copy is dead on the server.
    const [cookie] = (await page.context().cookies(gateway.url)).filter((c) => c.name === 'quarry_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    const replay = () =>
      fetch(`${gateway.url}/v1/account`, { headers: { cookie: `quarry_session=${cookie?.value}` } }).then(
        (r) => r.status,
      );
    expect(await replay()).toBe(200);
    await page.goto(`${gateway.url}/#/keys`);
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.getByRole('heading', { name: 'Log in' }).count()).toBe(1);
    expect(await replay()).toBe(401);
    const thief = await browser.newContext();
    contexts.push(thief);
    await thief.addCookies([{ ...(cookie as NonNullable<typeof cookie>) }]);
    const thiefPage = await thief.newPage();
    await thiefPage.goto(`${gateway.url}/#/keys`);
    await poll(() => thiefPage.getByRole('heading', { name: 'Log in' }).count()).toBe(1);

    // The owner's description (published above) is shown as text: no script ran, no element made.
    const reader = await newPage();
    await reader.goto(`${gateway.url}/#/listing/${analytic}`);
    const description = reader.getByTestId('description');
    await poll(() => description.textContent()).toBe(HOSTILE);
    expect(await description.locator('script, img').count()).toBe(0);
    await reader.waitForTimeout(300);
    expect(await reader.evaluate('typeof window.__pwned')).toBe('undefined');
  }, 120_000);
});
