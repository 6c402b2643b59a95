// Sign-up and the caller's own account (docs/design.md §2, management).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, CONFLICT_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { throttleSignups } from '../http/middleware/throttle-signups.js';
import { readJson } from '../http/read-json.js';
import { AccountSchema, accountJson, IssuedKeySchema, keyJson } from '../http/resources.js';
import { route } from '../http/route.js';
import { clearSessionCookie, requireOwnOrigin, setSessionCookie } from '../http/session-cookie.js';
import { microUsdToUsd } from '../money/units.js';
import { PASSWORD_MAX_LENGTH } from '../security/password-hash.js';
import { closeAccount } from '../services/account-closure.js';
import { PasswordSchema } from './session.js';

export const SignUpSchema = z
  .object({
    email: z.email().max(254),
    name: z.string().trim().min(1).max(200),
    password: PasswordSchema.optional().openapi({
      description: 'For the web console: the account can then log in, and the answer sets its session cookie',
    }),
  })
  .strict()
  .openapi('SignUp');

const AccountChangeSchema = z
  .object({
    email: z.email().max(254).optional(),
    name: z.string().trim().min(1).max(200).optional(),
    current_password: z
      .string()
      .max(PASSWORD_MAX_LENGTH)
      .optional()
      .openapi({ description: 'Required with a new `email` when the account has a password' }),
  })
  .strict()
  .refine((b) => b.email !== undefined || b.name !== undefined, 'Send `email`, `name` or both.')
  .openapi('AccountChange');

const AccountDeletionSchema = z
  .object({
    confirm: z
      .string()
      .max(254)
      .openapi({ description: "The account's email, typed back: nothing is deleted without it" }),
    password: z.string().max(PASSWORD_MAX_LENGTH).optional().openapi({
      description: "The account's password: required when the account has one, whatever the credential",
    }),
  })
  .strict()
  .openapi('AccountDeletion');

const AccountDeletedSchema = z
  .object({
    account_id: z.string(),
    closed_at: z.string(),
    keys_revoked: z.number().int(),
    oauth_clients_revoked: z.number().int(),
    sessions_ended: z.number().int(),
    listings_unpublished: z.array(z.string()).openapi({ description: 'Analytics taken off the marketplace' }),
    analytics_deleted: z
      .array(z.string())
      .openapi({ description: 'Analytics deleted: they answer 404 to everyone; their names stay reserved' }),
    connections_deleted: z.number().int(),
    subscription_cancelled: z
      .boolean()
      .openapi({ description: 'A paid subscription ended at the payment provider' }),
    unpaid_earnings_usd: z.number().openapi({
      description:
        "The owner's earnings not paid out yet: paid at the next monthly close, whatever the minimum",
    }),
  })
  .openapi('AccountDeleted');

