// `quarry billing status|upgrade|portal`: the account's plan and subscription, buying another
// plan (a checkout opened in a browser, then waiting for the plan to change: the payment arrives
// at the gateway by webhook), and the payment provider's page for the card and invoices.
import type { Billing, BillingPlan, Plan } from '../../types.js';
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, stringFlag } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';
import { waitUntil } from '../wait-until.js';

/** How often `billing upgrade` asks whether the plan changed. */
const DEFAULT_TIMEOUT_S = 600;

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const usd = (value: number) => `$${value.toFixed(2)}`;
/** A credit's cost: at least two decimals, as many more as it has (SMB $0.196). */
function creditUsd(value: number): string {
  const [whole = '0', decimals = ''] = value.toFixed(6).replace(/0+$/, '').split('.');
  return `$${whole}.${decimals.padEnd(2, '0')}`;
}

function credits(plan: Plan): string {
  return plan.included_credits === null ? 'pay per credit' : plan.included_credits.toLocaleString('en-US');
}

function price(plan: Plan): string {
  if (plan.included_credits === null) return `${usd(plan.per_call_cents / 100)}/credit`;
  return plan.monthly_price_cents === 0 ? 'free' : `${usd(plan.monthly_price_cents / 100)}/month`;
}

const ACTIONS: Readonly<Record<string, (plan: BillingPlan) => string>> = {
  current: () => 'current plan',
  upgrade: (p) => `upgrade: quarry billing upgrade ${p.id}`,
  add_card: (p) => `add a card: quarry billing upgrade ${p.id}`,
  downgrade: () => 'downgrade: quarry billing portal',
};

const planName = (b: Billing, id: string) => b.plans.find((p) => p.id === id)?.name ?? id;

/** The status lines and the plans table. */
export function formatBilling(b: Billing): string {
  const lines = [`Plan: ${b.plan.name} (${credits(b.plan)} credits a month, ${price(b.plan)})`];
  const end = b.current_period_end;
  switch (b.status) {
    case 'active':
      lines.push(
        `Status: active${end === null ? '' : b.cancel_at_period_end ? `, ends ${end}` : `, renews ${end}`}`,
      );
      break;
    case 'past_due':
      lines.push(
        `Status: past due: the last payment failed${b.grace_ends_at === null ? '' : `; the account falls back to the Free plan at ${b.grace_ends_at} unless the card is updated (quarry billing portal)`}`,
      );
      break;
    case 'canceled':
      lines.push(`Status: canceled${end === null ? '' : `, ends ${end}`}`);
      break;
    default:
      lines.push('Status: no subscription');
  }
  lines.push(`Card on file: ${b.card_on_file ? 'yes' : 'no'}`);
  if (b.pending_plan !== null) {
    lines.push(
      `Pending: changes to ${planName(b, b.pending_plan)}${b.pending_at === null ? '' : ` at ${b.pending_at}`}`,
    );
  }
  if (b.budget !== null) {
    lines.push(
      `Budget: ${usd(b.budget.spent_usd)} spent of ${usd(b.budget.budget_usd)} this month, ${usd(b.budget.left_usd)} left`,
    );
  }
  for (const invoice of b.invoices.slice(0, 3)) {
    lines.push(`Invoice ${invoice.period}: ${usd(invoice.amount_usd)}, ${invoice.status.replace('_', ' ')}`);
  }
  if (b.provider === 'none') lines.push('Payments: none; plans are set by the operator of this gateway.');
  else if (b.provider === 'sandbox') lines.push('Payments: sandbox (no money moves)');
  else lines.push(`Payments: ${b.provider}`);
  const table = formatTable(
    [
      { header: 'plan' },
      { header: 'name' },
      { header: 'credits/month', right: true },
      { header: 'price', right: true },
      { header: 'a credit costs', right: true },
      { header: 'action' },
    ],
    b.plans.map((p) => [
      p.id,
      p.name,
      credits(p),
      price(p),
      creditUsd(p.credit_value_usd),
      p.action === null ? '' : (ACTIONS[p.action]?.(p) ?? p.action),
    ]),
  );
  return `${lines.join('\n')}\n\n${table}`;
}

