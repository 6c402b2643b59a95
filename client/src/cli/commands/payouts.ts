// `quarry payouts` and `quarry payouts onboard`: where an owner's payouts go (the payment
// provider's account and what it still needs), the balance held and carried, each closed
// month's payout; and setting payouts up (the provider's onboarding page opened in a browser,
// then waiting until the provider says the account is complete).
import type { Payout, PayoutAccount, Payouts } from '../../types.js';
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, stringFlag } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';
import { waitUntil } from '../wait-until.js';

/** How often `payouts onboard` asks whether the account is complete. */
const DEFAULT_TIMEOUT_S = 600;

/** Whole cents as USD: `12.54 USD`, `-1.20 USD`. */
const cents = (value: number) => `${(value / 100).toFixed(2)} USD`;

/** Micro-USD as USD with two to six decimals: `3.794 USD`, `-0.25 USD`. */
function microUsd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const [whole = '0', decimals = ''] = (Math.abs(micro) / 1_000_000).toFixed(6).replace(/0+$/, '').split('.');
  return `${sign}${whole}.${decimals.padEnd(2, '0')} USD`;
}

/** A requirement of the provider in words: `external_account` → `external account`. */
const requirement = (r: string) => r.replaceAll('_', ' ').replaceAll('.', ': ');

/** Why a payout is held, in words (the provider's own words as they are). */
export function reasonText(reason: string | null, minimumCents: number): string {
  switch (reason) {
    case null:
      return '';
    case 'below_minimum':
      return `below the ${cents(minimumCents)} minimum: carried to next month`;
    case 'not_onboarded':
      return 'payouts not set up yet';
    case 'negative_balance':
      return 'refunds exceed earnings: carried';
    default:
      return reason;
  }
}

/** Where payouts go, in one or two lines. */
export function accountLines(account: PayoutAccount): string[] {
  if (account.provider === 'none') {
    return ['Payouts: paid by the operator of this gateway (no payment provider): nothing to set up.'];
  }
  const provider = account.provider === 'sandbox' ? 'sandbox: no money moves' : account.provider;
  const needs =
    account.requirements.length === 0
      ? ''
      : `; still needed: ${account.requirements.map(requirement).join(', ')}`;
  switch (account.status) {
    case 'complete':
      return [
        account.payouts_enabled
          ? `Payouts: set up (${provider}); payouts enabled.`
          : `Payouts: set up (${provider}), but the provider has paused payouts${needs}. Update with \`quarry payouts onboard\`.`,
      ];
    case 'pending':
      return [`Payouts: setup pending (${provider})${needs}. Continue with \`quarry payouts onboard\`.`];
    default:
      return [`Payouts: not set up (${provider}). Set up with \`quarry payouts onboard\`.`];
  }
}

/** The account line, the minimum, the balance, and the payouts as a table. */
export function formatPayouts(account: PayoutAccount, payouts: Payouts): string {
  const minimum = account.minimum_payout_cents;
  const lines = [
    ...accountLines(account),
    // The operator pays by hand whatever is due: no minimum applies.
    ...(account.provider === 'none'
      ? []
      : [`Minimum payout: ${cents(minimum)}; smaller amounts are held and carried to the next month.`]),
    payouts.balance_micro_usd < 0
      ? `Balance: ${microUsd(payouts.balance_micro_usd)} (refunds exceeded earnings: taken from your next payouts)`
      : `Balance: ${microUsd(payouts.balance_micro_usd)} held and carried`,
  ];
  if (payouts.payouts.length === 0)
    return `${lines.join('\n')}\n\nNo payouts yet: one is made for each closed month.\n`;
  const table = formatTable(
    [
      { header: 'period' },
      { header: 'status' },
      { header: 'reason' },
      { header: 'amount', right: true },
      { header: 'transfer id' },
    ],
    payouts.payouts.map((p: Payout) => [
      p.period,
      p.status,
      reasonText(p.reason, minimum),
      cents(p.payout_cents),
      p.transfer_id ?? '',
    ]),
  );
  return `${lines.join('\n')}\n\n${table}`;
}

