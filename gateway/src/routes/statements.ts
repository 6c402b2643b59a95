// GET /v1/owner/statements: an owner's earnings in one billing period, per analytic and origin,
// in credits and USD, as JSON or CSV (docs/money.md). Live from the ledger while the period is
// open; the frozen snapshot, with the owner's payout, once it is closed.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER } from '../http/common-schemas.js';
import { csvResponse, toCsv, wantsCsv } from '../http/csv.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { jsonOrCsv, periodParam, ReportQuerySchema } from '../http/period-param.js';
import { route } from '../http/route.js';
import { holdText } from '../money/payout-rules.js';
import type { OwnerStatement, Payout, StatementAmounts } from '../money/statement-repository.js';
import { centsToMicroUsd, millicreditsToCredits } from '../money/units.js';
import type { FailedCallsByCaller } from '../store/failed-call-repository.js';
import { CallsByOriginSchema, usd } from './money-schemas.js';

const Amounts = z.object({
  calls: z.number().int().openapi({ description: 'Served calls of every origin' }),
  calls_by_origin: CallsByOriginSchema,
  credits: z.number().openapi({ description: 'Credits the callers spent' }),
  owner_share: z.number().openapi({ description: 'Your credits: exactly 0.8 of each credit spent' }),
  platform_share: z.number().openapi({ description: 'The rest: the two sum to `credits`' }),
  millicredits: z.number().int(),
  owner_share_millicredits: z.number().int(),
  platform_share_millicredits: z.number().int(),
  value_usd: z.number().openapi({ description: 'What the callers paid for those credits (Free plan: 0)' }),
  owner_share_usd: z.number().openapi({ description: '80% of each call’s value, rounded down to the µUSD' }),
  platform_share_usd: z.number(),
  value_micro_usd: z.number().int(),
  owner_share_micro_usd: z.number().int(),
  platform_share_micro_usd: z.number().int(),
});

export const PayoutSchema = z
  .object({
    carried_in_micro_usd: z.number().int().openapi({
      description:
        'Your balance before it: the rest of your previous payout, an amount held, or a negative balance',
    }),
    earned_micro_usd: z.number().int(),
    adjusted_micro_usd: z.number().int().openapi({
      description: 'Shares taken back by refunds and disputes of callers’ payments, netted here',
    }),
    payout_cents: z.number().int().openapi({ description: 'Paid out: whole cents, rounded down' }),
    payout_usd: z.number(),
    carried_out_micro_usd: z.number().int().openapi({ description: 'Carried into your next payout' }),
    status: z.enum(['held', 'pending', 'paid', 'failed', 'reversed', 'operator']).openapi({
      description:
        '`held` (see `reason`: carried whole to the next month), `pending` (a transfer under way), `paid`, `failed` (carried, tried again at the next close), `operator` (the gateway takes no payments: its operator pays you)',
    }),
    reason: z.string().nullable().openapi({
      description: '`below_minimum`, `not_onboarded`, `negative_balance`, or why a transfer failed',
    }),
    reason_text: z.string().nullable(),
    transfer_id: z
      .string()
      .nullable()
      .openapi({ description: 'The payment provider’s reference of the transfer' }),
    paid_at: z.string().nullable(),
  })
  .openapi('Payout');

const AdjustmentSchema = z
  .object({
    analytic: z.string(),
    usage_period: z.string().openapi({ description: 'The month of the calls whose payment was reversed' }),
    reason: z.enum(['refund', 'dispute']),
    owner_micro_usd: z.number().int().openapi({ description: 'Negative: your share taken back' }),
    owner_usd: z.number(),
    platform_micro_usd: z
      .number()
      .int()
      .openapi({ description: 'Negative: the platform’s share taken back' }),
  })
  .openapi('StatementAdjustment');

