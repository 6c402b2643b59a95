// Every operation's `operationId`: the names the official clients use for them (client/,
// clients/), in one table so a route cannot be added without one (app.test.ts checks). The route
// helper (http/route.ts) sets it on each route's description.

/** `METHOD /path/{param}` → operationId. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'POST /v1/query': 'query',
  'GET /v1/analytics/{name}': 'getAnalytic',
  'POST /v1/accounts': 'signUp',
  'GET /v1/account': 'getAccount',
  'GET /v1/account/usage': 'getUsage',
  'POST /v1/keys': 'createKey',
  'GET /v1/keys': 'listKeys',
  'DELETE /v1/keys/{id}': 'revokeKey',
  'POST /v1/oauth/clients': 'createOAuthClient',
  'GET /v1/oauth/clients': 'listOAuthClients',
  'DELETE /v1/oauth/clients/{id}': 'revokeOAuthClient',
  'POST /oauth/token': 'requestToken',
  'GET /.well-known/jwks.json': 'getJwks',
  'GET /.well-known/oauth-authorization-server': 'getAuthorizationServerMetadata',
  'GET /v1/connectors': 'listConnectors',
  'POST /v1/owner/connections': 'createConnection',
  'GET /v1/owner/connections': 'listConnections',
  'GET /v1/owner/connections/{id}': 'getConnection',
  'DELETE /v1/owner/connections/{id}': 'deleteConnection',
  'POST /v1/owner/connections/{id}/test': 'testConnection',
  'POST /v1/owner/analytics': 'createAnalytic',
  'PUT /v1/owner/analytics/{name}': 'deployAnalytic',
  'POST /v1/owner/analytics/{name}/dry-run': 'dryRunAnalytic',
  'PATCH /v1/owner/analytics/{name}': 'updateAnalytic',
  'GET /v1/owner/analytics': 'listAnalytics',
  'GET /v1/owner/analytics/{name}': 'getOwnAnalytic',
  'GET /v1/owner/analytics/{name}/versions': 'listAnalyticVersions',
  'DELETE /v1/owner/analytics/{name}': 'deleteAnalytic',
  'DELETE /v1/owner/analytics/{name}/cache': 'purgeAnalyticCache',
  'PUT /v1/owner/analytics/{name}/listing': 'publishListing',
  'GET /v1/owner/analytics/{name}/listing': 'getOwnListing',
  'DELETE /v1/owner/analytics/{name}/listing': 'unpublishListing',
  'GET /v1/owner/statements': 'getStatement',
  'GET /v1/marketplace/listings': 'searchListings',
  'GET /v1/marketplace/listings/{name}': 'getListing',
  'POST /v1/marketplace/try-token': 'createTryToken',
  'GET /v1/admin/accounts': 'adminListAccounts',
  'PUT /v1/admin/accounts/{id}/plan': 'adminSetPlan',
  'PUT /v1/admin/keys/{id}/rate-limit': 'adminSetKeyRateLimit',
  'DELETE /v1/admin/keys/{id}/rate-limit': 'adminLiftKeyRateLimit',
  'POST /v1/admin/periods/{period}/close': 'adminClosePeriod',
  'POST /v1/admin/oauth/rotate-key': 'adminRotateSigningKey',
  'GET /healthz': 'getHealth',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'GET /v1/openapi.json': 'getOpenApiDocument',
  'GET /docs': 'getApiDocs',
};

/** The operationId of `method path`; throws for a route missing from the table. */
export function operationIdOf(method: string, path: string): string {
  const id = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
  if (id === undefined)
    throw new Error(`no operationId for ${method.toUpperCase()} ${path}: add it to OPERATION_IDS`);
  return id;
}