function timeoutFlag(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TIMEOUT_S;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout takes a number of seconds above 0, got "${value}".`, 'payouts onboard');
  }
  return seconds;
}

export const payoutsCommand: Command = {
  name: 'payouts',
  summary: 'where your earnings are paid, the balance carried, and each month’s payout',
  help: `Usage: quarry payouts [--json]
       quarry payouts onboard [--no-wait] [--timeout SECONDS] [--json]

As an owner you are paid 80% of what callers paid for the credits spent on your analytics, once
a month for each closed month, through the gateway's payment provider. Shows whether payouts
are set up (and what the provider still needs), the minimum payout, the balance held and
carried (amounts below the minimum, or before payouts are set up; negative after refunds), and
each month's payout: status (held, pending, paid, failed, reversed; operator: paid by hand by
the operator of this gateway), why it is held, the amount and the transfer's reference.
\`quarry payouts onboard\` sets payouts up.

Options:
  --json        print {"account": GET /v1/owner/payouts/account, ...GET /v1/owner/payouts}
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const client = await connect(flags, io);
    const [account, payouts] = await Promise.all([client.payouts.account(), client.payouts.list()]);
    io.stdout.write(
      booleanFlag(flags, 'json')
        ? `${JSON.stringify({ account, ...payouts }, null, 2)}\n`
        : formatPayouts(account, payouts),
    );
    return EXIT.ok;
  },
};

function waitForOnboarding(
  io: CliIo,
  get: () => Promise<PayoutAccount>,
  timeoutS: number,
  url: string,
): Promise<PayoutAccount> {
  return waitUntil(io, {
    read: get,
    done: (account) => account.status === 'complete',
    timeoutS,
    label: (account, waitedS) =>
      `waiting for the onboarding (${account.status.replace('_', ' ')}, ${waitedS} s of ${timeoutS} s)`,
    timedOut: (account) =>
      `Payouts are still ${account.status.replace('_', ' ')} after ${timeoutS} s. Finish on ${url} (or run \`quarry payouts onboard\` again for a new link), then check with \`quarry payouts\`.`,
  });
}

export const payoutsOnboardCommand: Command = {
  name: 'payouts onboard',
  summary: "set up payouts: prints the provider's page, then waits until it is done",
  help: `Usage: quarry payouts onboard [--no-wait] [--timeout SECONDS] [--json]

Opens the payment provider's onboarding for your payouts and prints its URL (a new link each
time: they expire): open it in a browser and give the provider what it asks (a bank account…).
Then waits, asking the gateway every 2 s, until the provider says the account is complete, and
exits 0; exits 1 if it is not within the timeout. Exits 1 on a gateway whose operator pays by
hand (no payment provider).

Options:
  --no-wait           print the URL and exit
  --timeout SECONDS   how long to wait (default ${DEFAULT_TIMEOUT_S})
  --json              print {"url"} as one line of JSON, then (after waiting) the account
${CONNECTION_HELP}
  -h, --help          this help
`,
  options: {
    'no-wait': { type: 'boolean' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const timeoutS = timeoutFlag(stringFlag(flags, 'timeout'));
    const asJson = booleanFlag(flags, 'json');
    const client = await connect(flags, io);
    const onboarding = await client.payouts.onboarding();
    if (asJson) io.stdout.write(`${JSON.stringify(onboarding)}\n`);
    else io.stdout.write(`Open this page to set up your payouts:\n${onboarding.url}\n`);
    if (booleanFlag(flags, 'no-wait')) return EXIT.ok;
    io.stderr.write(`Waiting up to ${timeoutS} s for the onboarding (--no-wait to skip)…\n`);
    const account = await waitForOnboarding(io, () => client.payouts.account(), timeoutS, onboarding.url);
    io.stdout.write(asJson ? `${JSON.stringify(account)}\n` : `${accountLines(account).join('\n')}\n`);
    return EXIT.ok;
  },
};
