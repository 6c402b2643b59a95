// Where a process's resident memory is, from /proc/<pid>/smaps: WebAssembly linear memory
// (PGlite's Postgres runs in one), each mapped file (node's own binary, DuckDB's library, …), and
// the rest of the anonymous memory (V8's heap and code, native allocations such as DuckDB's and
// the malloc arenas of V8's compiler threads, stacks). Linux only.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/** One process's resident memory by kind, in bytes. */
export interface ResidentBreakdown {
  readonly rssBytes: number;
  /** WebAssembly linear memories: what of them is resident (their reserved size is far larger). */
  readonly wasmBytes: number;
  /** Mapped files by base name (e.g. `node`, `libduckdb.so`), resident bytes of each. */
  readonly files: Readonly<Record<string, number>>;
  /** Every other anonymous mapping (V8 heap and code, malloc, stacks). */
  readonly otherAnonBytes: number;
}

interface Mapping {
  readonly start: bigint;
  readonly end: bigint;
  readonly perms: string;
  readonly path: string;
  rssKiB: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/;
/** V8 reserves a WebAssembly memory's address space up front, 8 GiB and more on 64-bit. */
const WASM_RESERVATION = 1n << 30n;

function parse(text: string): Mapping[] {
  const mappings: Mapping[] = [];
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line);
    if (header !== null) {
      mappings.push({
        start: BigInt(`0x${header[1]}`),
        end: BigInt(`0x${header[2]}`),
        perms: header[3] ?? '',
        path: (header[4] ?? '').trim(),
        rssKiB: 0,
      });
      continue;
    }
    const last = mappings[mappings.length - 1];
    if (last !== undefined && line.startsWith('Rss:')) last.rssKiB = Number(line.split(/\s+/)[1]);
  }
  return mappings;
}

/**
 * A WebAssembly memory is an anonymous read-write mapping (its current size) directly followed
 * by an inaccessible one (the rest of V8's reservation, at least 1 GiB): no other allocation in
 * a Node process looks like that.
 */
function isWasmMemory(mapping: Mapping, next: Mapping | undefined): boolean {
  return (
    mapping.path === '' &&
    mapping.perms.startsWith('rw') &&
    next !== undefined &&
    next.path === '' &&
    next.perms.startsWith('---') &&
    next.start === mapping.end &&
    next.end - mapping.start >= WASM_RESERVATION
  );
}

/** Reads `pid`'s smaps; undefined when the process is gone or /proc does not exist. */
export function readResidentBreakdown(pid: number): ResidentBreakdown | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return undefined;
  }
  const mappings = parse(text);
  let rss = 0;
  let wasm = 0;
  let otherAnon = 0;
  const files: Record<string, number> = {};
  mappings.forEach((mapping, i) => {
    const bytes = mapping.rssKiB * 1024;
    const name = basename(mapping.path);
    rss += bytes;
    if (mapping.path.startsWith('/')) files[name] = (files[name] ?? 0) + bytes;
    else if (isWasmMemory(mapping, mappings[i + 1])) wasm += bytes;
    else otherAnon += bytes;
  });
  return { rssBytes: rss, wasmBytes: wasm, files, otherAnonBytes: otherAnon };
}
