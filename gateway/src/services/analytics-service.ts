// Owners' analytics: every write is validated whole (schema, params, connection, template
// against its params), its SQL checked against the warehouse without running it (where the
// connector can describe a statement: unknown tables and columns, statements that are not
// read-only), creates or versions the analytic, and reports what changed and the columns it will
// produce. The same path serves the owner API and the YAML directory loaded at start.
import { isDeepStrictEqual } from 'node:util';
import {
  type ColumnInfo,
  type ConnectorPlugin,
  type DescribeRequest,
  isConnectorError,
  type ParamValues,
  parseTemplate,
  type StatementDescription,
} from '@quarry/sdk-connector';
import { type AnalyticDefinition, parseAnalyticDefinition } from '../catalog/analytic-definition.js';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError, type ApiErrorDetail } from '../errors/api-error.js';
import { MAX_CREDITS } from '../query/price-limit.js';
import {
  type Analytic,
  type AnalyticRepository,
  type AnalyticVersion,
  analyticNameTaken,
} from '../store/analytic-repository.js';
import type { ChangeLogRepository } from '../store/change-log-repository.js';
import type { ConnectionRepository } from '../store/connection-repository.js';

export type DeployOutcome = 'created' | 'updated' | 'unchanged';

/** How a write checks its definition. */
export interface CheckOptions {
  /**
   * Check the SQL against the warehouse (default true). The analytics directory loaded at start
   * skips it (the demo warehouse may still be being seeded, and the files are the operator's), and
   * an owner may (`?check=false`, e.g. while the warehouse is down): the connectors still run
   * every statement read-only.
   */
  readonly checkSql?: boolean;
}

/** A validated definition and, when the warehouse was asked, the columns it will produce. */
export interface CheckedDefinition {
  readonly definition: AnalyticDefinition;
  /** Undefined when the SQL was not checked (skipped, or the connector cannot describe). */
  readonly columns: readonly ColumnInfo[] | undefined;
}

export interface DeployResult {
  readonly outcome: DeployOutcome;
  readonly analytic: Analytic;
  readonly columns: readonly ColumnInfo[] | undefined;
}

/** What a deploy would do, without doing it. */
export interface DryRunResult {
  readonly outcome: DeployOutcome;
  readonly definition: AnalyticDefinition;
  readonly columns: readonly ColumnInfo[] | undefined;
}

/**
 * Describes a statement on one of the owner's connections without running it (the connection
 * service, with owner-facing errors); undefined when its connector cannot describe.
 */
export type StatementDescriber = (
  ownerId: string,
  connectionId: string,
  request: DescribeRequest,
) => Promise<StatementDescription | undefined>;

export interface AnalyticsService {
  /**
   * Validates a definition for `ownerId` and checks its SQL against the warehouse;
   * INVALID_REQUEST listing every problem.
   */
  validate(ownerId: string, input: unknown, options?: CheckOptions): Promise<CheckedDefinition>;
  create(ownerId: string, input: unknown, options?: CheckOptions): Promise<Analytic>;
  /** A new version of the owner's analytic `name` (the body's name must match or be absent). */
  update(ownerId: string, name: string, input: unknown): Promise<Analytic>;
  /** Creates, versions, or leaves alone when the definition is unchanged (idempotent deploys). */
  deploy(ownerId: string, input: unknown, options?: CheckOptions): Promise<DeployResult>;
  /** Everything deploy checks, and what it would do, with nothing written. */
  dryRun(ownerId: string, input: unknown): Promise<DryRunResult>;
  get(ownerId: string, name: string, version?: number): Promise<Analytic>;
  list(ownerId: string): Promise<readonly Analytic[]>;
  versions(ownerId: string, name: string): Promise<readonly AnalyticVersion[]>;
  delete(ownerId: string, name: string): Promise<void>;
  /**
   * Drops every cached answer of the owner's analytic `name`: durably logged first, so every
   * other instance drops its own from the change feed, then here at once.
   */
  purgeCache(ownerId: string, name: string): Promise<void>;
}

