// bench:profile's "where the µs go" tables rest on this attribution: a frame of the gateway's
// bundle read back to the wrong source, or a kernel frame not given to the code that made the
// syscall, would send a maintainer after the wrong part.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cpuProfileParts,
  GC,
  HELPERS,
  OTHER,
  partOfSource,
  perfParts,
  sourceResolver,
} from './profile-parts.js';

const dir = mkdtempSync(join(tmpdir(), 'profile-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A two-line "bundle" and its linked map: line 1 from gateway/src/money/metering.ts, line 2
 * (from column 10 on) from gateway/src/auth/authenticator.ts. Mappings: `AAAA` = column 0 of
 * source 0, line 0; `;AACA` = next line, source 1; `,UAAU` = 10 columns on, same source.
 */
const bundle = join(dir, 'gateway-server.mjs');
writeFileSync(bundle, 'function reserve(){}\nfunction a(){};function peek(){}\n');
writeFileSync(
  `${bundle}.map`,
  JSON.stringify({
    version: 3,
    sources: ['../../../gateway/src/money/metering.ts', '../../../gateway/src/auth/authenticator.ts'],
    names: [],
    mappings: 'AAAA;ACAA,UAAU',
  }),
);
const url = pathToFileURL(bundle).href;

describe('sourceResolver', () => {
  it("reads a bundle frame back to its source through the bundle's map", () => {
    const resolve = sourceResolver();
    expect(resolve(url, 1, 1)).toBe('../../../gateway/src/money/metering.ts');
    expect(resolve(url, 2, 12)).toBe('../../../gateway/src/auth/authenticator.ts');
    expect(partOfSource(resolve(url, 1, 1))).toBe('metering and group commit (JS)');
  });

  it('leaves a URL it has no map for as it is', () => {
    const resolve = sourceResolver();
    expect(resolve('node:_http_outgoing', 10, 1)).toBe('node:_http_outgoing');
    expect(resolve(pathToFileURL(join(dir, 'none.mjs')).href, 1, 1)).toBe(
      pathToFileURL(join(dir, 'none.mjs')).href,
    );
  });
});

describe('perfParts', () => {
  const pid = 4242;
  // `perf script -F tid,ip,sym`: a header line (the thread), then the stack, leaf first.
  const sample = (tid: number, ...frames: string[]) =>
    `${tid} \n${frames.map((f, i) => `\t${(0x1000 + i).toString(16)} ${f}`).join('\n')}\n`;
  const script = [
    // A kernel socket write under node:http's end(): node:http's.
    sample(pid, 'tcp_sendmsg_locked', '__GI___writev', 'JS:*end node:_http_outgoing:1034:45', 'uv_run'),
    sample(pid, 'tcp_sendmsg_locked', '__GI___writev', 'JS:*end node:_http_outgoing:1034:45', 'uv_run'),
    // The bundle's metering code, under the bundle's authenticator: the nearest part wins.
    sample(pid, 'Builtins_StringAdd_CheckNone', `JS:*reserve ${url}:1:1`, `JS:*peek ${url}:2:12`),
    // GC on the main thread, and a helper thread's work.
    sample(pid, 'v8::internal::Scavenger::ScavengeObject', 'v8::internal::Heap::CollectGarbage'),
    sample(pid + 1, 'v8::internal::ConcurrentMarking::RunMajor', 'start_thread'),
    // Nothing that names a part.
    sample(pid, 'epoll_wait', 'uv__io_poll', 'uv_run'),
  ].join('\n');

  it('gives each CPU sample to the nearest part on its stack and scales by the CPU per request', () => {
    const { parts: rows, self } = perfParts(script, pid, 60);
    expect(Object.fromEntries(rows.map((r) => [r.part, r.usPerRequest]))).toEqual({
      'node:http (parse, headers, write)': 20,
      'metering and group commit (JS)': 10,
      [GC]: 10,
      [HELPERS]: 10,
      [OTHER]: 10,
    });
    expect(rows[0]?.part).toBe('node:http (parse, headers, write)');
    expect(rows.reduce((sum, r) => sum + r.share, 0)).toBeCloseTo(1, 10);
    // Self: the main thread's leaf frames (the helper thread's sample is not one of them).
    expect(Object.fromEntries(self.map((r) => [r.part, r.usPerRequest]))).toEqual({
      tcp_sendmsg_locked: 20,
      Builtins_StringAdd_CheckNone: 10,
      'v8::internal::Scavenger::ScavengeObject': 10,
      epoll_wait: 10,
    });
  });

  it('names a JavaScript leaf frame by its function and source', () => {
    const leaf = [`${pid} `, `\t1000 JS:*reserve ${url}:1:1`, ''].join('\n');
    const { self } = perfParts(leaf, pid, 8, (_url, line) => `gateway/src/money/meter.ts#${line}`);
    expect(self).toEqual([{ part: 'reserve gateway/src/money/meter.ts#1', usPerRequest: 8, share: 1 }]);
  });

  it('reads nothing from no samples', () => {
    expect(perfParts('', pid, 50)).toEqual({ parts: [], self: [] });
  });
});

describe('cpuProfileParts', () => {
  const frame = (functionName: string, frameUrl: string, lineNumber = 0, columnNumber = 0) => ({
    functionName,
    url: frameUrl,
    lineNumber,
    columnNumber,
  });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 3, 5] },
      { id: 2, callFrame: frame('peek', url, 1, 11), children: [4] },
      { id: 3, callFrame: frame('(idle)', '') },
      { id: 4, callFrame: frame('writev', '') },
      { id: 5, callFrame: frame('(garbage collector)', '') },
    ],
    startTime: 1_000,
    // Samples at 1,010 (before the window), then 1,020 … 1,060.
    samples: [4, 4, 3, 5, 4, 2],
    timeDeltas: [10, 10, 10, 10, 10, 10],
  };

  it('counts only the window, gives a frame to its nearest part, and divides by its requests', () => {
    const { parts, self, inclusive } = cpuProfileParts(profile, { fromUs: 1_015, toUs: 1_060, requests: 2 });
    expect(Object.fromEntries(parts.map((r) => [r.part, r.usPerRequest]))).toEqual({
      'auth and rate limit': 15,
      '(idle)': 5,
      [GC]: 5,
    });
    expect(self.find((r) => r.part === 'writev')?.usPerRequest).toBe(10);
    // Labels name the source, not the bundle.
    expect(inclusive.find((r) => r.part === 'peek gateway/src/auth/authenticator.ts')?.usPerRequest).toBe(15);
  });
});
