// An account's standing with its payment provider, as the gateway last read it: the type the
// provider interface, the repository and the rules share.

export type BillingStatus = 'none' | 'active' | 'past_due' | 'canceled';

/** What the gateway last read of an account at its payment provider. */
export interface BillingAccount {
  readonly accountId: string;
  readonly provider: 'sandbox' | 'stripe';
  readonly customerId: string;
  readonly subscriptionId: string | null;
  readonly subscriptionPlan: string | null;
  readonly status: BillingStatus;
  readonly currentPeriodEnd: Date | null;
  readonly cancelAtPeriodEnd: boolean;
  readonly pendingPlan: string | null;
  readonly pendingAt: Date | null;
  readonly pastDueSince: Date | null;
  readonly cardOnFile: boolean;
}
