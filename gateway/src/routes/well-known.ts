// The OAuth discovery documents: the JWKS with every public key that can still verify a live
// access token (the signer and any key retiring after a rotation), the RFC 8414
// authorization server metadata, and the RFC 9728 protected-resource metadata of the MCP
// endpoint (where MCP clients learn which authorization server issues its tokens). All public
// and cacheable.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { SCOPES } from '../auth/principal.js';
import type { AppEnv } from '../http/app-env.js';
import { route } from '../http/route.js';
import { MCP_PATH, MCP_RESOURCE_METADATA_PATH } from '../mcp/mcp-admission.js';

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

const ResourceMetadataSchema = z
  .object({
    resource: z.string(),
    resource_name: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_documentation: z.string(),
  })
  .openapi('ProtectedResourceMetadata');

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

  // RFC 9728 §3.1 places the metadata of `<origin>/mcp` under the well-known prefix plus the
  // resource's path; some MCP clients ask the bare prefix first. Both answer the same document.
  for (const path of [MCP_RESOURCE_METADATA_PATH, '/.well-known/oauth-protected-resource']) {
    route(
      app,
      createRoute({
        method: 'get',
        path,
        tags: ['OAuth'],
        summary: 'OAuth 2.0 protected resource metadata of the MCP endpoint (RFC 9728)',
        description:
          'Names `/mcp` as the resource and this gateway as its authorization server (`/.well-known/oauth-authorization-server`): MCP clients find it through the `resource_metadata` parameter of a 401 from `/mcp`.',
        responses: {
          200: {
            description: 'Metadata',
            content: { 'application/json': { schema: ResourceMetadataSchema } },
          },
        },
      }),
      (c) => {
        const { issuer } = c.var.services.oauth;
        return c.json(
          {
            resource: `${c.var.services.config.publicUrl}${MCP_PATH}`,
            resource_name: 'Quarry analytics marketplace (MCP)',
            authorization_servers: [issuer],
            scopes_supported: ['query'],
            bearer_methods_supported: ['header'],
            resource_documentation: `${c.var.services.config.publicUrl}/docs`,
          },
          200,
          CACHEABLE,
        );
      },
    );
  }
}
