// POST /v1/query and GET /v1/analytics/{name}: the query contract of DESIGN.md §2.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { ParamValues } from '@quarry/sdk-connector';
import type { Context } from 'hono';
import type { CatalogEntry } from '../catalog/catalog.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, QUERY_ERRORS } from '../http/common-schemas.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { requireScope } from '../middleware/auth.js';

export const QueryRequestSchema = z
  .object({
    source: z.string().min(1).max(128).openapi({ example: 'sales-by-region' }),
    params: z
      .record(z.string(), z.unknown())
      .openapi({
        example: { year: 2024 },
        description: "Values for the analytic's params; `{}` when it has none",
      }),
  })
  .strict()
  .openapi('QueryRequest');

export const QueryResponseSchema = z
  .object({
    source: z.string(),
    results: z.array(z.record(z.string(), z.unknown())),
    insights: z.unknown().optional(),
    columns: z.array(z.object({ name: z.string(), type: z.string() })),
    meta: z.object({
      request_id: z.string(),
      cached: z.boolean(),
      duration_ms: z.number(),
      row_count: z.number().int(),
      truncated: z.boolean(),
      credits: z.number().int(),
      version: z.number().int(),
    }),
  })
  .openapi('QueryResponse');

const ok = { description: 'Results', content: { 'application/json': { schema: QueryResponseSchema } } };

async function answer(c: Context<AppEnv>, entry: CatalogEntry, params: ParamValues): Promise<Response> {
  const { queries } = c.var.services;
  const body = await queries.execute(entry, params, { requestId: c.var.requestId, signal: c.req.raw.signal });
  return c.json(body, 200, { 'x-cache': 'MISS' });
}

export function registerQueryRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/query',
      tags: ['Query'],
      summary: 'Run an analytic',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: QueryRequestSchema } } } },
      responses: { 200: ok, ...AUTHED_ERRORS, ...BODY_ERRORS, ...QUERY_ERRORS },
    }),
    requireScope('query'),
    async (c) => {
      const request = await readJson(c, QueryRequestSchema);
      const { queries } = c.var.services;
      const entry = await queries.resolve(c.var.principal, request.source);
      return answer(c, entry, queries.params(entry, request.params));
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/analytics/{name}',
      tags: ['Query'],
      summary: 'Run an analytic with query-string params',
      description:
        "Query-string values are coerced by the analytic's param schema: `year=2024` becomes 2024; repeated keys or `a,b` make arrays for array params.",
      security: BEARER,
      request: { params: z.object({ name: z.string() }) },
      responses: { 200: ok, ...AUTHED_ERRORS, ...QUERY_ERRORS },
    }),
    requireScope('query'),
    async (c) => {
      const { queries } = c.var.services;
      const entry = await queries.resolve(c.var.principal, pathParam(c, 'name'));
      // A null-prototype record: `?__proto__=…` must be an unknown param, not a prototype.
      const query: Record<string, string | string[]> = Object.create(null);
      for (const [key, values] of Object.entries(c.req.queries())) {
        query[key] = values.length === 1 ? (values[0] as string) : values;
      }
      return answer(c, entry, queries.queryStringParams(entry, query));
    },
  );
}
