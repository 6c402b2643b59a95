// The operator API (docs/design.md §2), reachable only with QUARRY_ADMIN_TOKEN: list accounts with
// their plan and current-period calls, change an account's plan, set or lift a key's rate limit,
// close a billing period (which freezes its owner statements), rotate the OAuth signing key,
// re-seal stored secrets with the current secret key (a QUARRY_SECRET_KEY rotation's third step).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import { isStoreError } from '../errors/store-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BODY_ERRORS, CONFLICT_ERROR, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { adminAuth } from '../http/middleware/admin-auth.js';
import { PeriodSchema } from '../http/period-param.js';
import { readJson } from '../http/read-json.js';
import { AccountSchema, accountJson, KeySchema, keyJson } from '../http/resources.js';
import { pathParam, route, valid } from '../http/route.js';
import { periodOf } from '../money/billing-period.js';
import { RateLimitOverrideSchema } from '../rate-limit/plan-policies.js';
import type { ApiKey } from '../store/api-key-repository.js';
import type { SigningKeyRecord } from '../store/oauth-signing-key-repository.js';

/** The OpenAPI security requirement of the operator routes. */
export const ADMIN_SECURITY = [{ adminAuth: [] }];

const { 403: _forbidden, 429: _limited, ...ADMIN_ERRORS } = AUTHED_ERRORS;

export { ADMIN_ERRORS };

const AdminAccountSchema = AccountSchema.extend({
  closed_at: z.string().nullable(),
  period: z.string().openapi({ description: 'The current billing period (UTC month)' }),
  calls: z.number().int().openapi({ description: 'Calls counted against the quota this period' }),
}).openapi('AdminAccount');

export const PlanChangeSchema = z
  .object({ plan: z.string().min(1).max(32) })
  .strict()
  .openapi('PlanChange');

const AdminKeySchema = KeySchema.extend({
  account_id: z.string(),
  rate_limit: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'The override, if any' }),
}).openapi('AdminApiKey');

// zod's own `.meta()`, which the OpenAPI generator reads too: a domain schema may be created
// before @hono/zod-openapi adds `.openapi()` to zod (config.ts loads it first), and zod copies
// methods onto each schema when it is made.
const RateLimitBody = RateLimitOverrideSchema.meta({
  id: 'RateLimitOverride',
  description:
    '`{limit?, window_seconds?, burst?}` (unset fields keep the plan default), or `{unlimited: true}`',
});

const adminKeyJson = (k: ApiKey) => ({ ...keyJson(k), account_id: k.accountId, rate_limit: k.rateLimit });

const SigningKeySchema = z
  .object({
    kid: z.string(),
    activated_at: z.string(),
    superseded_at: z.string().nullable(),
    retires_at: z.string().nullable().openapi({ description: 'When it stops verifying tokens' }),
  })
  .openapi('SigningKey');

const signingKeyJson = (k: SigningKeyRecord) => ({
  kid: k.kid,
  activated_at: k.activatedAt.toISOString(),
  superseded_at: k.supersededAt?.toISOString() ?? null,
  retires_at: k.retiredAt?.toISOString() ?? null,
});

const SealedCountSchema = z.object({
  connections: z.number().int(),
  signing_keys: z.number().int(),
  embed_secrets: z.number().int(),
  webhook_secrets: z.number().int(),
});

const ResealSchema = z
  .object({
    current_key: z.string().openapi({ description: 'The key id everything was re-sealed with' }),
    resealed: SealedCountSchema.openapi({ description: 'Rows re-sealed by this call' }),
    unreadable: z
      .array(z.object({ what: z.string(), key_id: z.string() }))
      .openapi({ description: 'Rows sealed with a key this instance lacks: left as they were' }),
    sealed_with: z
      .record(z.string(), SealedCountSchema)
      .openapi({ description: 'What each key id seals after this call' }),
  })
  .openapi('ResealResult');

const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

