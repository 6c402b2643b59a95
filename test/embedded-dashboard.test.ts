// The embedded-dashboard example (examples/embedded-dashboard, docs/embedding.md) in Chromium
// against a real gateway process on another origin:
//   - the page on the site's origin signs a user in with the site's backend and shows the chart
//     from the gateway, with only that user's region (the token fixes it);
//   - the same page on an origin its token does not allow gets no data: the gateway refuses the
//     call without CORS headers and the browser reports the CORS refusal;
//   - the site's API key appears nowhere in the built page nor in anything the browser sent or
//     received.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signUp } from '@quarry/client';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage, type Dashboard, startDashboard } from '../examples/embedded-dashboard/server.js';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { serviceUp } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 30_000, interval: 100 });

/** Everything the browser sent and received, as text, for the key scan. */
interface Traffic {
  readonly seen: string[];
  readonly consoleMessages: string[];
  readonly failed: string[];
}

async function record(page: Page): Promise<Traffic> {
  const traffic: Traffic = { seen: [], consoleMessages: [], failed: [] };
  page.on('request', (request) => {
    traffic.seen.push(
      `${request.method()} ${request.url()} ${JSON.stringify(request.headers())} ${request.postData() ?? ''}`,
    );
  });
  page.on('response', (response) => {
    void response
      .text()
      .catch(() => '')
      .then((body) => traffic.seen.push(`${response.url()} ${JSON.stringify(response.headers())} ${body}`));
  });
  page.on('console', (message) => traffic.consoleMessages.push(message.text()));
  page.on('requestfailed', (request) =>
    traffic.failed.push(`${request.url()} ${request.failure()?.errorText ?? ''}`),
  );
  return traffic;
}

async function signIn(page: Page, url: string, user: string, password: string): Promise<void> {
  await page.goto(url);
  await page.locator('select[name=user]').selectOption(user);
  await page.locator('input[name=password]').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.runIf(up)('the embedded-dashboard example in Chromium', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let apiKey: string;
  let pageDir: string;
  let site: Dashboard;
  let elsewhere: Dashboard;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-embed-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 5_000 });
    gateway = await startGateway({
      env: { QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: 'warn', QUARRY_SIGNUPS_PER_HOUR: '1000' },
      readyTimeoutMs: 90_000,
    });
    const account = await signUp(gateway.url, {
      email: `embed-site-${Date.now()}@example.com`,
      name: 'Site',
    });
    apiKey = account.key.secret;
    pageDir = await buildPage();
    site = await startDashboard({ gatewayUrl: gateway.url, apiKey, pageDir });
    // The same site on another origin, whose tokens still name the first origin only: a page
    // holding a token it was not minted for.
    elsewhere = await startDashboard({ gatewayUrl: gateway.url, apiKey, pageDir, tokenOrigins: [site.url] });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.allSettled([site?.close(), elsewhere?.close()]);
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("shows the chart from the gateway on another origin, with the user's region only", async () => {
    expect(new URL(site.url).origin).not.toBe(new URL(gateway.url).origin);
    const page = await browser.newPage();
    const traffic = await record(page);
    const answers: { url: string; origin: string | undefined; vary: string | undefined }[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${gateway.url}/v1/query`) && response.request().method() === 'POST') {
        answers.push({
          url: response.url(),
          origin: response.headers()['access-control-allow-origin'],
          vary: response.headers().vary,
        });
      }
    });
    await signIn(page, site.url, 'alice', 'alice-demo');
    await poll(() => page.getByTestId('regions').textContent()).toBe('EU');
    const bars = await page
      .locator('[data-testid=chart] g')
      .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-region')));
    expect(bars.length).toBe(12);
    expect(new Set(bars)).toEqual(new Set(['EU']));
    expect(answers).toEqual([{ url: `${gateway.url}/v1/query`, origin: site.url, vary: 'Origin' }]);

    // Another user of the site sees another region.
    const bob = await browser.newPage();
    const bobTraffic = await record(bob);
    await signIn(bob, site.url, 'bob', 'bob-demo');
    await poll(() => bob.getByTestId('regions').textContent()).toBe('NA');

    for (const seen of [...traffic.seen, ...bobTraffic.seen]) expect(seen).not.toContain(apiKey);
    await page.close();
    await bob.close();
  });

  it('gets no data on an origin its token does not allow: the browser reports the CORS refusal', async () => {
    const page = await browser.newPage();
    const traffic = await record(page);
    await signIn(page, elsewhere.url, 'alice', 'alice-demo');
    await poll(() => page.getByTestId('error').isVisible()).toBe(true);
    expect(await page.getByTestId('chart').count()).toBe(0);
    await poll(() => traffic.consoleMessages.some((m) => m.includes('CORS'))).toBe(true);
    expect(traffic.failed.some((f) => f.startsWith(`${gateway.url}/v1/query`))).toBe(true);
    for (const seen of traffic.seen) expect(seen).not.toContain(apiKey);
    await page.close();
  });

  it('has no API key in the built page', async () => {
    const files = await readdir(pageDir, { recursive: true, withFileTypes: true });
    const texts = await Promise.all(
      files.filter((f) => f.isFile()).map((f) => readFile(join(f.parentPath, f.name), 'utf8')),
    );
    expect(texts.length).toBeGreaterThan(1);
    for (const text of texts) {
      expect(text).not.toContain(apiKey);
      expect(text).not.toMatch(/qry_(live|test)_[A-Za-z0-9]{10,}/);
    }
  });
});
