// GET /v1/account/usage: the caller's account usage in one billing period (calls, credits, what
// the plan leaves and what is due), by analytic and by day, as JSON or CSV.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Plan } from '../billing/plan-catalog.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER } from '../http/common-schemas.js';
import { csvResponse, toCsv, wantsCsv } from '../http/csv.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { jsonOrCsv, periodParam, ReportQuerySchema } from '../http/period-param.js';
import { route } from '../http/route.js';
import type { UsageReport } from '../store/usage-repository.js';

const Totals = z.object({ calls: z.number().int(), credits: z.number().int() });

export const UsageSchema = z
  .object({
    period: z.string(),
    plan: z.object({
      id: z.string(),
      name: z.string(),
      included_calls: z.number().int().nullable().openapi({ description: 'null: no cap' }),
      monthly_price_cents: z.number().int(),
      per_call_cents: z.number().int(),
    }),
    totals: z.object({
      calls: z.number().int().openapi({ description: 'Served API calls (failed calls are never counted)' }),
      credits: z.number().int(),
      marketplace_calls: z
        .number()
        .int()
        .openapi({ description: 'Free try-it calls from the marketplace (not in `calls`)' }),
      remaining_calls: z
        .number()
        .int()
        .nullable()
        .openapi({ description: 'Calls the plan still allows this period; null without a cap' }),
      amount_due_cents: z
        .number()
        .int()
        .openapi({ description: 'Subscription price, plus calls × per-call price (Pay as you Go)' }),
    }),
    by_analytic: z.array(Totals.extend({ name: z.string() })),
    by_day: z.array(Totals.extend({ date: z.string().openapi({ description: 'YYYY-MM-DD, UTC' }) })),
  })
  .openapi('Usage');

/** The columns of the usage CSV (blank `date`/`analytic`: every day/analytic). */
export const USAGE_CSV_COLUMNS = ['period', 'date', 'analytic', 'origin', 'calls', 'credits'] as const;

function usageCsv(report: UsageReport): string {
  const { period, totals } = report;
  return toCsv(USAGE_CSV_COLUMNS, [
    [period, '', '', 'api', totals.calls, totals.credits],
    [period, '', '', 'marketplace', totals.marketplaceCalls, 0],
    ...report.byAnalytic.map((a) => [period, '', a.name, 'api', a.calls, a.credits]),
    ...report.byDay.map((d) => [period, d.date, '', 'api', d.calls, d.credits]),
  ]);
}

function planJson(plan: Plan) {
  return {
    id: plan.id,
    name: plan.name,
    included_calls: plan.included_calls,
    monthly_price_cents: plan.monthly_price_cents,
    per_call_cents: plan.per_call_cents,
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
        'Served calls only: a call that failed is never charged and never appears. CSV with',
        '`?format=csv` or `Accept: text/csv`; its columns are `period,date,analytic,origin,calls,credits`:',
        'a blank `date` sums every day and a blank `analytic` every analytic, so the first two rows are',
        'the totals of API calls and of free marketplace calls, then one row per analytic, then one per day.',
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
      const { plan, report, counted } = await c.var.services.billing.usage(
        principal.accountId,
        principal.plan,
        period,
      );
      if (csv) return csvResponse(c, `quarry-usage-${period}.csv`, usageCsv(report));
      const calls = Number(report.totals.calls);
      return c.json({
        period,
        plan: planJson(plan),
        totals: {
          calls,
          credits: Number(report.totals.credits),
          marketplace_calls: Number(report.totals.marketplaceCalls),
          // The quota counter includes calls in flight: what is left is what a call can still get.
          remaining_calls: plan.included_calls === null ? null : Math.max(0, plan.included_calls - counted),
          amount_due_cents: plan.monthly_price_cents + calls * plan.per_call_cents,
        },
        by_analytic: report.byAnalytic.map((a) => ({
          name: a.name,
          calls: Number(a.calls),
          credits: Number(a.credits),
        })),
        by_day: report.byDay.map((d) => ({
          date: d.date,
          calls: Number(d.calls),
          credits: Number(d.credits),
        })),
      });
    },
  );
}