const FailedCallsSchema = z
  .object({
    caller_account_id: z.string().openapi({ description: 'The calling account' }),
    analytic: z.string(),
    calls: z.number().int().openapi({ description: 'Its failed calls of this analytic in the period' }),
    calls_by_code: z.record(z.string(), z.number().int()).openapi({
      description: 'By the error the caller got: QUERY_TIMEOUT, RESULT_TOO_LARGE, UPSTREAM_ERROR',
    }),
    warehouse_seconds: z.number().openapi({ description: 'Time those calls kept your warehouse busy' }),
  })
  .openapi('StatementFailedCalls');

export const StatementSchema = z
  .object({
    period: z.string(),
    closed_at: z.string().nullable().openapi({ description: 'Set once the period is closed (frozen)' }),
    analytics: z.array(Amounts.extend({ name: z.string() })),
    totals: Amounts,
    by_day: z
      .array(
        Amounts.extend({ date: z.string().openapi({ description: 'YYYY-MM-DD, UTC' }), name: z.string() }),
      )
      .openapi({
        description: 'Per day and analytic (days and analytics with calls only), in date then name order',
      }),
    payout: PayoutSchema.nullable().openapi({
      description: 'Once the period is closed: what is paid out (null while open, or without earnings)',
    }),
    adjustments: z.array(AdjustmentSchema).openapi({
      description:
        'Shares taken back by refunds and disputes: netted by this period’s payout once closed; while open, those the next close will net',
    }),
    failed_calls: z.array(FailedCallsSchema).openapi({
      description:
        'Calls of other accounts that failed after running in your warehouse (timeouts, results too large, warehouse errors), per caller and analytic, most warehouse time first. Free for the caller and earning nothing; a caller past QUARRY_FAILED_WAREHOUSE_SECONDS is throttled.',
    }),
  })
  .openapi('OwnerStatement');

/** The columns of the statement CSV: one row per analytic, then a total row (blank `analytic`). */
export const STATEMENT_CSV_COLUMNS = [
  'period',
  'analytic',
  'calls',
  'credits',
  'owner_share',
  'platform_share',
  'closed_at',
  'paid_calls',
  'free_calls',
  'marketplace_calls',
  'owner_calls',
  'value_usd',
  'owner_share_usd',
  'platform_share_usd',
] as const;

const amountsJson = (a: StatementAmounts) => ({
  calls: a.calls,
  calls_by_origin: a.callsByOrigin,
  credits: millicreditsToCredits(a.millicredits),
  owner_share: millicreditsToCredits(a.ownerMillicredits),
  platform_share: millicreditsToCredits(a.platformMillicredits),
  millicredits: a.millicredits,
  owner_share_millicredits: a.ownerMillicredits,
  platform_share_millicredits: a.platformMillicredits,
  value_usd: usd(a.valueMicroUsd),
  owner_share_usd: usd(a.ownerMicroUsd),
  platform_share_usd: usd(a.platformMicroUsd),
  value_micro_usd: a.valueMicroUsd,
  owner_share_micro_usd: a.ownerMicroUsd,
  platform_share_micro_usd: a.platformMicroUsd,
});

export const payoutJson = (p: Payout | null, minimumCents: number) =>
  p === null
    ? null
    : {
        carried_in_micro_usd: p.carriedInMicroUsd,
        earned_micro_usd: p.earnedMicroUsd,
        adjusted_micro_usd: p.adjustedMicroUsd,
        payout_cents: p.payoutCents,
        payout_usd: usd(centsToMicroUsd(p.payoutCents)),
        carried_out_micro_usd: p.carriedOutMicroUsd,
        status: p.status,
        reason: p.reason,
        reason_text: holdText(p.reason, minimumCents),
        transfer_id: p.transferId,
        paid_at: p.paidAt?.toISOString() ?? null,
      };

const failedCallsJson = (rows: readonly FailedCallsByCaller[]) =>
  rows.map((r) => ({
    caller_account_id: r.accountId,
    analytic: r.analyticName,
    calls: r.calls,
    calls_by_code: r.callsByCode,
    warehouse_seconds: r.warehouseMs / 1000,
  }));

