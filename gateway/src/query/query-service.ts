// The query path: resolve the analytic the caller may see, validate and type its params, run it
// in place through the connection's connector, and shape the answer (docs/design.md §2–3).

import {
  type ColumnInfo,
  type Connector,
  coerceQueryParams,
  isConnectorError,
  type JsonValue,
  type ParamValues,
  type RowSink,
  type StreamSummary,
  validateParams,
} from '@quarry/sdk-connector';
import { ANALYTIC_NAME } from '../catalog/analytic-definition.js';
import type { Catalog, CatalogEntry } from '../catalog/catalog.js';
import { shapeInsights } from '../catalog/insights.js';
import type { ConnectionBreakers } from '../connections/connection-breakers.js';
import { ApiError } from '../errors/api-error.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import { mayCall } from '../store/analytic-repository.js';
import { parseSource, pinnedVersion } from './pinned-version.js';
import type { ResultBudget } from './result-budget.js';

export interface ConnectorSource {
  /** The live connector of a stored connection (created on first use, pooled). */
  connectorFor(accountId: string, connectionId: string): Promise<Connector>;
}

export interface QueryCaller {
  readonly accountId: string;
}

/** A warehouse result, shaped: the rows, the owner's insights and typed columns (docs/design.md §2). */
export interface QueryResult {
  readonly source: string;
  readonly version: number;
  readonly results: readonly Readonly<Record<string, JsonValue>>[];
  readonly insights?: JsonValue;
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly rowCount: number;
  readonly truncated: boolean;
}

export interface QueryService {
  /**
   * The analytic `source` names (`name`, or `name@3` for version 3) as `caller` may see it;
   * SOURCE_NOT_FOUND otherwise (same for hidden and absent; an unknown version of a visible
   * analytic names its current version), INVALID_REQUEST for a malformed pin.
   */
  resolve(caller: QueryCaller, source: string): Promise<CatalogEntry>;
  /** `resolve` from the catalog's cache only, synchronously; undefined when it would need the store or refuse. */
  peek(caller: QueryCaller, source: string): CatalogEntry | undefined;
  /** Validates JSON params against the analytic's schema; INVALID_PARAMS lists each problem. */
  params(entry: CatalogEntry, input: Readonly<Record<string, unknown>>): ParamValues;
  /** Coerces query-string values by the schema, then validates them. */
  queryStringParams(
    entry: CatalogEntry,
    query: Readonly<Record<string, string | readonly string[]>>,
  ): ParamValues;
  /** Runs the analytic in its owner's warehouse and shapes the result; `maxRows` caps a preview. */
  execute(
    entry: CatalogEntry,
    params: ParamValues,
    signal?: AbortSignal,
    maxRows?: number,
  ): Promise<QueryResult>;
  /**
   * Runs the analytic and hands its rows to `sink` as they come (pages and exports: the sink
   * writes them to the result store), within the analytic's time limit and `max_rows`.
   */
  stream(
    entry: CatalogEntry,
    params: ParamValues,
    sink: RowSink,
    signal?: AbortSignal,
    /** An asynchronous job's own time limit (query/jobs.ts), instead of the analytic's `timeout_ms`. */
    timeoutMs?: number,
  ): Promise<StreamSummary>;
}

export interface QueryServiceDeps {
  readonly catalog: Catalog;
  readonly connectors: ConnectorSource;
  readonly metrics?: GatewayMetrics;
  /** QUARRY_MAX_RESULT_BYTES: the bound on one result (unset: none). */
  readonly maxResultBytes?: number;
  /**
   * The longest a query may run (QUARRY_MAX_ANALYTIC_TIMEOUT_MS): an analytic deployed with a
   * longer `timeout_ms` before the operator lowered it is cut to this (unset: its own).
   */
  readonly maxTimeoutMs?: number;
  /** A circuit per connection: warehouse calls go through it (unset: none). */
  readonly breakers?: ConnectionBreakers;
  /** Result bytes in flight, process-wide: each warehouse query takes its expected size first (unset: none). */
  readonly budget?: ResultBudget;
  /**
   * Told how each warehouse query of an analytic ended (the analytic health alerts); `failed`
   * only for the warehouse's faults, not a caller who hung up or a result too large.
   */
  readonly onOutcome?: (entry: CatalogEntry, failed: boolean) => void;
}

