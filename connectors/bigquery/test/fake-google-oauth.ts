// Test code for fake-bigquery-server.ts: Google's OAuth token endpoint for service accounts (the
// JWT-bearer grant, RFC 7523) and the access tokens it issues. An assertion is accepted only when
// it is an RS256 JWT signed by the private key of a registered service account (checked against
// its public key), addressed to this endpoint (`aud`), unexpired, at most an hour long, and asking
// for the BigQuery scope. Errors use the OAuth shape Google answers with
// (`{"error": "invalid_grant", "error_description": …}`).
import { createPublicKey, randomBytes, verify } from 'node:crypto';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const BIGQUERY_SCOPE = 'https://www.googleapis.com/auth/bigquery';
const TOKEN_SECONDS = 3599;
const CLOCK_SKEW_SECONDS = 60;

/** An OAuth error answer. */
export interface OAuthError {
  readonly status: number;
  readonly body: { readonly error: string; readonly error_description: string };
}

/** A token answer. */
export interface OAuthToken {
  readonly access_token: string;
  readonly expires_in: number;
  readonly token_type: 'Bearer';
}

interface Claims {
  readonly iss?: unknown;
  readonly aud?: unknown;
  readonly scope?: unknown;
  readonly iat?: unknown;
  readonly exp?: unknown;
}

function oauthError(error: string, description: string): OAuthError {
  return { status: 400, body: { error, error_description: description } };
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The token endpoint's state: registered service accounts and issued access tokens. */
export class FakeGoogleOAuth {
  private readonly publicKeys = new Map<string, string>();
  private readonly tokens = new Map<string, { readonly email: string; readonly expiresAt: number }>();
  /** Token requests answered (granted or refused). */
  tokenRequests = 0;

  /** @param tokenUri This endpoint's URL: assertions must name it as their audience. */
  constructor(private readonly tokenUri: string) {}

  /** Trusts `publicKeyPem` for assertions issued by `email`. */
  addServiceAccount(email: string, publicKeyPem: string): void {
    this.publicKeys.set(
      email,
      createPublicKey(publicKeyPem).export({ type: 'spki', format: 'pem' }).toString(),
    );
  }

  /** Answers one token request whose form body is `form`. */
  grant(form: URLSearchParams): OAuthToken | OAuthError {
    this.tokenRequests++;
    if (form.get('grant_type') !== JWT_BEARER) {
      return oauthError('unsupported_grant_type', 'Invalid grant_type.');
    }
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return oauthError('invalid_grant', 'Invalid JWT.');
    const [head, body, signature] = parts as [string, string, string];
    const header = decodeJson(head) as { readonly alg?: unknown } | undefined;
    const claims = decodeJson(body) as Claims | undefined;
    if (header?.alg !== 'RS256' || claims === undefined) return oauthError('invalid_grant', 'Invalid JWT.');
    const publicKey = typeof claims.iss === 'string' ? this.publicKeys.get(claims.iss) : undefined;
    if (publicKey === undefined) return oauthError('invalid_grant', 'Invalid grant: account not found');
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${head}.${body}`),
      publicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (!signed) return oauthError('invalid_grant', 'Invalid JWT Signature.');
    if (claims.aud !== this.tokenUri)
      return oauthError('invalid_grant', 'Invalid JWT: Token must be for this endpoint.');
    const now = Date.now() / 1000;
    const { iat, exp } = claims;
    if (typeof iat !== 'number' || typeof exp !== 'number' || iat > now + CLOCK_SKEW_SECONDS || exp < now) {
      return oauthError(
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.',
      );
    }
    if (exp - iat > 3600)
      return oauthError('invalid_grant', 'Invalid JWT: Token lifetime is longer than an hour.');
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(BIGQUERY_SCOPE)) {
      return oauthError('invalid_scope', 'The BigQuery scope was not requested.');
    }
    const accessToken = `ya29.fake-${randomBytes(24).toString('base64url')}`;
    this.tokens.set(accessToken, {
      email: claims.iss as string,
      expiresAt: Date.now() + TOKEN_SECONDS * 1000,
    });
    return { access_token: accessToken, expires_in: TOKEN_SECONDS, token_type: 'Bearer' };
  }

  /** The service account a request's `Authorization` header authenticates, if any. */
  authenticate(authorization: string | undefined): string | undefined {
    const token = /^Bearer (\S+)$/i.exec(authorization ?? '')?.[1];
    const entry = token === undefined ? undefined : this.tokens.get(token);
    return entry !== undefined && entry.expiresAt > Date.now() ? entry.email : undefined;
  }

  /** Revokes every access token issued so far, as an administrator (or token expiry) would. */
  revokeAll(): void {
    this.tokens.clear();
  }
}