/** The period's bounds as instants: its first day's start to the next month's. */
function periodInstants(period: string): { from: Date; to: Date } {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

function statementCsv(s: OwnerStatement, failed: readonly FailedCallsByCaller[]): string {
  const closedAt = s.closedAt?.toISOString() ?? '';
  const row = (name: string, a: StatementAmounts) => {
    const j = amountsJson(a);
    return [
      s.period,
      name,
      j.calls,
      j.credits,
      j.owner_share,
      j.platform_share,
      closedAt,
      a.callsByOrigin.paid,
      a.callsByOrigin.free,
      a.callsByOrigin.marketplace,
      a.callsByOrigin.owner,
      j.value_usd,
      j.owner_share_usd,
      j.platform_share_usd,
    ];
  };
  // Shares taken back: a row each, negative amounts, the analytic named with the reason.
  const adjustments = s.adjustments.map((a) => [
    s.period,
    `${a.analytic} (${a.reason} of ${a.usagePeriod})`,
    0,
    0,
    0,
    0,
    closedAt,
    0,
    0,
    0,
    0,
    0,
    -usd(a.ownerMicroUsd),
    -usd(a.platformMicroUsd),
  ]);
  // Failed calls by caller: a row each, nothing earned, what happened in the analytic column.
  const failures = failed.map((f) => [
    s.period,
    `${f.analyticName} (failed calls of ${f.accountId}: ${f.calls}, ${(f.warehouseMs / 1000).toFixed(3)} s of warehouse time)`,
    0,
    0,
    0,
    0,
    closedAt,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
  ]);
  return toCsv(STATEMENT_CSV_COLUMNS, [
    ...s.analytics.map((a) => row(a.name, a)),
    row('', s.totals),
    ...adjustments,
    ...failures,
  ]);
}

export function registerStatementRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/statements',
      tags: ['Owner'],
      summary: 'Your earnings in a billing period, per analytic (JSON, or CSV)',
      description: [
        'For every credit a caller spends on your analytics you earn 0.8 credit and 80% of what the',
        'caller paid for it (rounded down to the micro-USD); the platform keeps the rest. Free-plan',
        'credits earn credits and 0 USD; previews and your own calls earn nothing. Calls are shown by',
        'origin, and per day and analytic (`by_day`). Closing a period freezes it and sets `payout`: your earnings plus the sub-cent rest',
        'carried from your previous payout, in whole cents; the new rest is carried on. CSV with',
        '`?format=csv` or `Accept: text/csv`: one row per analytic, then the total row (blank `analytic`),',
        'then a row per adjustment and per caller with failed calls (`failed_calls`: free calls that ran in your',
        'warehouse and failed; no money).',
        'On a gateway with a read replica (QUARRY_READ_DATABASE_URL) it is read there, and may lag',
        'the latest calls by the replica’s delay.',
      ].join(' '),
      security: BEARER,
      request: { query: ReportQuerySchema },
      responses: {
        200: jsonOrCsv('Statement', StatementSchema),
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const csv = wantsCsv(c);
      const period = periodParam(c);
      const { from, to } = periodInstants(period);
      const [statement, failed] = await Promise.all([
        c.var.services.reads.billing.ownerStatement(c.var.principal.accountId, period),
        c.var.services.reads.failedCalls.byCaller(c.var.principal.accountId, from, to),
      ]);
      if (csv) return csvResponse(c, `quarry-statement-${period}.csv`, statementCsv(statement, failed));
      return c.json({
        period,
        closed_at: statement.closedAt?.toISOString() ?? null,
        analytics: statement.analytics.map((a) => ({ name: a.name, ...amountsJson(a) })),
        totals: amountsJson(statement.totals),
        by_day: statement.byDay.map((d) => ({ date: d.date, name: d.name, ...amountsJson(d) })),
        payout: payoutJson(statement.payout, c.var.services.config.payments.minPayoutCents),
        adjustments: statement.adjustments.map((a) => ({
          analytic: a.analytic,
          usage_period: a.usagePeriod,
          reason: a.reason,
          owner_micro_usd: -a.ownerMicroUsd,
          owner_usd: -usd(a.ownerMicroUsd),
          platform_micro_usd: -a.platformMicroUsd,
        })),
        failed_calls: failedCallsJson(failed),
      });
    },
  );
}
