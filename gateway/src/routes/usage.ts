// GET /v1/account/usage: the caller's account usage in one billing period (docs/money.md): calls
// by origin, credits used and left, what the plan or the Pay as you Go budget leaves and what is
// due, by analytic and by day, as JSON or CSV.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER } from '../http/common-schemas.js';
import { csvResponse, toCsv, wantsCsv } from '../http/csv.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { jsonOrCsv, periodParam, ReportQuerySchema } from '../http/period-param.js';
import { DeprecatedVersionSchema, deprecatedVersionJson } from '../http/resources.js';
import { route } from '../http/route.js';
import type { AccountUsage } from '../money/billing-service.js';
import { creditValueMicroUsd, isBudgeted, type Plan } from '../money/plan-catalog.js';
import {
  centsDue,
  centsToMicroUsd,
  creditsToMillicredits,
  millicreditsToCredits,
  wholeCredits,
} from '../money/units.js';
import type { UsageTotals } from '../money/usage-repository.js';
import { BudgetStateSchema, budgetJson, CallsByOriginSchema, usd } from './money-schemas.js';

const Totals = z.object({
  calls: z.number().int(),
  credits: z.number().openapi({ description: 'Credits spent' }),
  value_usd: z.number().openapi({ description: 'What those credits cost the account, in USD' }),
});

export const PlanSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    included_calls: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Old name of `included_credits` (calls at 1 credit each)' }),
    included_credits: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'Credits included a month; null: Pay as you Go' }),
    monthly_price_cents: z.number().int(),
    per_call_cents: z.number().int().openapi({
      description: 'Pay as you Go: the price of a credit, in cents (old name of `credit_price_cents`)',
    }),
    credit_price_cents: z
      .number()
      .int()
      .openapi({ description: 'Pay as you Go: the price of a credit, in cents' }),
    credit_value_usd: z
      .number()
      .openapi({ description: 'What one credit costs on this plan: price ÷ included credits (Free: 0)' }),
  })
  .openapi('Plan');

export const UsageSchema = z
  .object({
    period: z.string(),
    plan: PlanSchema,
    totals: z.object({
      calls: z
        .number()
        .int()
        .openapi({ description: 'Served calls that spent credits (failed calls are never counted)' }),
      calls_by_origin: CallsByOriginSchema,
      credits: z.number().openapi({ description: 'Credits spent by served calls (same as `credits_used`)' }),
      credits_used: z.number(),
      credits_left: z.number().int().nullable().openapi({
        description:
          'Credits a call can still spend this period (calls in flight counted): what the plan leaves, or what the Pay as you Go budget still buys',
      }),
      marketplace_calls: z
        .number()
        .int()
        .openapi({ description: 'Free marketplace previews (not in `calls`)' }),
      remaining_calls: z
        .number()
        .int()
        .nullable()
        .openapi({ description: '`credits_left`, kept under its old name (calls of 1 credit)' }),
      amount_due_usd: z
        .number()
        .openapi({ description: 'Subscription price, or Pay as you Go: the credits spent × their price' }),
      amount_due_micro_usd: z.number().int(),
      amount_due_cents: z.number().int().openapi({ description: '`amount_due_usd` in cents, rounded up' }),
    }),
    budget: BudgetStateSchema.nullable().openapi({ description: 'Pay as you Go only' }),
    by_analytic: z.array(Totals.extend({ name: z.string() })),
    by_day: z.array(Totals.extend({ date: z.string().openapi({ description: 'YYYY-MM-DD, UTC' }) })),
    deprecated_versions: z.array(DeprecatedVersionSchema).openapi({
      description:
        'Versions you called by version (`name@N`) in the last 30 days that their owner deprecated, soonest sunset first: move to `current_version` before `sunset`',
    }),
  })
  .openapi('Usage');

/** The columns of the usage CSV (blank `date`/`analytic`: every day/analytic). */
export const USAGE_CSV_COLUMNS = [
  'period',
  'date',
  'analytic',
  'origin',
  'calls',
  'credits',
  'value_usd',
] as const;

const credits = millicreditsToCredits;
const ORIGINS = ['paid', 'free', 'marketplace', 'owner'] as const;

