// Registers a route's OpenAPI description and its handlers from one definition, so the docs
// and the code that validates cannot drift. Bodies are validated inside handlers with
// readJson(c, schema) against the same schemas (one parse, our own error envelope).
import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { Context, Handler, MiddlewareHandler } from 'hono';
import type { AppEnv } from './app-env.js';

/** `/v1/keys/{id}` → `/v1/keys/:id`. */
export function honoPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

export function route(
  app: OpenAPIHono<AppEnv>,
  config: RouteConfig,
  ...handlers: [...MiddlewareHandler<AppEnv>[], Handler<AppEnv>]
): void {
  app.openAPIRegistry.registerPath(config);
  app.on([config.method.toUpperCase()], [honoPath(config.path)], ...handlers);
}

/** A path parameter the route's pattern guarantees. */
export function pathParam(c: Context<AppEnv>, name: string): string {
  return c.req.param(name) ?? '';
}