/** Whether `billing` shows the requested plan in force (Pay as you Go: with a card on file). */
const arrived = (billing: Billing, plan: string) =>
  billing.plan.id === plan && (plan !== 'payg' || billing.card_on_file);

function timeoutFlag(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_S;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout takes a number of seconds above 0, got "${value}".`, 'billing upgrade');
  }
  return seconds;
}

export const billingStatusCommand: Command = {
  name: 'billing status',
  summary: 'your plan, its subscription, card and budget, and the plans on offer',
  help: `Usage: quarry billing status [--json]

Shows your plan, the subscription's status (active, past due with the date the account falls
back to the Free plan, canceled), when the period ends, whether a card is on file, a pending
downgrade, the Pay as you Go budget, and every plan on offer with what you can do about it.

Options:
  --json        print the gateway's JSON (GET /v1/billing)
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const billing = await (await connect(flags, io)).billing.get();
    io.stdout.write(booleanFlag(flags, 'json') ? json(billing) : formatBilling(billing));
    return EXIT.ok;
  },
};

function waitForPlan(
  io: CliIo,
  get: () => Promise<Billing>,
  plan: string,
  timeoutS: number,
  url: string,
): Promise<Billing> {
  return waitUntil(io, {
    read: get,
    done: (billing) => arrived(billing, plan),
    timeoutS,
    label: (billing, waitedS) =>
      `waiting for the payment (plan ${billing.plan.id}, ${waitedS} s of ${timeoutS} s)`,
    timedOut: (billing) =>
      `The plan is still ${billing.plan.name} after ${timeoutS} s: no payment for ${plan} has arrived. Pay on ${url}, then check with \`quarry billing status\`.`,
  });
}

export const billingUpgradeCommand: Command = {
  name: 'billing upgrade',
  summary: 'buy a plan: prints the checkout page, then waits for the plan to change',
  help: `Usage: quarry billing upgrade <plan> [--no-wait] [--timeout SECONDS] [--json]

Opens a checkout for a plan (smb, enterprise; payg puts a card on file for Pay as you Go) and
prints its URL: open it in a browser and pay. Then waits, asking the gateway every 2 s, until
the plan is in force (payg: with a card on file), and exits 0; exits 1 if it is not within the
timeout. A downgrade is made in the payment provider's pages: \`quarry billing portal\`.

Options:
  --no-wait           print the checkout URL and exit
  --timeout SECONDS   how long to wait for the payment (default ${DEFAULT_TIMEOUT_S})
  --json              print the checkout as one line of JSON, then (after waiting) the billing
${CONNECTION_HELP}
  -h, --help          this help
`,
  options: {
    'no-wait': { type: 'boolean' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const plan = positionals[0] as string;
    const timeoutS = timeoutFlag(stringFlag(flags, 'timeout'));
    const asJson = booleanFlag(flags, 'json');
    const client = await connect(flags, io);
    const checkout = await client.billing.checkout(plan);
    if (asJson) io.stdout.write(`${JSON.stringify(checkout)}\n`);
    else io.stdout.write(`Open this page to pay for ${plan}:\n${checkout.url}\n`);
    if (booleanFlag(flags, 'no-wait')) return EXIT.ok;
    io.stderr.write(`Waiting up to ${timeoutS} s for the payment (--no-wait to skip)…\n`);
    const billing = await waitForPlan(io, () => client.billing.get(), plan, timeoutS, checkout.url);
    io.stdout.write(
      asJson
        ? `${JSON.stringify(billing)}\n`
        : plan === 'payg'
          ? `Card on file: you are on ${billing.plan.name}.\n`
          : `Paid: you are on ${billing.plan.name}.\n`,
    );
    return EXIT.ok;
  },
};

export const billingPortalCommand: Command = {
  name: 'billing portal',
  summary: "the payment provider's page: card, invoices, downgrade, cancel",
  help: `Usage: quarry billing portal [--json]

Prints the URL of the payment provider's page for your account: update the card, read
invoices, downgrade or cancel. Open it in a browser. Needs a paid plan or a card on file.

Options:
  --json        print {"url"} as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const portal = await (await connect(flags, io)).billing.portal();
    io.stdout.write(booleanFlag(flags, 'json') ? json(portal) : `${portal.url}\n`);
    return EXIT.ok;
  },
};
