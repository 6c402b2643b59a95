// API keys of the caller's account: create (secret shown once), list (never a secret), revoke.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { SCOPES } from '../auth/principal.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, LIMIT_ERROR, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { IssuedKeySchema, KeySchema, keyJson } from '../http/resources.js';
import { pathParam, route } from '../http/route.js';

export const NewKeySchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z
      .array(z.enum(SCOPES as ['query', 'keys', 'owner', 'account']))
      .min(1)
      .optional()
      .openapi({ description: "A subset of the caller's scopes (403 otherwise); defaults to all of them" }),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .openapi('NewApiKey');

export function registerKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/keys',
      tags: ['Keys'],
      summary: 'Create an API key (the secret is shown once)',
      description:
        "Its scopes must be a subset of the caller's (403 otherwise); by default it gets all of them.",
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: NewKeySchema } } } },
      responses: {
        201: {
          description: 'Created',
          content: { 'application/json': { schema: z.object({ key: IssuedKeySchema }) } },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const body = await readJson(c, NewKeySchema);
      const issued = await c.var.services.accounts.createKey(c.var.principal, {
        name: body.name,
        ...(body.scopes ? { scopes: body.scopes } : {}),
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
      });
      return c.json({ key: { ...keyJson(issued.key), secret: issued.secret } }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/keys',
      tags: ['Keys'],
      summary: "List the account's keys (never a secret)",
      security: BEARER,
      responses: {
        200: {
          description: 'Keys',
          content: { 'application/json': { schema: z.object({ keys: z.array(KeySchema) }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const keys = await c.var.services.accounts.listKeys(c.var.principal.accountId);
      return c.json({ keys: keys.map(keyJson) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/keys/{id}',
      tags: ['Keys'],
      summary: 'Revoke a key (every gateway instance refuses it within seconds)',
      security: BEARER,
      request: { params: z.object({ id: z.string() }) },
      responses: {
        200: {
          description: 'Revoked',
          content: { 'application/json': { schema: z.object({ key: KeySchema }) } },
        },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const { accounts, auth } = c.var.services;
      const key = await accounts.revokeKey(c.var.principal.accountId, pathParam(c, 'id'));
      auth.forgetKey(key.id);
      return c.json({ key: keyJson(key) });
    },
  );
}