function usageCsv(period: string, usage: AccountUsage): string {
  const { report } = usage;
  const t = report.totals;
  const line = (date: string, name: string, origin: string, a: UsageTotals) => [
    period,
    date,
    name,
    origin,
    a.calls,
    credits(a.millicredits),
    usd(a.valueMicroUsd),
  ];
  return toCsv(USAGE_CSV_COLUMNS, [
    ...ORIGINS.map((origin) => line('', '', origin, t.perOrigin[origin])),
    ...report.byAnalytic.map((a) => line('', a.name, '', a)),
    ...report.byDay.map((d) => line(d.date, '', '', d)),
  ]);
}

export function planJson(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    included_calls: plan.included_credits,
    included_credits: plan.included_credits,
    monthly_price_cents: plan.monthly_price_cents,
    per_call_cents: plan.credit_price_cents,
    credit_price_cents: plan.credit_price_cents,
    credit_value_usd: usd(creditValueMicroUsd(plan)),
  };
}

const totalsJson = (t: UsageTotals) => ({
  calls: t.calls,
  credits: credits(t.millicredits),
  value_usd: usd(t.valueMicroUsd),
});

function usageJson(period: string, usage: AccountUsage) {
  const { plan, report, counted, budgetMicroUsd } = usage;
  const value = creditValueMicroUsd(plan);
  // The counter includes calls in flight: what is left is what a call can still get.
  const left =
    budgetMicroUsd !== null
      ? value === 0
        ? null
        : Math.max(0, Math.floor((budgetMicroUsd - counted.valueMicroUsd) / value))
      : plan.included_credits === null
        ? null
        : Math.max(0, wholeCredits(creditsToMillicredits(plan.included_credits) - counted.millicredits));
  const dueMicroUsd =
    centsToMicroUsd(plan.monthly_price_cents) + (isBudgeted(plan) ? report.totals.valueMicroUsd : 0);
  const used = credits(report.totals.millicredits);
  return {
    period,
    plan: planJson(plan),
    totals: {
      calls: report.totals.calls,
      calls_by_origin: report.totals.byOrigin,
      credits: used,
      credits_used: used,
      credits_left: left,
      marketplace_calls: report.totals.byOrigin.marketplace,
      remaining_calls: left,
      amount_due_usd: usd(dueMicroUsd),
      amount_due_micro_usd: dueMicroUsd,
      amount_due_cents: centsDue(dueMicroUsd),
    },
    budget:
      budgetMicroUsd === null ? null : budgetJson({ budgetMicroUsd, spentMicroUsd: counted.valueMicroUsd }),
    by_analytic: report.byAnalytic.map((a) => ({ name: a.name, ...totalsJson(a) })),
    by_day: report.byDay.map((d) => ({ date: d.date, ...totalsJson(d) })),
  };
}

export function registerUsageRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/usage',
      tags: ['Accounts'],
      summary: "The account's usage in a billing period (JSON, or CSV)",
      description: [
        'Served calls only: a call that failed is never charged and never appears. `calls` and',
        '`credits` count the calls that spent credits (origin `paid` or `free`); previews',
        '(`marketplace`) and calls of your own analytics (`owner`) are free and counted apart in',
        '`calls_by_origin`. CSV with `?format=csv` or `Accept: text/csv`; columns',
        '`period,date,analytic,origin,calls,credits,value_usd`: one row per origin (the totals),',
        'then one per analytic and one per day of the calls that spent credits (blank `origin`).',
        'On a gateway with a read replica (QUARRY_READ_DATABASE_URL) it is read there, and may lag',
        'the latest calls by the replica’s delay.',
      ].join(' '),
      security: BEARER,
      request: { query: ReportQuerySchema },
      responses: {
        200: jsonOrCsv('Usage', UsageSchema),
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const csv = wantsCsv(c);
      const period = periodParam(c);
      const { principal } = c.var;
      const usage = await c.var.services.reads.billing.usage(principal.accountId, principal.plan, period);
      if (csv) return csvResponse(c, `quarry-usage-${period}.csv`, usageCsv(period, usage));
      const deprecated = await c.var.services.reads.analyticVersions.deprecatedCalledBy(principal.accountId);
      return c.json({
        ...usageJson(period, usage),
        deprecated_versions: deprecated.map(deprecatedVersionJson),
      });
    },
  );
}
