// The web console's sign-in: log in with email and password (a session cookie), the session's
// CSRF token, log out, and setting an account's password (with a key, for accounts made through
// the API, or with the session and the current password). Session-authenticated calls reach
// every other management route through the same requireScope and services as keys
// (http/session-cookie.ts).
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { requestAddress } from '../http/request-address.js';
import { AccountSchema, accountJson } from '../http/resources.js';
import { route } from '../http/route.js';
import {
  clearSessionCookie,
  requireOwnOrigin,
  sessionTokenOf,
  setSessionCookie,
} from '../http/session-cookie.js';
import { rateLimitHeaders } from '../rate-limit/rate-limit-headers.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../security/password-hash.js';
import { csrfTokenOf } from '../security/session-token.js';
import { RESETS_PER_ADDRESS, RESETS_PER_EMAIL } from '../services/session-service.js';

export const PasswordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH)
  .max(PASSWORD_MAX_LENGTH)
  .openapi({ description: `${PASSWORD_MIN_LENGTH}–${PASSWORD_MAX_LENGTH} characters` });

const LogInSchema = z
  .object({ email: z.email().max(254), password: z.string().min(1).max(PASSWORD_MAX_LENGTH) })
  .strict()
  .openapi('LogIn');

const SetPasswordSchema = z
  .object({
    password: PasswordSchema,
    current_password: z
      .string()
      .max(PASSWORD_MAX_LENGTH)
      .optional()
      .openapi({ description: 'Required with a session when the account already has a password' }),
  })
  .strict()
  .openapi('SetPassword');

const PasswordResetRequestSchema = z
  .object({ email: z.email().max(254) })
  .strict()
  .openapi('PasswordResetRequest');

const PasswordResetSchema = z
  .object({
    token: z.string().max(200).openapi({ description: 'The token of the link the mail held (`qpr_…`)' }),
    password: PasswordSchema,
  })
  .strict()
  .openapi('PasswordReset');

export const SessionSchema = z
  .object({
    account: AccountSchema,
    csrf_token: z.string().openapi({ description: 'Send it as `X-CSRF-Token` with every state change' }),
    expires_at: z.string(),
  })
  .openapi('ConsoleSession');

const SESSION_COOKIE = [{ sessionCookie: [] }];

