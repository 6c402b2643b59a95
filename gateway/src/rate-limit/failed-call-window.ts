// Warehouse time of an account's failed calls in a sliding window (docs/security.md, "Failed
// calls"): each failure adds the milliseconds it kept an owner's warehouse busy, and once the
// window holds `budgetMs` or more, the account waits until enough of it has slid out. The window
// is cut into SLOTS slots; a slot leaves it whole, so the wait is exact to a slot (a twentieth
// of the window). This is the in-memory form (one instance); redis-failed-call-window.ts shares
// the same arithmetic across instances.

/** Slots a window is cut into. */
export const SLOTS = 20;

export interface FailedCallWindowPolicy {
  /** Warehouse ms of failed calls allowed in a window; 0 turns the throttle off. */
  readonly budgetMs: number;
  readonly windowMs: number;
}

export interface FailedCallWindow {
  /**
   * Seconds `accountId` must wait before a call may run a query again, 0 when it may now.
   * Synchronous for the memory window (the common case costs one Map lookup).
   */
  lockedFor(accountId: string): number | Promise<number>;
  /** Adds `ms` of warehouse time of a failed call of `accountId`. */
  add(accountId: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

/** The slot `now` falls in. */
export const slotOf = (now: number, policy: FailedCallWindowPolicy) =>
  Math.floor(now / (policy.windowMs / SLOTS));

/**
 * Seconds to wait given the ms per slot: until the oldest slots have left the window and what
 * stays is below the budget; 0 when it already is. Slots outside the window are ignored.
 */
export function waitSeconds(
  slots: ReadonlyMap<number, number>,
  now: number,
  policy: FailedCallWindowPolicy,
): number {
  const slotMs = policy.windowMs / SLOTS;
  const current = slotOf(now, policy);
  const live = [...slots].filter(([slot]) => slot > current - SLOTS).sort((a, b) => a[0] - b[0]);
  let total = live.reduce((sum, [, ms]) => sum + ms, 0);
  if (total < policy.budgetMs) return 0;
  for (const [slot, ms] of live) {
    total -= ms;
    // Slot `slot` leaves the window when slot `slot + SLOTS` begins.
    if (total < policy.budgetMs) return Math.max(0.001, ((slot + SLOTS) * slotMs - now) / 1000);
  }
  return policy.windowMs / 1000;
}

/** Accounts tracked at once; past it the oldest entries go (a bound on memory, not a policy). */
const MAX_ACCOUNTS = 100_000;

export function createMemoryFailedCallWindow(
  policy: FailedCallWindowPolicy,
  clock: () => number = Date.now,
): FailedCallWindow {
  const accounts = new Map<string, Map<number, number>>();
  return {
    lockedFor(accountId) {
      const slots = accounts.get(accountId);
      if (slots === undefined) return 0;
      const now = clock();
      const wait = waitSeconds(slots, now, policy);
      if (wait === 0) {
        const oldest = slotOf(now, policy) - SLOTS;
        for (const slot of slots.keys()) if (slot <= oldest) slots.delete(slot);
        if (slots.size === 0) accounts.delete(accountId);
      }
      return wait;
    },
    async add(accountId, ms) {
      let slots = accounts.get(accountId);
      if (slots === undefined) {
        if (accounts.size >= MAX_ACCOUNTS) {
          const first = accounts.keys().next().value;
          if (first !== undefined) accounts.delete(first);
        }
        slots = new Map();
        accounts.set(accountId, slots);
      }
      const slot = slotOf(clock(), policy);
      slots.set(slot, (slots.get(slot) ?? 0) + ms);
    },
    async close() {
      accounts.clear();
    },
  };
}
