// @quarry/client/react: useQuarryQuery, a React hook that runs an analytic through a client and
// follows the component: it aborts the request in flight when the component unmounts or the
// query changes (params are compared by value), never sets state after unmount, and can
// refresh on an interval.
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { EmbedTokenProvider } from './embed-token-source.js';
import { createQuarryClient, type QuarryClient } from './quarry-client.js';
import type { QueryParams, QueryResult } from './types.js';

export interface UseQuarryQueryOptions {
  /** false: do not query (yet); `loading` stays false. Default true. */
  readonly enabled?: boolean;
  /** Query again this long after each answer or error; unset or 0: never. */
  readonly refreshIntervalMs?: number;
  /** Refuse calls costing more than this (`max_credits`): the error is a PriceAboveLimitError. */
  readonly maxCredits?: number;
}

export interface QuarryQueryState<Row, Insights> {
  /** The last answer for this source and params (kept while a refetch runs). */
  readonly data: QueryResult<Row, Insights> | undefined;
  /** The last call's error (a QuarryError subclass for anything the gateway refused), else undefined. */
  readonly error: Error | undefined;
  /** A call for this source and params is in flight. */
  readonly loading: boolean;
  /** Queries again now (the call in flight, if any, is aborted). */
  readonly refetch: () => void;
}

interface Settled<Row, Insights> {
  /** Which query `data`/`error` belong to. */
  readonly key: string | undefined;
  readonly data: QueryResult<Row, Insights> | undefined;
  readonly error: Error | undefined;
  readonly loading: boolean;
}

/** JSON with object keys sorted, so params equal by value give the same key. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/**
 * What a web page embedding analytics gives the hook instead of a client: the gateway and a
 * function fetching a fresh embed token from the page's own backend (docs/embedding.md). The
 * hook keeps one client per `baseUrl` and provider: keep the provider stable (useCallback or a
 * module-level function).
 */
export interface EmbeddedQuarry {
  readonly baseUrl: string;
  readonly embedToken: EmbedTokenProvider;
}

/**
 * Runs `client.query(source, params)` and keeps its state. `client` may also be `{ baseUrl,
 * embedToken }`: a page then holds no key, only short-lived embed tokens its backend mints. A new `params` object with the same
 * values does not query again; different values abort the call in flight and start another.
 */
export function useQuarryQuery<Row = Record<string, unknown>, Insights = unknown>(
  clientOrEmbed: QuarryClient | EmbeddedQuarry,
  source: string,
  params: QueryParams = {},
  options: UseQuarryQueryOptions = {},
): QuarryQueryState<Row, Insights> {
  const embedded = 'embedToken' in clientOrEmbed ? clientOrEmbed : undefined;
  const given = embedded === undefined ? (clientOrEmbed as QuarryClient) : undefined;
  const baseUrl = embedded?.baseUrl;
  const provider = embedded?.embedToken;
  // An embedded client is kept per baseUrl and provider, not per object literal.
  const client = useMemo(
    () => given ?? createQuarryClient({ baseUrl: baseUrl ?? '', embedToken: provider as EmbedTokenProvider }),
    [given, baseUrl, provider],
  );
  const enabled = options.enabled ?? true;
  const refreshIntervalMs = options.refreshIntervalMs ?? 0;
  const maxCredits = options.maxCredits;
  const paramsJson = stableJson(params);
  const key = `${source}\u0000${paramsJson}`;
  const [settled, setSettled] = useState<Settled<Row, Insights>>({
    key: undefined,
    data: undefined,
    error: undefined,
    loading: false,
  });
  const [runs, setRuns] = useState(0);
  const refetch = useCallback(() => setRuns((n) => n + 1), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `runs` is how refetch and the refresh timer re-run this effect.
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const scheduleRefresh = () => {
      if (refreshIntervalMs > 0) timer = setTimeout(() => setRuns((n) => n + 1), refreshIntervalMs);
    };
    setSettled((s) => ({
      key,
      data: s.key === key ? s.data : undefined,
      error: s.key === key ? s.error : undefined,
      loading: true,
    }));
    client
      .query<Row, Insights>(source, JSON.parse(paramsJson) as QueryParams, {
        signal: controller.signal,
        ...(maxCredits === undefined ? {} : { maxCredits }),
      })
      .then(
        (data) => {
          if (controller.signal.aborted) return;
          setSettled({ key, data, error: undefined, loading: false });
          scheduleRefresh();
        },
        (error: unknown) => {
          if (controller.signal.aborted) return;
          const err = error instanceof Error ? error : new Error(String(error));
          setSettled((s) => ({ key, data: s.key === key ? s.data : undefined, error: err, loading: false }));
          scheduleRefresh();
        },
      );
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, source, paramsJson, key, enabled, refreshIntervalMs, maxCredits, runs]);

  // Before the effect has run for a new query, report it as loading, not the old query's data.
  if (settled.key !== key) {
    return { data: undefined, error: undefined, loading: enabled, refetch };
  }
  return { data: settled.data, error: settled.error, loading: enabled && settled.loading, refetch };
}
