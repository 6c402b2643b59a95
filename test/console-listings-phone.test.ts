/// <reference lib="dom" />
// The console as buyers and phone users meet it: Debian's Chromium (playwright-core) against a real
// gateway process on the embedded defaults with the demo marketplace, at 1280×800 and at 390×844.
// - a listing sells: the owner's markdown rendered (never as HTML), examples instead of regular
//   expressions, params in their declared order, one "Parameters" heading, copy buttons, plurals
//   and thousands separators; a truncated preview says so and marks its chart partial;
// - the marketplace lists a category once whatever its case, and an empty search says what to do;
// - on a phone no page scrolls sideways (document.documentElement.scrollWidth is measured), the
//   header is one row with a Menu, and wide tables scroll inside their own box with a hint;
// - every page has its own title, a log-in returns to the page asked for, and a revoked key's
//   secret does not stay on screen;
// - axe-core finds no serious or critical accessibility violation on any page, at either size.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());
const PASSWORD = 'correct horse battery staple';
const suffix = uniqueSuffix();
const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

describe.skipIf(!up)('the console for buyers and phones', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let demoKey: string;
  const contexts: BrowserContext[] = [];

  async function api(method: string, path: string, body?: unknown) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${demoKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    expect(response.status, text).toBeLessThan(300);
    return JSON.parse(text) as Record<string, unknown>;
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-console-phone-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 5_000 });
    gateway = await startGateway({
      env: { QUARRY_DATA_DIR: dataDir, QUARRY_SIGNUPS_PER_HOUR: '1000', QUARRY_LOG_LEVEL: 'warn' },
      readyTimeoutMs: 90_000,
    });
    demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    // An owner's listing written the way owners write: markdown, a pattern, dates declared
    // start first, and a category spelled in lower case beside the demo's "Sales".
    await api('PUT', '/v1/owner/analytics/orders-between', {
      connection: 'demo',
      title: 'Orders between two dates',
      sql: `SELECT region, count(*) AS orders FROM sales
             WHERE month BETWEEN :start_date AND :end_date AND region = :region
             GROUP BY region`,
      params: {
        start_date: { type: 'date', required: true, description: 'First day' },
        end_date: { type: 'date', required: true, description: 'Last day' },
        region: { type: 'string', required: true, pattern: '^[A-Z]{2}$', description: 'Region code' },
      },
      visibility: 'public',
      price: 1,
    });
    await api('PUT', '/v1/owner/analytics/orders-between/listing', {
      category: 'sales',
      description:
        'Counts **orders** per region between `start_date` and `end_date`.\n\n' +
        '- exact to the day\n- <img src=x onerror="window.__owned=1"> [site](https://example.com) [bad](javascript:window.__owned=2)',
      example_params: { start_date: '2024-01-01', end_date: '2024-03-31', region: 'EU' },
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function newPage(viewport: { width: number; height: number }): Promise<Page> {
    // bypassCSP: axe-core is injected as an inline script, which the console's CSP refuses.
    const context = await browser.newContext({ viewport, bypassCSP: true });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    return page;
  }

  async function signUp(page: Page, email: string): Promise<void> {
    await page.goto(`${gateway.url}/#/signup`);
    await page.getByLabel('Name').fill('Phoebe Phone');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByTestId('secret').waitFor();
  }

  /**
   * Waits until the page has its data: a hash route changes no document, so the load state says
   * nothing; the page's heading is up and no "Loading…" is left in it.
   */
  async function settled(page: Page): Promise<void> {
    await page.locator('main h1').first().waitFor();
    await poll(() => page.locator('main').getByText('Loading…').count()).toBe(0);
    await page.waitForLoadState('networkidle');
  }

  /** How far the page scrolls sideways: 0 when nothing is wider than the window. */
  const sideways = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  /** axe-core's serious and critical violations on the page as it is now. */
  async function axeViolations(page: Page): Promise<string[]> {
    await page.addScriptTag({ content: AXE_SOURCE });
    const violations = await page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: axe is a global the script tag added.
      const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    return violations;
  }

  it('a listing sells: markdown, examples not regexes, declared order, copy buttons, plurals, a partial preview said so', async () => {
    const page = await newPage(DESKTOP);
    await signUp(page, `buyer-${suffix}@example.com`);
    await page.goto(`${gateway.url}/#/listing/orders-between`);
    const description = page.getByTestId('description');
    await poll(() => description.locator('strong').textContent()).toBe('orders');
    expect(await description.locator('code').allTextContents()).toEqual(['start_date', 'end_date']);
    expect(await description.textContent()).not.toContain('`');
    expect(await description.locator('li').count()).toBe(2);
    // Raw HTML stays text; a web link opens outside, a javascript: link is no link.
    expect(await description.locator('img').count()).toBe(0);
    expect(await description.locator('a').count()).toBe(1);
    expect(await description.locator('a').getAttribute('href')).toBe('https://example.com');
    expect(await description.locator('a').getAttribute('rel')).toContain('noopener');
    expect(await page.evaluate(() => (window as unknown as { __owned?: number }).__owned)).toBeUndefined();

    const params = page.locator('table', { hasText: 'Parameters' });
    expect(await params.locator('tbody tr td:first-child').allTextContents()).toEqual([
      'start_date',
      'end_date',
      'region',
    ]);
    const regionRow = await params.locator('tbody tr').nth(2).textContent();
    expect(regionRow).toContain('formatted like EU');
    expect(regionRow).not.toContain('[A-Z]');
    expect(await page.getByRole('heading', { name: 'Parameters' }).count()).toBe(1);
    // The table under it names itself to screen readers only.
    expect(await params.locator('caption').getAttribute('class')).toBe('visually-hidden');
    await poll(() => page.getByTestId('price').textContent()).toBe('1 credit');
    // One copy button per example (curl open, the five clients folded).
    expect(await page.locator('.code-block button').allTextContents()).toEqual(
      ['curl', 'TypeScript', 'Python', 'Go', 'PHP', 'Ruby'].map((language) => `Copy ${language}`),
    );

    // monthly-revenue: 12 months × the demo's regions, far more than a preview's 10 rows.
    await page.goto(`${gateway.url}/#/listing/monthly-revenue`);
    await poll(() => page.getByTestId('price').textContent()).toBe('2 credits');
    await page.getByRole('button', { name: 'Run preview' }).click();
    await poll(() => page.getByTestId('try-meta').textContent()).toBe('10 rows · 0 credits · preview');
    await poll(() => page.getByTestId('try-truncated').textContent()).toContain('first 10 rows');
    expect(await page.getByTestId('try-truncated').textContent()).toContain('partial');
    expect(await page.getByTestId('try-result').textContent()).toContain('partial');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('the marketplace shows a category once whatever its case, and an empty search says what to do', async () => {
    const page = await newPage(DESKTOP);
    await page.goto(`${gateway.url}/#/marketplace`);
    await poll(() => page.locator('.card').count()).toBeGreaterThan(3);
    const options = await page.getByLabel('Category').locator('option').allTextContents();
    expect(options.filter((o) => o.toLowerCase() === 'sales')).toEqual(['Sales']);
    await page.getByLabel('Category').selectOption('Sales');
    await poll(() => page.locator('.card h2').allTextContents()).toContain('Orders between two dates');
    await page.getByLabel('Search').fill('zebra unicorn');
    await poll(() => page.getByTestId('result-count').textContent()).toBe(
      'No analytics match “zebra unicorn” in Sales. Try fewer or other words, or every category.',
    );
    await page.getByRole('button', { name: 'Show every analytic' }).click();
    await poll(() => page.locator('.card').count()).toBeGreaterThan(3);
    expect(await page.getByTestId('result-count').textContent()).toMatch(/^\d+ analytics$/);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('on a phone no page scrolls sideways, the header is one row with a menu, and tables scroll in their box', async () => {
    const page = await newPage(PHONE);
    await signUp(page, `phone-${suffix}@example.com`);
    const header = await page.locator('header').boundingBox();
    expect(header?.height).toBeLessThan(70);
    // The links are behind the Menu button; it opens them and a click on one closes it.
    const keysLink = page.getByRole('navigation').getByRole('link', { name: 'Keys', exact: true });
    expect(await keysLink.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('true');
    await keysLink.click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/keys');
    await poll(() => keysLink.isVisible()).toBe(false);

    // A second key, so the keys table has rows to be wide with.
    await page.getByLabel('Key name').fill('reporting');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('secret').waitFor();
    await poll(() => page.locator('table', { hasText: 'Your keys' }).locator('tbody tr').count()).toBe(2);
    expect(await sideways(page)).toBe(0);
    await poll(() => page.locator('.scroll-hint').first().isVisible()).toBe(true);
    expect(await page.locator('.table-wrap[role="region"]').first().getAttribute('tabindex')).toBe('0');
    // Revoking the key whose secret is on screen takes the secret away.
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Revoke reporting' }).click();
    await poll(() => page.getByTestId('secret').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    const pages = [
      'marketplace',
      'listing/monthly-revenue',
      'listing/orders-between',
      'keys',
      'usage',
      'calls',
      'studio',
      'statements',
    ];
    const widths: Record<string, number> = {};
    for (const route of pages) {
      await page.goto(`${gateway.url}/#/${route}`);
      await settled(page);
      widths[route] = await sideways(page);
    }
    expect(widths).toEqual(Object.fromEntries(pages.map((p) => [p, 0])));
    // The phone screenshots docs/console.md shows.
    for (const [route, file] of [
      ['marketplace', 'phone-marketplace.png'],
      ['listing/monthly-revenue', 'phone-listing.png'],
    ] as const) {
      await page.goto(`${gateway.url}/#/${route}`);
      await settled(page);
      await page.screenshot({ path: join(REPO_ROOT, 'docs/screenshots', file) });
    }
    for (const route of ['marketplace', 'listing/orders-between', 'usage', 'statements']) {
      await page.goto(`${gateway.url}/#/${route}`);
      await settled(page);
      expect({ route, violations: await axeViolations(page) }).toEqual({ route, violations: [] });
    }
  });

  it('recent calls: a call made with the API is on #/calls at 390 px, filterable, with no sideways scroll', async () => {
    const page = await newPage(PHONE);
    await signUp(page, `calls-${suffix}@example.com`);
    const key = await page.getByTestId('secret').inputValue();
    const response = await fetch(`${gateway.url}/v1/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
    });
    expect(response.status, await response.text()).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(requestId).not.toBe('');
    // The usage page links to it.
    await page.goto(`${gateway.url}/#/usage`);
    await page.getByRole('link', { name: 'recent calls' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/calls');
    await poll(() => page.title()).toBe('Recent calls · Quarry');
    const rows = page.getByTestId('calls').locator('tbody tr');
    await poll(() => rows.count()).toBe(1);
    const row = await rows.first().textContent();
    expect(row).toContain(requestId);
    expect(row).toContain('sales-by-region');
    expect(row).toContain('ok');
    expect(await rows.first().getByRole('button', { name: 'Copy id' }).count()).toBe(1);
    await page.waitForLoadState('networkidle');
    expect(await sideways(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    // Filters: no failed call, then the analytic's calls again.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Show' }).click();
    await poll(() => page.getByTestId('no-calls').isVisible()).toBe(true);
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Analytic').fill('sales-by-region');
    await page.getByRole('button', { name: 'Show' }).click();
    await poll(() => rows.count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    expect(await sideways(page)).toBe(0);
  });

  it('every page has its own title, and logging in returns to the page asked for', async () => {
    const page = await newPage(DESKTOP);
    const email = `return-${suffix}@example.com`;
    await signUp(page, email);
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/login');
    await page.goto(`${gateway.url}/#/statements`);
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/login?next=%2Fstatements');
    expect(await page.title()).toBe('Log in · Quarry');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/statements');
    await poll(() => page.title()).toBe('Statements · Quarry');
    const titles: string[] = [];
    for (const route of ['marketplace', 'keys', 'usage', 'studio', 'listing/monthly-revenue']) {
      await page.goto(`${gateway.url}/#/${route}`);
      await page.locator('main h1').first().waitFor();
      titles.push(await page.title());
    }
    expect(titles).toEqual([
      'Marketplace · Quarry',
      'API keys · Quarry',
      'Usage · Quarry',
      'Studio · Quarry',
      'monthly-revenue · Quarry',
    ]);
    // A `next` that leads off the console's own routes goes to the marketplace instead.
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/login');
    await page.goto(`${gateway.url}/#/login?next=${encodeURIComponent('//evil.example/')}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/marketplace');
    expect(new URL(page.url()).host).toBe(new URL(gateway.url).host);
  });

  it('a forgotten password is reset by the link, and the account page changes the login email', async () => {
    const page = await newPage(PHONE);
    const email = `forgetful-${suffix}@example.com`;
    await signUp(page, email);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toBe('#/login');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    // The log-in page has an Email field too: fill the one on the page the link opens.
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await poll(() => page.getByRole('status').textContent()).toContain('If an account has this email');
    // No mail server here: the link is in the operator's log.
    const link = await expect
      .poll(() => /(http:\/\/[^\s"]+#\/reset\?token=qpr_[0-9A-Za-z]{43})/.exec(gateway.stdout())?.[1], {
        timeout: 15_000,
      })
      .toBeDefined()
      .then(
        () => /(http:\/\/[^\s"]+#\/reset\?token=qpr_[0-9A-Za-z]{43})/.exec(gateway.stdout())?.[1] as string,
      );
    await page.goto(link);
    await page.getByLabel('New password', { exact: true }).fill('a fresh passphrase here');
    await page.getByRole('button', { name: 'Set password' }).click();
    await poll(() => page.getByRole('status').textContent()).toContain('Your new password is set.');
    expect(await sideways(page)).toBe(0);
    await page.getByRole('link', { name: 'Log in' }).last().click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a fresh passphrase here');
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(email);

    await page.goto(`${gateway.url}/#/account`);
    const moved = `moved-${suffix}@example.com`;
    await page.getByLabel('New email').fill(moved);
    await page.getByLabel('Current password').first().fill('a fresh passphrase here');
    await page.getByRole('button', { name: 'Change email' }).click();
    await poll(() => page.getByTestId('account-email').textContent()).toBe(moved);
    expect(await sideways(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });
});
