// Result-cache keys: one analytic version, one caller scope and one set of validated params make
// one key, however the caller spelled the request (field order, a default written out, `2024` vs
// `"2024"` all collapse in validateParams first). Keys start with `<analyticId>:<version>:` so a
// new version or an owner's invalidation drops them by prefix (see cacheKeyPrefix).
//
// Built on every request, cache hit included, so this avoids JSON.stringify of the whole params
// object and hashes only when the readable form is long.
import { createHash } from 'node:crypto';
import type { ParamValues, ScalarValue, TypedValue } from '@quarry/sdk-connector';

/** What makes two query answers interchangeable. */
export interface CacheKeyParts {
  readonly analyticId: string;
  readonly version: number;
  /** Validated params (from validateParams, so defaults are already applied). */
  readonly params: ParamValues;
  /** Set when the analytic's result depends on who asks (e.g. the caller's account id). */
  readonly scope?: string;
}

/** Readable param parts up to this length stay in the key; longer ones are hashed. */
const MAX_READABLE_PARAMS = 96;
/** Param names checkParamSchema allows; anything else is quoted, and a quoted name starts with `"`. */
const SAFE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Ids made only of characters encodeURIComponent leaves alone skip it (same result, cheaper). */
const SAFE_ID = /^[A-Za-z0-9_.~-]*$/;

/**
 * The cache key of one answer: `<analyticId>:<version>:<scope>:<params>`, where `<params>` is
 * the params sorted by name, each with its type, canonically serialised (typed NULL distinct
 * from an absent param and from the string "null"), or `#` + SHA-256 (base64url) of that text
 * when it is longer than 96 characters.
 */
export function cacheKey(parts: CacheKeyParts): string {
  const names = Object.keys(parts.params);
  // validateParams emits params in schema order, so this is usually one pass and no sort.
  if (!isSorted(names)) names.sort();
  let text = '';
  for (const name of names) {
    const typed = parts.params[name] as TypedValue;
    if (text.length > 0) text += ',';
    const label = SAFE_NAME.test(name) ? name : JSON.stringify(name);
    text += `${label}:${typed.array ? `${typed.type}[]` : typed.type}=${serialiseValue(typed.value)}`;
  }
  if (text.length > MAX_READABLE_PARAMS) {
    text = `#${createHash('sha256').update(text).digest('base64url')}`;
  }
  const scope = parts.scope === undefined ? '' : `@${encodeURIComponent(parts.scope)}`;
  return `${cacheKeyPrefix(parts.analyticId, parts.version)}${scope}:${text}`;
}

/**
 * The prefix shared by every key of one analytic (`version` omitted) or of one of its versions;
 * pass it to ResultCache.delete. The id is URI-encoded so an id holding `:` cannot reach into
 * another analytic's keys.
 */
export function cacheKeyPrefix(analyticId: string, version?: number): string {
  const id = SAFE_ID.test(analyticId) ? analyticId : encodeURIComponent(analyticId);
  return version === undefined ? `${id}:` : `${id}:${version}:`;
}

function serialiseValue(value: TypedValue['value']): string {
  if (value === null) return 'null';
  if (!Array.isArray(value)) return serialiseScalar(value as ScalarValue);
  let out = '[';
  for (let i = 0; i < value.length; i++) {
    if (i > 0) out += ',';
    out += serialiseScalar(value[i] as ScalarValue);
  }
  return `${out}]`;
}

// Strings (also dates, timestamps and enums, already canonical from validateParams) are quoted,
// so they never meet a number, boolean or null token. A string holding no `"` or `\\` is quoted
// as is (JSON.stringify costs more than the rest of the key); any other goes through
// JSON.stringify, whose output always holds a backslash, so the two forms cannot collide.
// Integers print the same whether they arrived as number or bigint; the param's declared type is
// in the key beside them.
function serialiseScalar(value: ScalarValue): string {
  if (typeof value !== 'string') return String(value);
  return value.includes('"') || value.includes('\\') ? JSON.stringify(value) : `"${value}"`;
}

function isSorted(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if ((names[i - 1] as string) > (names[i] as string)) return false;
  return true;
}
