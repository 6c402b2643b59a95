// The marketplace: public search and detail of published listings, and the try-it console's
// short-lived tokens. A listing's price is always its analytic's current `price` (one source of
// truth): it is read from the current definition whenever a listing is shown, so a later
// deploy that changes the price shows at once, with nothing to keep in sync.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { TRY_TOKEN_MAX_TTL_S } from '../auth/try-token.js';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { DeprecatedVersionSchema, deprecatedVersionJson } from '../http/resources.js';
import { pathParam, route, valid } from '../http/route.js';
import { priceJson } from '../services/marketplace-service.js';
import type { MarketplaceListing } from '../store/listing-repository.js';
import type { PriceSchedule } from '../store/price-schedule.js';

/** The credits a call of this definition costs (the definition schema's default is 1). */

export const ListingSearchQuerySchema = z.object({
  q: z.string().max(200).optional().openapi({ description: 'Text in the title, description, name or a tag' }),
  category: z.string().max(64).optional().openapi({ description: 'Exact category, any case' }),
  sort: z.enum(['popular', 'newest']).default('popular').openapi({
    description: '`popular`: most distinct paying callers in the last 30 days first, then most paid calls',
  }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});

export const ListingItemSchema = z
  .object({
    name: z.string().openapi({ description: 'The analytic: the `source` of a query' }),
    title: z.string(),
    description: z.string(),
    category: z.string(),
    tags: z.array(z.string()),
    price: z.number().int().openapi({ description: 'Credits a call pays now (the price in force)' }),
    scheduled_price: z.number().int().nullable().openapi({
      description:
        'A price rise the owner scheduled, or null: calls pay it from `price_effective_at` (QUARRY_PRICE_NOTICE_HOURS after the deploy that raised it)',
    }),
    price_effective_at: z
      .string()
      .nullable()
      .openapi({ description: 'When `scheduled_price` takes effect (ISO 8601), or null' }),
    calls_30d: z.number().int().openapi({
      description:
        'Paid calls in the last 30 days (on a paying plan, by others than its owner; previews, Free-plan calls and the owner’s own calls are not counted)',
    }),
    callers_30d: z.number().int().openapi({ description: 'Distinct accounts that made those paid calls' }),
    owner: z.object({ name: z.string() }).openapi({ description: 'The account that publishes it' }),
    previews: z
      .boolean()
      .openapi({ description: 'Whether it can be tried for free (`POST /v1/marketplace/try-token`)' }),
    published_at: z.string(),
  })
  .openapi('Listing');

export const ListingDetailSchema = ListingItemSchema.extend({
  version: z.number().int().openapi({ description: 'The analytic version that runs now' }),
  params: z.record(z.string(), z.unknown()).openapi({ description: 'The param schema' }),
  insights: z.record(z.string(), z.unknown()).nullable().openapi({
    description: 'The output shape the analytic declares (`insights` of its definition), or null',
  }),
  example_params: z.record(z.string(), z.unknown()),
  example_request: z.object({
    method: z.literal('POST'),
    url: z.literal('/v1/query'),
    body: z.object({ source: z.string(), params: z.record(z.string(), z.unknown()) }),
  }),
  curl: z.string().openapi({ description: 'The same request as a shell command (key in $QUARRY_API_KEY)' }),
  deprecated_versions: z.array(DeprecatedVersionSchema).openapi({
    description:
      'Older versions callers may still pin (`name@N`) that its owner deprecated, with their sunset dates',
  }),
}).openapi('ListingDetail');

export const TryTokenRequestSchema = z
  .object({
    source: z.string().min(1).max(128).openapi({ description: 'The listed analytic the token may preview' }),
    ttl_seconds: z
      .number()
      .int()
      .min(1)
      .max(TRY_TOKEN_MAX_TTL_S)
      .optional()
      .openapi({ description: `Lifetime, 1–${TRY_TOKEN_MAX_TTL_S} s (default ${TRY_TOKEN_MAX_TTL_S})` }),
  })
  .strict()
  .openapi('TryTokenRequest');

const TryTokenSchema = z
  .object({ token: z.string(), expires_at: z.string(), token_type: z.literal('Bearer') })
  .openapi('TryToken');

function itemJson(l: MarketplaceListing, pricing: PriceSchedule) {
  return {
    name: l.name,
    title: l.title,
    description: l.description,
    category: l.category,
    tags: [...l.tags],
    ...priceJson(pricing),
    calls_30d: Number(l.calls30d),
    callers_30d: Number(l.callers30d),
    owner: { name: l.ownerName },
    previews: l.previews,
    published_at: l.publishedAt.toISOString(),
  };
}

/** `text` inside single quotes for a POSIX shell. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function registerMarketplaceRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/marketplace/listings',
      tags: ['Marketplace'],
      summary: 'Search published analytics (public)',
      request: { query: ListingSearchQuerySchema },
      responses: {
        200: {
          description: 'One page of listings',
          content: {
            'application/json': {
              schema: z.object({
                items: z.array(ListingItemSchema),
                total: z.number().int().openapi({ description: 'Matches in all pages' }),
              }),
            },
          },
        },
        400: AUTHED_ERRORS[400],
        500: AUTHED_ERRORS[500],
      },
    }),
    async (c) => {
      const { q, category, sort, limit, offset } = valid(c, 'query', ListingSearchQuerySchema);
      const page = await c.var.services.reads.marketplace.search({
        ...(q === undefined ? {} : { text: q }),
        ...(category === undefined || category === '' ? {} : { category }),
        sort,
        limit,
        offset,
      });
      return c.json({
        items: page.items.map(({ listing, pricing }) => itemJson(listing, pricing)),
        total: page.total,
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/marketplace/listings/{name}',
      tags: ['Marketplace'],
      summary: 'One listing: description, param schema, price and a ready example request (public)',
      request: { params: z.object({ name: z.string() }) },
      responses: {
        200: { description: 'Listing', content: { 'application/json': { schema: ListingDetailSchema } } },
        ...NOT_FOUND_ERROR,
        500: AUTHED_ERRORS[500],
      },
    }),
    async (c) => {
      const name = pathParam(c, 'name');
      const listing = await c.var.services.reads.marketplace.listing(name);
      if (listing === null) throw new ApiError('NOT_FOUND', `No listing "${name}" on the marketplace.`);
      const params = { ...listing.exampleParams };
      const body = { source: listing.name, params };
      const origin = new URL(c.req.url).origin;
      const curl = [
        `curl -X POST ${shellQuote(`${origin}/v1/query`)}`,
        `-H "Authorization: Bearer $QUARRY_API_KEY"`,
        `-H 'Content-Type: application/json'`,
        `-d ${shellQuote(JSON.stringify(body))}`,
      ].join(' \\\n  ');
      const definitionParams = listing.definition.params;
      const insights = listing.definition.insights;
      return c.json({
        ...itemJson(listing, listing.pricing),
        version: listing.version,
        params:
          definitionParams !== null && typeof definitionParams === 'object'
            ? (definitionParams as Record<string, unknown>)
            : {},
        insights:
          insights !== null && typeof insights === 'object' ? (insights as Record<string, unknown>) : null,
        example_params: params,
        example_request: { method: 'POST' as const, url: '/v1/query' as const, body },
        curl,
        deprecated_versions: (await c.var.services.reads.analyticVersions.deprecationsOf(listing.name)).map(
          deprecatedVersionJson,
        ),
      });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/marketplace/try-token',
      tags: ['Marketplace'],
      summary: "A short-lived token for the marketplace's try-it console",
      description: [
        'Minted with an API key (`query` scope) or the web console’s session for one listed analytic whose owner allows previews, or by an owner for any analytic of its own (listed or not: a check of what it deployed, with its warehouse’s own error messages).',
        'Calls made with the token (as `Authorization: Bearer <token>`) are previews of that analytic only:',
        'free, never counted against the quota, earning the owner nothing, recorded with origin `marketplace`,',
        'answered with at most QUARRY_PREVIEW_ROWS rows (`meta.preview: true`), within the account’s',
        'QUARRY_PREVIEWS_PER_DAY previews a day across all its keys, and refused once the minting key is',
        'revoked or expired (or the minting session ended). The token only has the `query` scope and cannot mint another one.',
      ].join(' '),
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: TryTokenRequestSchema } } },
      },
      responses: {
        201: { description: 'Signed', content: { 'application/json': { schema: TryTokenSchema } } },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('query'),
    async (c) => {
      const principal = c.var.principal;
      // The token lives only while its minter does: a key, or the console's session.
      if (principal.credential !== 'api_key' && principal.credential !== 'session') {
        throw new ApiError('FORBIDDEN', 'Mint try-tokens with an API key or a console session.');
      }
      const body = await readJson(c, TryTokenRequestSchema);
      const listing = await c.var.services.marketplace.listing(body.source);
      let source = listing?.previews ? listing.name : undefined;
      if (source === undefined) {
        // Its owner may always try its own analytic, listed or not: a check of what it deployed,
        // where it sees its warehouse's own errors (the console studio's test run).
        const own = await c.var.services.analytics.get(principal.accountId, body.source).catch(() => null);
        if (own !== null) source = own.name;
        else if (listing === null)
          throw new ApiError('NOT_FOUND', `No listing "${body.source}" on the marketplace.`);
        else
          throw new ApiError('FORBIDDEN', `The owner of "${body.source}" has turned its free previews off.`);
      }
      const signed = await c.var.services.tryTokens.sign({
        accountId: principal.accountId,
        source,
        keyId: principal.keyId,
        ...(body.ttl_seconds === undefined ? {} : { ttlSeconds: body.ttl_seconds }),
      });
      return c.json(
        { token: signed.token, expires_at: signed.expiresAt.toISOString(), token_type: 'Bearer' as const },
        201,
      );
    },
  );
}
