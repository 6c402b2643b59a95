// The gateway's caps on an owner's DuckDB (DriverContext.resources): DuckDB runs inside the
// gateway process and by default takes every core and 80% of the machine's memory, so an owner
// connection gets the smaller of what its config asks and what the gateway allows.
import type { ResourceCaps } from '@quarry/sdk-connector';

/** Bytes per unit of DuckDB's memory_limit syntax (KB is 1000, KiB 1024). */
const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** `512MB` → 512,000,000; undefined for text the config schema would not accept. */
export function memoryLimitBytes(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(text.trim());
  const unit = match === null ? undefined : UNITS[(match[2] ?? '').toLowerCase()];
  return match === null || unit === undefined ? undefined : Number(match[1]) * unit;
}

/** The thread count to open with: the config's, capped; the cap itself when the config is silent. */
export function cappedThreads(
  threads: number | undefined,
  caps: ResourceCaps | undefined,
): number | undefined {
  const cap = caps?.maxThreads;
  if (cap === undefined) return threads;
  return Math.min(threads ?? cap, cap);
}

/** The memory_limit to open with (DuckDB syntax): the config's, capped; the cap when it is silent. */
export function cappedMemoryLimit(
  limit: string | undefined,
  caps: ResourceCaps | undefined,
): string | undefined {
  const cap = caps?.maxMemoryBytes;
  if (cap === undefined) return limit;
  const asked = limit === undefined ? undefined : memoryLimitBytes(limit);
  if (asked !== undefined && asked <= cap) return limit;
  return `${Math.floor(cap / 1024)}KiB`;
}
