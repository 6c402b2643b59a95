// Embedding analytics in other sites' pages (docs/embedding.md):
//   POST /v1/embed-tokens                       mint a browser-safe token (a `query`-scoped key)
//   GET|POST /v1/embed-secrets                  the account's HS256 secrets (shown once)
//   POST /v1/embed-secrets/{id}/rotate          a new secret; the old one verifies `overlap_seconds` more
//   DELETE /v1/embed-secrets/{id}               revoke: its tokens stop working within seconds
//   GET|PUT /v1/account/cors                    whether the account's keys may be used from other origins
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  EMBED_MAX_TTL_S,
  EmbedAnalyticSchema,
  EmbedOriginsSchema,
  EmbedRateLimitSchema,
} from '../auth/embed-tokens.js';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  errorResponse,
  LIMIT_ERROR,
  NOT_FOUND_ERROR,
} from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson, readOptionalJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import type { EmbedSecret } from '../store/embed-repository.js';

/** A rotated secret verifies this long by default, and at most 7 days. */
const DEFAULT_OVERLAP_S = 86_400;
const MAX_OVERLAP_S = 7 * 86_400;

export const NewEmbedTokenSchema = z
  .object({
    analytics: z
      .array(
        EmbedAnalyticSchema.extend({
          name: EmbedAnalyticSchema.shape.name.openapi({
            description: 'An analytic the account may call, or `name@version` to pin one version',
            example: 'sales-by-region',
          }),
          fixed_params: EmbedAnalyticSchema.shape.fixed_params.openapi({
            description:
              'Params the caller cannot change: applied when left out, 403 when sent with another value',
            example: { region: 'EU' },
          }),
        }),
      )
      .min(1)
      .max(50),
    origins: EmbedOriginsSchema.optional().openapi({
      description:
        'Browser origins the token may be used from (`https://app.example.com`); none: from servers only',
      example: ['https://app.example.com'],
    }),
    expires_in: z
      .number()
      .int()
      .min(1)
      .max(EMBED_MAX_TTL_S)
      .optional()
      .openapi({ description: 'Seconds it is valid (default 3600, at most 86400)', example: 900 }),
    rate_limit: EmbedRateLimitSchema.optional().openapi({
      description: "The token's own rate limit, besides the account's",
    }),
  })
  .strict()
  .openapi('NewEmbedToken');

const EmbedTokenSchema = z
  .object({
    token: z.string().openapi({ description: 'The JWT a page sends as `Authorization: Bearer <token>`' }),
    token_id: z.string(),
    expires_at: z.string(),
  })
  .openapi('EmbedToken');

const EmbedSecretSchema = z
  .object({
    id: z.string().openapi({ description: 'The `kid` of the tokens it signs', example: 'qes_3kTMd9Qp' }),
    name: z.string(),
    created_at: z.string(),
    expires_at: z
      .string()
      .nullable()
      .openapi({ description: 'Set by a rotation: it verifies tokens until then' }),
    revoked_at: z.string().nullable(),
  })
  .openapi('EmbedSecret');

const IssuedEmbedSecretSchema = EmbedSecretSchema.extend({
  secret: z.string().openapi({
    description: 'The HS256 key (its UTF-8 bytes), shown this once',
    example: 'qess_…',
  }),
}).openapi('IssuedEmbedSecret');

const NewEmbedSecretSchema = z
  .object({ name: z.string().trim().min(1).max(100) })
  .strict()
  .openapi('NewEmbedSecret');

const RotateEmbedSecretSchema = z
  .object({
    overlap_seconds: z.number().int().min(0).max(MAX_OVERLAP_S).optional().openapi({
      description: 'How long the old secret keeps verifying (default 86400, at most 7 days)',
    }),
  })
  .strict()
  .openapi('RotateEmbedSecret');

const CorsSettingsSchema = z
  .object({
    cors: z.object({
      allow_keys_from_browsers: z.boolean().openapi({
        description:
          "Whether the account's API keys and OAuth tokens are accepted from web pages of other origins (off: only embed tokens are)",
      }),
    }),
  })
  .openapi('CorsSettings');

const CorsChangeSchema = z
  .object({ allow_keys_from_browsers: z.boolean() })
  .strict()
  .openapi('CorsSettingsChange');

const secretJson = (s: EmbedSecret) => ({
  id: s.id,
  name: s.name,
  created_at: s.createdAt.toISOString(),
  expires_at: s.expiresAt?.toISOString() ?? null,
  revoked_at: s.revokedAt?.toISOString() ?? null,
});

const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

