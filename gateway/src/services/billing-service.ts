// Reports of the money side for routes: a caller's usage in a period with its plan, an owner's
// statement, and the operator's closing of a period (DESIGN.md §4).
import type { Plan, PlanCatalog } from '../billing/plan-catalog.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { ClosedPeriod, OwnerStatement } from '../store/statement-repository.js';
import type { UsageReport } from '../store/usage-repository.js';

export interface AccountUsage {
  /** The account's stored plan (an operator's change shows at once, whatever credentials cached). */
  readonly plan: Plan;
  readonly report: UsageReport;
  /** Calls the quota counter holds for the period, those in flight included. */
  readonly counted: number;
}

export interface BillingService {
  /** The account's usage in `period`; `fallbackPlan` when the account row is gone. */
  usage(accountId: string, fallbackPlan: string, period: string): Promise<AccountUsage>;
  ownerStatement(ownerId: string, period: string): Promise<OwnerStatement>;
  /** Freezes every owner statement of an ended period (idempotent; CONFLICT while calls are in flight). */
  closePeriod(period: string): Promise<ClosedPeriod>;
}

export function createBillingService(store: ControlPlaneStore, plans: PlanCatalog): BillingService {
  return {
    async usage(accountId, fallbackPlan, period) {
      const account = await store.accounts.get(accountId);
      const plan = plans.resolve(account?.plan ?? fallbackPlan);
      const [report, counted] = await Promise.all([
        store.usage.usageFor(accountId, period),
        store.usage.counter(accountId, period),
      ]);
      return { plan, report, counted: Number(counted) };
    },
    ownerStatement: (ownerId, period) => store.statements.ownerStatement(ownerId, period),
    closePeriod: (period) => store.statements.closePeriod(period),
  };
}
