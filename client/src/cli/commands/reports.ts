// `quarry usage` (your calls and credits in a period) and `quarry statements` (your earnings as
// an owner): a readable summary, or the gateway's JSON (--json) or CSV (--csv).
import type { Statement, Usage } from '../../types.js';
import { EXIT } from '../cli-errors.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, periodFlag } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';

/** Minor units (cents, credits at 1/100) as a decimal amount. */
const money = (cents: number) => (cents / 100).toFixed(2);

/** The report's fields this CLI reads beyond `Usage` (older gateways may lack them). */
type UsageReport = Usage & {
  readonly plan: { readonly included_credits?: number | null };
  readonly totals: {
    readonly calls_by_origin?: {
      readonly paid: number;
      readonly free: number;
      readonly marketplace: number;
      readonly owner: number;
    };
    readonly credits_left?: number | null;
  };
};

/**
 * The usage report in credits (what a plan includes and a call spends), with the calls by
 * origin: those that spent credits, the free calls of your own analytics, the free previews.
 */
export function formatUsage(u: UsageReport): string {
  const included = u.plan.included_credits ?? u.plan.included_calls;
  const cap = included === null ? 'Pay as you Go' : `${included} credits a month`;
  const t = u.totals;
  const left = t.credits_left !== undefined ? t.credits_left : t.remaining_calls;
  const origin = t.calls_by_origin;
  const own = origin?.owner ?? 0;
  const previews = origin?.marketplace ?? t.marketplace_calls;
  const head = [
    `Usage in ${u.period} — plan ${u.plan.name} (${cap})`,
    `credits used ${t.credits} · credits left ${left ?? 'no cap'} · due ${money(t.amount_due_cents)} USD`,
    `calls: ${t.calls} that spent credits · ${own} calls of your own analytics (free) · ${previews} marketplace previews (free)`,
  ].join('\n');
  if (u.by_analytic.length === 0) return `${head}\nNo call spent credits in this period.\n`;
  const table = formatTable(
    [{ header: 'analytic' }, { header: 'calls', right: true }, { header: 'credits', right: true }],
    u.by_analytic.map((a) => [a.name, a.calls, a.credits]),
  );
  return `${head}\n\n${table}`;
}

/** The widest a statement line gets without --wide. */
const STATEMENT_WIDTH = 100;

/** `text` cut to `width` characters with an ellipsis. */
const cut = (text: string, width: number) =>
  [...text].length <= width ? text : `${[...text].slice(0, width - 1).join('')}…`;

/**
 * `cells` with column `flex` (a name) cut so the table fits STATEMENT_WIDTH: every other column
 * keeps its widest cell, with two spaces between columns, and the name gets what is left.
 */
function fitted(
  columns: readonly { readonly header: string }[],
  cells: readonly (readonly unknown[])[],
  flex: number,
): unknown[][] {
  const others = columns
    .map((c, i) =>
      i === flex ? 0 : Math.max(c.header.length, ...cells.map((row) => String(row[i] ?? '').length)) + 2,
    )
    .reduce((a, b) => a + b, 0);
  const width = Math.max(8, STATEMENT_WIDTH - others);
  return cells.map((row) => row.map((value, i) => (i === flex ? cut(String(value), width) : value)));
}

/**
 * A statement in at most 100 columns: per analytic its calls (paid, free, your own), credits,
 * what the callers paid and your share; the analytic's name is cut to fit. `--wide` shows every
 * field (formatStatementWide), `--json` the gateway's JSON.
 */
export function formatStatement(s: Statement): string {
  const state = s.closed_at === null ? 'open (live from the ledger)' : `closed ${s.closed_at}`;
  const rows = [...s.analytics, { ...s.totals, name: 'total' }];
  const columns = [
    { header: 'analytic' },
    { header: 'calls', right: true },
    { header: 'paid', right: true },
    { header: 'free', right: true },
    { header: 'own', right: true },
    { header: 'credits', right: true },
    { header: 'paid usd', right: true },
    { header: 'your share usd', right: true },
  ];
  const cells = rows.map((r) => [
    r.name,
    r.calls,
    r.calls_by_origin?.paid,
    r.calls_by_origin?.free,
    r.calls_by_origin?.owner,
    r.credits,
    r.value_usd,
    r.owner_share_usd,
  ]);
  const table = formatTable(columns, fitted(columns, cells, 0));
  return `Statement for ${s.period} — ${state}\n\n${table}${adjustmentLines(s)}${payoutLine(s)}`;
}

/** A row's scalar fields, an object's own (`calls_by_origin`) as `calls_by_origin paid` and so on. */
function flatRow(row: Record<string, unknown>): Record<string, unknown> {
  const flat: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(row)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, v] of Object.entries(value))
        if (v === null || typeof v !== 'object') flat[`${field} ${inner}`] = v;
    } else if (value === null || typeof value !== 'object') flat[field] = value;
  }
  return flat;
}

/**
 * A statement as a table (`--wide`), its columns read from the gateway's JSON (every scalar
 * field of the rows and of their objects, such as the calls by origin, in the order the gateway
 * sends them), so new money fields show without a CLI change; no cell is cut.
 */
