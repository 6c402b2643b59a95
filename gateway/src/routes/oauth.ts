// POST /oauth/token: the OAuth 2.0 client-credentials grant (RFC 6749 §4.4). A form-encoded body,
// client authentication by HTTP Basic or client_id/client_secret in the body (never both), and
// a short-lived ES256 JWT access token usable wherever an API key is. Errors follow RFC 6749 §5.2
// (`{"error", "error_description"}`), not the Quarry envelope; every answer is `no-store`.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { SCOPES } from '../auth/principal.js';
import type { AppEnv } from '../http/app-env.js';
import { requestAddress } from '../http/request-address.js';
import { route } from '../http/route.js';
import {
  NO_STORE_HEADERS,
  OAUTH_ERROR_CODES,
  OAuthError,
  oauthErrorBody,
  oauthErrorHeaders,
} from '../oauth/oauth-error.js';
import { grantedScopes, parseTokenRequest } from '../oauth/token-request.js';

const SCOPE_DESCRIPTIONS: Readonly<Record<(typeof SCOPES)[number], string>> = {
  query: 'Query analytics',
  keys: 'Manage API keys and OAuth clients',
  owner: 'Manage connections, analytics and listings',
  account: 'Read the account and its usage',
};

const TokenRequestSchema = z
  .object({
    grant_type: z.literal('client_credentials'),
    scope: z
      .string()
      .optional()
      .openapi({ description: "Space-separated subset of the client's scopes; default all of them" }),
    client_id: z.string().optional().openapi({ description: 'client_secret_post only' }),
    client_secret: z.string().optional().openapi({ description: 'client_secret_post only' }),
  })
  .openapi('TokenRequest');

const TokenResponseSchema = z
  .object({
    access_token: z.string().openapi({ description: 'An ES256 JWT; send it as `Authorization: Bearer …`' }),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().openapi({ example: 900 }),
    scope: z.string().openapi({ example: 'query keys' }),
  })
  .openapi('TokenResponse');

const OAuthErrorSchema = z
  .object({
    error: z.enum(OAUTH_ERROR_CODES as [string, ...string[]]),
    error_description: z.string(),
  })
  .openapi('OAuthError');

const oauthError = (description: string) => ({
  description,
  content: { 'application/json': { schema: OAuthErrorSchema } },
});

export function registerOAuthRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description:
      'OAuth 2.0 client credentials: exchange an OAuth client for an access token at /oauth/token and send it as a bearer token',
    flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS } },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'clientBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'client_secret_basic: the client_id and client_secret (each form-urlencoded) as HTTP Basic',
  });

  route(
    app,
    createRoute({
      method: 'post',
      path: '/oauth/token',
      tags: ['OAuth'],
      summary: 'Get an access token (OAuth 2.0 client credentials)',
      description:
        'Authenticate the client with HTTP Basic (client_secret_basic) or with client_id and client_secret in the body (client_secret_post), not both. Errors are RFC 6749 §5.2 objects; repeated failed authentications of one client_id are refused for a while (429 with Retry-After).',
      security: [{ clientBasic: [] }, {}],
      request: {
        body: {
          required: true,
          content: { 'application/x-www-form-urlencoded': { schema: TokenRequestSchema } },
        },
      },
      responses: {
        200: {
          description: 'The access token (Cache-Control: no-store)',
          content: { 'application/json': { schema: TokenResponseSchema } },
        },
        400: oauthError('invalid_request, unsupported_grant_type or invalid_scope'),
        401: oauthError('invalid_client (with WWW-Authenticate: Basic)'),
        429: oauthError(
          'invalid_client: too many failed authentications of this client_id from this address; see Retry-After',
        ),
      },
    }),
    async (c) => {
      const { oauth } = c.var.services;
      try {
        const request = parseTokenRequest({
          contentType: c.req.header('content-type'),
          authorization: c.req.header('authorization'),
          body: await c.req.text(),
        });
        if (request.grantType === undefined) {
          throw new OAuthError('invalid_request', 'grant_type is required (client_credentials).');
        }
        if (request.grantType !== 'client_credentials') {
          throw new OAuthError(
            'unsupported_grant_type',
            `The grant type "${request.grantType}" is not supported; use client_credentials.`,
          );
        }
        if (request.credentials === null) {
          throw new OAuthError(
            'invalid_client',
            'Authenticate the client with HTTP Basic or with client_id and client_secret in the body.',
          );
        }
        const client = await oauth.clients.authenticate(request.credentials, requestAddress(c));
        const scopes = grantedScopes(request.scope, client.scopes);
        const issued = await oauth.tokens.issue({
          clientId: client.clientId,
          client: client.id,
          accountId: client.accountId,
          scopes,
        });
        return c.json(
          {
            access_token: issued.token,
            token_type: 'Bearer' as const,
            expires_in: issued.expiresIn,
            scope: issued.scope,
          },
          200,
          NO_STORE_HEADERS,
        );
      } catch (error) {
        if (error instanceof OAuthError) {
          return c.json(oauthErrorBody(error), error.status, oauthErrorHeaders(error));
        }
        throw error;
      }
    },
  );
}
