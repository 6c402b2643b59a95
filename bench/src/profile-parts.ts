// Where a gateway request's CPU goes, by part of its path (node:http, auth, metering, the pg
// driver, …), from either of two profiles of the gateway process:
//
// - a V8 `.cpuprofile` (`--cpu-prof`): JavaScript frames only, sampled on the wall clock. A
//   sample taken while the process was preempted (a `writev` that woke a PostgreSQL backend on
//   the same core, say) counts in full, so a part that writes to a socket can look several times
//   its CPU cost;
// - `perf script` of a `perf record -g` on the process (`--perf`): CPU time only, kernel frames
//   included (a socket write's TCP stack counts for whoever wrote), V8's helper threads (GC,
//   compilers) apart from the main thread. JavaScript frames are named by `--perf-basic-prof`.
//
// The gateway runs as esbuild's bundle (as `npm start` runs it), so a frame's URL is the bundle's;
// it is read back through the bundle's linked source map (`<file>.map`) to the source file, whose
// path decides the part.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/** Parts of a request's path, by where a frame's code lives; first match wins. */
const PARTS: readonly (readonly [RegExp, string])[] = [
  [/connectors\/postgres\//, 'warehouse: Postgres connector (its wire messages, row parsing)'],
  [
    /sdk-connector\/|cockatiel|gateway\/src\/connections\//,
    'warehouse: connector runtime (pool, deadline, breaker)',
  ],
  [/gateway\/src\/money\//, 'metering and group commit (JS)'],
  [
    /\/(pg|pg-protocol|pg-pool|pg-types)\/|gateway\/src\/store\//,
    'pg driver (store batches; warehouse wire)',
  ],
  [/prom-client|gateway\/src\/observability\//, 'metrics and access log'],
  [/gateway\/src\/cache\//, 'result cache, ETag'],
  [/gateway\/src\/(auth|rate-limit|security)\//, 'auth and rate limit'],
  [/gateway\/src\/(query|catalog|validation|errors)\//, 'query module (decide, pipeline, answer, headers)'],
  [/gateway\/src\/(adapters|http|mcp)\//, 'fast-path adapter'],
  [/gateway\/src\/services\//, 'services (usage alerts, analytic health)'],
  [/gateway\/src\//, 'gateway, elsewhere'],
  [/^node:_http_/, 'node:http (parse, headers, write)'],
];

export const OTHER = 'other node internals (streams, sockets, timers, promise jobs)';
export const HELPERS = "V8's helper threads (concurrent GC, compilers)";
export const GC = 'garbage collector';

/** The part a source URL belongs to, or undefined. */
export function partOfSource(source: string): string | undefined {
  for (const [pattern, part] of PARTS) if (pattern.test(source)) return part;
  return undefined;
}

/**
 * Reads a frame's URL and position back to its source: a bundle file's through its linked map
 * (`<file>.map`, cached per file), anything else as it is. Lines and columns are 1-based.
 */
export function sourceResolver(): (url: string, line: number, column: number) => string {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string) => {
    let map = maps.get(file);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
      maps.set(file, map);
    }
    return map;
  };
  return (url, line, column) => {
    const file = url.startsWith('file://') ? fileURLToPath(url) : url;
    if (!file.endsWith('.mjs') || !file.startsWith('/')) return url;
    const entry = mapOf(file)?.findEntry(line - 1, column - 1) as { originalSource?: string } | undefined;
    return entry?.originalSource ?? url;
  };
}

/** µs per request of each part, largest first, and its share of the whole. */
export interface PartRow {
  readonly part: string;
  readonly usPerRequest: number;
  readonly share: number;
}

function rows(parts: Map<string, number>, total: number, toUs: (weight: number) => number): PartRow[] {
  return [...parts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([part, weight]) => ({ part, usPerRequest: toUs(weight), share: total === 0 ? 0 : weight / total }));
}

/** A frame of `perf script -F tid,ip,sym`: `JS:*name url:line:col` for V8's code. */
const JS_FRAME = /^JS:[*~^]?(\S*) (\S+):(\d+):(\d+)$/;
const GC_FRAME = /Scavenge|Heap::|MarkCompact|Sweeper|ConcurrentMarking|IncrementalMarking|MinorMC/;

/** CPU by part of a `perf record`, and by the frame each main-thread sample was taken in. */
export interface PerfSummary {
  readonly parts: PartRow[];
  /**
   * Self CPU per main-thread leaf frame, largest first: a JavaScript function as `name source`
   * (read back through the bundle's map), anything else by its symbol (a builtin, a kernel or
   * libuv function).
   */
  readonly self: PartRow[];
}

/**
 * CPU by part from `perf script -F tid,ip,sym` output of `perf record -g -p <pid>`: every sample
 * of the main thread (tid = pid) goes to the part of the nearest frame on its stack whose source
 * names one (its kernel frames included); a sample under V8's garbage collector on the main
 * thread to the GC; any other thread's to V8's helpers. `cpuUsPerRequest` (the process's CPU per
 * request from /proc) scales the sample counts.
 */
export function perfParts(
  script: string,
  pid: number,
  cpuUsPerRequest: number,
  resolve = sourceResolver(),
): PerfSummary {
  const parts = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  for (const block of script.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim() !== '');
    const head = lines[0];
    if (head === undefined) continue;
    total += 1;
    let part: string | undefined;
    if (Number(head.trim().split(/\s+/)[0]) !== pid) part = HELPERS;
    else {
      const frames = lines.slice(1).map((line) => line.trim().replace(/^[0-9a-f]+\s+/, ''));
      const leaf = frames[0];
      if (leaf !== undefined) {
        const js = JS_FRAME.exec(leaf);
        const name =
          js === null
            ? leaf
            : `${js[1] || '(anonymous)'} ${resolve(js[2] as string, Number(js[3]), Number(js[4]))}`;
        self.set(name, (self.get(name) ?? 0) + 1);
      }
      for (const frame of frames) {
        const js = JS_FRAME.exec(frame);
        if (js !== null) {
          part = partOfSource(resolve(js[2] as string, Number(js[3]), Number(js[4])));
          if (part !== undefined) break;
        } else if (GC_FRAME.test(frame)) {
          part = GC;
          break;
        }
      }
    }
    part ??= OTHER;
    parts.set(part, (parts.get(part) ?? 0) + 1);
  }
  const toUs = (samples: number) => (total === 0 ? 0 : (cpuUsPerRequest * samples) / total);
  return { parts: rows(parts, total, toUs), self: rows(self, total, toUs) };
}

export interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  readonly children?: readonly number[];
}

/** The measured window on CLOCK_MONOTONIC, in µs (V8's profile clock), and its requests. */
export interface ProfileWindow {
  readonly fromUs: number;
  readonly toUs: number;
  readonly requests: number;
}

export interface CpuProfileSummary {
  readonly parts: PartRow[];
  /** Self time per function (`name source:line`), largest first. */
  readonly self: PartRow[];
  /** Time with the function on the stack, largest first. */
  readonly inclusive: PartRow[];
}

/**
 * Time by part and per function of a V8 .cpuprofile, only the samples inside `window`, as µs per
 * request (the profiler's own overhead included). Wall-clock samples: see the file's header.
 */
export function cpuProfileParts(
  profile: { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] },
  window: ProfileWindow,
  resolve = sourceResolver(),
): CpuProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const sourceOf = new Map<number, string>();
  const source = (node: ProfileNode) => {
    let known = sourceOf.get(node.id);
    if (known === undefined) {
      const { url, lineNumber, columnNumber } = node.callFrame;
      known = url === '' ? '' : resolve(url, lineNumber + 1, columnNumber + 1);
      sourceOf.set(node.id, known);
    }
    return known;
  };
  const labelOf = (node: ProfileNode) => {
    const where = source(node).replace(/^(?:\.\.\/)+|^.*\/(?:node_modules|work\/[^/]+)\//, '');
    return `${node.callFrame.functionName || '(anonymous)'}${where === '' ? '' : ` ${where}`}`;
  };
  const partOf = (node: ProfileNode) => {
    const { functionName } = node.callFrame;
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return GC;
    if (functionName === '(program)') return '(program: V8 and native, unattributed)';
    return partOfSource(source(node));
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const parts = new Map<string, number>();
  let total = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i] as number);
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (node === undefined || at < window.fromUs || at > window.toUs) continue;
    const label = labelOf(node);
    self.set(label, (self.get(label) ?? 0) + dt);
    total += dt;
    const onStack = new Set<string>();
    let part: string | undefined;
    for (let up: number | undefined = node.id; up !== undefined; up = parent.get(up)) {
      const n = byId.get(up);
      if (n === undefined) continue;
      onStack.add(labelOf(n));
      part ??= partOf(n);
    }
    const where = part ?? OTHER;
    parts.set(where, (parts.get(where) ?? 0) + dt);
    for (const l of onStack) inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
  }
  const toUs = (us: number) => us / window.requests;
  return {
    parts: rows(parts, total, toUs),
    self: rows(self, total, toUs),
    inclusive: rows(inclusive, total, toUs),
  };
}

/** Rows as the bench prints them: µs per request, share, label. */
export function formatRows(list: readonly PartRow[], top = list.length): string {
  return list
    .slice(0, top)
    .map(
      (r) =>
        `${r.usPerRequest.toFixed(1).padStart(7)} µs ${(100 * r.share).toFixed(1).padStart(5)}%  ${r.part}`,
    )
    .join('\n');
}
