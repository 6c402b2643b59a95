// OAuth client credentials against a local token endpoint built to the oauth-contract: the
// token request (client_secret_basic, form body), caching, refresh before expiry, one shared
// request for concurrent calls, one fresh token after a 401, and OAuth errors as OAuthError.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthError, QuarryError, UnauthenticatedError } from './errors.js';
import { createQuarryClient } from './quarry-client.js';
import { envelope, queryAnswer, startTestServer, type TestServer } from './testing/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

const CLIENT_ID = 'qc_client 1';
const SECRET = 'qcs_s3cr3t:+/&';

interface TokenEndpointOptions {
  /** Seconds a token lives (default 900). */
  readonly expiresIn?: number;
  /** Tokens the API refuses with 401 (as after a revocation). */
  readonly refused?: Set<string>;
  /** Delay before the token endpoint answers. */
  readonly delayMs?: number;
}

/** A gateway with a token endpoint: tokens `tok-1`, `tok-2`, …; the API accepts any it issued. */
async function gatewayWithTokens(options: TokenEndpointOptions = {}) {
  let issued = 0;
  server = await startTestServer(async (req) => {
    if (req.url === '/oauth/token') {
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const expected = `Basic ${btoa('qc_client+1:qcs_s3cr3t%3A%2B%2F%26')}`;
      if (req.headers.authorization !== expected) {
        return {
          status: 401,
          body: { error: 'invalid_client', error_description: 'Unknown client or bad secret.' },
          headers: { 'www-authenticate': 'Basic realm="quarry"' },
        };
      }
      issued++;
      return {
        status: 200,
        body: {
          access_token: `tok-${issued}`,
          token_type: 'Bearer',
          expires_in: options.expiresIn ?? 900,
          scope: 'query',
        },
        headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
      };
    }
    const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if (!/^tok-\d+$/.test(token) || options.refused?.has(token)) return envelope(401, 'UNAUTHENTICATED');
    return queryAnswer();
  });
  return server;
}

function oauthClient(s: TestServer, secret = SECRET) {
  return createQuarryClient(
    { baseUrl: s.url, oauth: { clientId: CLIENT_ID, clientSecret: secret, scope: ['query', 'account'] } },
    { retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 1000 } },
  );
}

const bearerOf = (s: TestServer, i: number) => s.requestsTo('/v1/')[i]?.headers.authorization;

describe('OAuth client credentials', () => {
  it('asks /oauth/token with client_secret_basic and a form body, then sends the token as Bearer', async () => {
    const s = await gatewayWithTokens();
    await oauthClient(s).query('sales-by-region', { year: 2024 });
    const [token] = s.requestsTo('/oauth/token');
    expect(token?.method).toBe('POST');
    expect(token?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(token?.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'query account',
    });
    expect(bearerOf(s, 0)).toBe('Bearer tok-1');
  });

  it('caches the token across calls and shares one token request among concurrent calls', async () => {
    const s = await gatewayWithTokens({ delayMs: 50 });
    const client = oauthClient(s);
    await Promise.all(Array.from({ length: 5 }, () => client.query('x', {})));
    await client.query('x', {});
    expect(s.requestsTo('/oauth/token')).toHaveLength(1);
    expect(s.requestsTo('/v1/')).toHaveLength(6);
    expect(new Set(s.requestsTo('/v1/').map((r) => r.headers.authorization))).toEqual(
      new Set(['Bearer tok-1']),
    );
  });

  it('fetches a new token shortly before the old one expires, and not earlier', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const s = await gatewayWithTokens({ expiresIn: 900 });
    const client = oauthClient(s);
    await client.query('x', {});
    // 900 s tokens are refreshed 60 s before they expire.
    vi.advanceTimersByTime(839_000);
    await client.query('x', {});
    expect(s.requestsTo('/oauth/token')).toHaveLength(1);
    vi.advanceTimersByTime(2_000);
    await client.query('x', {});
    expect(s.requestsTo('/oauth/token')).toHaveLength(2);
    expect(bearerOf(s, 2)).toBe('Bearer tok-2');
  });

  it('fetches a fresh token once when the API answers 401, and retries the call with it', async () => {
    const s = await gatewayWithTokens({ refused: new Set(['tok-1']) });
    const answer = await oauthClient(s).query('x', {});
    expect(answer.results).toHaveLength(1);
    expect(s.requestsTo('/oauth/token')).toHaveLength(2);
    expect([bearerOf(s, 0), bearerOf(s, 1)]).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('gives up with UnauthenticatedError when the fresh token is refused too (no loop)', async () => {
    const s = await gatewayWithTokens({ refused: new Set(['tok-1', 'tok-2', 'tok-3']) });
    const error = await oauthClient(s)
      .query('x', {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthenticatedError);
    expect(s.requestsTo('/oauth/token')).toHaveLength(2);
    expect(s.requestsTo('/v1/')).toHaveLength(2);
  });

  it('turns an RFC 6749 error into OAuthError, without retrying it', async () => {
    const s = await gatewayWithTokens();
    const error = await oauthClient(s, 'wrong')
      .query('x', {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toBeInstanceOf(QuarryError);
    expect(error).toMatchObject({
      code: 'invalid_client',
      status: 401,
      reason: 'Unknown client or bad secret.',
      message: 'invalid_client: Unknown client or bad secret.',
    });
    expect(s.requestsTo('/oauth/token')).toHaveLength(1);
    expect(s.requestsTo('/v1/')).toHaveLength(0);
  });

  it('refuses a token answer that is not a bearer token', async () => {
    server = await startTestServer(() => ({ status: 200, body: { access_token: 'x', token_type: 'mac' } }));
    const error = await oauthClient(server)
      .query('x', {})
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'OAuthError', code: 'invalid_token_response' });
  });
});