export interface AnalyticsServiceOptions {
  readonly analytics: AnalyticRepository;
  readonly changes: Pick<ChangeLogRepository, 'append'>;
  /** QUARRY_MAX_PRICE: the highest price a definition may set, in credits a call. */
  readonly maxPrice: number;
  /**
   * The longest `limits.timeout_ms` an analytic may have (QUARRY_MAX_ANALYTIC_TIMEOUT_MS; unset:
   * the schema's own 600,000): the shutdown grace and the proxy's timeouts are set from it.
   */
  readonly maxTimeoutMs?: number;
  /** QUARRY_PRICE_NOTICE_HOURS in ms: how long a price rise waits (default 0: at once). */
  readonly priceNoticeMs?: number;
  /** Drops this instance's cached answers of an analytic (every version of it). */
  readonly dropCached: (analyticId: string) => void;
  readonly connections: Pick<ConnectionRepository, 'findByName'>;
  readonly plugins: PluginRegistry;
  /** Checks SQL against the warehouse at every write; without it, no SQL is checked. */
  readonly describe?: StatementDescriber;
}

/** How long a deploy waits for the warehouse to check its SQL. */
const DESCRIBE_TIMEOUT_MS = 15_000;

/** A typed NULL for every param: what a statement check binds. */
function typedNulls(definition: AnalyticDefinition): ParamValues {
  const values: Record<string, ParamValues[string]> = {};
  for (const [name, spec] of Object.entries(definition.params)) {
    values[name] =
      spec.type === 'array'
        ? { type: spec.items.type, array: true, value: null }
        : { type: spec.type, array: false, value: null };
  }
  return values;
}

/** The columns an insights shape names, which the result must have. */
function insightColumns(definition: AnalyticDefinition): readonly string[] {
  const insights = definition.insights;
  if (insights === undefined) return [];
  switch (insights.shape) {
    case 'single':
      return [];
    case 'keyed':
      return [insights.key];
    case 'series':
      return [insights.x, ...insights.y, ...(insights.series === undefined ? [] : [insights.series])];
    case 'totals':
      return insights.columns;
  }
}

function invalid(problems: readonly ApiErrorDetail[]): ApiError {
  const summary = problems.map((p) => `${p.field}: ${p.message}`).join('; ');
  return new ApiError('INVALID_REQUEST', `Invalid analytic definition: ${summary}`, { details: problems });
}

/** The stored form: the validated definition with defaults applied, as plain JSON. */
function stored(definition: AnalyticDefinition): Record<string, unknown> {
  return JSON.parse(JSON.stringify(definition)) as Record<string, unknown>;
}

