/// <reference lib="dom" />
// The owner studio in Debian's Chromium (playwright-core) against a real gateway process, with the
// local PostgreSQL as the owner's warehouse, at 1280×800 and 390×844:
// - the connection form comes from the connector's schema and its form hints: human labels, help,
//   a masked password, advanced settings folded away, a checkbox beside its label;
// - a connection that fails its test before saving shows the warehouse's own message once, offers
//   "Save without testing" (never the API's ?test=false), and the message goes once it is saved;
// - a saved connection is edited in place (its secret rotated: left empty it is kept);
// - the analytic editor is CodeMirror (YAML highlighted), loaded only by the studio; a YAML syntax
//   error is marked as one types, a dry run's warehouse error on the SQL line that caused it; the
//   template's `connection:` follows the owner's pick and the connection just added;
// - the test run draws one chart per measure (orders ~hundreds, revenue ~hundreds of thousands);
// - publishing asks for a confirmation and then links to the live listing;
// - no sideways scroll at either size, and axe-core finds no serious or critical violation.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';
import { createPostgresWarehouse, type PostgresWarehouse } from './support/warehouses.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await chromiumAvailable());
const SCREENSHOTS = join(REPO_ROOT, 'docs/screenshots');
const PASSWORD = 'correct horse battery staple';
const suffix = uniqueSuffix();
const AXE_SOURCE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });
const pg = new URL(TEST_PG_URL);

