// GET /v1/plans: the plans this gateway sells (public), so the marketplace can say what a call
// of a listing costs on each plan before anyone signs up. A plan has the same shape here as in
// `GET /v1/account/usage` (`PlanSchema`, `planJson`): its included credits and what one credit
// costs on it (`credit_value_usd`, docs/money.md).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS } from '../http/common-schemas.js';
import { route } from '../http/route.js';
import { PlanSchema, planJson } from './usage.js';

export function registerPlanRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/plans',
      tags: ['Accounts'],
      summary: 'The plans on offer (public)',
      description:
        'Each plan with its included credits a month (`included_credits`; null: Pay as you Go, billed per credit within a budget), its price, and what one credit costs on it (`credit_value_usd`: the subscription ÷ its credits, the Pay as you Go price, or 0 on the Free plan).',
      responses: {
        200: {
          description: 'Plans',
          content: { 'application/json': { schema: z.object({ plans: z.array(PlanSchema) }) } },
        },
        500: AUTHED_ERRORS[500],
      },
    }),
    (c) => c.json({ plans: c.var.services.plans.list().map(planJson) }),
  );
}
