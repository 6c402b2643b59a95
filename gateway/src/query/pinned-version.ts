// Pinned versions on the query path (issue 31, docs/analytics.md#versions): a source `name@3`
// calls version 3 of `name`. This module reads the pin out of a source, refuses a version its owner
// retired (410 VERSION_SUNSET), writes the deprecation headers of a deprecated one (RFC 9745
// `Deprecation`, RFC 8594 `Sunset`), and remembers pinned calls, at most once an hour per version,
// caller and instance, so a version callers still use is kept (store/analytic-version-repository.ts).
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import type { PinnedCall } from '../store/analytic-version-repository.js';

/** A source split at its pin: `name@3` → {name, version: 3}; `name` → {name}. */
export interface PinnedSource {
  readonly name: string;
  readonly version: number | undefined;
}

const VERSION = /^[1-9][0-9]{0,8}$/;

/** The version a pin's text names (`3` of `name@3`); undefined when it is not a version number. */
export function pinnedVersion(text: string): number | undefined {
  return VERSION.test(text) ? Number(text) : undefined;
}

/** Splits `source` at `@`; INVALID_REQUEST when what follows is not a version number. */
export function parseSource(source: string): PinnedSource {
  const at = source.indexOf('@');
  if (at < 0) return { name: source, version: undefined };
  const version = pinnedVersion(source.slice(at + 1));
  if (version === undefined) {
    const shown = source.length > 100 ? `${source.slice(0, 100)}…` : source;
    throw new ApiError(
      'INVALID_REQUEST',
      `"${shown}" is not a source: pin a version as name@N, N a version number (1, 2, …), or call the name alone for the current version.`,
      { details: [{ field: 'source', message: 'expected name or name@version' }] },
    );
  }
  return { name: source.slice(0, at), version };
}

/** VERSION_SUNSET once the version's sunset has passed; a call of it runs nothing and is not charged. */
export function refuseSunset(entry: CatalogEntry, nowMs: number): void {
  const deprecation = entry.deprecation;
  if (deprecation === undefined || nowMs < deprecation.sunsetAt) return;
  const sunset = new Date(deprecation.sunsetAt).toISOString();
  throw new ApiError(
    'VERSION_SUNSET',
    `Version ${entry.version} of "${entry.name}" was retired by its owner on ${sunset}. Its current version is ${entry.currentVersion}: call "${entry.name}" or pin "${entry.name}@${entry.currentVersion}".`,
    {
      details: [
        { field: 'version', value: entry.version, message: `retired on ${sunset}` },
        { field: 'current_version', value: entry.currentVersion, message: 'the version to call instead' },
      ],
    },
  );
}

/** Adds `Deprecation` (`@<unix seconds>`) and `Sunset` (HTTP-date) to a deprecated version's answer. */
export function deprecationHeaders(entry: CatalogEntry, headers: Record<string, string>): void {
  const deprecation = entry.deprecation;
  if (deprecation === undefined) return;
  headers.deprecation = `@${Math.floor(deprecation.deprecatedAt / 1000)}`;
  headers.sunset = new Date(deprecation.sunsetAt).toUTCString();
}

/** Where pinned calls are remembered (the store's analyticVersions.recordCalls). */
export interface PinnedCallSink {
  recordCalls(calls: readonly PinnedCall[]): Promise<void>;
}

export interface PinnedCalls {
  /** Remembers that `accountId` called `entry` by version (no I/O most of the time; never throws). */
  record(entry: CatalogEntry, accountId: string): void;
}

/** How often one (version, caller) is written from one instance: retention counts in days. */
const RECORD_EVERY_MS = 3600_000;
/** Remembered writes; the memo starts over when full. */
const MAX_REMEMBERED = 10_000;

export function createPinnedCalls(
  sink: PinnedCallSink,
  onError: (error: unknown) => void,
  now: () => number = Date.now,
): PinnedCalls {
  const written = new Map<string, number>();
  return {
    record(entry, accountId) {
      const key = `${entry.analyticId}\n${entry.version}\n${accountId}`;
      const at = now();
      const last = written.get(key);
      if (last !== undefined && at - last < RECORD_EVERY_MS) return;
      if (written.size >= MAX_REMEMBERED) written.clear();
      written.set(key, at);
      sink
        .recordCalls([{ analyticId: entry.analyticId, version: entry.version, accountId, at: new Date(at) }])
        .catch((error: unknown) => {
          // Tried again on the next call: a lost record only shortens how long the version is kept.
          written.delete(key);
          onError(error);
        });
    },
  };
}