/** Outcomes that say nothing about the warehouse's health. */
const NOT_THE_WAREHOUSE: ReadonlySet<string> = new Set(['QUERY_ABORTED', 'RESULT_TOO_LARGE']);

/** Most analytics whose last result size is remembered (then the memo starts over). */
const MAX_SIZE_MEMO = 10_000;
/** Least a query takes from the budget. */
const MIN_EXPECTED_BYTES = 16 * 1024;

/** A shaped result's weight as the runtime counts it, from its first row: rows × (row JSON + 64). */
function approximateBytes(rows: readonly Readonly<Record<string, JsonValue>>[]): number {
  const first = rows[0];
  return first === undefined ? 0 : rows.length * (JSON.stringify(first).length + 64);
}

/**
 * What a streamed query takes from the result-bytes budget while it runs: its batches in flight
 * (the connector's batch, the store's write buffer), not the result, which goes to disk.
 */
const STREAM_IN_FLIGHT_BYTES = 2 * 1024 * 1024;

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_ROWS = 10_000;

function columnsOf(columns: readonly ColumnInfo[]): { name: string; type: string }[] {
  return columns.map((c) => ({ name: c.name, type: c.type }));
}

/** 8388608 → `8 MiB`, 65536 → `64 KiB`, 1500 → `1500 bytes`. */
function byteSize(bytes: number): string {
  for (const [unit, size] of [
    ['MiB', 1024 * 1024],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** RESULT_TOO_LARGE, naming the bound the way an operator set it. */
function tooLarge(maxBytes: number | undefined): ApiError {
  const bound = maxBytes === undefined ? '' : ` (${byteSize(maxBytes)})`;
  return new ApiError(
    'RESULT_TOO_LARGE',
    `The analytic's result for these params is larger than this gateway answers${bound}. ` +
      'Narrow the params, or ask its owner to lower its max_rows.',
  );
}

export function createQueryService(deps: QueryServiceDeps): QueryService {
  // The size of each analytic's last result: what its next query takes from the budget.
  const lastSize = new Map<string, number>();
  const expectedBytes = (analyticId: string) =>
    Math.max(MIN_EXPECTED_BYTES, lastSize.get(analyticId) ?? deps.maxResultBytes ?? MIN_EXPECTED_BYTES);
  const notFound = (name: string) =>
    new ApiError('SOURCE_NOT_FOUND', `No analytic named "${name}" exists, or you do not have access to it.`);

  function validated(entry: CatalogEntry, input: Readonly<Record<string, unknown>>): ParamValues {
    const result = validateParams(entry.definition.params, input);
    if (!result.ok) {
      const details = result.issues.map((i) => ({ param: i.param, message: i.message }));
      const summary = details.map((d) => `${d.param}: ${d.message}`).join('; ');
      throw new ApiError('INVALID_PARAMS', `Invalid params: ${summary}`, { details });
    }
    return result.values;
  }

  return {
    async resolve(caller, source) {
      const { name, version } = parseSource(source);
      // A name no analytic can have is answered without a lookup.
      if (!ANALYTIC_NAME.test(name)) throw notFound(name.length > 100 ? `${name.slice(0, 100)}…` : name);
      const entry = await deps.catalog.resolve(name, version);
      if (entry !== undefined && mayCall(entry.ownerId, entry.visibility, entry.sharedWith, caller.accountId))
        return entry;
      if (entry === undefined && version !== undefined) {
        // Only a caller who may see the analytic learns that the name exists and its version.
        const current = await deps.catalog.resolve(name);
        if (
          current !== undefined &&
          mayCall(current.ownerId, current.visibility, current.sharedWith, caller.accountId)
        ) {
          throw new ApiError(
            'SOURCE_NOT_FOUND',
            `Version ${version} of "${name}" does not exist or is no longer kept. Its current version is ${current.version}: call "${name}" or pin "${name}@${current.version}".`,
            {
              details: [
                { field: 'current_version', value: current.version, message: 'the version to call instead' },
              ],
            },
          );
        }
      }
      throw notFound(name);
    },

    peek(caller, source) {
      // A malformed pin peeks at nothing (version -1): resolve refuses it.
      const at = source.indexOf('@');
      const entry =
        at < 0
          ? deps.catalog.peek(source)
          : deps.catalog.peek(source.slice(0, at), pinnedVersion(source.slice(at + 1)) ?? -1);
      if (entry === undefined) return undefined;
      return mayCall(entry.ownerId, entry.visibility, entry.sharedWith, caller.accountId) ? entry : undefined;
    },

    params: validated,

    queryStringParams(entry, query) {
      return validated(entry, coerceQueryParams(entry.definition.params, query));
    },

    async stream(entry, params, sink, signal, jobTimeoutMs) {
      const connector = await deps.connectors.connectorFor(entry.ownerId, entry.connectionId);
      const limits = entry.definition.limits;
      const started = performance.now();
      let outcome = 'ok';
      const run = () =>
        connector.stream(
          {
            template: entry.template,
            params,
            timeoutMs:
              jobTimeoutMs ??
              Math.min(
                limits?.timeout_ms ?? DEFAULT_TIMEOUT_MS,
                deps.maxTimeoutMs ?? Number.POSITIVE_INFINITY,
              ),
            maxRows: limits?.max_rows ?? DEFAULT_MAX_ROWS,
            ...(limits?.max_bytes_billed === undefined ? {} : { maxBytesBilled: limits.max_bytes_billed }),
            // Only what a session that cannot stream holds at once.
            ...(deps.maxResultBytes === undefined ? {} : { maxResultBytes: deps.maxResultBytes }),
            ...(signal ? { signal } : {}),
          },
          sink,
        );
      const guarded = () =>
        deps.breakers === undefined ? run() : deps.breakers.run(entry.connectionId, run);
      try {
        if (deps.budget === undefined) return await guarded();
        const taken = deps.budget.take(STREAM_IN_FLIGHT_BYTES, signal);
        const release = typeof taken === 'function' ? taken : await taken;
        try {
          return await guarded();
        } finally {
          release();
        }
      } catch (error) {
        outcome = (error as { code?: string }).code ?? 'error';
        if (isConnectorError(error) && error.code === 'RESULT_TOO_LARGE') throw tooLarge(deps.maxResultBytes);
        throw error;
      } finally {
        deps.metrics?.connectorDuration
          .series(entry.connectionType, outcome)
          .observe((performance.now() - started) / 1000);
      }
    },

    async execute(entry, params, signal, maxRows) {
      const connector = await deps.connectors.connectorFor(entry.ownerId, entry.connectionId);
      const limits = entry.definition.limits;
      const started = performance.now();
      let outcome = 'ok';
      try {
        const run = () =>
          connector.query({
            template: entry.template,
            params,
            timeoutMs: Math.min(
              limits?.timeout_ms ?? DEFAULT_TIMEOUT_MS,
              deps.maxTimeoutMs ?? Number.POSITIVE_INFINITY,
            ),
            maxRows: Math.min(limits?.max_rows ?? DEFAULT_MAX_ROWS, maxRows ?? Number.POSITIVE_INFINITY),
            ...(limits?.max_bytes_billed === undefined ? {} : { maxBytesBilled: limits.max_bytes_billed }),
            ...(deps.maxResultBytes === undefined ? {} : { maxResultBytes: deps.maxResultBytes }),
            ...(signal ? { signal } : {}),
          });
        const guarded = () =>
          deps.breakers === undefined ? run() : deps.breakers.run(entry.connectionId, run);
        let result: Awaited<ReturnType<typeof run>>;
        if (deps.budget === undefined) {
          result = await guarded();
        } else {
          const taken = deps.budget.take(expectedBytes(entry.analyticId), signal);
          const release = typeof taken === 'function' ? taken : await taken;
          try {
            result = await guarded();
          } finally {
            release();
          }
          if (lastSize.size >= MAX_SIZE_MEMO) lastSize.clear();
          lastSize.set(entry.analyticId, approximateBytes(result.rows));
        }
        const insights = shapeInsights(entry.definition.insights, result.rows);
        return {
          source: entry.name,
          version: entry.version,
          results: result.rows,
          ...(insights === undefined ? {} : { insights }),
          columns: columnsOf(result.columns),
          rowCount: result.rowCount,
          truncated: result.truncated,
        };
      } catch (error) {
        outcome = (error as { code?: string }).code ?? 'error';
        if (isConnectorError(error) && error.code === 'RESULT_TOO_LARGE') throw tooLarge(deps.maxResultBytes);
        throw error;
      } finally {
        if (deps.onOutcome !== undefined && !NOT_THE_WAREHOUSE.has(outcome))
          deps.onOutcome(entry, outcome !== 'ok');
        deps.metrics?.connectorDuration
          .series(entry.connectionType, outcome)
          .observe((performance.now() - started) / 1000);
      }
    },
  };
}
