// The gateway's log lines: JSON for machines, one readable line each for a person at a terminal
// (QUARRY_LOG_FORMAT, `auto` by the TTY), secrets redacted either way; and `npm start`'s banner.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { demoBanner } from '../bootstrap/banner.js';
import { createLogger } from './logger.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return { stream, text: () => text };
}

describe('log lines', () => {
  it('are JSON by default, with secrets redacted', () => {
    const out = capture();
    createLogger({ level: 'info', destination: out.stream }).info({ password: 'hunter2hunter2' }, 'hello');
    const line = JSON.parse(out.text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, msg: 'hello', password: '***', service: 'quarry-gateway' });
  });

  it('are one readable line each when pretty, time and message first, secrets still redacted', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', destination: out.stream, pretty: true });
    logger.info({ url: 'http://127.0.0.1:8787', password: 'hunter2hunter2' }, 'listening');
    const text = out.text();
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(() => JSON.parse(text)).toThrow();
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO/);
    expect(text).toContain('listening');
    expect(text).toContain('http://127.0.0.1:8787');
    expect(text).not.toContain('hunter2hunter2');
  });
});

describe("npm start's banner", () => {
  it('says where the console, the docs and the demo key are, and three next steps, in a few short lines', () => {
    const banner = demoBanner('http://127.0.0.1:8787', 'qry_live_demo', '.quarry/demo-key');
    expect(banner).toContain('Console   http://127.0.0.1:8787/');
    expect(banner).toContain('API docs  http://127.0.0.1:8787/docs');
    expect(banner).toContain('Demo key  qry_live_demo  (also in .quarry/demo-key)');
    expect(banner.match(/^ {2}[123]\. /gm)).toHaveLength(3);
    expect(banner.trim().split('\n').length).toBeLessThanOrEqual(12);
  });
});
