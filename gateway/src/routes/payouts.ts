// Owners paid (docs/money.md, "Owners' payouts"): where an owner is paid (onboarding with the
// payment provider), its balance and payouts; the operator's view of a period's payouts.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, CONFLICT_ERROR } from '../http/common-schemas.js';
import { adminAuth } from '../http/middleware/admin-auth.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { PeriodSchema } from '../http/period-param.js';
import { readOptionalJson } from '../http/read-json.js';
import { route, valid } from '../http/route.js';
import type { OwnerPayout } from '../money/payout-repository.js';
import { ADMIN_ERRORS, ADMIN_SECURITY } from './admin.js';
import { usd } from './money-schemas.js';
import { PayoutSchema, payoutJson } from './statements.js';

const PayoutAccountSchema = z
  .object({
    provider: z.enum(['none', 'sandbox', 'stripe']),
    status: z.enum(['not_started', 'pending', 'complete']).openapi({
      description: '`complete`: the provider pays out to you; `pending`: it still needs `requirements`',
    }),
    payouts_enabled: z.boolean(),
    requirements: z.array(z.string()).openapi({ description: 'What the provider still needs from you' }),
    minimum_payout_cents: z
      .number()
      .int()
      .openapi({ description: 'Smaller payouts are held and carried to the next month' }),
  })
  .openapi('PayoutAccount');

const OwnerPayoutSchema = PayoutSchema.extend({ period: z.string() }).openapi('OwnerPayout');

const PayoutsSchema = z
  .object({
    balance_micro_usd: z.number().int().openapi({
      description:
        'Held and carried now (negative after refunds larger than earnings: netted against later ones)',
    }),
    balance_usd: z.number(),
    payouts: z.array(OwnerPayoutSchema).openapi({ description: 'Newest first' }),
  })
  .openapi('Payouts');

const OnboardingRequestSchema = z.object({ return_url: z.string().max(2_000).optional() }).strict();

const json = <T extends z.ZodType>(description: string, schema: T) => ({
  description,
  content: { 'application/json': { schema } },
});

const listed = (p: OwnerPayout, minimumCents: number) => ({
  period: p.period,
  ...payoutJson(p, minimumCents)!,
});

export function registerPayoutRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/owner/payouts/onboarding',
      tags: ['Owner'],
      summary: 'A page where you say where to be paid (a new link each time: they expire)',
      description:
        'With Stripe: its hosted onboarding for your connected account, coming back to `return_url` (on this gateway) with `onboarding=done`, or `onboarding=refresh` when the link has expired (ask for a new one). With the sandbox: a page that completes at once. 409 when the gateway takes no payments (its operator pays you).',
      security: BEARER,
      request: {
        body: { required: false, content: { 'application/json': { schema: OnboardingRequestSchema } } },
      },
      responses: {
        200: json('Onboarding', z.object({ url: z.string() }).openapi('Onboarding')),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const { services, principal } = c.var;
      const body = await readOptionalJson(c, OnboardingRequestSchema);
      const owner = await services.store.accounts.get(principal.accountId);
      if (owner === null) throw new ApiError('NOT_FOUND', 'The account is gone.');
      return c.json(await services.payouts.onboarding(owner, body.return_url));
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/payouts/account',
      tags: ['Owner'],
      summary: 'Where you are paid: onboarding state, whether payouts are enabled, what is still needed',
      security: BEARER,
      responses: { 200: json('Payout account', PayoutAccountSchema), ...AUTHED_ERRORS },
    }),
    requireScope('owner'),
    async (c) => {
      const view = await c.var.services.payouts.account(c.var.principal.accountId);
      return c.json({
        provider: view.provider,
        status: view.status,
        payouts_enabled: view.payoutsEnabled,
        requirements: [...view.requirements],
        minimum_payout_cents: view.minimumCents,
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/payouts',
      tags: ['Owner'],
      summary: 'Your balance and your payouts, one a closed month',
      security: BEARER,
      responses: { 200: json('Payouts', PayoutsSchema), ...AUTHED_ERRORS },
    }),
    requireScope('owner'),
    async (c) => {
      const { services, principal } = c.var;
      const { balanceMicroUsd, payouts } = await services.payouts.list(principal.accountId);
      const minimum = services.config.payments.minPayoutCents;
      return c.json({
        balance_micro_usd: balanceMicroUsd,
        balance_usd: usd(balanceMicroUsd),
        payouts: payouts.map((p) => listed(p, minimum)),
      });
    },
  );
}

/** The operator's view (only with QUARRY_ADMIN_TOKEN, like the rest of /v1/admin). */
export function registerAdminPayoutRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/admin/payouts',
      tags: ['Operator'],
      summary: "Every owner's payout of a closed period, with its state",
      security: ADMIN_SECURITY,
      request: { query: z.object({ period: PeriodSchema.openapi({ example: '2026-10' }) }) },
      responses: {
        200: json(
          'Payouts',
          z.object({
            period: z.string(),
            payouts: z.array(OwnerPayoutSchema.extend({ owner_id: z.string(), owner_email: z.string() })),
          }),
        ),
        ...ADMIN_ERRORS,
      },
    }),
    adminAuth(),
    async (c) => {
      const { period } = valid(c, 'query', z.object({ period: PeriodSchema }));
      const minimum = c.var.services.config.payments.minPayoutCents;
      const payouts = await c.var.services.payouts.ofPeriod(period);
      return c.json({
        period,
        payouts: payouts.map((p) => ({
          ...listed(p, minimum),
          owner_id: p.ownerId,
          owner_email: p.ownerEmail,
        })),
      });
    },
  );
}
