// The console's files at / and /assets/, and the HTML security headers every HTML answer gets
// (one middleware): a CSP with no inline script and frame-ancestors 'none', X-Frame-Options.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGateway, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
let consoleDir: string;

beforeAll(async () => {
  consoleDir = await mkdtemp(join(tmpdir(), 'quarry-console-dist-'));
  await mkdir(join(consoleDir, 'assets'));
  await writeFile(
    join(consoleDir, 'index.html'),
    '<!doctype html><script type="module" src="/assets/app-1.js"></script>',
  );
  await writeFile(join(consoleDir, 'assets', 'app-1.js'), 'console.log(1);');
  await writeFile(join(consoleDir, 'assets', 'secret.txt'), 'not a console file');
  tg = await createTestGateway({ QUARRY_CONSOLE_DIR: consoleDir });
});
afterAll(async () => {
  await tg?.close();
  await rm(consoleDir, { recursive: true, force: true });
});

describe('the console files', () => {
  it('serves index.html at / with the HTML security headers', async () => {
    const res = await tg.call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves the bundle with a year of caching, and nothing else of the directory', async () => {
    const js = await tg.call('GET', '/assets/app-1.js');
    expect(js.status).toBe(200);
    expect(js.text).toBe('console.log(1);');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(js.headers.get('content-security-policy')).toBeNull();
    for (const path of ['/assets/secret.txt', '/assets/..%2Findex.html', '/assets/nope.js']) {
      const res = await tg.call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code).toBe('NOT_FOUND');
    }
  });

  it('keeps /docs under its own policy, as strict on scripts and framing', async () => {
    const res = await tg.call('GET', '/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
  });

  it('answers 404 in the error envelope when the console is not built', async () => {
    const bare = await createTestGateway({ QUARRY_CONSOLE_DIR: join(consoleDir, 'missing') });
    try {
      const res = await bare.call('GET', '/');
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe('NOT_FOUND');
      expect(res.json.error.message).toMatch(/npm run build -w @quarry\/console/);
    } finally {
      await bare.close();
    }
  });
});
