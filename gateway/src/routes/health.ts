// Liveness, readiness and Prometheus metrics.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { errorResponse } from '../http/common-schemas.js';
import { operatorWhenConfigured } from '../http/middleware/admin-auth.js';
import { route } from '../http/route.js';
import { constantTimeEqual } from '../security/api-key.js';

const ReadySchema = z
  .object({
    status: z.enum(['ok', 'degraded', 'starting', 'unavailable', 'draining']).openapi({
      description:
        '`degraded`: ready (200), but something runs on its fallback, e.g. rate limits counted per instance while Redis does not answer, or the pages served by the read replica read the primary while it does not answer; `starting`: start-up work (the demo warehouse) is still under way, and calls that need it wait for it; `draining`: the instance is stopping and lets the requests in flight finish',
    }),
    checks: z
      .record(
        z.string(),
        z.object({ ok: z.boolean(), degraded: z.boolean().optional(), message: z.string().optional() }),
      )
      .optional()
      .openapi({ description: 'Each check, only with the operator token (QUARRY_ADMIN_TOKEN) as bearer' }),
  })
  .openapi('Readiness');

/** Whether the request carries the operator token: only the operator sees what each check found. */
function isOperator(authorization: string | undefined, adminToken: string | undefined): boolean {
  if (adminToken === undefined || adminToken === '' || authorization === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match !== null && constantTimeEqual(match[1] as string, adminToken);
}

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
      summary: 'Readiness: the store and the connections answer (each check: operator only)',
      description:
        'Fails (503) while start-up work is pending (`starting`: the demo warehouse being prepared), the control-plane store does not answer, or the instance is stopping; `degraded` (200) while the rate limiter runs on its per-instance fallback, or the read replica (QUARRY_READ_DATABASE_URL) does not answer and its pages read the primary.',
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: ReadySchema } } },
        503: { description: 'Not ready', content: { 'application/json': { schema: ReadySchema } } },
      },
    }),
    async (c) => {
      const { health, config } = c.var.services;
      const checks = await health.check();
      const ok = Object.values(checks).every((v) => v.ok);
      const degraded = Object.values(checks).some((v) => v.degraded === true);
      const status = ok
        ? degraded
          ? ('degraded' as const)
          : ('ok' as const)
        : health.phase() === 'draining'
          ? ('draining' as const)
          : health.starting() && checks.store?.ok === true
            ? ('starting' as const)
            : ('unavailable' as const);
      // Anyone may ask whether the gateway is ready; which owners' connections it holds, and how
      // they are doing, is for the operator.
      const detail = isOperator(c.req.header('authorization'), config.adminToken) ? { checks } : {};
      return c.json({ status, ...detail }, ok ? 200 : 503);
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['Operations'],
      summary: 'Prometheus metrics',
      description:
        'With QUARRY_ADMIN_TOKEN set, only that token (as bearer) reads the metrics; without it, anyone who reaches the port.',
      responses: {
        200: { description: 'Prometheus text format', content: { 'text/plain': { schema: z.string() } } },
        401: errorResponse('QUARRY_ADMIN_TOKEN is set and the bearer is not it'),
        429: errorResponse('Too many wrong operator tokens from this address'),
      },
    }),
    operatorWhenConfigured(),
    async (c) => {
      const { registry } = c.var.services.metrics;
      return c.body(await registry.metrics(), 200, { 'content-type': registry.contentType });
    },
  );
}
