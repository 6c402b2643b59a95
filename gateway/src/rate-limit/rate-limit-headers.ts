// The IETF rate-limit header fields (draft-ietf-httpapi-ratelimit-headers-11, Structured Fields
// form) and Retry-After:
//   RateLimit-Policy: "default";q=60;w=60      the policy: quota q per window w seconds
//   RateLimit: "default";r=17;t=3              remaining r, effective window t seconds
//   Retry-After: 2                             on a 429 only: whole seconds, rounded up
// The draft requires Integers for q, w, r and t (no sub-second precision), so fractional seconds
// are rounded *up*: a client that waits t or Retry-After seconds is never early. On a denied
// decision t equals the time to the next admission, so Retry-After never points before the end of
// the effective window (draft §6). Items are exported separately so the gateway can add more
// policies (for example the period's quota) to the same List.
//
// What t means here: the draft's t is the time "within which the client can use no more than the
// available quota". A GCRA bucket refills one request per T, so that is the time until the next
// request is added to r, not the time until the bucket is full (decision.resetSeconds): with
// r=0 right after the last admitted request, t is T (say 6 s), where "until full" would say 90 s
// and send a well-behaved client away fifteen times longer than needed.
import { emissionIntervalMicros, MICROS_PER_SECOND } from './gcra.js';
import type { RateLimitDecision, RateLimitPolicy } from './rate-limiter.js';

/** The header names, in the casing the draft uses. */
export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';
export const RATE_LIMIT_HEADER = 'RateLimit';
export const RETRY_AFTER_HEADER = 'Retry-After';

export const DEFAULT_POLICY_NAME = 'default';

// Policy names are a handful of constants ("default", "monthly"), formatted on every answer.
const sfStrings = new Map<string, string>();

/** An sf-string: printable ASCII only, with `"` and `\` escaped. */
export function formatSfString(value: string): string {
  const known = sfStrings.get(value);
  if (known !== undefined) return known;
  if (!/^[\x20-\x7e]*$/.test(value))
    throw new Error(`not a structured-field string: ${JSON.stringify(value)}`);
  const formatted = `"${value.replace(/[\\"]/g, '\\$&')}"`;
  if (sfStrings.size < 64) sfStrings.set(value, formatted);
  return formatted;
}

/** One Quota Policy Item: `"name";q=<quota>;w=<window>` (w omitted when undefined). */
export function formatQuotaPolicyItem(name: string, quota: number, windowSeconds?: number): string {
  const q = `${formatSfString(name)};q=${Math.max(0, Math.floor(quota))}`;
  return windowSeconds === undefined ? q : `${q};w=${Math.max(1, Math.ceil(windowSeconds))}`;
}

/** One Service Limit Item: `"name";r=<remaining>;t=<seconds>` (t omitted when undefined). */
export function formatServiceLimitItem(name: string, remaining: number, resetSeconds?: number): string {
  const r = `${formatSfString(name)};r=${Math.max(0, Math.floor(remaining))}`;
  return resetSeconds === undefined ? r : `${r};t=${Math.max(0, Math.ceil(resetSeconds))}`;
}

/** `Retry-After` for a decision: whole seconds rounded up (at least 1 when denied). */
export function formatRetryAfter(decision: RateLimitDecision): string {
  return String(Math.max(1, Math.ceil(decision.retryAfterSeconds)));
}

/** The headers one decision adds to a response (`Retry-After` only when it is denied). */
export interface RateLimitHeaders {
  readonly 'RateLimit-Policy': string;
  readonly RateLimit: string;
  readonly 'Retry-After'?: string;
}

// A key's policy object lives as long as its cached verdict: its policy item is formatted once.
const policyItems = new WeakMap<RateLimitPolicy, string>();

function defaultPolicyItem(policy: RateLimitPolicy): string {
  let item = policyItems.get(policy);
  if (item === undefined) {
    item = formatQuotaPolicyItem(DEFAULT_POLICY_NAME, policy.limit, policy.windowSeconds);
    policyItems.set(policy, item);
  }
  return item;
}

export function rateLimitHeaders(
  policy: RateLimitPolicy,
  decision: RateLimitDecision,
  name: string = DEFAULT_POLICY_NAME,
): RateLimitHeaders {
  const base = {
    [RATE_LIMIT_POLICY_HEADER]:
      name === DEFAULT_POLICY_NAME
        ? defaultPolicyItem(policy)
        : formatQuotaPolicyItem(name, policy.limit, policy.windowSeconds),
    [RATE_LIMIT_HEADER]: formatServiceLimitItem(
      name,
      decision.remaining,
      secondsToNextRequest(policy, decision),
    ),
  };
  return decision.allowed ? base : { ...base, [RETRY_AFTER_HEADER]: formatRetryAfter(decision) };
}

/** Seconds until `remaining` grows by one (see the header comment); exact in whole microseconds. */
export function secondsToNextRequest(policy: RateLimitPolicy, decision: RateLimitDecision): number {
  if (!decision.allowed) return decision.retryAfterSeconds;
  const interval = emissionIntervalMicros(policy);
  const usedMicros = Math.round(decision.resetSeconds * MICROS_PER_SECOND);
  const spareSlots = Math.max(1, policy.burst) - decision.remaining - 1;
  return Math.max(0, usedMicros - interval * spareSlots) / MICROS_PER_SECOND;
}
