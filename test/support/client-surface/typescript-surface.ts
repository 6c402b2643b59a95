// The TypeScript client's surface for test/clients-surface.test.ts, printed as JSON on stdout:
// `methods`, found by walking a constructed client (a function is a method, an object a
// resource) and the package's top-level functions (`signUp`); `models`, each exported type of
// the package that stands for an OpenAPI schema with its property names, read with the
// TypeScript compiler. An object type inside one (not a named model) is listed under its path,
// `Usage.totals`, `Usage.by_day[]`, as the OpenAPI's inline objects are.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as quarry from '../../../client/src/index.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The OpenAPI schema each exported type of @quarry/client stands for. */
const MODELS: Readonly<Record<string, string>> = {
  QueryResponse: 'QueryResult',
  Job: 'Job',
  Jobs: 'JobList',
  Account: 'Account',
  ApiKey: 'ApiKey',
  IssuedApiKey: 'IssuedApiKey',
  Plan: 'Plan',
  Connection: 'Connection',
  Circuit: 'Circuit',
  ConnectionRemoval: 'ConnectionRemoval',
  Analytic: 'Analytic',
  AnalyticHealth: 'AnalyticHealth',
  AnalyticDefinition: 'AnalyticDefinition',
  AnalyticVersion: 'AnalyticVersion',
  VersionDeprecation: 'VersionDeprecation',
  DeprecatedVersion: 'DeprecatedVersion',
  ConnectorTypes: 'ConnectorTypes',
  Usage: 'Usage',
  CallsByOrigin: 'CallsByOrigin',
  BudgetState: 'BudgetState',
  Budget: 'Budget',
  AgentTool: 'AgentTool',
  McpSettings: 'McpSettingsResponse',
  'McpSettings.mcp': 'McpSettings',
  Billing: 'Billing',
  PaygInvoice: 'PaygInvoice',
  Checkout: 'Checkout',
  Portal: 'BillingPortal',
  Onboarding: 'PayoutOnboarding',
  PayoutAccount: 'PayoutAccount',
  Payouts: 'Payouts',
  Payout: 'StatementPayout',
  OwnerPayout: 'Payout',
  OwnerStatement: 'Statement',
  StatementAdjustment: 'StatementAdjustment',
  StatementFailedCalls: 'StatementFailedCalls',
  OwnerListing: 'OwnerListing',
  Listing: 'Listing',
  ListingDetail: 'ListingDetail',
  TryToken: 'TryToken',
  OAuthClient: 'OAuthClient',
  WebhookEndpoint: 'WebhookEndpoint',
  IssuedWebhookEndpoint: 'IssuedWebhookEndpoint',
  WebhookDelivery: 'WebhookDelivery',
  AlertSettings: 'AlertSettings',
  EmbedToken: 'EmbedToken',
  EmbedSecret: 'EmbedSecret',
  IssuedEmbedSecret: 'IssuedEmbedSecret',
  Calls: 'Calls',
  Call: 'Call',
  CorsSettings: 'CorsSettingsResponse',
  'CorsSettings.cors': 'CorsSettings',
  'Error.error.details[]': 'QuarryErrorDetail',
};

function methodsOf(): string[] {
  const client = quarry.createQuarryClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'qry_live_surface' });
  const methods: string[] = [];
  for (const [name, value] of Object.entries(client)) {
    if (typeof value === 'function') methods.push(name);
    else if (typeof value === 'object' && value !== null) {
      for (const [method, fn] of Object.entries(value))
        if (typeof fn === 'function') methods.push(`${name}.${method}`);
    }
  }
  // Calls without a client (no credential yet): the package's own functions.
  if (typeof quarry.signUp === 'function') methods.push('signUp');
  return methods.sort();
}

function modelsOf(): Record<string, string[]> {
  const entry = join(ROOT, 'client/src/index.ts');
  const probe = join(ROOT, 'client/src/__surface_probe__.ts');
  const source = [
    "import type * as q from './index.js';",
    ...Object.values(MODELS).map((type, i) => `export type T${i} = q.${type};`),
  ].join('\n');
  const host = ts.createCompilerHost({ strict: true });
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (file === probe ? source : readFile(file));
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (file) => file === probe || fileExists(file);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language) =>
    file === probe ? ts.createSourceFile(file, source, language) : getSourceFile(file, language);
  const program = ts.createProgram(
    [entry, probe],
    {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
    },
    host,
  );
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(probe);
  if (!file) throw new Error('the probe did not compile');
  const named = new Set<ts.Type>();
  const aliases = file.statements.filter(ts.isTypeAliasDeclaration);
  const types = aliases.map((alias) => checker.getTypeAtLocation(alias.name));
  for (const type of types) named.add(type);
  const models: Record<string, string[]> = {};

  /** The object type a property holds (null and undefined removed, an array's items), if any. */
  const objectOf = (type: ts.Type): { type: ts.Type; array: boolean } | undefined => {
    const parts = type.isUnion() ? type.types : [type];
    for (const part of parts) {
      if (part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) continue;
      if (checker.isArrayType(part) || checker.isTupleType(part)) {
        const item = checker.getTypeArguments(part as ts.TypeReference)[0];
        const inner = item ? objectOf(item) : undefined;
        return inner ? { type: inner.type, array: true } : undefined;
      }
      // An intersection of object types (`CallTotals & {…}`), not a branded string (`string & {}`).
      const objectLike =
        part.flags & ts.TypeFlags.Object ||
        (part.isIntersection() && part.types.every((t) => t.flags & ts.TypeFlags.Object));
      if (objectLike && checker.getPropertiesOfType(part).length > 0) {
        return { type: part, array: false };
      }
    }
    return undefined;
  };

  const walk = (path: string, type: ts.Type, depth: number): void => {
    const properties = checker.getPropertiesOfType(type);
    models[path] = properties.map((p) => p.getName());
    if (depth > 4) return;
    for (const property of properties) {
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      if (!declaration) continue;
      const inner = objectOf(checker.getTypeOfSymbolAtLocation(property, declaration));
      if (!inner) continue;
      walk(`${path}.${property.getName()}${inner.array ? '[]' : ''}`, inner.type, depth + 1);
    }
  };
  Object.keys(MODELS).forEach((schema, i) => {
    const type = types[i];
    if (type) walk(schema, type, 0);
  });
  return models;
}

process.stdout.write(`${JSON.stringify({ methods: methodsOf(), models: modelsOf() })}\n`);
