// Embedding in the web console, end to end: Debian's Chromium (playwright-core) against a real
// gateway process on the embedded defaults with the demo. The demo account logs in, creates an
// embed secret (shown once, and it signs a token the gateway accepts), rotates it with an overlap
// (both secrets verify), revokes the new one (its tokens are refused), turns "API keys from
// browsers" on and off (the gateway's answer to a key sent from another origin follows), and mints
// a test token fixing a param: the token works on POST /v1/query and returns only the fixed rows,
// and the React snippet carries it; logging out ends it.
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedDemoWarehouse } from '@quarry/examples';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from './support/browser.js';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { serviceUp } from './support/test-services.js';

const up = serviceUp(await chromiumAvailable());
const PASSWORD = 'correct horse battery staple';
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 20_000, interval: 100 });
const OTHER_ORIGIN = 'https://app.example.com';

describe.skipIf(!up)('embedding in the web console', () => {
  let dataDir: string;
  let gateway: GatewayProcess;
  let browser: Browser;
  let demoKey: string;
  const contexts: BrowserContext[] = [];

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; key?: string; origin?: string } = {},
  ) {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.key ?? demoKey}`,
        ...(options.origin === undefined ? {} : { origin: options.origin }),
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  /** An HS256 token signed offline with an embed secret, for sales-by-region with region fixed. */
  function offlineToken(accountId: string, kid: string, secret: string): string {
    const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const iat = Math.floor(Date.now() / 1000);
    const head = `${b64url({ alg: 'HS256', typ: 'JWT', kid })}.${b64url({
      account: accountId,
      analytics: [{ name: 'sales-by-region', fixed_params: { region: 'EU' } }],
      aud: 'quarry-embed',
      iat,
      exp: iat + 300,
    })}`;
    return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
  }

  const regionsOf = (body: { results: { region: string }[] }) => [
    ...new Set(body.results.map((r) => r.region)),
  ];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-e2e-console-embed-'));
    await seedDemoWarehouse(join(dataDir, 'demo.duckdb'), { rows: 2_000 });
    [gateway, browser] = await Promise.all([
      startGateway({
        env: {
          QUARRY_DATA_DIR: dataDir,
          QUARRY_LOG_LEVEL: 'warn',
          // Revoked secrets and changed settings are seen at once.
          QUARRY_KEY_CACHE_MS: '0',
        },
        readyTimeoutMs: 90_000,
      }),
      launchChromium(),
    ]);
    demoKey = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
    expect((await call('PUT', '/v1/account/password', { body: { password: PASSWORD } })).status).toBeLessThan(
      300,
    );
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await gateway?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function logIn(): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const email = (await call('GET', '/v1/account')).body.account.email as string;
    await page.goto(`${gateway.url}/#/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await poll(() => page.getByTestId('signed-in-as').textContent()).toBe(email);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByRole('link', { name: 'embed tokens' }).click();
    await page.getByRole('heading', { name: 'Embedding', level: 1 }).waitFor();
    return { page, errors };
  }

  it('creates, rotates and revokes an embed secret; the tokens it signs follow', async () => {
    const { page, errors } = await logIn();
    const accountId = (await call('GET', '/v1/account')).body.account.id as string;
    page.on('dialog', (dialog) => dialog.accept());

    await page.getByLabel('Secret name').fill('web backend');
    await page.getByRole('button', { name: 'Create secret' }).click();
    const first = await page.getByTestId('secret').inputValue();
    expect(first).toMatch(/^qess_/);
    await poll(() => page.getByTestId('embed-secret').count()).toBe(1);
    const firstId = (await page.getByTestId('embed-secret').locator('code').textContent()) ?? '';
    expect(firstId).toMatch(/^qes_/);
    const firstToken = offlineToken(accountId, firstId, first);
    const eu = await call('POST', '/v1/query', {
      key: firstToken,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(eu.status).toBe(200);
    expect(regionsOf(eu.body)).toEqual(['EU']);

    // Rotate with a 1-hour overlap: a new secret, shown once; the old one verifies for the hour.
    await page.getByLabel('Overlap when rotating').selectOption({ label: '1 hour' });
    await page.getByRole('button', { name: 'Rotate web backend' }).click();
    await poll(() => page.getByTestId('secret').inputValue()).not.toBe(first);
    const second = await page.getByTestId('secret').inputValue();
    expect(second).toMatch(/^qess_/);
    await poll(() => page.getByTestId('embed-secret').count()).toBe(2);
    const listed = (await call('GET', '/v1/embed-secrets')).body.embed_secrets as {
      id: string;
      expires_at: string | null;
    }[];
    const old = listed.find((s) => s.id === firstId);
    const fresh = listed.find((s) => s.id !== firstId);
    expect(Date.parse(old?.expires_at ?? '') - Date.now()).toBeGreaterThan(55 * 60_000);
    expect(Date.parse(old?.expires_at ?? '') - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(fresh?.expires_at).toBeNull();
    // The old secret's row says until when it verifies, and offers no second rotation.
    await expect
      .poll(() => page.getByRole('button', { name: /^Rotate/ }).count(), { timeout: 20_000 })
      .toBe(1);
    const secondToken = offlineToken(accountId, fresh?.id ?? '', second);
    for (const token of [firstToken, secondToken]) {
      const during = await call('POST', '/v1/query', {
        key: token,
        body: { source: 'sales-by-region', params: { year: 2024 } },
      });
      expect(during.status).toBe(200);
    }

    // Revoke the new one: its tokens are refused; the old one still verifies.
    const freshRow = page.getByTestId('embed-secret').filter({ hasText: fresh?.id ?? '' });
    await freshRow.getByRole('button', { name: /^Revoke/ }).click();
    await poll(() => page.getByTestId('embed-secret').count()).toBe(1);
    await poll(() => page.getByTestId('secret').count()).toBe(0);
    const revoked = await call('POST', '/v1/query', {
      key: secondToken,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('UNAUTHENTICATED');
    expect(
      (
        await call('POST', '/v1/query', {
          key: firstToken,
          body: { source: 'sales-by-region', params: { year: 2024 } },
        })
      ).status,
    ).toBe(200);
    expect(errors).toEqual([]);
  }, 120_000);

  it('turns "API keys from browsers" on and off, and the gateway follows', async () => {
    const { page, errors } = await logIn();
    const fromPage = () =>
      call('POST', '/v1/query', {
        origin: OTHER_ORIGIN,
        body: { source: 'sales-by-region', params: { year: 2024 } },
      });
    const box = page.getByLabel("Allow this account's API keys from other origins' web pages");
    await expect.poll(() => box.isChecked(), { timeout: 20_000 }).toBe(false);
    expect((await fromPage()).status).toBe(403);

    // Turning it on asks first: dismissing the question changes nothing.
    page.once('dialog', (dialog) => dialog.dismiss());
    await box.click();
    await poll(() => page.getByTestId('cors-state').textContent()).toContain('Refused');
    expect((await call('GET', '/v1/account/cors')).body.cors.allow_keys_from_browsers).toBe(false);

    page.once('dialog', (dialog) => dialog.accept());
    await box.click();
    await poll(() => page.getByTestId('cors-state').textContent()).toContain('Allowed');
    expect((await call('GET', '/v1/account/cors')).body.cors.allow_keys_from_browsers).toBe(true);
    expect((await fromPage()).status).toBe(200);

    // Off again: no question.
    await box.click();
    await poll(() => page.getByTestId('cors-state').textContent()).toContain('Refused');
    expect((await call('GET', '/v1/account/cors')).body.cors.allow_keys_from_browsers).toBe(false);
    expect((await fromPage()).status).toBe(403);
    expect(errors).toEqual([]);
  }, 120_000);

  it('mints a test token with a fixed param and origins; it works on POST /v1/query', async () => {
    const { page, errors } = await logIn();
    // A bad fixed-params text is said, and nothing is minted.
    await page.getByLabel('Analytic').fill('sales-by-region');
    await page.getByLabel('Fixed params (JSON, optional)').fill('{region: EU');
    await page.getByRole('button', { name: 'Mint token' }).click();
    await poll(() => page.getByRole('alert').textContent()).toContain('Fixed params must be a JSON object');
    // A param the analytic lacks is the gateway's 400, shown as it says it.
    await page.getByLabel('Fixed params (JSON, optional)').fill('{"country": "EU"}');
    await page.getByRole('button', { name: 'Mint token' }).click();
    await poll(() => page.getByRole('alert').textContent()).toContain('no param "country"');
    expect(await page.getByTestId('embed-token').count()).toBe(0);

    await page.getByLabel('Fixed params (JSON, optional)').fill('{"region": "EU"}');
    await page.getByLabel('Allowed origins (optional)').fill(OTHER_ORIGIN);
    await page.getByLabel('Expires in').selectOption({ label: '5 minutes' });
    await page.getByRole('button', { name: 'Mint token' }).click();
    const token = await page.getByTestId('embed-token').inputValue();
    expect(token.split('.')).toHaveLength(3);
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString());
    expect(claims.exp - claims.iat).toBe(300);
    expect(claims.origins).toEqual([OTHER_ORIGIN]);
    expect(claims.analytics).toEqual([{ name: 'sales-by-region', fixed_params: { region: 'EU' } }]);
    const snippet = (await page.locator('.code-block code').textContent()) ?? '';
    expect(snippet).toContain(`token: '${token}'`);
    expect(snippet).toContain('useQuarryQuery(');
    expect(snippet).toContain(`baseUrl: '${gateway.url}'`);

    // The token answers only the fixed region, from its origin and from a server; not another
    // region, nor from an origin it does not list.
    const ask = (params: Record<string, unknown>, origin?: string) =>
      call('POST', '/v1/query', {
        key: token,
        body: { source: 'sales-by-region', params },
        ...(origin === undefined ? {} : { origin }),
      });
    const fromOrigin = await ask({ year: 2024 }, OTHER_ORIGIN);
    expect(fromOrigin.status).toBe(200);
    expect(regionsOf(fromOrigin.body)).toEqual(['EU']);
    expect(regionsOf((await ask({ year: 2024 })).body)).toEqual(['EU']);
    const other = await ask({ year: 2024, region: 'US' });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
    expect((await ask({ year: 2024 }, 'https://evil.example.net')).status).toBe(403);
    // A test token is tied to the console session that minted it: logging out ends it.
    await page.getByRole('button', { name: 'Log out' }).click();
    await poll(() => page.evaluate(() => window.location.hash)).toContain('login');
    await poll(async () => (await ask({ year: 2024 })).status).toBe(401);
    expect(errors).toEqual([]);
  }, 120_000);
});
