// OWASP API9:2023 Improper Inventory Management. The OpenAPI document a running gateway serves is
// its whole surface: every documented operation answers (no dead entry), the API surfaces one
// might guess at (old or next versions, debug and internal routes, dotfiles) do not exist, and
// every operation says who may call it. (That every route the app serves is documented is checked
// in-process by gateway/src/app.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttackWorld, createAttackWorld } from './support/world.js';

let w: AttackWorld;
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is read as plain JSON.
let doc: any;

beforeAll(async () => {
  w = await createAttackWorld({ label: 'inventory', warehouse: false });
  const res = await w.call('GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
}, 180_000);
afterAll(async () => {
  await w?.stop();
}, 60_000);

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const NO_ROUTE = /^No route for /;

describe('API9 improper inventory management', () => {
  it('answers every documented operation (none is a dead entry)', async () => {
    const operations: [string, string][] = [];
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of METHODS) if (item[method]) operations.push([method.toUpperCase(), path]);
    }
    expect(operations.length).toBeGreaterThan(30);
    for (const [method, template] of operations) {
      const path = template.replace(/\{[^}]+\}/g, 'sec-probe');
      const res = await w.call(method, path, method === 'GET' || method === 'DELETE' ? {} : { json: {} });
      const message: string = res.body?.error?.message ?? '';
      expect(
        NO_ROUTE.test(message) || res.status === 405,
        `${method} ${template}: ${res.status} ${message}`,
      ).toBe(false);
    }
  });

  it('serves no undocumented API surface: old or next versions, debug, internal, dotfiles', async () => {
    const documented = new Set(Object.keys(doc.paths));
    for (const path of [
      '/v0/query',
      '/v2/query',
      '/api/v1/query',
      '/v1/internal',
      '/v1/debug',
      '/v1/admin',
      '/v1/admin/config',
      '/v1/admin/debug',
      '/v1/accounts/export',
      '/v1/users',
      '/debug/pprof',
      '/graphql',
      '/actuator/env',
      '/server-status',
      '/v1/openapi.yaml',
      '/.well-known/security.txt.bak',
      '/oauth/authorize',
    ]) {
      expect(documented.has(path)).toBe(false);
      for (const method of ['GET', 'POST']) {
        const res = await w.call(method, path, { key: w.attacker.key });
        expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(404);
      }
    }
    for (const path of ['/.env', '/.git/config', '/package.json', '/secret-key.json', '/gateway.lock']) {
      const res = await w.call('GET', path);
      expect(res.text).not.toMatch(/QUARRY_|\[core\]|"dependencies"|"keys"|^\d+$/);
      // Nothing of the host's files: the API's 404, or at most the console's page.
      expect(res.status === 404 || /^text\/html/.test(res.headers.get('content-type') ?? ''), path).toBe(
        true,
      );
    }
  });

  it('says who may call each operation, and which server it describes', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBeTruthy();
    expect(doc.servers?.[0]?.url).toBe(w.gateway.url);
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        expect(op.summary, `${method} ${path}`).toBeTruthy();
        // Either public (security: []) or naming schemes the document defines.
        const security = (op.security ?? doc.security ?? []) as Record<string, unknown>[];
        for (const requirement of security) {
          for (const scheme of Object.keys(requirement))
            expect(schemes, `${method} ${path}`).toContain(scheme);
        }
        if (path.startsWith('/v1/admin/') || path.startsWith('/v1/owner/') || path === '/v1/keys') {
          expect(security.length, `${method} ${path} must require a credential`).toBeGreaterThan(0);
          expect(
            security.some((r) => Object.keys(r).length === 0),
            `${method} ${path}`,
          ).toBe(false);
        }
      }
    }
  });
});
