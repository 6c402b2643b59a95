// Paying for a plan (docs/money.md, "Paying for a plan"): the account's billing, a checkout page
// for a plan or a card, the billing portal, and Stripe's webhook. The payment provider is
// QUARRY_PAYMENTS; with `none`, checkout and portal answer 409 (the operator sets plans).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, CONFLICT_ERROR, errorResponse } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson, readOptionalJson } from '../http/read-json.js';
import { route } from '../http/route.js';
import { periodOf } from '../money/billing-period.js';
import { isBudgeted } from '../money/plan-catalog.js';
import { centsToMicroUsd } from '../money/units.js';
import { BudgetStateSchema, budgetJson, usd } from './money-schemas.js';
import { PlanSchema, planJson } from './usage.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

const InvoiceSchema = z
  .object({
    period: z.string(),
    status: z.enum(['pending', 'paid', 'failed', 'nothing_due']),
    invoice_id: z.string().nullable(),
    amount_cents: z.number().int(),
    amount_usd: z.number(),
    lines: z.array(
      z.object({ description: z.string(), amount_cents: z.number().int(), analytic: z.string().nullable() }),
    ),
  })
  .openapi('PaygInvoice');

export const BillingSchema = z
  .object({
    provider: z.enum(['none', 'sandbox', 'stripe']).openapi({
      description:
        'Who takes payments: `none` (the operator sets plans), `sandbox` (no money moves), `stripe`',
    }),
    plan: PlanSchema,
    status: z.enum(['none', 'active', 'past_due', 'canceled']).openapi({
      description:
        "The subscription's standing: `past_due` keeps the plan until `grace_ends_at`, then the account is on Free",
    }),
    current_period_end: z.string().nullable(),
    cancel_at_period_end: z.boolean(),
    pending_plan: z
      .string()
      .nullable()
      .openapi({ description: 'A downgrade or cancel, applied at `pending_at` (the paid period’s end)' }),
    pending_at: z.string().nullable(),
    grace_ends_at: z.string().nullable(),
    card_on_file: z.boolean(),
    portal: z.boolean().openapi({ description: 'Whether POST /v1/billing/portal has a portal to open' }),
    budget: BudgetStateSchema.nullable().openapi({ description: 'Pay as you Go only' }),
    plans: z.array(
      PlanSchema.extend({
        current: z.boolean(),
        action: z.enum(['current', 'upgrade', 'downgrade', 'add_card']).nullable().openapi({
          description:
            'What buying it means: `upgrade` (at once), `downgrade` (through the portal, at the period’s end), `add_card` (Pay as you Go), null (nothing to buy here)',
        }),
      }),
    ),
    invoices: z.array(InvoiceSchema).openapi({ description: 'Pay as you Go invoices, newest first' }),
  })
  .openapi('Billing');

const CheckoutRequestSchema = z
  .object({
    plan: z.string().min(1).max(32).openapi({ example: 'smb' }),
    return_url: z.string().max(2_000).optional().openapi({
      description:
        'Where the browser returns, on this gateway; `checkout=success` or `checkout=cancel` is added to its query. Default: the console’s usage page.',
    }),
  })
  .strict()
  .openapi('CheckoutRequest');

const CheckoutSchema = z
  .object({
    id: z.string(),
    url: z.string().openapi({ description: 'Open it in a browser to pay' }),
    mode: z
      .enum(['subscription', 'setup'])
      .openapi({ description: '`setup`: a card saved for Pay as you Go' }),
  })
  .openapi('Checkout');

const PortalRequestSchema = z.object({ return_url: z.string().max(2_000).optional() }).strict();

const json = <T extends z.ZodType>(description: string, schema: T) => ({
  description,
  content: { 'application/json': { schema } },
});