export function registerAdminRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/admin/accounts',
      tags: ['Operator'],
      summary: 'List accounts (newest first) with their plan and calls this period',
      security: ADMIN_SECURITY,
      request: { query: PageQuery },
      responses: {
        200: {
          description: 'Accounts',
          content: { 'application/json': { schema: z.object({ accounts: z.array(AdminAccountSchema) }) } },
        },
        ...ADMIN_ERRORS,
      },
    }),
    adminAuth(),
    async (c) => {
      const page = valid(c, 'query', PageQuery);
      const period = periodOf(new Date());
      const rows = await c.var.services.accounts.listWithCalls(page, period);
      return c.json({
        accounts: rows.map(({ account: a, calls }) => ({
          ...accountJson(a),
          closed_at: a.closedAt?.toISOString() ?? null,
          period,
          calls,
        })),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/admin/accounts/{id}/plan',
      tags: ['Operator'],
      summary: "Change an account's plan",
      description:
        'Applies at once on the instance that answers; other gateway instances apply it within their key cache TTL (QUARRY_KEY_CACHE_MS, at most 5 s). The calls already counted this period stay counted.',
      security: ADMIN_SECURITY,
      request: {
        params: z.object({ id: z.string() }),
        body: { required: true, content: { 'application/json': { schema: PlanChangeSchema } } },
      },
      responses: {
        200: {
          description: 'Changed',
          content: { 'application/json': { schema: z.object({ account: AccountSchema }) } },
        },
        ...ADMIN_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    adminAuth(),
    async (c) => {
      const { accounts, plans } = c.var.services;
      const body = await readJson(c, PlanChangeSchema);
      if (plans.get(body.plan) === undefined) {
        const known = plans.list().map((p) => p.id);
        throw new ApiError('INVALID_REQUEST', `Unknown plan "${body.plan}"; plans: ${known.join(', ')}.`, {
          details: [{ field: 'plan', message: `one of ${known.join(', ')}` }],
        });
      }
      const account = await accounts.setPlan(pathParam(c, 'id'), body.plan);
      return c.json({ account: accountJson(account) });
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/admin/keys/{id}/rate-limit',
      tags: ['Operator'],
      summary: "Set a key's rate limit, replacing its plan default",
      security: ADMIN_SECURITY,
      request: {
        params: z.object({ id: z.string() }),
        body: { required: true, content: { 'application/json': { schema: RateLimitBody } } },
      },
      responses: {
        200: {
          description: 'Set',
          content: { 'application/json': { schema: z.object({ key: AdminKeySchema }) } },
        },
        ...ADMIN_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    adminAuth(),
    async (c) => {
      const override = await readJson(c, RateLimitOverrideSchema);
      const key = await c.var.services.accounts.setKeyRateLimit(pathParam(c, 'id'), override);
      return c.json({ key: adminKeyJson(key) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/admin/keys/{id}/rate-limit',
      tags: ['Operator'],
      summary: "Lift a key's rate-limit override (its plan default applies again)",
      security: ADMIN_SECURITY,
      request: { params: z.object({ id: z.string() }) },
      responses: {
        200: {
          description: 'Lifted',
          content: { 'application/json': { schema: z.object({ key: AdminKeySchema }) } },
        },
        ...ADMIN_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    adminAuth(),
    async (c) => {
      const key = await c.var.services.accounts.setKeyRateLimit(pathParam(c, 'id'), null);
      return c.json({ key: adminKeyJson(key) });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/admin/periods/{period}/close',
      tags: ['Operator'],
      summary: 'Close an ended billing period: freezes every owner statement, invoices Pay as you Go',
      description:
        'Only a month that has ended (UTC) can be closed. Freezes the owner statements and computes payouts, then sends each Pay as you Go account one invoice for the period, charged to its card (with a payment provider; an account that never paid through it is left to the operator). Idempotent: closing again, or on two instances, invoices nobody twice. 409 with `retry_after` while calls of the period are still in flight.',
      security: ADMIN_SECURITY,
      request: { params: z.object({ period: PeriodSchema.openapi({ example: '2026-10' }) }) },
      responses: {
        200: {
          description: 'Closed',
          content: {
            'application/json': {
              schema: z.object({
                period: z.string(),
                closed_at: z.string(),
                already_closed: z.boolean(),
                payouts: z
                  .object({
                    paid: z.number().int(),
                    failed: z.number().int(),
                    held: z.number().int(),
                    cents: z.number().int(),
                  })
                  .openapi({
                    description:
                      'Owner payouts this close transferred (`cents` in all), refused (carried to the next close) and held',
                  }),
                invoices: z
                  .object({
                    invoiced: z.number().int(),
                    paid: z.number().int(),
                    failed: z.number().int(),
                    total_cents: z.number().int(),
                  })
                  .openapi({
                    description:
                      'Pay as you Go invoices this close sent and charged (0 for those a close before it sent)',
                  }),
              }),
            },
          },
        },
        ...ADMIN_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    adminAuth(),
    async (c) => {
      const { period } = valid(c, 'param', z.object({ period: PeriodSchema }));
      // `YYYY-MM` strings order like the months they name.
      const current = periodOf(new Date());
      if (period >= current) {
        throw new ApiError(
          'INVALID_REQUEST',
          `${period} has not ended (the current period is ${current}); only an ended month can be closed.`,
        );
      }
      try {
        const closed = await c.var.services.billing.closePeriod(period);
        return c.json({
          period: closed.period,
          closed_at: closed.closedAt.toISOString(),
          already_closed: closed.alreadyClosed,
          payouts: closed.payouts,
          invoices: {
            invoiced: closed.invoices.invoiced,
            paid: closed.invoices.paid,
            failed: closed.invoices.failed,
            total_cents: closed.invoices.totalCents,
          },
        });
      } catch (error) {
        if (isStoreError(error, 'CONFLICT')) {
          throw new ApiError('CONFLICT', error.message, { retryAfter: 1, cause: error });
        }
        throw error;
      }
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/admin/oauth/rotate-key',
      tags: ['Operator'],
      summary: 'Rotate the OAuth signing key, without downtime',
      description:
        'A new key signs every token from now on (other instances switch within about a second). The previous key stays in the JWKS and keeps verifying until every token it signed has expired (the longest token lifetime, 24 h for embed tokens, + clock leeway + reload interval), then retires.',
      security: ADMIN_SECURITY,
      responses: {
        200: {
          description: 'Rotated',
          content: {
            'application/json': {
              schema: z.object({ active: SigningKeySchema, retiring: z.array(SigningKeySchema) }),
            },
          },
        },
        ...ADMIN_ERRORS,
      },
    }),
    adminAuth(),
    async (c) => {
      const rotation = await c.var.services.oauth.keyRing.rotate();
      return c.json({
        active: signingKeyJson(rotation.activated),
        retiring: rotation.superseded.map(signingKeyJson),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/admin/secrets/reseal',
      tags: ['Operator'],
      summary: 'Re-seal every stored secret with the current secret key',
      description:
        "Step 3 of rotating QUARRY_SECRET_KEY (docs/deploy.md): once every instance seals with the new key and can still read the old one, this opens each connection's secrets, each embed secret, each OAuth signing key and each webhook signing secret sealed with another key and seals it again with the answering instance's current key. `sealed_with` then counts what each key id still seals: the old key may be dropped when only the current one is left. Safe to repeat, and to run while instances serve.",
      security: ADMIN_SECURITY,
      responses: {
        200: {
          description: 'Re-sealed',
          content: { 'application/json': { schema: ResealSchema } },
        },
        ...ADMIN_ERRORS,
      },
    }),
    adminAuth(),
    async (c) => {
      const sealed = c.var.services.store.sealedSecrets;
      const result = await sealed.reseal();
      const counts = await sealed.countByKey();
      c.var.services.logger.info(
        {
          current_key: result.currentKeyId,
          connections: result.connections,
          signing_keys: result.signingKeys,
          embed_secrets: result.embedSecrets,
        },
        'secrets re-sealed with the current key',
      );
      return c.json({
        current_key: result.currentKeyId,
        resealed: {
          connections: result.connections,
          signing_keys: result.signingKeys,
          embed_secrets: result.embedSecrets,
          webhook_secrets: result.webhookSecrets,
        },
        unreadable: result.unreadable.map((u) => ({ what: u.what, key_id: u.keyId })),
        sealed_with: Object.fromEntries(
          [...counts].map(([id, n]) => [
            id,
            {
              connections: n.connections,
              signing_keys: n.signingKeys,
              embed_secrets: n.embedSecrets,
              webhook_secrets: n.webhookSecrets,
            },
          ]),
        ),
      });
    },
  );
}
