// /docs (the reference the gateway renders) and /docs/swagger (Swagger UI) work in a real browser
// with no network beyond the gateway itself: their assets come from the gateway (swagger-ui-dist
// for the explorer), not a CDN, and run under the pages' CSP with no violation. Every request a
// page makes to another host is refused and recorded: there must be none.
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await chromiumAvailable());

describe.runIf(up)('/docs with the network off (headless Chromium)', () => {
  let schema: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    schema = await createControlPlaneSchema(`quarry_docs_${uniqueSuffix()}`);
    [gateway, browser] = await Promise.all([
      startGateway({
        env: {
          ...postgresStoreEnv(schema.databaseUrl, randomBytes(32).toString('base64')),
          QUARRY_LOG_LEVEL: 'warn',
        },
        readyTimeoutMs: 90_000,
      }),
      launchChromium(),
    ]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await schema?.drop();
  }, 60_000);

  it('renders every group from its own assets, with no request elsewhere and no CSP violation', async () => {
    const context = await browser.newContext();
    const elsewhere: string[] = [];
    const problems: string[] = [];
    const origin = new URL(gateway.url).origin;
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin)) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const doc = (await (await fetch(`${gateway.url}/v1/openapi.json`)).json()) as {
      tags: { name: string }[];
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    // The reference: a section per group that has operations, in the document's order, the
    // caller's first open.
    const reference = await page.goto(`${gateway.url}/docs`);
    expect(reference?.status()).toBe(200);
    const used = new Set(
      Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.tags?.[0])),
    );
    await expect
      .poll(() =>
        page.locator('section.group').evaluateAll((all) => all.map((s) => s.getAttribute('data-tag'))),
      )
      .toEqual(doc.tags.map((t) => t.name).filter((name) => used.has(name)));
    await expect.poll(() => page.locator('section.group[data-tag="Query"] details.op[open]').count()).toBe(1);

    const response = await page.goto(`${gateway.url}/docs/swagger`);
    expect(response?.status()).toBe(200);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 30_000 });
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Quarry API');
    // Groups start collapsed but every one of the document's groups is listed; the first (Query)
    // is open with its operations.
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock-tag').count()).toBe(doc.tags.length);
    expect(await page.locator('.opblock-tag-section.is-open .opblock').count()).toBeGreaterThan(0);
    expect(elsewhere).toEqual([]);
    expect(problems.filter((p) => /Content Security Policy|Refused to/i.test(p))).toEqual([]);
    await context.close();
  }, 90_000);
});
