// What an embed token (auth/embed-tokens.ts) changes in a query call, and the query routes' CORS:
//
// - the analytic must be one the token names (`name` allows `name` and `name@N`; `name@3`
//   allows `name@3` only; matched as strings), else 403;
// - its fixed params are applied whether the caller sends them or not, and a caller sending one
//   with another value is refused (403); the fixed values also scope the result cache, so two
//   tokens never share an entry;
// - a browser page's `Origin` must be one the token allows. API keys, OAuth tokens and try-tokens
//   are refused from another origin's page unless the account allows it (a key in a page is a
//   key anyone can copy). A refusal carries no `Access-Control-Allow-Origin`: the browser shows a
//   CORS error and the page gets nothing; nothing runs and nothing is charged.
import type { ParamValues } from '@quarry/sdk-connector';
import type { EmbedAnalytic } from '../auth/embed-tokens.js';
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';

/** What the query call needs to decide CORS. */
export interface QueryCors {
  /** The gateway's own origin (QUARRY_PUBLIC_URL): its pages are not cross-origin. */
  readonly publicOrigin: string;
  /** Whether the account lets its keys and OAuth tokens be used from another origin's page. */
  keysFromBrowsers(accountId: string): boolean | Promise<boolean>;
}

/** Headers a browser may read on a cross-origin answer. */
const EXPOSED = [
  'x-request-id',
  'x-cache',
  'etag',
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'idempotent-replayed',
].join(', ');

/** The `Origin` of a cross-origin browser request; undefined for a server or a same-origin page. */
export function crossOrigin(
  origin: string | undefined,
  host: string | undefined,
  publicOrigin: string | undefined,
): string | undefined {
  if (origin === undefined || origin === '' || origin === publicOrigin) return undefined;
  if (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`)) return undefined;
  return origin;
}

/**
 * The CORS headers of an answer to `origin` for this caller; FORBIDDEN (to be answered without
 * them) when the caller may not be used from that origin.
 */
export function corsFor(
  cors: QueryCors | undefined,
  principal: Principal,
  origin: string,
): Record<string, string> | Promise<Record<string, string>> {
  const allowed = { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED };
  if (principal.embed !== undefined) {
    if (principal.embed.origins.includes(origin)) return allowed;
    throw new ApiError(
      'FORBIDDEN',
      `This embed token does not allow the origin ${origin}; mint one that lists it in "origins".`,
    );
  }
  const refuse = (ok: boolean) => {
    if (ok) return allowed;
    throw new ApiError(
      'FORBIDDEN',
      'API keys and OAuth tokens are refused from a web page of another origin: anyone could copy them from it. Mint an embed token on your server (POST /v1/embed-tokens), or allow keys from browsers with PUT /v1/account/cors.',
    );
  };
  if (principal.credential === 'try_token' || cors === undefined) return refuse(false);
  const ok = cors.keysFromBrowsers(principal.accountId);
  return ok instanceof Promise ? ok.then(refuse) : refuse(ok);
}

/** The token's entry for `source`; FORBIDDEN when it names no such analytic. */
export function embedAnalytic(principal: Principal, source: string): EmbedAnalytic | undefined {
  const grant = principal.embed;
  if (grant === undefined) return undefined;
  const exact = grant.analytics.find((a) => a.name === source);
  if (exact !== undefined) return exact;
  const at = source.indexOf('@');
  if (at > 0) {
    const base = source.slice(0, at);
    const unpinned = grant.analytics.find((a) => a.name === base);
    if (unpinned !== undefined) return unpinned;
  }
  throw new ApiError(
    'FORBIDDEN',
    `This embed token does not allow "${source.length > 140 ? `${source.slice(0, 140)}…` : source}"; it allows ${grant.analytics.map((a) => `"${a.name}"`).join(', ')}.`,
  );
}

/** JSON with object keys sorted, so equal values have equal text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** A fixed value as a query string carries it (GET /v1/analytics/{name}). */
export function asQueryValue(name: string, value: unknown): string | string[] {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
    return value.map(String);
  throw new ApiError('INVALID_PARAMS', `The embed token fixes "${name}" to a value no param can take.`, {
    details: [{ param: name, message: 'not a string, number, boolean or list of them' }],
  });
}

/**
 * The call's params with the token's fixed params applied: validated by `validate` (the
 * analytic's schema), FORBIDDEN when the caller set a fixed param to another value. Returns the
 * params and the cache scope of the fixed values.
 */
export function withFixedParams<V>(
  fixed: Readonly<Record<string, V>>,
  sent: Readonly<Record<string, V>>,
  validate: (values: Readonly<Record<string, V>>) => ParamValues,
): { readonly params: ParamValues; readonly scope: string | undefined } {
  const names = Object.keys(fixed);
  if (names.length === 0) return { params: validate(sent), scope: undefined };
  const merged: Record<string, V> = Object.create(null);
  for (const key of Object.keys(sent)) merged[key] = sent[key] as V;
  for (const key of names) merged[key] = fixed[key] as V;
  const params = validate(merged);
  for (const key of names) {
    if (!Object.hasOwn(sent, key) || canonical(sent[key]) === canonical(fixed[key])) continue;
    // Another spelling of the same value (`"2024"` for 2024) is the same value once typed.
    let theirs: unknown;
    try {
      theirs = validate({ ...merged, [key]: sent[key] as V })[key];
    } catch {
      theirs = Symbol('invalid');
    }
    if (typeof theirs === 'symbol' || canonical(theirs) !== canonical(params[key])) {
      throw new ApiError(
        'FORBIDDEN',
        `The param "${key}" is fixed by this embed token; leave it out or send the fixed value.`,
        { details: [{ param: key, message: 'fixed by the embed token' }] },
      );
    }
  }
  const applied: Record<string, unknown> = {};
  for (const key of names) applied[key] = params[key];
  return { params, scope: `fixed:${canonical(applied)}` };
}
