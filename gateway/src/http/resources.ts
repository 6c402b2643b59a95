// JSON shapes of stored resources as the API shows them (snake_case, ISO dates, never a secret
// or digest), with the zod schemas OpenAPI documents them by.
import { z } from '@hono/zod-openapi';
import { priceJson } from '../services/marketplace-service.js';
import type { Account } from '../store/account-repository.js';
import type { Analytic, AnalyticVersion } from '../store/analytic-repository.js';
import type { DeprecatedVersion, VersionDeprecation } from '../store/analytic-version-repository.js';
import type { ApiKey } from '../store/api-key-repository.js';
import type { Connection } from '../store/connection-repository.js';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export const AccountSchema = z
  .object({ id: z.string(), email: z.string(), name: z.string(), plan: z.string(), created_at: z.string() })
  .openapi('Account');

export function accountJson(a: Account) {
  return { id: a.id, email: a.email, name: a.name, plan: a.plan, created_at: a.createdAt.toISOString() };
}

export const KeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'The visible start of the key' }),
    scopes: z.array(z.string()),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
  })
  .openapi('ApiKey');

export const IssuedKeySchema = KeySchema.extend({
  secret: z.string().openapi({ description: 'The key itself: shown once, never again' }),
}).openapi('IssuedApiKey');

export function keyJson(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    created_at: k.createdAt.toISOString(),
    expires_at: iso(k.expiresAt),
    revoked_at: iso(k.revokedAt),
    last_used_at: iso(k.lastUsedAt),
  };
}

export const ConnectionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string(),
    config: z.record(z.string(), z.unknown()).openapi({ description: 'Non-secret settings' }),
    secret_fields: z.array(z.string()).openapi({ description: 'Stored encrypted; never returned' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Connection');

export function connectionJson(c: Connection) {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    config: c.config,
    secret_fields: c.secretFields,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

export const AnalyticHealthSchema = z
  .object({
    state: z.enum(['ok', 'failing']).openapi({
      description:
        "`failing`: more than the owner's `error_rate_percent` (PUT /v1/account/alerts) of its warehouse queries failed over 5 minutes; `ok` again once it is back at or under it",
    }),
    since: z
      .string()
      .nullable()
      .openapi({ description: 'When it turned failing or recovered (ISO 8601); null when it never failed' }),
    error_rate_percent: z.number().nullable().openapi({
      description: 'Its error rate over the 5 minutes when it changed state; null when it never failed',
    }),
  })
  .openapi('AnalyticHealth');

export const AnalyticSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.number().int(),
    current_version: z.number().int(),
    visibility: z.enum(['public', 'private', 'shared']),
    shared_with: z.array(z.string()),
    definition: z.record(z.string(), z.unknown()),
    price: z.number().int().openapi({
      description:
        'Credits a call pays now. A rise waits QUARRY_PRICE_NOTICE_HOURS (default 168) after the deploy that raised it; a decrease applies at once',
    }),
    scheduled_price: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The price a deploy raised it to, not in force yet; null when none' }),
    price_effective_at: z
      .string()
      .nullable()
      .openapi({ description: 'When `scheduled_price` takes effect (ISO 8601); null when none' }),
    created_at: z.string(),
    updated_at: z.string(),
    health: AnalyticHealthSchema.optional().openapi({
      description:
        'Only on `GET /v1/owner/analytics` and `GET /v1/owner/analytics/{name}`: whether the analytic is failing',
    }),
  })
  .openapi('Analytic');

/** The `health` of an owner's analytic: healthy unless recorded failing. */
export function analyticHealthJson(
  state:
    | { readonly failing: boolean; readonly since: Date; readonly errorRatePercent: number | null }
    | undefined,
) {
  return {
    state: state?.failing ? ('failing' as const) : ('ok' as const),
    since: state?.since.toISOString() ?? null,
    error_rate_percent: state?.errorRatePercent ?? null,
  };
}

export function analyticJson(a: Analytic) {
  return {
    id: a.id,
    name: a.name,
    version: a.version,
    current_version: a.currentVersion,
    visibility: a.visibility,
    shared_with: a.sharedWith,
    definition: a.definition,
    ...priceJson(a.pricing),
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

/** A version's deprecation as the API shows it (owner's versions, listings, caller's usage). */
export const DeprecationSchema = z
  .object({
    deprecated_at: z
      .string()
      .openapi({ description: 'When its owner deprecated it (ISO 8601; the `Deprecation` header)' }),
    sunset: z.string().openapi({
      description:
        'From then on calls of it are refused with 410 `VERSION_SUNSET` (ISO 8601; the `Sunset` header)',
    }),
  })
  .openapi('VersionDeprecation');

export const deprecationJson = (d: VersionDeprecation | undefined) =>
  d === undefined ? null : { deprecated_at: d.deprecatedAt.toISOString(), sunset: d.sunsetAt.toISOString() };

/** A deprecated version of an analytic, as its callers see it. */
export const DeprecatedVersionSchema = DeprecationSchema.extend({
  analytic: z.string(),
  version: z.number().int(),
  current_version: z.number().int().openapi({ description: 'The version to move to' }),
}).openapi('DeprecatedVersion');

export const deprecatedVersionJson = (d: DeprecatedVersion) => ({
  analytic: d.name,
  version: d.version,
  current_version: d.currentVersion,
  deprecated_at: d.deprecatedAt.toISOString(),
  sunset: d.sunsetAt.toISOString(),
});

export const AnalyticVersionSchema = z
  .object({
    version: z.number().int(),
    definition: z.unknown(),
    price: z.number().int().openapi({ description: 'Credits a call of this version (`name@N`) pays now' }),
    scheduled_price: z.number().int().nullable(),
    price_effective_at: z.string().nullable(),
    deprecation: DeprecationSchema.nullable().openapi({ description: 'Its deprecation, or null' }),
    created_at: z.string(),
  })
  .openapi('AnalyticVersion');

export function versionJson(v: AnalyticVersion) {
  return {
    version: v.version,
    definition: v.definition,
    ...priceJson(v.pricing),
    deprecation: deprecationJson(v.deprecation),
    created_at: v.createdAt.toISOString(),
  };
}
