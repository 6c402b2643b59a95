// GET /v1/plans: the plans this gateway sells (public), so the marketplace can say what a call
// of a listing costs on each plan before anyone signs up.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS } from '../http/common-schemas.js';
import { route } from '../http/route.js';

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    included_calls: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Credits included a month (a call of price 1 spends one); null: no cap' }),
    monthly_price_cents: z.number().int(),
    per_call_cents: z.number().int().openapi({ description: 'Price of one credit beyond the subscription' }),
  })
  .openapi('Plan');

export function registerPlanRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/plans',
      tags: ['Accounts'],
      summary: 'The plans on offer (public)',
      responses: {
        200: {
          description: 'Plans',
          content: { 'application/json': { schema: z.object({ plans: z.array(PlanSchema) }) } },
        },
        500: AUTHED_ERRORS[500],
      },
    }),
    (c) =>
      c.json({
        plans: c.var.services.plans.list().map((plan) => ({
          id: plan.id,
          name: plan.name,
          included_calls: plan.included_calls,
          monthly_price_cents: plan.monthly_price_cents,
          per_call_cents: plan.per_call_cents,
        })),
      }),
  );
}
