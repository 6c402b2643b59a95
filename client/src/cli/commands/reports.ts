// `quarry usage` (your calls and credits in a period) and `quarry statements` (your earnings as
// an owner): a readable summary, or the gateway's JSON (--json) or CSV (--csv).
import type { Statement, Usage } from '../../types.js';
import { EXIT } from '../cli-errors.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, periodFlag } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';

/** Minor units (cents, credits at 1/100) as a decimal amount. */
const money = (cents: number) => (cents / 100).toFixed(2);

function formatUsage(u: Usage): string {
  const cap = u.plan.included_calls === null ? 'no monthly cap' : `${u.plan.included_calls} calls/month`;
  const t = u.totals;
  const head = [
    `Usage in ${u.period} — plan ${u.plan.name} (${cap})`,
    `calls ${t.calls} · remaining ${t.remaining_calls ?? 'unlimited'} · credits ${t.credits} · marketplace calls ${t.marketplace_calls} · due ${money(t.amount_due_cents)} USD`,
  ].join('\n');
  if (u.by_analytic.length === 0) return `${head}\nNo calls in this period.\n`;
  const table = formatTable(
    [{ header: 'analytic' }, { header: 'calls', right: true }, { header: 'credits', right: true }],
    u.by_analytic.map((a) => [a.name, a.calls, a.credits]),
  );
  return `${head}\n\n${table}`;
}

/**
 * A statement as a table, its columns read from the gateway's JSON (every scalar field of the
 * rows, in the order the gateway sends them), so new money fields show without a CLI change.
 */
export function formatStatement(s: Statement): string {
  const state = s.closed_at === null ? 'open (live from the ledger)' : `closed ${s.closed_at}`;
  const rows: Record<string, unknown>[] = [
    ...(s.analytics as unknown as Record<string, unknown>[]),
    { name: 'total', ...(s.totals as unknown as Record<string, unknown>) },
  ];
  const fields: string[] = [];
  for (const row of rows)
    for (const [field, value] of Object.entries(row))
      if (!fields.includes(field) && (value === null || typeof value !== 'object')) fields.push(field);
  const table = formatTable(
    fields.map((field) => ({
      header: field.replaceAll('_', ' '),
      right: rows.some((r) => typeof r[field] === 'number'),
    })),
    rows.map((row) => fields.map((field) => row[field])),
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
  const table = formatTable(
    [
      { header: 'adjustment' },
      { header: 'usage period' },
      { header: 'analytic' },
      { header: 'owner usd', right: true },
      { header: 'platform usd', right: true },
    ],
    adjustments.map((a) => [
      a.reason,
      a.usage_period,
      a.analytic,
      microUsd(a.owner_micro_usd),
      microUsd(a.platform_micro_usd),
    ]),
  );
  return `\n${table}`;
}

/** A closed period's payout in one line: amount, status, why held, the transfer. */
function payoutLine(s: Statement): string {
  const p = s.payout;
  if (p === null || p === undefined) return '';
  const parts = [`Payout: ${money(p.payout_cents)} USD`];
  if (p.status !== undefined)
    parts.push(p.reason ? `${p.status} (${p.reason.replaceAll('_', ' ')})` : p.status);
  if (p.transfer_id) parts.push(`transfer ${p.transfer_id}`);
  return `\n${parts.join(', ')} — earned ${microUsd(p.earned_micro_usd)}${
    p.adjusted_micro_usd ? `, adjusted -${microUsd(p.adjusted_micro_usd)}` : ''
  }, carried in ${microUsd(p.carried_in_micro_usd)}, carried out ${microUsd(p.carried_out_micro_usd)} USD\n`;
}

export const usageCommand: Command = {
  name: 'usage',
  summary: "your account's calls and credits in a period",
  help: `Usage: quarry usage [--period YYYY-MM] [--json] [--csv]

Shows the calls your account made in a billing period (a calendar month, UTC; default the
current one), what the plan leaves, and the calls per analytic. Failed calls are never counted.

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
  help: `Usage: quarry statements [--period YYYY-MM] [--csv] [--json]

Shows what your analytics earned in a period: calls, credits, your 80% share (rounded down per
call) and the platform's remainder, per analytic and in total. Live while the period is open,
frozen once it is closed; then its adjustments (refunds and disputes of earlier usage) and its
payout (amount, status, transfer). \`quarry payouts\` lists every payout.

Options:
  --period YYYY-MM   the month (default: this month)
  --csv              print the statement as CSV
  --json             print the gateway's JSON statement
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: {
    period: { type: 'string' },
    csv: { type: 'boolean' },
    json: { type: 'boolean' },
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
      booleanFlag(flags, 'json') ? `${JSON.stringify(statement, null, 2)}\n` : formatStatement(statement),
    );
    return EXIT.ok;
  },
};
