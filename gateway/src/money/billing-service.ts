// Reports of the money side for routes (docs/money.md): a caller's usage in a period with its
// plan and budget, an owner's statement, a Pay as you Go account's budget, and the operator's
// closing of a period.

import { ApiError } from '../errors/api-error.js';
import type { ControlPlaneStore } from '../store/control-plane-store.js';
import type { MoneyStore } from './money-store.js';
import type { MonthClose, PayoutsService } from './payouts.js';
import { isBudgeted, type Plan, type PlanCatalog } from './plan-catalog.js';
import type { OwnerStatement } from './statement-repository.js';
import { microUsdToUsd } from './units.js';
import type { BudgetPolicy, CounterTotals, UsageReport } from './usage-repository.js';

export interface AccountUsage {
  /** The account's stored plan (an operator's change shows at once, whatever credentials cached). */
  readonly plan: Plan;
  readonly report: UsageReport;
  /** What the quota counter holds for the period, calls in flight included. */
  readonly counted: CounterTotals;
  /** The Pay as you Go budget in micro-USD; null on other plans. */
  readonly budgetMicroUsd: number | null;
}

/** An account's Pay as you Go budget, in micro-USD. */
export interface Budget {
  readonly budgetMicroUsd: number;
  /** The operator's cap (QUARRY_MAX_BUDGET_USD). */
  readonly maxMicroUsd: number;
  /** Whether the account set it (false: the operator's default). */
  readonly custom: boolean;
  /** Spent this period, calls in flight included. */
  readonly spentMicroUsd: number;
  readonly period: string;
}

export interface BillingService {
  /** The account's usage in `period`; `fallbackPlan` when the account row is gone. */
  usage(accountId: string, fallbackPlan: string, period: string): Promise<AccountUsage>;
  ownerStatement(ownerId: string, period: string): Promise<OwnerStatement>;
  /**
   * Freezes every owner statement of an ended period and computes payouts, then invoices the
   * period's Pay as you Go usage (each idempotent; CONFLICT while calls are in flight).
   */
  closePeriod(period: string): Promise<MonthClose>;
  /** The account's budget and what it spent in `period`. */
  budget(accountId: string, period: string): Promise<Budget>;
  /** Sets the budget (micro-USD); INVALID_REQUEST above the operator's cap. */
  setBudget(accountId: string, microUsd: number, period: string): Promise<Budget>;
}

export function createBillingService(
  store: ControlPlaneStore,
  money: MoneyStore,
  plans: PlanCatalog,
  budgets: BudgetPolicy,
  months: Pick<PayoutsService, 'closeNow'>,
): BillingService {
  const effective = (own: number | null) => Math.min(own ?? budgets.defaultMicroUsd, budgets.maxMicroUsd);
  const budget = async (accountId: string, period: string): Promise<Budget> => {
    const [own, counted] = await Promise.all([
      money.usage.budgetOf(accountId),
      money.usage.counters(accountId, period),
    ]);
    return {
      budgetMicroUsd: effective(own),
      maxMicroUsd: budgets.maxMicroUsd,
      custom: own !== null,
      spentMicroUsd: counted.valueMicroUsd,
      period,
    };
  };
  return {
    async usage(accountId, fallbackPlan, period) {
      const account = await store.accounts.get(accountId);
      const plan = plans.resolve(account?.plan ?? fallbackPlan);
      const [report, counted, own] = await Promise.all([
        money.usage.usageFor(accountId, period),
        money.usage.counters(accountId, period),
        isBudgeted(plan) ? money.usage.budgetOf(accountId) : Promise.resolve(null),
      ]);
      return { plan, report, counted, budgetMicroUsd: isBudgeted(plan) ? effective(own) : null };
    },
    ownerStatement: (ownerId, period) => money.statements.ownerStatement(ownerId, period),
    closePeriod: (period) => months.closeNow(period),
    budget,
    async setBudget(accountId, microUsd, period) {
      if (microUsd > budgets.maxMicroUsd) {
        const max = microUsdToUsd(budgets.maxMicroUsd);
        throw new ApiError('INVALID_REQUEST', `A budget may be at most ${max} USD on this gateway.`, {
          details: [{ field: 'budget_usd', message: `at most ${max}` }],
        });
      }
      if (!(await money.usage.setBudget(accountId, microUsd))) {
        throw new ApiError('NOT_FOUND', 'The account is gone.');
      }
      return budget(accountId, period);
    },
  };
}