export function createAnalyticsService(options: AnalyticsServiceOptions): AnalyticsService {
  const { analytics, connections, plugins, changes, dropCached } = options;

  /** Asks the warehouse about the SQL: refused statements become INVALID_REQUEST naming why. */
  async function checkSql(
    ownerId: string,
    connectionId: string,
    definition: AnalyticDefinition,
    dialect: ConnectorPlugin['dialect'],
  ): Promise<readonly ColumnInfo[] | undefined> {
    if (options.describe === undefined) return undefined;
    let description: StatementDescription | undefined;
    try {
      description = await options.describe(ownerId, connectionId, {
        template: parseTemplate(definition.sql, dialect),
        params: typedNulls(definition),
        timeoutMs: DESCRIBE_TIMEOUT_MS,
      });
    } catch (error) {
      if (isConnectorError(error, 'QUERY_FAILED') && error.driverCode === 'READ_ONLY') {
        // The SDK's own read-only check (the one every call passes), not the warehouse's words.
        throw invalid([{ field: 'sql', message: `is not a read-only query: ${error.message}` }]);
      }
      if (isConnectorError(error, 'QUERY_FAILED') || isConnectorError(error, 'PARAM_INVALID')) {
        const said = error.warehouseMessage ?? error.message;
        throw invalid([{ field: 'sql', message: `the warehouse refused it: ${said}` }]);
      }
      throw error;
    }
    if (description === undefined) return undefined;
    const problems: ApiErrorDetail[] = [];
    if (!description.readOnly) {
      problems.push({
        field: 'sql',
        message: 'is not a read-only query: an analytic may only read (SELECT), never change data or schema',
      });
    } else if (description.columns.length === 0) {
      problems.push({
        field: 'sql',
        message: 'returns no columns: an analytic is a query that returns rows',
      });
    } else {
      const names = new Set(description.columns.map((c) => c.name));
      for (const column of insightColumns(definition).filter((c) => !names.has(c))) {
        problems.push({
          field: 'insights',
          message: `names the column "${column}", which the query does not return (it returns ${[...names].join(', ')})`,
        });
      }
    }
    if (problems.length > 0) throw invalid(problems);
    return description.columns;
  }

  async function insert(ownerId: string, definition: AnalyticDefinition): Promise<Analytic> {
    return analytics.create({
      accountId: ownerId,
      name: definition.name,
      definition: stored(definition),
      visibility: definition.visibility,
      sharedWith: definition.shared_with ?? [],
      price: definition.price,
    });
  }

  async function version(ownerId: string, definition: AnalyticDefinition): Promise<Analytic> {
    return analytics.update(ownerId, definition.name, {
      definition: stored(definition),
      visibility: definition.visibility,
      sharedWith: definition.shared_with ?? [],
      price: definition.price,
      priceNoticeMs: options.priceNoticeMs ?? 0,
    });
  }

  /** What deploying `definition` would do for `ownerId`; CONFLICT when the name is another's. */
  async function outcomeOf(
    ownerId: string,
    definition: AnalyticDefinition,
  ): Promise<{ outcome: DeployOutcome; existing: Analytic | null }> {
    const existing = await analytics.get(definition.name);
    if (existing === null) return { outcome: 'created', existing };
    // The same answer as create's for a private or deleted name: nothing beyond "taken".
    if (existing.accountId !== ownerId) throw analyticNameTaken(definition.name);
    if (isDeepStrictEqual(existing.definition, stored(definition))) return { outcome: 'unchanged', existing };
    return { outcome: 'updated', existing };
  }

  const service: AnalyticsService = {
    async validate(ownerId, input, checkOptions = {}) {
      // Every check runs even when an earlier one failed, so the owner sees every problem at once.
      const parsed = parseAnalyticDefinition(input);
      const problems: ApiErrorDetail[] = parsed.ok
        ? []
        : parsed.problems.map((p) => ({ field: p.field, message: p.message }));
      const raw: Record<string, unknown> =
        input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
      let dialect: ConnectorPlugin['dialect'] | undefined;
      let connectionId: string | undefined;
      if (typeof raw.connection === 'string' && raw.connection !== '') {
        const connection = await connections.findByName(ownerId, raw.connection);
        const plugin = connection ? plugins.get(connection.type) : undefined;
        if (!connection)
          problems.push({ field: 'connection', message: `you have no connection named "${raw.connection}"` });
        else if (!plugin)
          problems.push({
            field: 'connection',
            message: `connector type "${connection.type}" is not installed`,
          });
        else {
          dialect = plugin.dialect;
          connectionId = connection.id;
        }
      }
      if (typeof raw.sql === 'string') {
        const declared = raw.params !== null && typeof raw.params === 'object' ? (raw.params as object) : {};
        try {
          // Without a known connection the SDK's generic dialect still finds the :names.
          const names = parseTemplate(raw.sql, dialect).names;
          for (const n of names.filter((name) => !Object.hasOwn(declared, name))) {
            problems.push({ field: 'sql', message: `:${n} is used but not declared in params` });
          }
        } catch (error) {
          problems.push({ field: 'sql', message: (error as Error).message });
        }
      }
      // `max_credits` is the caller's price limit wherever params travel flat (a GET's query string,
      // an MCP tool's arguments): a param of that name would be ambiguous, so none may be declared.
      if (raw.params !== null && typeof raw.params === 'object' && Object.hasOwn(raw.params, MAX_CREDITS)) {
        problems.push({
          field: `params.${MAX_CREDITS}`,
          message: `is reserved: callers send "${MAX_CREDITS}" to cap what a call may cost; name the param otherwise`,
        });
      }
      // Money: no analytic charges more than the operator allows (docs/design.md §4).
      if (typeof raw.price === 'number' && raw.price > options.maxPrice) {
        problems.push({
          field: 'price',
          message: `${raw.price} credits is above this gateway's most, ${options.maxPrice} credits a call`,
        });
      }
      // A query longer than the operator allows would be cut by a restart or by the proxy.
      const limits =
        raw.limits !== null && typeof raw.limits === 'object' ? (raw.limits as { timeout_ms?: unknown }) : {};
      if (
        options.maxTimeoutMs !== undefined &&
        typeof limits.timeout_ms === 'number' &&
        limits.timeout_ms > options.maxTimeoutMs
      ) {
        problems.push({
          field: 'limits.timeout_ms',
          message: `${limits.timeout_ms} ms is above this gateway's longest, ${options.maxTimeoutMs} ms (QUARRY_MAX_ANALYTIC_TIMEOUT_MS)`,
        });
      }
      if (!parsed.ok || problems.length > 0) throw invalid(problems);
      const definition = parsed.definition;
      const columns =
        checkOptions.checkSql === false || connectionId === undefined || dialect === undefined
          ? undefined
          : await checkSql(ownerId, connectionId, definition, dialect);
      return { definition, columns };
    },

    async create(ownerId, input, checkOptions = {}) {
      const { definition } = await service.validate(ownerId, input, checkOptions);
      return insert(ownerId, definition);
    },

    async update(ownerId, name, input) {
      const body = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
      if (body.name !== undefined && body.name !== name) {
        throw invalid([{ field: 'name', message: 'renaming is not supported; create a new analytic' }]);
      }
      const { definition } = await service.validate(ownerId, { ...body, name });
      return version(ownerId, definition);
    },

    async deploy(ownerId, input, checkOptions = {}) {
      const { definition, columns } = await service.validate(ownerId, input, checkOptions);
      const { outcome, existing } = await outcomeOf(ownerId, definition);
      if (outcome === 'unchanged' && existing !== null) return { outcome, analytic: existing, columns };
      const analytic =
        outcome === 'created' ? await insert(ownerId, definition) : await version(ownerId, definition);
      return { outcome, analytic, columns };
    },

    async dryRun(ownerId, input) {
      const { definition, columns } = await service.validate(ownerId, input);
      const { outcome } = await outcomeOf(ownerId, definition);
      return { outcome, definition, columns };
    },

    async get(ownerId, name, version) {
      const analytic = await analytics.get(name, version === undefined ? undefined : { version });
      if (!analytic || analytic.accountId !== ownerId) {
        throw new ApiError(
          'NOT_FOUND',
          `You have no analytic "${name}"${version === undefined ? '' : ` at version ${version}`}.`,
        );
      }
      return analytic;
    },
    list: (ownerId) => analytics.listByOwner(ownerId),
    versions: (ownerId, name) => analytics.listVersions(ownerId, name),
    delete: (ownerId, name) => analytics.delete(ownerId, name),
    async purgeCache(ownerId, name) {
      const analytic = await service.get(ownerId, name);
      // Durable first: every other instance reads it from the change log and drops its own.
      await changes.append('analytic_cache', analytic.id);
      dropCached(analytic.id);
    },
  };
  return service;
}