export function formatStatementWide(s: Statement): string {
  const state = s.closed_at === null ? 'open (live from the ledger)' : `closed ${s.closed_at}`;
  const rows = [
    ...(s.analytics as unknown as Record<string, unknown>[]),
    { name: 'total', ...(s.totals as unknown as Record<string, unknown>) },
  ].map(flatRow);
  const fields: string[] = [];
  for (const row of rows)
    for (const field of Object.keys(row)) if (!fields.includes(field)) fields.push(field);
  const table = formatTable(
    fields.map((field) => ({
      header: field.replaceAll('_', ' '),
      right: rows.some((r) => typeof r[field] === 'number'),
    })),
    rows.map((row) => fields.map((field) => row[field])),
    { maxCell: Number.POSITIVE_INFINITY },
  );
  return `Statement for ${s.period} — ${state}\n\n${table}${adjustmentLines(s)}${payoutLine(s)}`;
}

/** Micro-USD as USD with two to six decimals. */
function microUsd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const [whole = '0', decimals = ''] = (Math.abs(micro) / 1_000_000).toFixed(6).replace(/0+$/, '').split('.');
  return `${sign}${whole}.${decimals.padEnd(2, '0')}`;
}

/** Refunds and disputes of earlier usage taken from this period, as a table. */
function adjustmentLines(s: Statement): string {
  const adjustments = s.adjustments;
  if (adjustments.length === 0) return '';
  const columns = [
    { header: 'adjustment' },
    { header: 'usage period' },
    { header: 'analytic' },
    { header: 'owner usd', right: true },
    { header: 'platform usd', right: true },
  ];
  const cells = adjustments.map((a) => [
    a.reason,
    a.usage_period,
    a.analytic,
    microUsd(a.owner_micro_usd),
    microUsd(a.platform_micro_usd),
  ]);
  // The analytic's name is cut like the statement's own lines (--wide and --json show it whole).
  const table = formatTable(columns, fitted(columns, cells, 2));
  return `\n${table}`;
}

/** A closed period's payout: amount, status, why held, the transfer; then how it adds up. */
function payoutLine(s: Statement): string {
  const p = s.payout;
  if (p === null || p === undefined) return '';
  const parts = [`Payout: ${money(p.payout_cents)} USD`];
  if (p.status !== undefined)
    parts.push(p.reason ? `${p.status} (${p.reason.replaceAll('_', ' ')})` : p.status);
  if (p.transfer_id) parts.push(`transfer ${p.transfer_id}`);
  return `\n${parts.join(', ')}\n  earned ${microUsd(p.earned_micro_usd)}${
    p.adjusted_micro_usd ? `, adjusted -${microUsd(p.adjusted_micro_usd)}` : ''
  }, carried in ${microUsd(p.carried_in_micro_usd)}, carried out ${microUsd(p.carried_out_micro_usd)} USD\n`;
}

export const usageCommand: Command = {
  name: 'usage',
  summary: "your account's credits and calls in a period",
  help: `Usage: quarry usage [--period YYYY-MM] [--json] [--csv]

Shows the credits your account spent in a billing period (a calendar month, UTC; default the
current one), what the plan leaves, your calls by origin (those that spent credits, the free
calls of your own analytics, the free marketplace previews), and the calls that spent credits
per analytic. Failed calls are never counted.

Options:
  --period YYYY-MM   the month (default: this month)
  --json             print the gateway's JSON report
  --csv              print the report as CSV
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: {
    period: { type: 'string' },
    json: { type: 'boolean' },
    csv: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const period = periodFlag(flags, 'usage');
    const client = await connect(flags, io);
    const options = period === undefined ? {} : { period };
    if (booleanFlag(flags, 'csv')) {
      io.stdout.write(await client.usage.csv(options));
      return EXIT.ok;
    }
    const usage = await client.usage.get(options);
    io.stdout.write(booleanFlag(flags, 'json') ? `${JSON.stringify(usage, null, 2)}\n` : formatUsage(usage));
    return EXIT.ok;
  },
};

export const statementsCommand: Command = {
  name: 'statements',
  summary: 'your earnings as an owner in a period',
  help: `Usage: quarry statements [--period YYYY-MM] [--wide] [--csv] [--json]

Shows what your analytics earned in a period: calls, credits, your 80% share (rounded down per
call) and the platform's remainder, per analytic and in total. Live while the period is open,
frozen once it is closed; then its adjustments (refunds and disputes of earlier usage) and its
payout (amount, status, transfer). \`quarry payouts\` lists every payout.

The table fits 100 columns: per analytic the calls (paid, free, your own), the credits, what
the callers paid and your share. --wide shows every field the gateway sends.

Options:
  --period YYYY-MM   the month (default: this month)
  --wide             every field of the statement (a wide table)
  --csv              print the statement as CSV
  --json             print the gateway's JSON statement
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: {
    period: { type: 'string' },
    csv: { type: 'boolean' },
    json: { type: 'boolean' },
    wide: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const period = periodFlag(flags, 'statements');
    const client = await connect(flags, io);
    const options = period === undefined ? {} : { period };
    if (booleanFlag(flags, 'csv')) {
      io.stdout.write(await client.statements.csv(options));
      return EXIT.ok;
    }
    const statement = await client.statements.get(options);
    io.stdout.write(
      booleanFlag(flags, 'json')
        ? `${JSON.stringify(statement, null, 2)}\n`
        : booleanFlag(flags, 'wide')
          ? formatStatementWide(statement)
          : formatStatement(statement),
    );
    return EXIT.ok;
  },
};
