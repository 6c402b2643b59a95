// Owners' analytics: every write is validated whole (schema, params, connection, template
// against its params), creates or versions the analytic, and reports what changed. The same
// path serves the owner API and the YAML directory loaded at start.
import { isDeepStrictEqual } from 'node:util';
import { type ConnectorPlugin, parseTemplate } from '@quarry/sdk-connector';
import { type AnalyticDefinition, parseAnalyticDefinition } from '../catalog/analytic-definition.js';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError, type ApiErrorDetail } from '../errors/api-error.js';
import {
  type Analytic,
  type AnalyticRepository,
  type AnalyticVersion,
  analyticNameTaken,
} from '../store/analytic-repository.js';
import type { ChangeLogRepository } from '../store/change-log-repository.js';
import type { ConnectionRepository } from '../store/connection-repository.js';

export type DeployOutcome = 'created' | 'updated' | 'unchanged';

export interface AnalyticsService {
  /** Validates a definition for `ownerId`; INVALID_REQUEST listing every problem. */
  validate(ownerId: string, input: unknown): Promise<AnalyticDefinition>;
  create(ownerId: string, input: unknown): Promise<Analytic>;
  /** A new version of the owner's analytic `name` (the body's name must match or be absent). */
  update(ownerId: string, name: string, input: unknown): Promise<Analytic>;
  /** Creates, versions, or leaves alone when the definition is unchanged (idempotent deploys). */
  deploy(
    ownerId: string,
    input: unknown,
  ): Promise<{ readonly outcome: DeployOutcome; readonly analytic: Analytic }>;
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
  /** Drops this instance's cached answers of an analytic (every version of it). */
  readonly dropCached: (analyticId: string) => void;
  readonly connections: Pick<ConnectionRepository, 'findByName'>;
  readonly plugins: PluginRegistry;
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

  const service: AnalyticsService = {
    async validate(ownerId, input) {
      // Every check runs even when an earlier one failed, so the owner sees every problem at once.
      const parsed = parseAnalyticDefinition(input);
      const problems: ApiErrorDetail[] = parsed.ok
        ? []
        : parsed.problems.map((p) => ({ field: p.field, message: p.message }));
      const raw: Record<string, unknown> =
        input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
      let dialect: ConnectorPlugin['dialect'] | undefined;
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
        else dialect = plugin.dialect;
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
      // Money: no analytic charges more than the operator allows (DESIGN.md §4).
      if (typeof raw.price === 'number' && raw.price > options.maxPrice) {
        problems.push({
          field: 'price',
          message: `${raw.price} credits is above this gateway's most, ${options.maxPrice} credits a call`,
        });
      }
      if (!parsed.ok || problems.length > 0) throw invalid(problems);
      return parsed.definition;
    },

    async create(ownerId, input) {
      const definition = await service.validate(ownerId, input);
      return analytics.create({
        accountId: ownerId,
        name: definition.name,
        definition: stored(definition),
        visibility: definition.visibility,
        sharedWith: definition.shared_with ?? [],
      });
    },

    async update(ownerId, name, input) {
      const body = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
      if (body.name !== undefined && body.name !== name) {
        throw invalid([{ field: 'name', message: 'renaming is not supported; create a new analytic' }]);
      }
      const definition = await service.validate(ownerId, { ...body, name });
      return analytics.update(ownerId, name, {
        definition: stored(definition),
        visibility: definition.visibility,
        sharedWith: definition.shared_with ?? [],
      });
    },

    async deploy(ownerId, input) {
      const definition = await service.validate(ownerId, input);
      const existing = await analytics.get(definition.name);
      if (existing === null) {
        return { outcome: 'created', analytic: await service.create(ownerId, input) };
      }
      // The same answer as create's for a private or deleted name: nothing beyond "taken".
      if (existing.accountId !== ownerId) throw analyticNameTaken(definition.name);
      if (isDeepStrictEqual(existing.definition, stored(definition)))
        return { outcome: 'unchanged', analytic: existing };
      return { outcome: 'updated', analytic: await service.update(ownerId, definition.name, input) };
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
