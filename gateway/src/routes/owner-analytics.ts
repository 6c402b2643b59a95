// Owner analytics: create, update (a new version each time), deploy (idempotent), list, show
// (any version), version history, deprecating a version callers pin, delete, and dropping an
// analytic's cached answers.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AnalyticDefinitionSchema } from '../catalog/analytic-definition.js';
import type { AppEnv } from '../http/app-env.js';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  CONFLICT_ERROR,
  NOT_FOUND_ERROR,
  QUERY_ERRORS,
} from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson, readJsonValue } from '../http/read-json.js';
import {
  AnalyticSchema,
  AnalyticVersionSchema,
  analyticHealthJson,
  analyticJson,
  DeprecatedVersionSchema,
  deprecatedVersionJson,
  versionJson,
} from '../http/resources.js';
import { pathParam, route } from '../http/route.js';

const NameParam = z.object({ name: z.string() });
const VersionParams = z.object({
  name: z.string(),
  version: z.coerce.number().int().min(1).max(999_999_999),
});
const DeprecationBody = z
  .object({
    sunset: z.iso.datetime({ offset: true }).openapi({
      example: '2027-06-30T00:00:00Z',
      description:
        'When calls of the version start being refused (410 `VERSION_SUNSET`): ahead, and at most 366 days ahead',
    }),
  })
  .strict()
  .openapi('DeprecationRequest');
const ColumnsSchema = z.array(z.object({ name: z.string(), type: z.string() })).openapi({
  description:
    "The columns the query will produce, as the warehouse described them without running it; absent when the connection's engine cannot describe a statement",
});
const columnsJson = (columns: readonly { name: string; type: string }[] | undefined) =>
  columns === undefined ? {} : { columns: columns.map((c) => ({ name: c.name, type: c.type })) };
const SQL_CHECK =
  "The SQL is checked against the warehouse without running it: a table or column it does not know, or a statement that is not read-only, is a 400 `INVALID_REQUEST` whose `details` hold the warehouse's own message (secrets removed); a warehouse that cannot be reached is a 503. `?check=false` skips the check.";
const CheckQuery = z.object({
  check: z.enum(['true', 'false']).optional().openapi({
    description:
      'Check the SQL against the warehouse (default `true`); `false` saves it unchecked, e.g. while the warehouse is down (it still runs read-only)',
  }),
});
/** The write's check options from `?check=`. */
const checkOptionsOf = (c: { req: { query(name: string): string | undefined } }) => ({
  checkSql: c.req.query('check') !== 'false',
});
const one = { 'application/json': { schema: z.object({ analytic: AnalyticSchema }) } };
/** What writing a definition can answer: its checks (400), a name taken (409), a warehouse down (503). */
const DEPLOY_ERRORS = { ...AUTHED_ERRORS, ...BODY_ERRORS, ...CONFLICT_ERROR, 503: QUERY_ERRORS[503] };
const DeployOutcomeSchema = z.enum(['created', 'updated', 'unchanged']);
const definitionBody = {
  required: true,
  content: { 'application/json': { schema: AnalyticDefinitionSchema.meta({ id: 'AnalyticDefinition' }) } },
};

/** The JSON body as a definition named by the path (a body that is not an object is left to fail validation). */
async function definitionNamed(c: Context<AppEnv>, name: string): Promise<unknown> {
  const body = await readJsonValue(c);
  return body !== null && typeof body === 'object' ? { ...(body as object), name } : body;
}

export function registerOwnerAnalyticsRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/owner/analytics',
      tags: ['Owner'],
      summary: 'Create an analytic (version 1)',
      description: SQL_CHECK,
      security: BEARER,
      request: { query: CheckQuery, body: definitionBody },
      responses: {
        201: { description: 'Created', content: one },
        ...DEPLOY_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const analytic = await c.var.services.analytics.create(
        c.var.principal.accountId,
        await readJsonValue(c),
        checkOptionsOf(c),
      );
      c.var.services.catalog.invalidate(analytic.name);
      return c.json({ analytic: analyticJson(analytic) }, 201);
    },
  );
  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/owner/analytics/{name}',
      tags: ['Owner'],
      summary:
        'Deploy an analytic: creates it, adds a version when the definition changed, or changes nothing',
      description: SQL_CHECK,
      security: BEARER,
      request: { params: NameParam, query: CheckQuery, body: definitionBody },
      responses: {
        200: {
          description: 'Deployed',
          content: {
            'application/json': {
              schema: z.object({
                analytic: AnalyticSchema,
                outcome: DeployOutcomeSchema,
                columns: ColumnsSchema.optional(),
              }),
            },
          },
        },
        ...DEPLOY_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      const input = await definitionNamed(c, name);
      const { outcome, analytic, columns } = await c.var.services.analytics.deploy(
        c.var.principal.accountId,
        input,
        checkOptionsOf(c),
      );
      if (outcome !== 'unchanged') c.var.services.catalog.invalidate(name);
      return c.json({ analytic: analyticJson(analytic), outcome, ...columnsJson(columns) });
    },
  );
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/owner/analytics/{name}/dry-run',
      tags: ['Owner'],
      summary: 'Check a definition as a deploy would, and say what the deploy would do, saving nothing',
      description: `Every check of a deploy runs (definition, params, connection, price, name). ${SQL_CHECK}`,
      security: BEARER,
      request: { params: NameParam, body: definitionBody },
      responses: {
        200: {
          description: 'The definition would deploy',
          content: {
            'application/json': {
              schema: z.object({
                name: z.string(),
                outcome: DeployOutcomeSchema.openapi({
                  description: 'What deploying it would do',
                }),
                definition: AnalyticDefinitionSchema.meta({ id: 'AnalyticDefinition' }),
                columns: ColumnsSchema.optional(),
              }),
            },
          },
        },
        ...DEPLOY_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      const input = await definitionNamed(c, name);
      const { outcome, definition, columns } = await c.var.services.analytics.dryRun(
        c.var.principal.accountId,
        input,
      );
      return c.json({
        name,
        outcome,
        definition: JSON.parse(JSON.stringify(definition)),
        ...columnsJson(columns),
      });
    },
  );
  route(
    app,
    createRoute({
      method: 'patch',
      path: '/v1/owner/analytics/{name}',
      tags: ['Owner'],
      summary: 'Update an analytic with a whole new definition (always a new version)',
      security: BEARER,
      request: { params: NameParam, body: definitionBody },
      responses: {
        200: { description: 'Updated', content: one },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
        503: QUERY_ERRORS[503],
      },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      const analytic = await c.var.services.analytics.update(
        c.var.principal.accountId,
        name,
        await readJsonValue(c),
      );
      c.var.services.catalog.invalidate(name);
      return c.json({ analytic: analyticJson(analytic) });
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/analytics',
      tags: ['Owner'],
      summary: 'List your analytics at their current versions, with their health',
      security: BEARER,
      responses: {
        200: {
          description: 'Analytics',
          content: { 'application/json': { schema: z.object({ analytics: z.array(AnalyticSchema) }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const owner = c.var.principal.accountId;
      const list = await c.var.services.analytics.list(owner);
      const health = await c.var.services.webhooks.analyticHealth(
        owner,
        list.map((a) => a.id),
      );
      return c.json({
        analytics: list.map((a) => ({ ...analyticJson(a), health: analyticHealthJson(health.get(a.id)) })),
      });
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/analytics/{name}',
      tags: ['Owner'],
      summary: 'Show an analytic (current version, or ?version=N)',
      security: BEARER,
      request: { params: NameParam, query: z.object({ version: z.coerce.number().int().min(1).optional() }) },
      responses: { 200: { description: 'Analytic', content: one }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      const raw = c.req.query('version');
      const version = raw === undefined ? undefined : Number(raw);
      const analytic = await c.var.services.analytics.get(
        c.var.principal.accountId,
        pathParam(c, 'name'),
        version !== undefined && Number.isSafeInteger(version) && version > 0 ? version : undefined,
      );
      const health = await c.var.services.webhooks.analyticHealth(c.var.principal.accountId, [analytic.id]);
      return c.json({
        analytic: { ...analyticJson(analytic), health: analyticHealthJson(health.get(analytic.id)) },
      });
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/analytics/{name}/versions',
      tags: ['Owner'],
      summary: 'Every kept version of an analytic',
      security: BEARER,
      request: { params: NameParam },
      responses: {
        200: {
          description: 'Versions',
          content: {
            'application/json': {
              schema: z.object({ versions: z.array(AnalyticVersionSchema) }),
            },
          },
        },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const versions = await c.var.services.analytics.versions(
        c.var.principal.accountId,
        pathParam(c, 'name'),
      );
      return c.json({ versions: versions.map(versionJson) });
    },
  );
  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/owner/analytics/{name}/versions/{version}/deprecation',
      tags: ['Owner'],
      summary: 'Deprecate a version callers pin, with its sunset date',
      description:
        'Calls of the version (`name@N`) then carry `Deprecation` (RFC 9745, `@<unix seconds>`) and `Sunset` (RFC 8594) headers, and from the sunset on are refused with 410 `VERSION_SUNSET` naming the current version. The version is kept at least until its sunset. Setting it again moves the sunset and keeps the first deprecation date. The current version cannot be deprecated (409): deploy a new one first.',
      security: BEARER,
      request: {
        params: VersionParams,
        body: { required: true, content: { 'application/json': { schema: DeprecationBody } } },
      },
      responses: {
        200: {
          description: 'Deprecated',
          content: {
            'application/json': { schema: z.object({ deprecated_version: DeprecatedVersionSchema }) },
          },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      const body = await readJson(c, DeprecationBody);
      const deprecated = await c.var.services.store.analyticVersions.deprecate(
        c.var.principal.accountId,
        name,
        Number(pathParam(c, 'version')),
        new Date(body.sunset),
      );
      c.var.services.catalog.invalidate(name);
      return c.json({ deprecated_version: deprecatedVersionJson(deprecated) });
    },
  );
  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/owner/analytics/{name}/versions/{version}/deprecation',
      tags: ['Owner'],
      summary: "Withdraw a version's deprecation",
      security: BEARER,
      request: { params: VersionParams },
      responses: { 204: { description: 'Withdrawn' }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      await c.var.services.store.analyticVersions.undeprecate(
        c.var.principal.accountId,
        name,
        Number(pathParam(c, 'version')),
      );
      c.var.services.catalog.invalidate(name);
      return c.body(null, 204);
    },
  );
  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/owner/analytics/{name}',
      tags: ['Owner'],
      summary: 'Delete an analytic (its name becomes free)',
      security: BEARER,
      request: { params: NameParam },
      responses: { 204: { description: 'Deleted' }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      const name = pathParam(c, 'name');
      await c.var.services.analytics.delete(c.var.principal.accountId, name);
      c.var.services.catalog.invalidate(name);
      return c.body(null, 204);
    },
  );
  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/owner/analytics/{name}/cache',
      tags: ['Owner'],
      summary: "Drop an analytic's cached answers, on every instance",
      description:
        'For when the data behind an analytic changed before its cache TTL ran out: the next call, whatever its params, runs the query. This instance drops its answers at once, every other instance within about a second (the change feed). A query already running is not stopped: its callers get its answer, which is not cached.',
      security: BEARER,
      request: { params: NameParam },
      responses: { 204: { description: 'Dropped' }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      await c.var.services.analytics.purgeCache(c.var.principal.accountId, pathParam(c, 'name'));
      return c.body(null, 204);
    },
  );
}
