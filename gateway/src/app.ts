// Builds the Hono app from injected services. It never listens and never reads the
// environment (server.ts does both), so tests drive it with app.request() and no server.

import { OpenAPIHono, z } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { routePath } from 'hono/route';
import { registerJobRoutes } from './adapters/hono-jobs.js';
import { registerMcpRoutes } from './adapters/hono-mcp.js';
import { registerQueryRoutes } from './adapters/hono-query.js';
import { ApiError } from './errors/api-error.js';
import type { AppEnv } from './http/app-env.js';
import { type CompressedBody, compressedBody } from './http/compressed-body.js';
import type { DocsDocument } from './http/docs-page.js';
import { errorResponse, toApiError } from './http/error-response.js';
import { corsPreflight } from './http/middleware/cors-preflight.js';
import { htmlSecurity } from './http/middleware/html-security.js';
import { requestId } from './http/middleware/request-id.js';
import { operationIdOf } from './http/operation-ids.js';
import { requestAddress } from './http/request-address.js';
import { honoPath } from './http/route.js';
import { registerAccountRoutes } from './routes/accounts.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerAgentToolRoutes } from './routes/agent-tools.js';
import { registerBillingRoutes } from './routes/billing.js';
import { registerSandboxBillingRoutes } from './routes/billing-sandbox.js';
import { registerBudgetRoutes } from './routes/budget.js';
import { registerCallsRoutes } from './routes/calls.js';
import { registerConnectorRoutes } from './routes/connectors.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerEmbedRoutes } from './routes/embed.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerMarketplaceRoutes } from './routes/marketplace.js';
import { registerOAuthRoutes } from './routes/oauth.js';
import { registerOAuthClientRoutes } from './routes/oauth-clients.js';
import { registerOwnerAnalyticsRoutes } from './routes/owner-analytics.js';
import { registerOwnerConnectionRoutes } from './routes/owner-connections.js';
import { registerOwnerListingRoutes } from './routes/owner-listings.js';
import { registerAdminPayoutRoutes, registerPayoutRoutes } from './routes/payouts.js';
import { registerPlanRoutes } from './routes/plans.js';
import { registerSessionRoutes } from './routes/session.js';
import { registerStatementRoutes } from './routes/statements.js';
import { registerUsageRoutes } from './routes/usage.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerWellKnownRoutes } from './routes/well-known.js';
import type { GatewayServices } from './services/gateway-services.js';

export const API_VERSION = '1.0.0';

function allowedMethods(app: OpenAPIHono<AppEnv>, path: string): string[] {
  const methods = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL' || r.path.includes('*')) continue;
    const pattern = new RegExp(`^${honoPath(r.path).replace(/:[^/]+/g, '[^/]+')}$`);
    if (pattern.test(path)) methods.add(r.method);
  }
  return [...methods];
}

/** The API's groups, in the order the documentation shows them. */
export const API_TAGS: { name: string; description: string }[] = [
  { name: 'Query', description: 'Call an analytic: `POST /v1/query` or `GET /v1/analytics/{name}`' },
  {
    name: 'Marketplace',
    description: 'Find listed analytics, read their params and price, try them for free',
  },
  { name: 'Accounts', description: 'Sign up, your account, usage and budget' },
  { name: 'Keys', description: 'API keys' },
  { name: 'Billing', description: 'Plans, checkout, the billing portal and payouts' },
  { name: 'Webhooks', description: 'Signed events out: endpoints, deliveries, alert thresholds' },
  {
    name: 'Embedding',
    description:
      'Browser-safe embed tokens with fixed params and allowed origins, and the secrets to mint them offline',
  },
  { name: 'OAuth', description: 'OAuth 2.0 client credentials, for services and agents' },
  { name: 'MCP', description: 'The Model Context Protocol endpoint for AI agents' },
  { name: 'Owner', description: 'Connections, analytics, listings and statements of a data owner' },
  { name: 'Console', description: "The web console's session and pages" },
  { name: 'Operations', description: 'Health, readiness, metrics and this document' },
  { name: 'Operator', description: "The operator's API (QUARRY_ADMIN_TOKEN)" },
];

const warmers = new WeakMap<object, () => Promise<void>>();

