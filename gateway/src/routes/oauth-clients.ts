// OAuth clients of the caller's account (client-credentials grant): create (the secret is shown
// once), list (never a secret), revoke (its tokens stop working within the key-cache bound).
// Managed like API keys, with a key or token holding the `keys` scope.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { SCOPES } from '../auth/principal.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BODY_ERRORS, LIMIT_ERROR, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import type { OAuthClient } from '../store/oauth-client-repository.js';

/** Either credential (an API key or an access token) reaches the management routes. */
const KEY_OR_TOKEN: Record<string, string[]>[] = [{ bearerAuth: [] }, { oauth2: ['keys'] }];

export const NewOAuthClientSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z
      .array(z.enum(SCOPES as ['query', 'keys', 'owner', 'account']))
      .min(1)
      .optional()
      .openapi({ description: "A subset of the caller's scopes; defaults to all of them" }),
  })
  .strict()
  .openapi('NewOAuthClient');

export const OAuthClientSchema = z
  .object({
    id: z.string().openapi({ description: 'The record id (`ocl_…`), used to revoke it' }),
    client_id: z.string().openapi({ description: 'What the client authenticates with (`qci_…`)' }),
    name: z.string(),
    scopes: z.array(z.string()),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .openapi('OAuthClient');

export function oauthClientJson(client: OAuthClient) {
  return {
    id: client.id,
    client_id: client.clientId,
    name: client.name,
    scopes: client.scopes,
    created_at: client.createdAt.toISOString(),
    revoked_at: client.revokedAt?.toISOString() ?? null,
  };
}

export function registerOAuthClientRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/oauth/clients',
      tags: ['OAuth'],
      summary: 'Create an OAuth client (the secret is shown once)',
      description:
        "Its scopes must be a subset of the caller's (403 otherwise). Exchange its client_id and client_secret for access tokens at `POST /oauth/token`.",
      security: KEY_OR_TOKEN,
      request: {
        body: { required: true, content: { 'application/json': { schema: NewOAuthClientSchema } } },
      },
      responses: {
        201: {
          description: 'Created',
          content: {
            'application/json': {
              schema: z.object({
                client: OAuthClientSchema,
                client_secret: z.string().openapi({ description: '`qcs_…`: shown once, never again' }),
              }),
            },
          },
        },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const body = await readJson(c, NewOAuthClientSchema);
      const issued = await c.var.services.oauth.clients.create(c.var.principal, {
        name: body.name,
        ...(body.scopes ? { scopes: body.scopes } : {}),
      });
      return c.json({ client: oauthClientJson(issued.client), client_secret: issued.secret }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/oauth/clients',
      tags: ['OAuth'],
      summary: "List the account's OAuth clients (never a secret)",
      security: KEY_OR_TOKEN,
      responses: {
        200: {
          description: 'Clients',
          content: { 'application/json': { schema: z.object({ clients: z.array(OAuthClientSchema) }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const clients = await c.var.services.oauth.clients.list(c.var.principal.accountId);
      return c.json({ clients: clients.map(oauthClientJson) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/oauth/clients/{id}',
      tags: ['OAuth'],
      summary: 'Revoke an OAuth client: its tokens stop working on every instance within seconds',
      security: KEY_OR_TOKEN,
      request: { params: z.object({ id: z.string() }) },
      responses: {
        204: { description: 'Revoked (also when it already was)' },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const { oauth, auth } = c.var.services;
      const client = await oauth.clients.revoke(c.var.principal.accountId, pathParam(c, 'id'));
      auth.forgetClient(client.id);
      return c.body(null, 204);
    },
  );
}