describe.skipIf(!up)('the owner studio in a browser', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let warehouse: PostgresWarehouse;
  const contexts: BrowserContext[] = [];
  const email = `studio-${suffix}@example.com`;
  const analytic = `channels-${suffix}`;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-studio-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 500 });
    warehouse = await createPostgresWarehouse(`studio_wh_${suffix}`, 2_000);
    await mkdir(SCREENSHOTS, { recursive: true });
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: dataDir,
        QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
        QUARRY_SIGNUPS_PER_HOUR: '1000',
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
    await warehouse?.drop();
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

  /** How far the page scrolls sideways: 0 when nothing is wider than the window. */
  const sideways = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  /** axe-core's serious and critical violations on the page as it is now. */
  async function axeViolations(page: Page): Promise<string[]> {
    await page.addScriptTag({ content: AXE_SOURCE });
    return page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: axe is a global the script tag added.
      const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
  }

  /** How many times `text` appears in the page's visible text. */
  const timesShown = async (page: Page, text: string) =>
    (await page.locator('main').innerText()).split(text).length - 1;

  /** The YAML in the editor, as CodeMirror holds it. */
  const editorText = (page: Page) =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('.cm-content .cm-line'))
        .map((l) => l.textContent ?? '')
        .join('\n'),
    );

  async function api(method: string, path: string, cookiePage: Page, body?: unknown) {
    return cookiePage.evaluate(
      async ([m, p, b]) => {
        const session = (await (await fetch('/v1/session')).json()) as { csrf_token?: string };
        const response = await fetch(p as string, {
          method: m as string,
          headers: {
            'content-type': 'application/json',
            ...(session.csrf_token === undefined ? {} : { 'x-csrf-token': session.csrf_token }),
          },
          ...(b === undefined ? {} : { body: JSON.stringify(b) }),
        });
        return { status: response.status, json: await response.json().catch(() => null) };
      },
      [method, path, body] as const,
    );
  }

  const definition = (table: string) =>
    [
      `name: ${analytic}`,
      'title: Orders and revenue by channel',
      'connection: shop',
      'sql: |',
      '  SELECT channel, count(*) AS orders, sum(amount) AS revenue',
      `  FROM ${table}`,
      '  GROUP BY channel ORDER BY channel',
      'params: {}',
      'insights: {shape: keyed, key: channel}',
      'price: 2',
      'visibility: public',
      '',
    ].join('\n');

  it('connects a warehouse from a form with human labels, tests before saving, edits it, writes, checks, tries and publishes an analytic', async () => {
    const page = await newPage(DESKTOP);
    const scripts: string[] = [];
    page.on('request', (r) => {
      if (r.resourceType() === 'script') scripts.push(new URL(r.url()).pathname);
    });
    await page.goto(`${gateway.url}/#/signup`);
    await page.getByLabel('Name').fill('Stella Studio');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByTestId('secret').waitFor();
    await page.goto(`${gateway.url}/#/marketplace`);
    await page.waitForLoadState('networkidle');
    const beforeStudio = new Set(scripts);
    await page.getByRole('link', { name: 'Studio', exact: true }).click();
    await page.getByRole('heading', { name: 'Owner studio' }).waitFor();

    // The form speaks the owner's language: labels, help and placeholders from the connector's
    // hints, the password masked, the rarely touched settings folded away.
    const form = page.getByRole('form', { name: 'Add a connection' });
    await form.getByLabel('Warehouse type').selectOption('postgres');
    await form.getByRole('radio', { name: 'Host, database and user' }).check();
    await expect(form.getByLabel('Host', { exact: true }).getAttribute('placeholder')).resolves.toBe(
      'db.example.com',
    );
    expect(await form.getByLabel('Password (optional)').getAttribute('type')).toBe('password');
    expect(await form.getByText('Give it read-only grants: analytics only ever read.').count()).toBe(1);
    const formText = await form.innerText();
    for (const raw of ['connectionString', 'portalRowLimit', 'statementTimeoutMs', 'JSON']) {
      expect(formText).not.toContain(raw);
    }
    const advanced = form.locator('details.advanced');
    expect(await advanced.getAttribute('open')).toBeNull();
    await advanced.locator('summary').click();
    // A boolean with a default of true is a choice (a checkbox could not say "off").
    expect(await form.getByLabel('Stop the server at the row cap').evaluate((e) => e.tagName)).toBe('SELECT');

    // Before any connection, the editor's template names a placeholder.
    await page.locator('.cm-content').waitFor();
    expect(await editorText(page)).toContain('connection: my-connection');

    // A database that does not exist: not saved, the warehouse's own words once, and a button
    // where the API would say ?test=false.
    const missingDb = `nosuchdb_${suffix}`;
    await form.getByLabel('Connection name').fill('shop');
    await form.getByLabel('Host', { exact: true }).fill(pg.hostname);
    await form.getByLabel('Port').fill(pg.port || '5432');
    await form.getByLabel('Database', { exact: true }).fill(missingDb);
    await form.getByLabel('User', { exact: true }).fill(decodeURIComponent(pg.username));
    await form.getByLabel('Password (optional)').fill('first-secret');
    await form.getByLabel('Schema (optional)').fill(warehouse.schema);
    await form.getByRole('button', { name: 'Test and add connection' }).click();
    const said = form.getByTestId('warehouse-said');
    await poll(() => said.innerText()).toContain(`database "${missingDb}" does not exist`);
    expect(await timesShown(page, `database "${missingDb}" does not exist`)).toBe(1);
    expect(await page.locator('main').innerText()).not.toContain('test=false');
    expect((await api('GET', '/v1/owner/connections', page)).json.connections).toEqual([]);
    await form.screenshot({ path: join(SCREENSHOTS, 'studio-connection.png') });
    await form.getByRole('button', { name: 'Save without testing' }).click();
    await poll(() => page.getByTestId('connection-saved').textContent()).toBe('Added shop, untested.');
    // The failure is gone once it succeeded.
    expect(await timesShown(page, 'does not exist')).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);

    // The template follows the connection just added, and the picker shows it.
    await poll(() => editorText(page)).toContain('connection: shop');
    expect(await page.getByLabel('Connection', { exact: true }).inputValue()).toBe('shop');

    // Its test says what the warehouse says; then it is edited: the database fixed, the password
    // rotated (left empty it would be kept), and it answers.
    await page.getByRole('button', { name: 'Test shop' }).click();
    await poll(() => page.getByTestId('test-shop').textContent()).toContain(`"${missingDb}" does not exist`);
    await page.getByRole('button', { name: 'Edit shop' }).click();
    const edit = page.getByRole('form', { name: 'Edit shop' });
    expect(await edit.getByLabel('Database', { exact: true }).inputValue()).toBe(missingDb);
    expect(await edit.getByLabel('Host', { exact: true }).inputValue()).toBe(pg.hostname);
    const secret = edit.getByLabel('Password (optional)');
    expect(await secret.inputValue()).toBe('');
    expect(await secret.getAttribute('placeholder')).toBe('Saved (hidden)');
    await edit.getByLabel('Database', { exact: true }).fill(pg.pathname.slice(1) || 'test');
    await secret.fill('rotated-secret');
    await edit.getByRole('button', { name: 'Test and save changes' }).click();
    await poll(() => page.getByTestId('connection-saved').textContent()).toBe(
      'Saved shop: the warehouse answered the test.',
    );
    const saved = (await api('GET', '/v1/owner/connections', page)).json.connections[0];
    // The new database is saved; the password is one of its secrets, never sent back.
    expect(saved.config.database).toBe(pg.pathname.slice(1) || 'test');
    expect(JSON.stringify(saved)).not.toContain('rotated-secret');
    expect(saved.secret_fields).toEqual(['password']);
    await page.getByRole('button', { name: 'Test shop' }).click();
    await poll(() => page.getByTestId('test-shop').textContent()).toMatch(/^Reachable \(\d+ ms\)$/);

    // A connection made from a URL (a secret) is edited in its own form: nothing to retype.
    await form.getByLabel('Connection name').fill('url-wh');
    await form.getByRole('radio', { name: 'A connection URL' }).check();
    await form.getByLabel('Connection URL', { exact: true }).fill(TEST_PG_URL);
    await form.getByRole('button', { name: 'Test and add connection' }).click();
    await poll(() => page.getByTestId('connection-saved').textContent()).toBe(
      'Added url-wh: the warehouse answered the test.',
    );
    await page.getByRole('button', { name: 'Edit url-wh' }).click();
    const editUrl = page.getByRole('form', { name: 'Edit url-wh' });
    expect(await editUrl.getByRole('radio', { name: 'A connection URL' }).isChecked()).toBe(true);
    expect(await editUrl.getByLabel('Connection URL', { exact: true }).getAttribute('placeholder')).toBe(
      'Saved (hidden)',
    );
    await editUrl.getByLabel('Schema (optional)').fill(warehouse.schema);
    await editUrl.getByRole('button', { name: 'Test and save changes' }).click();
    await poll(() => page.getByTestId('connection-saved').textContent()).toBe(
      'Saved url-wh: the warehouse answered the test.',
    );
    await page.getByRole('button', { name: 'Test url-wh' }).click();
    await poll(() => page.getByTestId('test-url-wh').textContent()).toMatch(/^Reachable \(\d+ ms\)$/);

    // The editor: CodeMirror, loaded by the studio alone, highlighting YAML.
    const lazy = scripts.filter((s) => !beforeStudio.has(s));
    expect(lazy.length).toBeGreaterThan(0);
    expect(lazy.every((s) => s.startsWith('/assets/chunk-'))).toBe(true);
    const editor = page.getByLabel('Analytic definition (YAML)');
    expect(await editor.getAttribute('class')).toContain('cm-content');
    await editor.fill(definition('salez'));
    expect(
      await page.evaluate(
        () =>
          new Set(
            Array.from(document.querySelectorAll('.cm-line span')).map((s) => getComputedStyle(s).color),
          ).size,
      ),
    ).toBeGreaterThanOrEqual(3);

    // A dry run with a typo'd table: PostgreSQL's message on the SQL line that names it.
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await poll(() => page.getByTestId('editor-error').textContent()).toMatch(
      /relation "salez" does not exist/,
    );
    await poll(() => page.locator('.cm-lintRange-error').count()).toBeGreaterThan(0);
    expect(await page.locator('.cm-lintRange-error').first().textContent()).toContain('FROM salez');
    expect(await page.getByTestId('editor-error').textContent()).toContain('Line 6: ');
    expect(await timesShown(page, 'relation "salez" does not exist')).toBe(1);
    await page
      .getByRole('form', { name: 'Analytic editor' })
      .screenshot({ path: join(SCREENSHOTS, 'studio-check.png') });

    // A YAML syntax error is marked as one types, before any check.
    await editor.fill(`${definition('sales')}params: [\n`);
    await poll(() => page.locator('.cm-lint-marker-error').count()).toBeGreaterThan(0);

    // Picking the connection rewrites the YAML's connection line.
    await editor.fill(definition('sales').replace('connection: shop', 'connection: my-connection'));
    expect(await page.getByLabel('Connection', { exact: true }).inputValue()).toBe('');
    await page.getByLabel('Connection', { exact: true }).selectOption('shop');
    await poll(() => editorText(page)).toContain('connection: shop');
    expect(await editorText(page)).not.toContain('my-connection');

    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await poll(() => page.getByTestId('checked').textContent()).toMatch(
      new RegExp(
        `^Check passed: deploying would leave ${analytic} created\\. Columns: channel, orders, revenue\\.`,
      ),
    );
    expect(await page.getByTestId('editor-error').count()).toBe(0);
    expect(await page.locator('.cm-lintRange-error').count()).toBe(0);
    await page.getByRole('button', { name: 'Deploy' }).click();
    await poll(() => page.getByTestId('deployed').textContent()).toBe(`Deployed ${analytic}, version 1.`);

    // The test run: orders and revenue each on a chart of its own.
    await page.getByRole('button', { name: `Test run ${analytic}` }).click();
    const result = page.getByTestId('test-run-result');
    await poll(() =>
      result
        .getByRole('table', { name: /^Test run of/ })
        .locator('tbody tr')
        .count(),
    ).toBe(3);
    const charts = result.getByTestId('charts-per-measure');
    expect(await charts.locator('figcaption').allTextContents()).toEqual(['orders', 'revenue']);
    await poll(() => charts.locator('canvas').count()).toBe(2);
    expect(await charts.getByRole('img', { name: `${analytic}: test run: revenue` }).count()).toBe(1);

    // Publish asks first; cancelling publishes nothing.
    const listing = page.getByRole('form', { name: `Listing of ${analytic}` });
    await listing.getByLabel('Category').fill('Sales');
    // The checkbox sits beside its label, on one line, not above it.
    const box = await listing.getByLabel('Free previews on the marketplace').boundingBox();
    const label = await listing
      .locator('label', { hasText: 'Free previews on the marketplace' })
      .boundingBox();
    expect(box && label).toBeTruthy();
    expect(box!.x + box!.width).toBeLessThanOrEqual(label!.x);
    expect(Math.abs(box!.y + box!.height / 2 - (label!.y + label!.height / 2))).toBeLessThan(12);
    await listing.getByRole('button', { name: 'Publish…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain(
      'Each call costs the caller 2 credits; you earn 80% of what callers pay.',
    );
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await dialog.isVisible()).toBe(false);
    expect((await api('GET', `/v1/marketplace/listings/${analytic}`, page)).status).toBe(404);
    await listing.getByRole('button', { name: 'Publish…' }).click();
    await dialog.getByRole('button', { name: 'Publish now' }).click();
    await poll(() => listing.getByTestId('published').textContent()).toContain(
      'Published: it is live on the marketplace.',
    );
    expect((await api('GET', `/v1/marketplace/listings/${analytic}`, page)).status).toBe(200);

    expect(await sideways(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SCREENSHOTS, 'studio.png'), fullPage: true });

    await listing.getByRole('link', { name: 'See the live listing' }).click();
    await poll(() => page.locator('main h1').textContent()).toBe('Orders and revenue by channel');
  }, 240_000);

  it('the editor works under the console’s own CSP: styled, no violation', async () => {
    // No bypassCSP here: CodeMirror's styles must come in without an inline <style> the policy refuses.
    const context = await browser.newContext({ viewport: DESKTOP });
    contexts.push(context);
    const page = await context.newPage();
    await page.addInitScript(() => {
      (window as unknown as { violations: string[] }).violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as unknown as { violations: string[] }).violations.push(
          `${e.violatedDirective} ${e.blockedURI} ${String((e.target as Element | null)?.outerHTML ?? '').slice(0, 160)}`,
        ),
      );
    });
    await page.goto(`${gateway.url}/#/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.goto(`${gateway.url}/#/studio`);
    await page.locator('.cm-content').waitFor();
    expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
    // Typed as a person types, at the end. (Chromium's own editing of a selection across lines
    // may try an inline style attribute, which the policy refuses and CodeMirror redraws anyway.)
    await page.getByLabel('Analytic definition (YAML)').click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('extra: [\n');
    await poll(() => page.locator('.cm-lint-marker-error').count()).toBeGreaterThan(0);
    // CodeMirror's own base theme is applied (a flex gutter) and so is the studio's (its border).
    expect(await page.locator('.cm-gutters').evaluate((e) => getComputedStyle(e).display)).toBe('flex');
    expect(await page.locator('.cm-editor').evaluate((e) => getComputedStyle(e).borderTopStyle)).toBe(
      'solid',
    );
    expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
  }, 60_000);

  it('on a phone: nothing scrolls sideways, the editor and the forms fit, axe finds nothing serious', async () => {
    const page = await newPage(PHONE);
    await page.goto(`${gateway.url}/#/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.goto(`${gateway.url}/#/studio`);
    await page.getByRole('heading', { name: 'Owner studio' }).waitFor();
    await page.locator('.cm-content').waitFor();
    await poll(() => editorText(page)).toContain('connection: shop');
    await page.getByRole('form', { name: 'Add a connection' }).locator('details.advanced summary').click();
    await page.getByRole('button', { name: 'Edit shop' }).click();
    await page.getByRole('button', { name: `Test run ${analytic}` }).click();
    await poll(() => page.getByTestId('test-run-result').locator('canvas').count()).toBe(2);
    expect(await sideways(page)).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Edit shop' }).click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SCREENSHOTS, 'phone-studio.png'), fullPage: true });
  }, 120_000);
});
