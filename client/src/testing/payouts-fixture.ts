// Owner payout answers for the client's and the CLI's tests (`GET /v1/owner/payouts/account`,
// `GET /v1/owner/payouts`), as the gateway's contract gives them: sandbox payments, a 10.00 USD
// minimum, a paid month, a month held below the minimum and one held before onboarding.
import type { Payout, PayoutAccount, Payouts } from '../types.js';

/** A payout account in `status` (default: onboarding not started), with `overrides`. */
export function payoutAccountAnswer(
  status: PayoutAccount['status'] = 'not_started',
  overrides: Partial<PayoutAccount> = {},
): PayoutAccount {
  return {
    provider: 'sandbox',
    status,
    payouts_enabled: status === 'complete',
    requirements: status === 'complete' ? [] : ['external_account'],
    minimum_payout_cents: 1_000,
    ...overrides,
  };
}

const payout = (p: Partial<Payout> & Pick<Payout, 'period' | 'status'>): Payout => ({
  reason: null,
  reason_text: null,
  payout_cents: 0,
  payout_usd: 0,
  earned_micro_usd: 0,
  adjusted_micro_usd: 0,
  carried_in_micro_usd: 0,
  carried_out_micro_usd: 0,
  transfer_id: null,
  paid_at: null,
  ...p,
});

/** Three closed months, newest first: paid, held below the minimum, held before onboarding. */
export const PAYOUTS: Payouts = {
  balance_micro_usd: 0,
  balance_usd: 0,
  payouts: [
    payout({
      period: '2026-10',
      status: 'paid',
      payout_cents: 1_254,
      payout_usd: 12.54,
      earned_micro_usd: 9_000_000,
      adjusted_micro_usd: 250_000,
      carried_in_micro_usd: 3_794_000,
      carried_out_micro_usd: 4_000,
      transfer_id: 'tr_sandbox_1a2b3c',
      paid_at: '2026-11-01T00:05:00.000Z',
    }),
    payout({
      period: '2026-09',
      status: 'held',
      reason: 'below_minimum',
      reason_text: 'below the 10.00 USD minimum: carried to the next month',
      earned_micro_usd: 3_194_000,
      carried_in_micro_usd: 600_000,
      carried_out_micro_usd: 3_794_000,
    }),
    payout({
      period: '2026-08',
      status: 'held',
      reason: 'not_onboarded',
      reason_text: 'payouts are not set up yet: carried until they are',
      earned_micro_usd: 600_000,
      carried_out_micro_usd: 600_000,
    }),
  ],
};

/** The payouts answer with `overrides`. */
export function payoutsAnswer(overrides: Partial<Payouts> = {}): Payouts {
  return { ...PAYOUTS, ...overrides };
}
