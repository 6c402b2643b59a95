// Embed tokens for a web page (docs/embedding.md): the page never holds an API key; it asks its
// own backend for a short-lived embed token through `provider`, keeps it, asks again shortly
// before it expires (read from the token's `exp`, or the `expiresAt` the provider returns), and
// again when the gateway refuses it (401). Concurrent calls wait on one request to the provider.
import { raceAbort } from './abort.js';
import type { TokenSource } from './oauth-token-source.js';

/** What a token provider may return: the token, or the token and when it expires. */
export type EmbedTokenGrant =
  | string
  | { readonly token: string; readonly expiresAt?: string | number | Date | undefined };

/** Your function that fetches a fresh embed token from your backend (which mints it). */
export type EmbedTokenProvider = () => Promise<EmbedTokenGrant> | EmbedTokenGrant;

/** Longest head start for a refresh before a token expires (a tenth of its life when shorter). */
const MAX_REFRESH_MARGIN_MS = 60_000;
/** How long to keep a token whose expiry is unknown. */
const UNKNOWN_LIFETIME_MS = 60_000;

/** The `exp` of a JWT (seconds since the epoch), read without verifying it: the gateway verifies. */
export function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const text = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(text) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined;
  } catch {
    return undefined;
  }
}

function expiryMs(grant: EmbedTokenGrant): number | undefined {
  if (typeof grant !== 'string' && grant.expiresAt !== undefined) {
    const at =
      grant.expiresAt instanceof Date ? grant.expiresAt.getTime() : new Date(grant.expiresAt).getTime();
    if (Number.isFinite(at)) return at;
  }
  const exp = jwtExpiry(typeof grant === 'string' ? grant : grant.token);
  return exp === undefined ? undefined : exp * 1000;
}

export function createEmbedTokenSource(
  provider: EmbedTokenProvider,
  now: () => number = Date.now,
): TokenSource {
  let cached: { readonly value: string; readonly refreshAt: number } | undefined;
  let inFlight: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const grant = await provider();
    const value = typeof grant === 'string' ? grant : grant?.token;
    if (typeof value !== 'string' || value === '') {
      throw new TypeError('The embed token provider must return a token (or { token, expiresAt }).');
    }
    const issued = now();
    const expires = expiryMs(grant) ?? issued + UNKNOWN_LIFETIME_MS;
    const margin = Math.min(MAX_REFRESH_MARGIN_MS, Math.max(0, (expires - issued) / 10));
    cached = { value, refreshAt: expires - margin };
    return value;
  }

  return {
    token(signal) {
      if (cached !== undefined && now() < cached.refreshAt) return Promise.resolve(cached.value);
      inFlight ??= fetchToken().finally(() => {
        inFlight = undefined;
      });
      return raceAbort(inFlight, signal);
    },
    invalidate(token) {
      if (cached?.value === token) cached = undefined;
    },
  };
}
