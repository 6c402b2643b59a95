// GET and PUT /v1/account/budget: a Pay as you Go account's monthly budget (docs/money.md).
// Calls stop with 429 QUOTA_EXCEEDED once what the period's credits cost would pass it. Default
// QUARRY_DEFAULT_BUDGET_USD (100), at most the operator's QUARRY_MAX_BUDGET_USD.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { route } from '../http/route.js';
import { periodOf } from '../money/billing-period.js';
import type { Budget } from '../money/billing-service.js';
import { isBudgeted } from '../money/plan-catalog.js';
import { BudgetStateSchema, budgetJson, usd } from './money-schemas.js';

export const BudgetChangeSchema = z
  .object({
    budget_usd: z
      .number()
      .min(0)
      .max(1_000_000_000)
      .refine((v) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6, { message: 'a whole number of cents' })
      .openapi({ description: 'USD a month, in whole cents; at most the operator’s cap', example: 50 }),
  })
  .strict()
  .openapi('BudgetChange');

const BudgetSchema = z
  .object({
    budget: BudgetStateSchema.extend({
      period: z.string().openapi({ description: 'The current billing period (UTC month)' }),
      custom: z.boolean().openapi({ description: 'false: the gateway’s default budget' }),
      max_budget_usd: z.number().openapi({ description: 'The operator’s cap' }),
      applies: z.boolean().openapi({
        description: 'Whether the account’s plan is Pay as you Go (others stop at their credits)',
      }),
    }),
  })
  .openapi('Budget');

const shown = (b: Budget, applies: boolean) => ({
  budget: {
    ...budgetJson(b),
    period: b.period,
    custom: b.custom,
    max_budget_usd: usd(b.maxMicroUsd),
    applies,
  },
});

export function registerBudgetRoutes(app: OpenAPIHono<AppEnv>): void {
  const response = { description: 'The budget', content: { 'application/json': { schema: BudgetSchema } } };
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/budget',
      tags: ['Accounts'],
      summary: "The account's Pay as you Go budget this month, and what is spent",
      security: BEARER,
      responses: { 200: response, ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const { services, principal } = c.var;
      const budget = await services.billing.budget(principal.accountId, periodOf(new Date()));
      return c.json(shown(budget, isBudgeted(services.plans.resolve(principal.plan))));
    },
  );
  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/account/budget',
      tags: ['Accounts'],
      summary: "Set the account's Pay as you Go budget (USD a month)",
      description:
        'Applies to the next call on every instance. Lowering it below what the month already spent stops further calls until next month. 400 above the operator’s cap (`QUARRY_MAX_BUDGET_USD`).',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: BudgetChangeSchema } } } },
      responses: { 200: response, ...AUTHED_ERRORS, ...BODY_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const { services, principal } = c.var;
      const body = await readJson(c, BudgetChangeSchema);
      const budget = await services.billing.setBudget(
        principal.accountId,
        Math.round(body.budget_usd * 100) * 10_000,
        periodOf(new Date()),
      );
      return c.json(shown(budget, isBudgeted(services.plans.resolve(principal.plan))));
    },
  );
}
