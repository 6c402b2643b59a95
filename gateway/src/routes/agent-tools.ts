// The account's agent tools and MCP settings (docs/mcp.md): which analytics its agents see and
// may call on /mcp (its own, plus those added here), and the price limit of an MCP tool call
// that names none. Only a credential with the `account` scope changes them, never an agent's
// query-scoped key: a prompt-injected agent cannot give itself a stranger's paid tool.
//   GET /v1/account/tools · POST /v1/account/tools {source} · DELETE /v1/account/tools/{name}
//   GET /v1/account/mcp · PUT /v1/account/mcp {max_credits}
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { priceJson } from '../services/marketplace-service.js';
import { type Analytic, isVisibleTo } from '../store/analytic-repository.js';
import type { Listing } from '../store/listing-repository.js';

const AgentToolSchema = z
  .object({
    name: z.string().openapi({ description: 'The analytic, and the MCP tool’s name' }),
    title: z.string().openapi({ description: 'Its listing’s (or definition’s) title: owner text' }),
    owner_id: z.string(),
    owned: z.boolean().openapi({ description: 'true: the account’s own analytic (always a tool)' }),
    listed: z.boolean().openapi({ description: 'Whether it is published on the marketplace' }),
    price: z.number().int().openapi({ description: 'Credits a call pays now' }),
    scheduled_price: z.number().int().nullable(),
    price_effective_at: z.string().nullable(),
  })
  .openapi('AgentTool');

const AddToolSchema = z
  .object({
    source: z.string().min(1).max(128).openapi({
      description: 'An analytic the account may call (public, or shared with it)',
      example: 'sales-by-region',
    }),
  })
  .strict()
  .openapi('AddAgentTool');

const McpSettingsSchema = z
  .object({
    mcp: z.object({
      max_credits: z.number().int().nullable().openapi({
        description: 'The price limit of an MCP tool call without a `max_credits` argument; null: none',
      }),
    }),
  })
  .openapi('McpSettings');

const McpSettingsChangeSchema = z
  .object({
    max_credits: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .nullable()
      .openapi({ description: 'Credits; null removes the limit', example: 10 }),
  })
  .strict()
  .openapi('McpSettingsChange');

function toolJson(analytic: Analytic, listing: Listing | undefined, accountId: string) {
  const definitionTitle = typeof analytic.definition.title === 'string' ? analytic.definition.title : '';
  return {
    name: analytic.name,
    title: listing?.title || definitionTitle || analytic.name,
    owner_id: analytic.accountId,
    owned: analytic.accountId === accountId,
    listed: listing !== undefined,
    ...priceJson(analytic.pricing),
  };
}

async function listingOf(c: Context<AppEnv>, analytic: Analytic): Promise<Listing | undefined> {
  if (analytic.visibility !== 'public') return undefined;
  const [listing] = await c.var.services.store.listings.listed([analytic.name]);
  return listing;
}

export function registerAgentToolRoutes(app: OpenAPIHono<AppEnv>): void {
  const toolResponse = {
    content: { 'application/json': { schema: z.object({ tool: AgentToolSchema }) } },
  };
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/tools',
      tags: ['Accounts'],
      summary: "The account's agent tools: what its agents see and may call on /mcp",
      description:
        'Its own live analytics and those it added that it may still call, by name. A tool call of anything else through MCP is refused (403).',
      security: BEARER,
      responses: {
        200: {
          description: 'Tools',
          content: { 'application/json': { schema: z.object({ items: z.array(AgentToolSchema) }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const { store } = c.var.services;
      const { accountId } = c.var.principal;
      const analytics = await store.analytics.listToolsOf(accountId);
      const listings = await store.listings.listed(
        analytics.filter((a) => a.visibility === 'public').map((a) => a.name),
      );
      const byName = new Map(listings.map((l) => [l.name, l]));
      return c.json({ items: analytics.map((a) => toolJson(a, byName.get(a.name), accountId)) });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/account/tools',
      tags: ['Accounts'],
      summary: "Add an analytic to the account's agent tools",
      description:
        'Needs the `account` scope (an agent’s query-only key cannot add tools). 201 when added, 200 when it already was a tool (or is the account’s own). 404 `SOURCE_NOT_FOUND` for an analytic the account may not call. Every open MCP session of the account is told its tool list changed.',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: AddToolSchema } } } },
      responses: {
        200: { description: 'Already a tool', ...toolResponse },
        201: { description: 'Added', ...toolResponse },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const { store, mcpTools } = c.var.services;
      const { accountId } = c.var.principal;
      const { source } = await readJson(c, AddToolSchema);
      const analytic = await store.analytics.get(source);
      if (analytic === null || !isVisibleTo(analytic, accountId))
        throw new ApiError('SOURCE_NOT_FOUND', `No analytic "${source}" you may call.`);
      const added = analytic.accountId !== accountId && (await store.agentTools.add(accountId, source));
      mcpTools.forget(accountId);
      return c.json({ tool: toolJson(analytic, await listingOf(c, analytic), accountId) }, added ? 201 : 200);
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/account/tools/{name}',
      tags: ['Accounts'],
      summary: "Remove an analytic from the account's agent tools",
      description:
        'Its agents stop seeing and calling it (404 when it was not added; the account’s own analytics are tools while they exist).',
      security: BEARER,
      request: { params: z.object({ name: z.string() }) },
      responses: { 204: { description: 'Removed' }, ...AUTHED_ERRORS, ...NOT_FOUND_ERROR },
    }),
    requireScope('account'),
    async (c) => {
      const { store, mcpTools } = c.var.services;
      const { accountId } = c.var.principal;
      const name = pathParam(c, 'name');
      if (!(await store.agentTools.remove(accountId, name)))
        throw new ApiError('NOT_FOUND', `"${name}" is not among the tools this account added.`);
      mcpTools.forget(accountId);
      return c.body(null, 204);
    },
  );

  const settingsResponse = {
    description: 'The MCP settings',
    content: { 'application/json': { schema: McpSettingsSchema } },
  };
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/mcp',
      tags: ['Accounts'],
      summary: "The account's MCP settings (the default price limit of a tool call)",
      security: BEARER,
      responses: { 200: settingsResponse, ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const choice = await c.var.services.store.agentTools.choice(c.var.principal.accountId);
      return c.json({ mcp: { max_credits: choice.maxCredits ?? null } });
    },
  );

  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/account/mcp',
      tags: ['Accounts'],
      summary: "Set the account's MCP settings",
      description:
        '`max_credits`: an MCP tool call without its own `max_credits` argument that would cost more is refused (`PRICE_ABOVE_LIMIT`), nothing run or charged. REST calls are not affected.',
      security: BEARER,
      request: {
        body: { required: true, content: { 'application/json': { schema: McpSettingsChangeSchema } } },
      },
      responses: { 200: settingsResponse, ...AUTHED_ERRORS, ...BODY_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const { store, mcpTools } = c.var.services;
      const { accountId } = c.var.principal;
      const body = await readJson(c, McpSettingsChangeSchema);
      await store.agentTools.setMaxCredits(accountId, body.max_credits);
      mcpTools.forget(accountId);
      return c.json({ mcp: { max_credits: body.max_credits } });
    },
  );
}
