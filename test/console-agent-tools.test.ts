// An account chooses its agent's tools in the web console, end to end: Debian's Chromium
// (playwright-core) against a real gateway process with the demo (embedded store, DuckDB
// warehouse, example analytics owned by the demo account). A stranger to the demo logs in, sees
// on the marketplace page of `sales-by-region` that it is not one of its agent's tools, adds it,
// finds it on the keys page's list, sets the default price limit of a tool call, and removes it;
// the API agrees at each step (docs/mcp.md).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { expectStatus } from './support/metering-fixture.js';
import { serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());
const http = createHttpClient();
const suffix = uniqueSuffix();
const PASSWORD = 'correct horse battery staple';
const EMAIL = `agent-owner-${suffix}@example.com`;
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });

describe.skipIf(!up)('agent tools in the web console', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-console-tools-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 1_000 });
    gateway = await startGateway({
      env: { QUARRY_DATA_DIR: dataDir, QUARRY_LOG_LEVEL: 'warn' },
      readyTimeoutMs: 90_000,
    });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('adds a listing to the agent’s tools, lists it, sets the price limit, and removes it', async () => {
    const account = expectStatus(
      await http.request(gateway.url, 'POST', '/v1/accounts', {
        json: { email: EMAIL, name: 'Agent Owner' },
      }),
      201,
      'sign-up',
    ).body;
    const key = account.key.secret as string;
    expectStatus(
      await http.request(gateway.url, 'PUT', '/v1/account/password', { key, json: { password: PASSWORD } }),
      204,
      'password',
    );
    const toolNames = async () =>
      (
        expectStatus(await http.request(gateway.url, 'GET', '/v1/account/tools', { key }), 200, 'tools').body
          .items as { name: string }[]
      ).map((t) => t.name);

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

    await page.goto(`${gateway.url}/#/listing/sales-by-region`);
    await poll(() => page.getByTestId('agent-tool-state').textContent()).toContain(
      'Not one of your agent’s tools',
    );
    await page.getByRole('button', { name: 'Add to my agent’s tools' }).click();
    await poll(() => page.getByTestId('agent-tool-state').textContent()).toContain(
      'Your agents (on /mcp) can call it',
    );
    expect(await toolNames()).toEqual(['sales-by-region']);

    await page.getByRole('link', { name: 'All your agent’s tools' }).click();
    const table = page.getByRole('table', { name: 'Tools' });
    await poll(() => table.textContent()).toContain('sales-by-region');
    await page.getByLabel('Most credits an agent’s call may cost').fill('5');
    await page.getByRole('button', { name: 'Save limit' }).click();
    await poll(
      async () => (await http.request(gateway.url, 'GET', '/v1/account/mcp', { key })).body.mcp.max_credits,
    ).toBe(5);

    await table.getByRole('button', { name: 'Remove sales-by-region' }).click();
    await poll(toolNames).toEqual([]);
    await poll(() => table.textContent()).not.toContain('sales-by-region');
    expect(errors).toEqual([]);
  }, 120_000);
});
