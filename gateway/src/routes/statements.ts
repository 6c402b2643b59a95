// GET /v1/owner/statements: an owner's earnings in one billing period, per analytic, as JSON or
// CSV. Live from the ledger while the period is open; the frozen snapshot once it is closed.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER } from '../http/common-schemas.js';
import { csvResponse, toCsv, wantsCsv } from '../http/csv.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { jsonOrCsv, periodParam, ReportQuerySchema } from '../http/period-param.js';
import { route } from '../http/route.js';
import type { OwnerStatement, StatementAmounts } from '../store/statement-repository.js';

const Amounts = z.object({
  calls: z.number().int(),
  credits: z.number().int(),
  owner_share: z.number().int().openapi({ description: "80% of each call's credits, rounded down per call" }),
  platform_share: z.number().int().openapi({ description: 'The remainder: the two sum to `credits`' }),
});

export const StatementSchema = z
  .object({
    period: z.string(),
    closed_at: z.string().nullable().openapi({ description: 'Set once the period is closed (frozen)' }),
    analytics: z.array(Amounts.extend({ name: z.string() })),
    totals: Amounts,
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
] as const;

const amountsJson = (a: StatementAmounts) => ({
  calls: Number(a.calls),
  credits: Number(a.credits),
  owner_share: Number(a.ownerShare),
  platform_share: Number(a.platformShare),
});

function statementCsv(s: OwnerStatement): string {
  const closedAt = s.closedAt?.toISOString() ?? '';
  const row = (name: string, a: StatementAmounts) => {
    const j = amountsJson(a);
    return [s.period, name, j.calls, j.credits, j.owner_share, j.platform_share, closedAt];
  };
  return toCsv(STATEMENT_CSV_COLUMNS, [...s.analytics.map((a) => row(a.name, a)), row('', s.totals)]);
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
        "The owner earns 80% of every credit spent on the owner's analytics, rounded down per call;",
        'the platform keeps the remainder. Free marketplace try-it calls earn nothing. CSV with',
        '`?format=csv` or `Accept: text/csv`; columns `period,analytic,calls,credits,owner_share,',
        'platform_share,closed_at`, one row per analytic, then the total row with a blank `analytic`.',
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
      const statement = await c.var.services.billing.ownerStatement(c.var.principal.accountId, period);
      if (csv) return csvResponse(c, `quarry-statement-${period}.csv`, statementCsv(statement));
      return c.json({
        period,
        closed_at: statement.closedAt?.toISOString() ?? null,
        analytics: statement.analytics.map((a) => ({ name: a.name, ...amountsJson(a) })),
        totals: amountsJson(statement.totals),
      });
    },
  );
}