export function registerEmbedRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/embed-tokens',
      tags: ['Embedding'],
      summary: 'Mint an embed token for a web page',
      description:
        "An ES256 token for the caller's account, signed by the gateway: it calls the named analytics only, with its fixed params, from its origins only, until it expires (at most 24 h) or the key that minted it is revoked. The account pays for its calls. Needs the `query` scope; the analytics must be ones the account may call, and each fixed param one of the analytic's params.",
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: NewEmbedTokenSchema } } },
      },
      responses: {
        201: json(z.object({ embed_token: EmbedTokenSchema }), 'Minted'),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        404: errorResponse('SOURCE_NOT_FOUND: an analytic the account cannot call'),
      },
    }),
    requireScope('query'),
    async (c) => {
      const principal = c.var.principal;
      if (principal.credential === 'try_token') {
        throw new ApiError('FORBIDDEN', 'A try-token cannot mint embed tokens; use an API key.');
      }
      const body = await readJson(c, NewEmbedTokenSchema);
      const { queries, embed } = c.var.services;
      for (const analytic of body.analytics) {
        const at = analytic.name.indexOf('@');
        const entry = await queries.resolve(principal, at < 0 ? analytic.name : analytic.name.slice(0, at));
        const unknown = Object.keys(analytic.fixed_params ?? {}).filter(
          (p) => !Object.hasOwn(entry.definition.params, p),
        );
        if (unknown.length > 0) {
          throw new ApiError(
            'INVALID_PARAMS',
            `"${analytic.name}" has no param ${unknown.map((p) => `"${p}"`).join(', ')} to fix.`,
            { details: unknown.map((p) => ({ param: p, message: 'not a param of the analytic' })) },
          );
        }
      }
      const minted = await embed.mint(principal, {
        analytics: body.analytics.map((a) => ({ name: a.name, fixedParams: a.fixed_params ?? {} })),
        origins: body.origins ?? [],
        rateLimit:
          body.rate_limit === undefined
            ? undefined
            : { limit: body.rate_limit.limit, windowSeconds: body.rate_limit.window_seconds },
        ttlSeconds: body.expires_in ?? 3_600,
      });
      return c.json(
        {
          embed_token: {
            token: minted.token,
            token_id: minted.tokenId,
            expires_at: minted.expiresAt.toISOString(),
          },
        },
        201,
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/embed-secrets',
      tags: ['Embedding'],
      summary: 'Create an embed secret (shown once) to mint HS256 embed tokens offline',
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: NewEmbedSecretSchema } } },
      },
      responses: {
        201: json(z.object({ embed_secret: IssuedEmbedSecretSchema }), 'Created'),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const body = await readJson(c, NewEmbedSecretSchema);
      const issued = await c.var.services.embed.createSecret(c.var.principal.accountId, body.name);
      return c.json({ embed_secret: { ...secretJson(issued.record), secret: issued.secret } }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/embed-secrets',
      tags: ['Embedding'],
      summary: "List the account's embed secrets that still verify (never a secret)",
      security: BEARER,
      responses: {
        200: json(z.object({ embed_secrets: z.array(EmbedSecretSchema) }), 'Embed secrets'),
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const secrets = await c.var.services.embed.listSecrets(c.var.principal.accountId);
      return c.json({ embed_secrets: secrets.map(secretJson) });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/embed-secrets/{id}/rotate',
      tags: ['Embedding'],
      summary: 'Rotate an embed secret: a new one (shown once); the old one verifies for the overlap',
      security: BEARER,
      request: {
        params: z.object({ id: z.string() }),
        body: { required: false, content: { 'application/json': { schema: RotateEmbedSecretSchema } } },
      },
      responses: {
        201: json(
          z.object({ embed_secret: IssuedEmbedSecretSchema, previous: EmbedSecretSchema }),
          'Rotated',
        ),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const body = await readOptionalJson(c, RotateEmbedSecretSchema);
      const { issued, previous } = await c.var.services.embed.rotateSecret(
        c.var.principal.accountId,
        pathParam(c, 'id'),
        body.overlap_seconds ?? DEFAULT_OVERLAP_S,
      );
      return c.json(
        {
          embed_secret: { ...secretJson(issued.record), secret: issued.secret },
          previous: secretJson(previous),
        },
        201,
      );
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/embed-secrets/{id}',
      tags: ['Embedding'],
      summary: 'Revoke an embed secret: tokens it signed stop working on every instance within seconds',
      security: BEARER,
      request: { params: z.object({ id: z.string() }) },
      responses: {
        200: json(z.object({ embed_secret: EmbedSecretSchema }), 'Revoked'),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('keys'),
    async (c) => {
      const secret = await c.var.services.embed.revokeSecret(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ embed_secret: secretJson(secret) });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/cors',
      tags: ['Accounts'],
      summary: "Whether the account's keys may be used from other origins' web pages",
      security: BEARER,
      responses: { 200: json(CorsSettingsSchema, 'CORS settings'), ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const allow = await c.var.services.embed.keysFromBrowsers(c.var.principal.accountId);
      return c.json({ cors: { allow_keys_from_browsers: allow } });
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/account/cors',
      tags: ['Accounts'],
      summary: "Allow (or refuse) the account's keys from other origins' web pages",
      description:
        'Off by default: an API key or OAuth token sent from a page of another origin is refused (403) and gets no CORS headers, since anyone who opens the page can copy it. Embed tokens are not affected.',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: CorsChangeSchema } } } },
      responses: { 200: json(CorsSettingsSchema, 'CORS settings'), ...AUTHED_ERRORS, ...BODY_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, CorsChangeSchema);
      const allow = await c.var.services.embed.setKeysFromBrowsers(
        c.var.principal.accountId,
        body.allow_keys_from_browsers,
      );
      return c.json({ cors: { allow_keys_from_browsers: allow } });
    },
  );
}
