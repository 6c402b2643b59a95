// The explicit auth client a session hands the BigQuery driver when the connection has a
// service-account key: an OAuth2Client whose refresh handler runs the JWT-bearer grant (RFC 7523)
// against the key's own `token_uri`. google-auth-library's JWT client would do the same grant but
// always against https://oauth2.googleapis.com/token (hard-coded in 10.9.1, `token_uri` ignored),
// and without an explicit client the driver falls back to application-default credentials, which
// probe the cloud metadata server. With this client nothing but `token_uri` and the API endpoint
// is ever contacted, and the token request goes through the connection's pinned HTTP (the
// address the destination guard checked, like every API request).
import { createSign } from 'node:crypto';
import { ConnectorError, isConnectorError } from '@quarry/sdk-connector';
import { OAuth2Client } from 'google-auth-library';
import type { ServiceAccountKey } from './bigquery-config.js';
import type { BigqueryHttp } from './bigquery-http.js';

/** The OAuth scope BigQuery queries need. */
export const BIGQUERY_SCOPE = 'https://www.googleapis.com/auth/bigquery';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Lifetime asked of an assertion; Google's maximum is one hour. */
const ASSERTION_SECONDS = 3600;

/** What an OAuth2Client refresh handler resolves with. */
interface AccessToken {
  readonly access_token: string;
  /** Epoch milliseconds. */
  readonly expiry_date: number;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** A signed RS256 JWT assertion for `key`, valid from `nowSeconds` for one hour. */
export function signAssertion(key: ServiceAccountKey, nowSeconds: number): string {
  const header = {
    alg: 'RS256',
    typ: 'JWT',
    ...(key.privateKeyId === undefined ? {} : { kid: key.privateKeyId }),
  };
  const claims = {
    iss: key.clientEmail,
    scope: BIGQUERY_SCOPE,
    aud: key.tokenUri,
    iat: nowSeconds,
    exp: nowSeconds + ASSERTION_SECONDS,
  };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(key.privateKey);
  return `${signingInput}.${base64url(signature)}`;
}

interface TokenErrorShape {
  readonly code?: unknown;
  readonly status?: unknown;
  readonly response?: { readonly status?: unknown; readonly data?: unknown };
}

/** A token endpoint failure as CONNECT_FAILED, with the OAuth error code (or errno) and nothing else. */
function tokenFailure(error: unknown): ConnectorError {
  const shape = (error !== null && typeof error === 'object' ? error : {}) as TokenErrorShape;
  const data = shape.response?.data;
  const oauthError =
    data !== null && typeof data === 'object' ? (data as { readonly error?: unknown }).error : undefined;
  const candidates = [oauthError, shape.code, shape.response?.status].map((c) =>
    typeof c === 'number' ? `HTTP_${c}` : c,
  );
  const driverCode = candidates.find(
    (c): c is string => typeof c === 'string' && /^[A-Za-z][A-Za-z0-9_-]{0,63}$/.test(c),
  );
  return new ConnectorError(
    'CONNECT_FAILED',
    driverCode === undefined
      ? 'could not get a BigQuery access token for the service account'
      : `could not get a BigQuery access token for the service account (${driverCode})`,
    { cause: error, ...(driverCode === undefined ? {} : { driverCode }) },
  );
}

/** Options for {@link createServiceAccountClient}. */
export interface ServiceAccountClientOptions {
  /** Time limit of one token request. */
  readonly timeoutMs: number;
  /** The connection's HTTP (guarded agents: the token endpoint only at a checked address). */
  readonly http: BigqueryHttp;
}

/**
 * An auth client for the driver that gets access tokens for `key` from `key.tokenUri` and
 * refreshes them before they expire. Concurrent refreshes share one token request.
 */
export function createServiceAccountClient(
  key: ServiceAccountKey,
  options: ServiceAccountClientOptions,
): OAuth2Client {
  const client = new OAuth2Client();
  let pending: Promise<AccessToken> | undefined;

  async function fetchToken(): Promise<AccessToken> {
    const requested = Date.now();
    let data: unknown;
    try {
      const response = await options.http.send<unknown>({
        url: key.tokenUri,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        data: new URLSearchParams({
          grant_type: JWT_BEARER,
          assertion: signAssertion(key, Math.floor(requested / 1000)),
        }).toString(),
        responseType: 'json',
        timeout: options.timeoutMs,
      });
      data = response.data;
    } catch (error) {
      // A refused destination or a timeout says so (DESTINATION_NOT_ALLOWED, REQUEST_TIMEOUT).
      throw isConnectorError(error) ? error : tokenFailure(error);
    }
    const token = data as { readonly access_token?: unknown; readonly expires_in?: unknown };
    if (typeof token.access_token !== 'string' || token.access_token === '') {
      throw new ConnectorError('CONNECT_FAILED', 'the token endpoint answered without an access token', {
        driverCode: 'invalid_token_response',
      });
    }
    const lifetimeSeconds = typeof token.expires_in === 'number' ? token.expires_in : ASSERTION_SECONDS;
    return { access_token: token.access_token, expiry_date: requested + lifetimeSeconds * 1000 };
  }

  client.refreshHandler = () => {
    pending ??= fetchToken().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  return client;
}