export function registerSessionRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/session',
      tags: ['Console'],
      summary: 'Log in to the web console: sets the HttpOnly session cookie',
      description:
        'Failed logins are throttled per client address and per account: past them, 429 `RATE_LIMIT_EXCEEDED` with `retry_after`. A request from another site (its `Origin`) is refused.',
      request: { body: { required: true, content: { 'application/json': { schema: LogInSchema } } } },
      responses: {
        201: { description: 'Logged in', content: { 'application/json': { schema: SessionSchema } } },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
      },
    }),
    async (c) => {
      // A login from another site's page would sign the victim into the attacker's account.
      requireOwnOrigin(c);
      const body = await readJson(c, LogInSchema);
      const signedIn = await c.var.services.sessions.logIn(body.email, body.password, requestAddress(c));
      setSessionCookie(c, signedIn.token, signedIn.session.expiresAt);
      return c.json(
        {
          account: accountJson(signedIn.account),
          csrf_token: csrfTokenOf(signedIn.token),
          expires_at: signedIn.session.expiresAt.toISOString(),
        },
        201,
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/session',
      tags: ['Console'],
      summary: 'The signed-in account and its CSRF token',
      security: SESSION_COOKIE,
      responses: {
        200: { description: 'Session', content: { 'application/json': { schema: SessionSchema } } },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const token = sessionTokenOf(c);
      if (c.var.principal.credential !== 'session' || token === undefined) {
        throw new ApiError('UNAUTHENTICATED', 'No console session: log in first.');
      }
      const account = await c.var.services.accounts.get(c.var.principal.accountId);
      const live = await c.var.services.store.sessions.findLiveById(c.var.principal.keyId);
      return c.json({
        account: accountJson(account),
        csrf_token: csrfTokenOf(token),
        expires_at: (live?.expiresAt ?? new Date()).toISOString(),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/session',
      tags: ['Console'],
      summary: 'Log out: ends the session on every instance and clears the cookie',
      security: SESSION_COOKIE,
      responses: { 204: { description: 'Logged out' }, ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      if (c.var.principal.credential !== 'session') {
        throw new ApiError('UNAUTHENTICATED', 'No console session: log in first.');
      }
      await c.var.services.sessions.logOut(c.var.principal.keyId);
      clearSessionCookie(c);
      return c.body(null, 204);
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/account/password',
      tags: ['Console'],
      summary: 'Set the password the web console logs in with',
      description:
        'With a key (`account` scope): an account made through the API gets, or replaces, its password. With a session: `current_password` is required. Every other console session of the account ends.',
      security: [...BEARER, ...SESSION_COOKIE],
      request: { body: { required: true, content: { 'application/json': { schema: SetPasswordSchema } } } },
      responses: { 204: { description: 'Password set' }, ...AUTHED_ERRORS, ...BODY_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, SetPasswordSchema);
      const principal = c.var.principal;
      if (principal.credential === 'try_token') throw new ApiError('FORBIDDEN', 'Use a key or a session.');
      await c.var.services.sessions.setPassword({
        accountId: principal.accountId,
        password: body.password,
        ...(body.current_password === undefined ? {} : { current: body.current_password }),
        ...(principal.credential === 'session' ? { sessionId: principal.keyId } : {}),
      });
      return c.body(null, 204);
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/password-resets',
      tags: ['Console'],
      summary: 'Ask for a password-reset link by mail',
      description:
        "Always 202, whether an account has the email or not (nothing tells who has an account). When one has, a one-time link to the console, valid 30 minutes, goes to that address (QUARRY_SMTP_URL; without it, to the operator's log). A newer link replaces an older one. 5 requests an hour per client address and 3 per email, then 429 `RATE_LIMIT_EXCEEDED`.",
      request: {
        body: { required: true, content: { 'application/json': { schema: PasswordResetRequestSchema } } },
      },
      responses: {
        202: {
          description: 'Asked',
          content: { 'application/json': { schema: z.object({ message: z.string() }) } },
        },
        ...BODY_ERRORS,
        429: AUTHED_ERRORS[429],
      },
    }),
    async (c) => {
      requireOwnOrigin(c);
      const body = await readJson(c, PasswordResetRequestSchema);
      const { rateLimiter, sessions, logger } = c.var.services;
      for (const [key, policy] of [
        [`password-reset:address:${requestAddress(c)}`, RESETS_PER_ADDRESS],
        [`password-reset:email:${body.email.toLowerCase()}`, RESETS_PER_EMAIL],
      ] as const) {
        const decision = await rateLimiter.check(key, policy);
        if (!decision.allowed) {
          throw new ApiError(
            'RATE_LIMIT_EXCEEDED',
            `Too many password-reset requests; retry in ${Math.ceil(decision.retryAfterSeconds)} s.`,
            {
              retryAfter: decision.retryAfterSeconds,
              headers: { ...rateLimitHeaders(policy, decision, 'password-reset') },
            },
          );
        }
      }
      // Not awaited: the answer takes the same time whether the email has an account or not.
      sessions.requestPasswordReset(body.email).catch((error: unknown) => {
        logger.error({ err: error }, 'password-reset link not sent');
      });
      return c.json(
        { message: 'If an account has this email, a link to set a new password is on its way.' },
        202,
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/password-resets/confirm',
      tags: ['Console'],
      summary: "Set a new password with a reset link's token",
      description:
        'The link works once and for 30 minutes; every console session of the account ends. A link that is unknown, used, replaced or expired is 400 `INVALID_REQUEST`.',
      request: { body: { required: true, content: { 'application/json': { schema: PasswordResetSchema } } } },
      responses: { 204: { description: 'Password set' }, ...BODY_ERRORS, 429: AUTHED_ERRORS[429] },
    }),
    async (c) => {
      requireOwnOrigin(c);
      const body = await readJson(c, PasswordResetSchema);
      await c.var.services.sessions.resetPassword(body.token, body.password);
      return c.body(null, 204);
    },
  );
}
