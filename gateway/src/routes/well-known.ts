// The OAuth discovery documents: the JWKS with every public key that can still verify a live
// access token (the signer and any key retiring after a rotation), and the RFC 8414
// authorization server metadata. Both are public and cacheable.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { SCOPES } from '../auth/principal.js';
import type { AppEnv } from '../http/app-env.js';
import { route } from '../http/route.js';

const CACHEABLE = { 'cache-control': 'public, max-age=300' } as const;

const JwkSchema = z
  .object({
    kid: z.string(),
    kty: z.literal('EC'),
    crv: z.literal('P-256'),
    x: z.string(),
    y: z.string(),
    alg: z.literal('ES256'),
    use: z.literal('sig'),
  })
  .openapi('Jwk');

const MetadataSchema = z
  .object({
    issuer: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
  })
  .openapi('AuthorizationServerMetadata');

export function registerWellKnownRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/.well-known/jwks.json',
      tags: ['OAuth'],
      summary: 'The public keys that verify access tokens (JWKS)',
      description:
        'Lists the current signing key and, after a rotation, the previous one until every token it signed has expired. Fetch it again when a token names an unknown kid.',
      responses: {
        200: {
          description: 'JSON Web Key Set',
          content: { 'application/json': { schema: z.object({ keys: z.array(JwkSchema) }) } },
        },
      },
    }),
    async (c) => c.json({ keys: await c.var.services.oauth.keyRing.publishedKeys() }, 200, CACHEABLE),
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/.well-known/oauth-authorization-server',
      tags: ['OAuth'],
      summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
      responses: {
        200: { description: 'Metadata', content: { 'application/json': { schema: MetadataSchema } } },
      },
    }),
    (c) => {
      const { issuer } = c.var.services.oauth;
      return c.json(
        {
          issuer,
          token_endpoint: `${issuer}/oauth/token`,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: [...SCOPES],
          response_types_supported: [],
        },
        200,
        CACHEABLE,
      );
    },
  );
}
