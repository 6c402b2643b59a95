// The catalogue of webhook event types and their payloads (docs/webhooks.md). The schemas are
// the OpenAPI document's `webhooks`, so what is sent and what is documented come from one place.
import { z } from '@hono/zod-openapi';

const period = z
  .string()
  .openapi({ description: 'The billing period (UTC month), `YYYY-MM`', example: '2026-11' });

/** Every event type with its `data` schema and a sentence for the docs. */
export const WEBHOOK_EVENTS = {
  'usage.threshold': {
    summary:
      "The month's counted credits passed one of the account's usage thresholds (default 50, 80 and 100% of the plan's credits; Pay as you Go: of the budget). Once per threshold and month.",
    data: z.object({
      period,
      threshold_percent: z.number().int().openapi({ example: 80 }),
      basis: z.enum(['credits', 'budget']),
      credits_used: z.number().openapi({ description: 'Credits counted this month', example: 24 }),
      credits_limit: z
        .number()
        .nullable()
        .openapi({ description: "The plan's credits (null on Pay as you Go)" }),
      spent_usd: z.number().nullable().openapi({ description: 'Pay as you Go: what the month cost so far' }),
      budget_usd: z.number().nullable().openapi({ description: "Pay as you Go: the month's budget" }),
    }),
  },
  'quota.exhausted': {
    summary: "A call was refused because the month's credits ran out (once a month).",
    data: z.object({ period, credits_used: z.number(), credits_limit: z.number() }),
  },
  'budget.reached': {
    summary: 'A Pay as you Go call was refused because the month reached its budget (once a month).',
    data: z.object({ period, spent_usd: z.number(), budget_usd: z.number() }),
  },
  'key.expiring': {
    summary: 'An API key of the account expires within 7 days (once per key).',
    data: z.object({
      key_id: z.string(),
      name: z.string(),
      prefix: z.string(),
      expires_at: z.string().openapi({ format: 'date-time' }),
    }),
  },
  'analytic.failing': {
    summary:
      "One of the owner's analytics failed more than the account's error-rate threshold (default 50%) of its calls over the last 5 minutes.",
    data: z.object({
      analytic: z.string(),
      error_rate_percent: z.number(),
      threshold_percent: z.number().int(),
      calls: z.number().int(),
      failures: z.number().int(),
      window_seconds: z.number().int(),
    }),
  },
  'analytic.recovered': {
    summary: 'A failing analytic answers again: its error rate over 5 minutes is back under the threshold.',
    data: z.object({
      analytic: z.string(),
      error_rate_percent: z.number(),
      threshold_percent: z.number().int(),
      calls: z.number().int(),
      failures: z.number().int(),
      window_seconds: z.number().int(),
    }),
  },
  'listing.price_scheduled': {
    summary: "An owner's deploy raised an analytic's price: the new price applies after the notice period.",
    data: z.object({
      analytic: z.string(),
      price: z.number().int().openapi({ description: 'Credits a call now' }),
      next_price: z.number().int(),
      effective_at: z.string().openapi({ format: 'date-time' }),
    }),
  },
  'subscription.updated': {
    summary: "The account's subscription changed (plan, status or the plan at the period's end).",
    data: z.object({
      plan: z.string(),
      status: z.string(),
      pending_plan: z.string().nullable(),
      period_end: z.string().nullable(),
    }),
  },
  'invoice.paid': {
    summary: "A Pay as you Go month's invoice was paid.",
    data: z.object({ period, invoice_id: z.string(), amount_usd: z.number() }),
  },
  'invoice.failed': {
    summary: "A Pay as you Go month's invoice could not be charged.",
    data: z.object({ period, invoice_id: z.string(), amount_usd: z.number() }),
  },
  'payout.paid': {
    summary: "An owner's payout for a closed month was transferred.",
    data: z.object({ period, amount_usd: z.number(), reason: z.string().nullable() }),
  },
  'payout.held': {
    summary:
      "An owner's payout was held and carried to the next month (under the minimum, not onboarded, negative).",
    data: z.object({ period, amount_usd: z.number(), reason: z.string().nullable() }),
  },
  'payout.failed': {
    summary: "An owner's payout transfer was refused; it is carried and retried.",
    data: z.object({ period, amount_usd: z.number(), reason: z.string().nullable() }),
  },
  'webhook.endpoint_disabled': {
    summary:
      "One of the account's endpoints failed every delivery for the retry window (3 days) and was disabled.",
    data: z.object({
      endpoint_id: z.string(),
      url: z.string(),
      reason: z.string().nullable(),
      failing_since: z.string().nullable(),
    }),
  },
  'job.succeeded': {
    summary:
      'An asynchronous query of the account finished: its result can be read from `GET /v1/jobs/{id}`; the job was charged once.',
    data: z.object({
      job_id: z.string(),
      source: z.string(),
      version: z.number().int(),
      state: z.literal('succeeded'),
      row_count: z.number().int(),
      truncated: z.boolean(),
      credits: z.number().int().openapi({ description: 'Credits the job was charged' }),
    }),
  },
  'job.failed': {
    summary:
      'An asynchronous query of the account failed (a warehouse error, its time limit, or the instance running it stopped); not charged.',
    data: z.object({
      job_id: z.string(),
      source: z.string(),
      version: z.number().int(),
      state: z.literal('failed'),
      error: z.object({ code: z.string(), message: z.string(), details: z.array(z.unknown()).optional() }),
    }),
  },
  'webhook.test': {
    summary: 'Sent on request to one endpoint (`POST /v1/webhooks/{id}/test`).',
    data: z.object({ message: z.string(), endpoint_id: z.string() }),
  },
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;

export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[];