/**
 * Makes what the app makes on first use (the OpenAPI document, the /docs page, their compressed
 * variants) now: a running gateway calls it once it is up, so the first reader of /docs does not
 * wait for a second of generation. Tests that build apps skip it.
 */
export function warmUp(app: OpenAPIHono<AppEnv>): Promise<void> {
  return warmers.get(app)?.() ?? Promise.resolve();
}

export function createApp(services: GatewayServices): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ strict: false });
  // The schemes first, the caller's own first of all: /docs's Authorize dialog lists them in this
  // order, before the OAuth schemes the OAuth routes register.
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`qry_live_…`) or an OAuth access token from `POST /oauth/token`; on the query routes only, also an embed token (`POST /v1/embed-tokens`, or HS256 minted with an embed secret). Management routes (not the query routes) also accept the web console’s session cookie.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: 'quarry_session',
    description:
      'The web console’s HttpOnly session (`POST /v1/session`; `__Host-quarry_session` over https). State changes also need `X-CSRF-Token` and a same-origin `Origin`.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator token (QUARRY_ADMIN_TOKEN); an API key is never accepted',
  });
  const { logger } = services;

  app.use(async function servicesMiddleware(c, next) {
    c.set('services', services);
    await next();
  });
  app.use(requestId());
  // Also for app.request() (the node listener sets it on everything it serves).
  app.use(async function noSniffMiddleware(c, next) {
    await next();
    c.res.headers.set('x-content-type-options', 'nosniff');
  });
  // Every HTML answer (the console, /docs) gets the CSP and framing headers here, in one place.
  app.use(htmlSecurity());
  const { requests, tracing } = services;
  app.use(async function metricsMiddleware(c, next) {
    const started = performance.now();
    const span = tracing.enabled
      ? tracing.startRequest(c.req.method, c.req.header('traceparent'))
      : undefined;
    if (span !== undefined) c.set('trace', span);
    await next();
    // Only the app-wide middleware ('/*') matched: no route did. One label for all such paths
    // keeps a scanner from creating a series per random URL.
    const matched = routePath(c, -1);
    const route = matched === '' || matched === '/*' ? 'unmatched' : matched;
    // The caller hung up before the answer could be written (node:http only; app.request() has no socket).
    const aborted =
      (c.env as { outgoing?: { destroyed?: boolean } } | undefined)?.outgoing?.destroyed === true;
    const res = c.res;
    if (span !== undefined) {
      span.rename(`${c.req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.status);
      if (aborted) span.setAttribute('quarry.client_closed', true);
      res.headers.set('traceparent', span.traceparent());
      span.end();
    }
    const logged = requests.logs(route);
    const length = logged ? res.headers.get('content-length') : null;
    requests.record({
      method: c.req.method,
      route,
      status: res.status,
      seconds: (performance.now() - started) / 1000,
      requestId: c.var.requestId,
      accountId: c.var.principal?.accountId,
      errorCode: c.var.errorCode,
      limitReason: c.var.limitReason,
      aborted,
      ...(logged
        ? {
            address: requestAddress(c),
            userAgent: c.req.header('user-agent'),
            bytes: length === null ? undefined : Number(length),
            cache: res.headers.get('x-cache') ?? undefined,
            traceId: span?.traceId,
          }
        : {}),
    });
  });
  const limitBody = bodyLimit({
    maxSize: services.config.bodyLimit,
    onError: () => {
      throw new ApiError(
        'PAYLOAD_TOO_LARGE',
        `The request body is over the ${services.config.bodyLimit}-byte limit.`,
      );
    },
  });
  // GET and HEAD carry no body; asking for one would build a full fetch Request for nothing.
  app.use(async function bodyLimitMiddleware(c, next) {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    return limitBody(c, next);
  });

  registerHealthRoutes(app);
  // CORS preflights of the query routes, the only routes a page of another origin may call.
  app.use('/v1/query', corsPreflight('POST'));
  app.use('/v1/analytics/:name', corsPreflight('GET'));
  registerQueryRoutes(app);
  registerJobRoutes(app);
  registerEmbedRoutes(app);
  registerAccountRoutes(app);
  registerSessionRoutes(app);
  registerPlanRoutes(app);
  registerKeyRoutes(app);
  registerOwnerConnectionRoutes(app);
  registerOwnerAnalyticsRoutes(app);
  registerConnectorRoutes(app);
  registerUsageRoutes(app);
  registerCallsRoutes(app);
  registerBudgetRoutes(app);
  registerWebhookRoutes(app);
  registerAgentToolRoutes(app);
  registerBillingRoutes(app);
  registerPayoutRoutes(app);
  if (services.payments.kind === 'sandbox') registerSandboxBillingRoutes(app);
  registerStatementRoutes(app);
  registerOwnerListingRoutes(app);
  registerMarketplaceRoutes(app);
  registerOAuthClientRoutes(app);
  // Outside /v1: the token endpoint and discovery documents sit where OAuth clients look for them.
  registerOAuthRoutes(app);
  registerWellKnownRoutes(app);
  // The MCP endpoint, outside /v1: JSON-RPC over Streamable HTTP (docs/mcp.md).
  registerMcpRoutes(app);
  // The web console at / (its files under /assets/).
  registerConsoleRoutes(app);
  // Without QUARRY_ADMIN_TOKEN the operator API does not exist: its paths answer as unknown ones.
  if (services.config.adminToken !== undefined) {
    registerAdminRoutes(app);
    registerAdminPayoutRoutes(app);
  }

  // The document only changes with the route table: it is generated once, on first request, and
  // served compressed with an ETag (a revalidation is a 304).
  const openApiConfig: Parameters<typeof app.getOpenAPI31Document>[0] = {
    openapi: '3.1.0',
    info: {
      title: 'Quarry API',
      version: API_VERSION,
      description:
        'Analytics query gateway and data marketplace. Errors share one envelope: `{"error": {code, message, request_id, retry_after?, details}}`.',
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: services.config.publicUrl, description: 'This gateway (QUARRY_PUBLIC_URL)' }],
    // The order /docs shows the groups in: what a caller uses first, the operator's last.
    tags: API_TAGS,
  };
  let openApiObject: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  const openApi = () => {
    openApiObject ??= app.getOpenAPI31Document(openApiConfig);
    return openApiObject;
  };
  let openApiDocument: CompressedBody | undefined;
  const openApiDocumentBody = () => {
    openApiDocument ??= compressedBody(Buffer.from(JSON.stringify(openApi())));
    return openApiDocument;
  };
  app.get('/v1/openapi.json', (c) =>
    openApiDocumentBody().respond(c, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' }),
  );
  const docs = registerDocsRoutes(app, services.config.publicUrl, () => openApi() as unknown as DocsDocument);
  warmers.set(app, async () => {
    await docs.warm();
    await openApiDocumentBody().warm();
  });
  // The document itself is served outside route(), so it is described here: the document lists
  // every route the app serves.
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/v1/openapi.json',
    operationId: operationIdOf('get', '/v1/openapi.json'),
    security: [],
    tags: ['Operations'],
    summary: 'This OpenAPI 3.1 document',
    responses: {
      200: {
        description: 'OpenAPI document',
        content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
      },
    },
  });

  app.notFound((c) => {
    const allowed = allowedMethods(app, c.req.path);
    const id = c.var.requestId ?? 'unknown';
    if (allowed.length > 0) {
      c.set('errorCode', 'METHOD_NOT_ALLOWED');
      return errorResponse(
        new ApiError(
          'METHOD_NOT_ALLOWED',
          `${c.req.method} is not allowed here; use ${allowed.join(', ')}.`,
          {
            headers: { allow: allowed.join(', ') },
          },
        ),
        id,
      );
    }
    c.set('errorCode', 'NOT_FOUND');
    return errorResponse(new ApiError('NOT_FOUND', `No route for ${c.req.method} ${c.req.path}.`), id);
  });
  app.onError((error, c) => {
    const apiError = toApiError(error, logger.child({ request_id: c.var.requestId }));
    c.set('errorCode', apiError.code);
    c.set('limitReason', apiError.reason);
    return errorResponse(apiError, c.var.requestId ?? 'unknown', c.var.rateLimitHeaders);
  });
  return app;
}
