// Liveness, readiness and Prometheus metrics.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { route } from '../http/route.js';

const ReadySchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.record(z.string(), z.object({ ok: z.boolean(), message: z.string().optional() })),
  })
  .openapi('Readiness');

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/healthz',
      tags: ['Operations'],
      summary: 'Liveness: the process is up',
      responses: {
        200: {
          description: 'Alive',
          content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } },
        },
      },
    }),
    (c) => c.json({ status: 'ok' as const }),
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/readyz',
      tags: ['Operations'],
      summary: 'Readiness: the store and the connections answer',
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: ReadySchema } } },
        503: { description: 'Not ready', content: { 'application/json': { schema: ReadySchema } } },
      },
    }),
    async (c) => {
      const checks = await c.var.services.health.check();
      const ok = Object.values(checks).every((v) => v.ok);
      return c.json({ status: ok ? ('ok' as const) : ('unavailable' as const), checks }, ok ? 200 : 503);
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['Operations'],
      summary: 'Prometheus metrics',
      responses: {
        200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
      },
    }),
    async (c) => {
      const { registry } = c.var.services.metrics;
      return c.body(await registry.metrics(), 200, { 'content-type': registry.contentType });
    },
  );
}
