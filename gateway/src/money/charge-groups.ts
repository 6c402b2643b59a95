// The groups of an optimistic charge batch (usage-repository.ts `chargeBatch`): calls that agree
// on every field but their request id and latency are sent once, with a count. A batch usually
// holds a handful of groups (a caller's key on an analytic), so a call is first compared field
// by field with the groups already made; only a batch of many groups builds each call's text key
// and looks it up, so a batch of n calls costs O(n) either way and no call of the usual batch
// builds a string.
import type { UsageOrigin } from './revenue-split.js';

/** What decides a call's group. */
export interface GroupedCall {
  readonly input: {
    readonly accountId: string;
    readonly keyId: string | null;
    readonly period: string;
    readonly plan: string;
    readonly budget: unknown;
    readonly analyticId: string;
    readonly analyticName: string;
    readonly version: number;
    readonly ownerId: string;
    readonly origin: UsageOrigin;
    readonly served?: unknown;
  };
  /** The call's limit in millicredits (null: none). */
  readonly limitMc: number | null;
  /** The money follows from origin, credits and credit value, so these two stand for it. */
  readonly money: { readonly millicredits: number; readonly valueMicroUsd: number };
}

/** Groups compared one by one before the batch switches to text keys. */
export const SCAN_GROUPS = 8;

/** Whether two calls go in one group. */
export function sameGroup(a: GroupedCall, b: GroupedCall): boolean {
  const x = a.input;
  const y = b.input;
  return (
    x.accountId === y.accountId &&
    x.keyId === y.keyId &&
    x.period === y.period &&
    x.plan === y.plan &&
    a.limitMc === b.limitMc &&
    (x.budget !== null) === (y.budget !== null) &&
    x.analyticId === y.analyticId &&
    x.analyticName === y.analyticName &&
    x.version === y.version &&
    x.ownerId === y.ownerId &&
    x.origin === y.origin &&
    a.money.millicredits === b.money.millicredits &&
    a.money.valueMicroUsd === b.money.valueMicroUsd &&
    (x.served !== undefined) === (y.served !== undefined)
  );
}

/**
 * A call's group as text: equal exactly when `sameGroup` holds. NUL never occurs in PostgreSQL
 * text, so it separates fields unambiguously (a field that held one would fail the whole
 * statement anyway); `+` tells a key id from a null one.
 */
export function groupKeyOf(call: GroupedCall): string {
  const { input, money } = call;
  return (
    `${input.accountId}\0${input.keyId === null ? '' : `+${input.keyId}`}\0${input.period}\0${input.plan}` +
    `\0${call.limitMc}\0${input.budget !== null}\0${input.analyticId}\0${input.analyticName}\0${input.version}` +
    `\0${input.ownerId}\0${input.origin}\0${money.millicredits}\0${money.valueMicroUsd}\0${input.served !== undefined}`
  );
}

/**
 * Numbers a batch's groups from 1 in the order they first occur: `groupOf(call)` is the group of
 * an earlier call that `sameGroup` matches, or else the next number, with `call` its first (the
 * caller tells a new group by its number: one more than the groups it has).
 */
export function createGrouper(): { groupOf(call: GroupedCall): number } {
  const firsts: GroupedCall[] = [];
  let byKey: Map<string, number> | undefined;
  return {
    groupOf(call) {
      if (byKey === undefined) {
        // The latest group first: calls of one group tend to come together.
        for (let g = firsts.length - 1; g >= 0; g--)
          if (sameGroup(firsts[g] as GroupedCall, call)) return g + 1;
        if (firsts.length < SCAN_GROUPS) return firsts.push(call);
        byKey = new Map(firsts.map((first, g) => [groupKeyOf(first), g + 1]));
      }
      const key = groupKeyOf(call);
      const known = byKey.get(key);
      if (known !== undefined) return known;
      byKey.set(key, firsts.push(call));
      return firsts.length;
    },
  };
}
