// /docs as a caller meets it, in Debian's Chromium against a real gateway with the demo: the page
// paints the caller's group (Query) first and open, prints how long it took to first content
// (navigation to the first operation visible; a figure for the log, not a pass/fail threshold:
// the machine is shared), and "Try it out" on POST /v1/query with the demo key answers 200 with
// the document's own example. The page makes no request to another origin. A reload revalidates
// the OpenAPI document (304) and takes the assets from the browser's cache.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { serviceUp } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());

describe.runIf(up)('/docs in a browser (headless Chromium)', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-docs-page-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 1_000 });
    [gateway, browser] = await Promise.all([
      startGateway({ env: { QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: 'warn' }, readyTimeoutMs: 90_000 }),
      launchChromium(),
    ]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('shows the Query group first, runs POST /v1/query with the demo key, and stays on its origin', async () => {
    const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    const context = await browser.newContext();
    const origin = new URL(gateway.url).origin;
    const elsewhere: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin)) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    const openapi: { status: number; encoding?: string }[] = [];
    page.on('response', async (response) => {
      if (new URL(response.url()).pathname !== '/v1/openapi.json') return;
      openapi.push({
        status: response.status(),
        encoding: (await response.allHeaders())['content-encoding'],
      });
    });

    const started = performance.now();
    await page.goto(`${gateway.url}/docs`);
    const query = page.locator('.opblock-post').filter({ has: page.locator('[data-path="/v1/query"]') });
    await query.waitFor({ timeout: 60_000 });
    const firstContentMs = Math.round(performance.now() - started);
    console.log(`/docs time to first content (POST /v1/query visible): ${firstContentMs} ms`);

    const tags = page.locator('.opblock-tag-section h3');
    expect((await tags.first().getAttribute('data-tag')) ?? (await tags.first().textContent())).toMatch(
      /^Query/,
    );
    // The document came compressed.
    expect(openapi[0]).toMatchObject({ status: 200, encoding: 'br' });

    // The API key first: the Authorize dialog's first scheme is the bearer key.
    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    await expect
      .poll(() => dialog.locator('.auth-container h4').first().textContent())
      .toContain('bearerAuth');
    await dialog.locator('.auth-container').first().locator('input').fill(key);
    await dialog.locator('.auth-container').first().locator('button.authorize').click();
    await dialog.locator('button.btn-done').first().click();

    await query.locator('.opblock-summary').first().click();
    await query.locator('.try-out__btn').click();
    await query.locator('button.execute').click();
    const status = query.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    expect(
      (await status.textContent())?.trim(),
      (await query.locator('.live-responses-table').textContent()) ?? '',
    ).toBe('200');

    const reloaded = performance.now();
    await page.reload();
    await query.waitFor({ timeout: 60_000 });
    console.log(`/docs time to first content on reload: ${Math.round(performance.now() - reloaded)} ms`);

    expect(elsewhere).toEqual([]);
    await context.close();
  }, 180_000);

  it('serves the OpenAPI document and the assets compressed, with an ETag a revalidation matches', async () => {
    const plain = await fetch(`${gateway.url}/v1/openapi.json`, {
      headers: { 'accept-encoding': 'identity' },
    });
    expect(plain.headers.get('content-encoding')).toBeNull();
    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const text = await plain.text();
    // fetch decodes gzip and brotli itself: each variant is the same document.
    for (const encoding of ['gzip', 'br']) {
      const response = await fetch(`${gateway.url}/v1/openapi.json`, {
        headers: { 'accept-encoding': encoding },
      });
      expect(response.headers.get('content-encoding')).toBe(encoding);
      expect(response.headers.get('vary')).toBe('Accept-Encoding');
      expect(await response.text()).toBe(text);
    }
    const again = await fetch(`${gateway.url}/v1/openapi.json`, {
      headers: { 'if-none-match': etag as string },
    });
    expect(again.status).toBe(304);
    await again.body?.cancel();

    const html = await (await fetch(`${gateway.url}/docs`)).text();
    const bundle = /src="(\/docs\/assets\/swagger-ui-bundle\.js\?v=[\w-]+)"/.exec(html)?.[1];
    expect(bundle).toBeDefined();
    const script = await fetch(`${gateway.url}${bundle}`, { headers: { 'accept-encoding': 'br' } });
    expect(script.headers.get('content-encoding')).toBe('br');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await script.text()).length).toBeGreaterThan(1_000_000);
  });
});
