// Registers a route's OpenAPI description and its handlers from one definition, so the docs and
// the code that validates cannot drift: the path params, query string and headers the route
// declares are validated by those same zod schemas before its handler runs (after its own
// middleware, so an unauthenticated caller learns nothing from validation), and one hook turns
// every zod issue into the INVALID_REQUEST envelope. Handlers read the result with valid(c, …).
// Bodies are validated inside handlers with readJson(c, schema) against their schemas too
// (one parse, and the 415 / malformed / too-deep codes the envelope table asks for).
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import { zValidator } from '@hono/zod-validator';
import type { Context, Handler, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { ApiError } from '../errors/api-error.js';
import { zodDetails } from '../validation/json-body.js';
import type { AppEnv } from './app-env.js';
import { operationIdOf } from './operation-ids.js';

/** `/v1/keys/{id}` → `/v1/keys/:id`. */
export function honoPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

type Target = 'param' | 'query' | 'header';
const WHAT: Record<Target, string> = { param: 'path', query: 'query', header: 'header' };

/** The one hook: a failed validation is INVALID_REQUEST listing every issue. */
function validator(target: Target, schema: z.ZodType): MiddlewareHandler<AppEnv> {
  return zValidator(target, schema, (result) => {
    if (result.success) return;
    const details = zodDetails(result.error);
    const first = details[0];
    throw new ApiError(
      'INVALID_REQUEST',
      first ? `Invalid ${WHAT[target]}: ${first.field}: ${first.message}` : `Invalid ${WHAT[target]}.`,
      { details },
    );
  }) as unknown as MiddlewareHandler<AppEnv>;
}

/** The validators of what `config.request` declares, path params first. */
function validators(config: RouteConfig): MiddlewareHandler<AppEnv>[] {
  const request = config.request;
  const out: MiddlewareHandler<AppEnv>[] = [];
  if (request?.params) out.push(validator('param', request.params as z.ZodType));
  if (request?.query) out.push(validator('query', request.query as z.ZodType));
  if (request?.headers && !Array.isArray(request.headers))
    out.push(validator('header', request.headers as z.ZodType));
  return out;
}

/**
 * The description as documented: its operationId from the one table (http/operation-ids.ts), and
 * `security: []` on a route that declares none, so the document says it is public.
 */
function described(config: RouteConfig): RouteConfig {
  return {
    ...config,
    operationId: config.operationId ?? operationIdOf(config.method, config.path),
    security: config.security ?? [],
  };
}

/** Registers the description; the handlers run in order, with the validators just before the last. */
export function route(
  app: OpenAPIHono<AppEnv>,
  config: RouteConfig,
  ...handlers: [...MiddlewareHandler<AppEnv>[], Handler<AppEnv>]
): void {
  const handler = handlers[handlers.length - 1] as Handler<AppEnv>;
  const middleware = handlers.slice(0, -1) as MiddlewareHandler<AppEnv>[];
  app.openAPIRegistry.registerPath(described(config));
  app.on(
    [config.method.toUpperCase()],
    [honoPath(config.path)],
    ...middleware,
    ...validators(config),
    handler,
  );
}

/**
 * Registers only the description: for the query routes, whose inputs the query module validates
 * itself with the same schemas (query/), on both of its adapters alike.
 */
export function describedRoute(
  app: OpenAPIHono<AppEnv>,
  config: RouteConfig,
  handler: Handler<AppEnv>,
): void {
  app.openAPIRegistry.registerPath(described(config));
  app.on([config.method.toUpperCase()], [honoPath(config.path)], handler);
}

/** What the route's validator made of its path params, query string or headers. */
export function valid<S extends z.ZodType>(c: Context<AppEnv>, target: Target, _schema: S): z.output<S> {
  return c.req.valid(target as never) as z.output<S>;
}

/** A path parameter the route's pattern guarantees. */
export function pathParam(c: Context<AppEnv>, name: string): string {
  return c.req.param(name) ?? '';
}