export function registerAccountRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/accounts',
      tags: ['Accounts'],
      summary: 'Sign up: a Free account and its first key (the secret is shown once)',
      description:
        'Throttled per client address (`QUARRY_SIGNUPS_PER_HOUR`, default 5): past it, 429 `RATE_LIMIT_EXCEEDED` with `retry_after`.',
      request: { body: { required: true, content: { 'application/json': { schema: SignUpSchema } } } },
      responses: {
        201: {
          description: 'Created',
          content: {
            'application/json': { schema: z.object({ account: AccountSchema, key: IssuedKeySchema }) },
          },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    throttleSignups(),
    async (c) => {
      const { config, accounts } = c.var.services;
      if (config.signup === 'closed') throw new ApiError('FORBIDDEN', 'Sign-up is closed on this gateway.');
      const { password, ...body } = await readJson(c, SignUpSchema);
      if (password === undefined) {
        const { account, key } = await accounts.signUp(body);
        return c.json(
          { account: accountJson(account), key: { ...keyJson(key.key), secret: key.secret } },
          201,
        );
      }
      // A browser sign-up: refused from another site's page, and signed in at once.
      requireOwnOrigin(c);
      const { account, key } = await accounts.signUp({
        ...body,
        passwordHash: await c.var.services.passwords.hash(password),
      });
      const signedIn = await c.var.services.sessions.open(account);
      setSessionCookie(c, signedIn.token, signedIn.session.expiresAt);
      return c.json({ account: accountJson(account), key: { ...keyJson(key.key), secret: key.secret } }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account',
      tags: ['Accounts'],
      summary: "The caller's account",
      security: BEARER,
      responses: {
        200: {
          description: 'Account',
          content: { 'application/json': { schema: z.object({ account: AccountSchema }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const account = await c.var.services.accounts.get(c.var.principal.accountId);
      return c.json({ account: accountJson(account) });
    },
  );

  route(
    app,
    createRoute({
      method: 'patch',
      path: '/v1/account',
      tags: ['Accounts'],
      summary: "Change the account's login email or name",
      description:
        "A new `email` needs `current_password` when the account has a password, whatever the credential: a key alone cannot move the console's login. The old address is told (by mail, or in the operator's log). An email another account has is 409 `CONFLICT`.",
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: AccountChangeSchema } } },
      },
      responses: {
        200: {
          description: 'Account',
          content: { 'application/json': { schema: z.object({ account: AccountSchema }) } },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, AccountChangeSchema);
      const principal = c.var.principal;
      if (principal.credential === 'try_token') throw new ApiError('FORBIDDEN', 'Use a key or a session.');
      const { sessions, store } = c.var.services;
      if (body.email !== undefined) {
        await sessions.changeEmail({
          accountId: principal.accountId,
          email: body.email,
          ...(body.current_password === undefined ? {} : { current: body.current_password }),
        });
      }
      if (body.name !== undefined) await store.accounts.update(principal.accountId, { name: body.name });
      const account = await c.var.services.accounts.get(principal.accountId);
      return c.json({ account: accountJson(account) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/account',
      tags: ['Accounts'],
      summary: 'Delete the account',
      description:
        'Needs `confirm` = the account\'s email and, when the account has a password, `password`, whatever the credential (a key or an OAuth token with the `account` scope, or a console session; never a try-token). Every key, OAuth client and session ends, listings leave the marketplace, analytics answer 404 (their names stay reserved) and connections are deleted with their credentials. Usage, statements, payouts and invoices are kept: earnings not paid out are paid at the next monthly close whatever the minimum (409 `CONFLICT` while payouts are not set up and earnings wait), a paid subscription ends now without a refund, and Pay as you Go usage is invoiced at the month\'s close. The email is free for a new sign-up at once. See docs/money.md, "Deleting an account".',
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: AccountDeletionSchema } } },
      },
      responses: {
        200: {
          description: 'Deleted',
          content: { 'application/json': { schema: z.object({ deleted: AccountDeletedSchema }) } },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, AccountDeletionSchema);
      const { store, sessions, payments, payouts, logger } = c.var.services;
      const closed = await closeAccount(
        { store, sessions, payments, payouts, onClosed: c.var.services.onAccountClosed },
        c.var.principal,
        { confirm: body.confirm, ...(body.password === undefined ? {} : { password: body.password }) },
      );
      logger.info(
        { account: closed.accountId, keys: closed.keysRevoked, analytics: closed.analyticsDeleted.length },
        'account deleted',
      );
      if (c.var.principal.credential === 'session') clearSessionCookie(c);
      return c.json({
        deleted: {
          account_id: closed.accountId,
          closed_at: closed.closedAt.toISOString(),
          keys_revoked: closed.keysRevoked,
          oauth_clients_revoked: closed.oauthClientsRevoked,
          sessions_ended: closed.sessionsEnded,
          listings_unpublished: closed.listingsUnpublished,
          analytics_deleted: closed.analyticsDeleted,
          connections_deleted: closed.connectionsDeleted,
          subscription_cancelled: closed.subscriptionCancelled,
          unpaid_earnings_usd: microUsdToUsd(closed.unpaidMicroUsd),
        },
      });
    },
  );
}