export function registerBillingRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/billing',
      tags: ['Billing'],
      summary: "The account's plan, subscription, card, budget and invoices, and the plans it can buy",
      security: BEARER,
      responses: { 200: json('Billing', BillingSchema), ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const { services, principal } = c.var;
      const view = await services.payments.view(principal.accountId);
      const b = view.billing;
      const budget = isBudgeted(view.plan)
        ? await services.billing.budget(principal.accountId, periodOf(new Date()))
        : null;
      return c.json({
        provider: view.provider,
        plan: planJson(view.plan),
        status: b?.status ?? 'none',
        current_period_end: iso(b?.currentPeriodEnd),
        cancel_at_period_end: b?.cancelAtPeriodEnd ?? false,
        pending_plan: b?.pendingPlan ?? null,
        pending_at: iso(b?.pendingAt),
        grace_ends_at: iso(view.graceEndsAt),
        card_on_file: b?.cardOnFile ?? false,
        // Something to manage: a card, a subscription or an invoice (not a checkout left unpaid).
        portal:
          b !== null &&
          b.provider === view.provider &&
          (b.cardOnFile || b.subscriptionId !== null || view.invoices.length > 0),
        budget: budget === null ? null : budgetJson(budget),
        plans: view.plans.map(({ plan, action }) => ({
          ...planJson(plan),
          current: action === 'current',
          action,
        })),
        invoices: view.invoices.map((i) => ({
          period: i.period,
          status: i.status,
          invoice_id: i.invoiceId,
          amount_cents: i.amountCents,
          amount_usd: usd(centsToMicroUsd(i.amountCents)),
          lines: i.lines.map((l) => ({
            description: l.description,
            amount_cents: l.cents,
            analytic: l.analytic,
          })),
        })),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/billing/checkout',
      tags: ['Billing'],
      summary: 'A checkout page to buy a plan (or save a card for Pay as you Go)',
      description:
        'Answers the URL of the payment provider’s checkout page. The plan changes once the payment is made (upgrades at once: the month’s included credits become the new plan’s, credits used stay used). An account that already pays for a subscription upgrades in place, without a checkout page (the provider charges the difference; `url` is then the return URL). 400 for an unknown plan, the free plan or the current one; 409 when the gateway takes no payments, or for a cheaper plan or Pay as you Go while a subscription is paid (change or cancel it in the portal).',
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: CheckoutRequestSchema } } },
      },
      responses: {
        200: json('Checkout', CheckoutSchema),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const { services, principal } = c.var;
      const body = await readJson(c, CheckoutRequestSchema);
      return c.json(await services.payments.checkout(principal.accountId, body.plan, body.return_url));
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/billing/portal',
      tags: ['Billing'],
      summary: 'The billing portal: card, invoices, change or cancel the subscription',
      description:
        '409 when the gateway takes no payments or the account has not paid through it yet. A downgrade or cancel made there applies at the end of the period already paid for.',
      security: BEARER,
      request: {
        body: { required: false, content: { 'application/json': { schema: PortalRequestSchema } } },
      },
      responses: {
        200: json('Portal', z.object({ url: z.string() }).openapi('Portal')),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const { services, principal } = c.var;
      const body = await readOptionalJson(c, PortalRequestSchema);
      return c.json(await services.payments.portal(principal.accountId, body.return_url));
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/billing/stripe-webhook',
      tags: ['Billing'],
      summary: "Stripe's webhook (QUARRY_PAYMENTS=stripe)",
      description:
        'Verified with STRIPE_WEBHOOK_SECRET against the raw body; anything else is 400 and changes nothing. Each event id is applied once; a replay answers 200 with `duplicate: true`. Events may come in any order: what they name is read again from Stripe.',
      responses: {
        200: json('Received', z.object({ received: z.boolean(), duplicate: z.boolean() })),
        400: errorResponse('The signature does not verify'),
        404: errorResponse('The gateway takes no Stripe payments'),
        500: AUTHED_ERRORS[500],
      },
    }),
    async (c) => {
      const { services } = c.var;
      if (services.payments.kind !== 'stripe')
        throw new ApiError('NOT_FOUND', 'This gateway takes no Stripe payments.');
      const result = await services.payments.webhook(await c.req.text(), c.req.header('stripe-signature'));
      return c.json({ received: true, duplicate: result.duplicate });
    },
  );
}
