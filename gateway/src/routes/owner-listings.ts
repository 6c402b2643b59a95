// An owner's marketplace listing of one of their analytics: publish or update it, show it,
// unpublish it. The price is never part of the listing body: it is the analytic's own `price`,
// read from its current definition (see marketplace.ts), so there is one source of truth.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { validateParams } from '@quarry/sdk-connector';
import { parseAnalyticDefinition } from '../catalog/analytic-definition.js';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  CONFLICT_ERROR,
  NOT_FOUND_ERROR,
} from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { priceJson } from '../services/marketplace-service.js';
import type { Analytic } from '../store/analytic-repository.js';
import type { Listing } from '../store/listing-repository.js';

export const ListingInputSchema = z
  .object({
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(10_000).optional(),
    category: z.string().trim().min(1).max(64).optional(),
    tags: z.array(z.string().trim().min(1).max(32)).max(20).optional(),
    example_params: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Shown in the example request; must pass the analytic's param schema" }),
    previews: z.boolean().optional().openapi({
      description: 'Whether callers may try it for free on the marketplace (capped previews); default true',
    }),
  })
  .strict()
  .openapi('ListingInput', {
    description:
      "A field left out keeps the listing's current value, else takes the analytic definition's own (title falls back to the name, category to `Other`). The price is always the analytic's `price`.",
  });

export const OwnerListingSchema = z
  .object({
    name: z.string(),
    title: z.string(),
    description: z.string(),
    category: z.string(),
    tags: z.array(z.string()),
    price: z.number().int().openapi({ description: 'Credits a call pays now' }),
    scheduled_price: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'A price rise not in force yet (QUARRY_PRICE_NOTICE_HOURS), or null' }),
    price_effective_at: z
      .string()
      .nullable()
      .openapi({ description: 'When `scheduled_price` takes effect (ISO 8601), or null' }),
    example_params: z.record(z.string(), z.unknown()),
    previews: z.boolean(),
    published: z.boolean(),
    published_at: z.string(),
    unpublished_at: z.string().nullable(),
    updated_at: z.string(),
  })
  .openapi('OwnerListing');

function listingJson(l: Listing, analytic: Analytic) {
  return {
    name: analytic.name,
    title: l.title,
    description: l.description,
    category: l.category,
    tags: [...l.tags],
    ...priceJson(analytic.pricing),
    example_params: { ...l.exampleParams },
    previews: l.previews,
    published: l.unpublishedAt === null,
    published_at: l.publishedAt.toISOString(),
    unpublished_at: l.unpublishedAt?.toISOString() ?? null,
    updated_at: l.updatedAt.toISOString(),
  };
}

const NameParam = z.object({ name: z.string() });
const one = { 'application/json': { schema: z.object({ listing: OwnerListingSchema }) } };

export function registerOwnerListingRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/owner/analytics/{name}/listing',
      tags: ['Owner'],
      summary: 'Publish an analytic on the marketplace, or update its listing',
      description:
        "Only a public analytic can be listed. The listed price is always the analytic's current `price`: deploy a new definition to change it.",
      security: BEARER,
      request: {
        params: NameParam,
        body: { required: true, content: { 'application/json': { schema: ListingInputSchema } } },
      },
      responses: {
        200: { description: 'Published', content: one },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const { analytics, marketplace } = c.var.services;
      const ownerId = c.var.principal.accountId;
      const body = await readJson(c, ListingInputSchema);
      const analytic = await analytics.get(ownerId, pathParam(c, 'name'));
      const parsed = parseAnalyticDefinition(analytic.definition);
      if (!parsed.ok) {
        throw new ApiError(
          'CONFLICT',
          `The definition of "${analytic.name}" is invalid; deploy a fixed one first.`,
        );
      }
      const definition = parsed.definition;
      if (analytic.visibility !== 'public') {
        throw new ApiError(
          'CONFLICT',
          `"${analytic.name}" is ${analytic.visibility}: only a public analytic can be listed.`,
        );
      }
      // A field left out keeps the listing's current value, else the definition's own.
      const current = await marketplace.ownerListing(ownerId, analytic.id);
      const exampleParams = body.example_params ?? current?.exampleParams ?? definition.example_params ?? {};
      const checked = validateParams(definition.params, exampleParams);
      if (!checked.ok) {
        throw new ApiError('INVALID_PARAMS', "example_params do not pass the analytic's param schema.", {
          details: checked.issues.map((i) => ({ param: i.param, message: i.message })),
        });
      }
      const listing = await marketplace.publish(ownerId, analytic.id, {
        title: body.title ?? current?.title ?? definition.title ?? analytic.name,
        description: body.description ?? current?.description ?? definition.description ?? '',
        category: body.category ?? current?.category ?? definition.category ?? 'Other',
        tags: body.tags ?? current?.tags ?? definition.tags ?? [],
        price: definition.price,
        exampleParams,
        previews: body.previews ?? current?.previews ?? true,
      });
      return c.json({ listing: listingJson(listing, analytic) });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/analytics/{name}/listing',
      tags: ['Owner'],
      summary: "An analytic's listing, published or not",
      security: BEARER,
      request: { params: NameParam },
      responses: { 200: { description: 'Listing', content: one }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      const ownerId = c.var.principal.accountId;
      const analytic = await c.var.services.analytics.get(ownerId, pathParam(c, 'name'));
      const listing = await c.var.services.marketplace.ownerListing(ownerId, analytic.id);
      if (listing === null) throw new ApiError('NOT_FOUND', `"${analytic.name}" has never been listed.`);
      return c.json({ listing: listingJson(listing, analytic) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/owner/analytics/{name}/listing',
      tags: ['Owner'],
      summary: 'Take an analytic off the marketplace (it can still be called)',
      security: BEARER,
      request: { params: NameParam },
      responses: { 200: { description: 'Unpublished', content: one }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('owner'),
    async (c) => {
      const ownerId = c.var.principal.accountId;
      const analytic = await c.var.services.analytics.get(ownerId, pathParam(c, 'name'));
      const listing = await c.var.services.marketplace.unpublish(ownerId, analytic.id);
      return c.json({ listing: listingJson(listing, analytic) });
    },
  );
}
