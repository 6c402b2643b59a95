// Test code: key-pair login checks of the fake Snowflake server (fake-snowflake-server.ts): the
// JWT snowflake-sdk 3.3.0 signs (RS256, `iss` ACCOUNT.USER.SHA256:<public key fingerprint>, `sub`
// ACCOUNT.USER, `exp`) verified against the public key a test registered for the user.
import { createHash, createPublicKey, verify } from 'node:crypto';

function base64url(text: string): Buffer {
  return Buffer.from(text, 'base64url');
}

/** Why a key-pair login token is refused, or undefined when it is valid for this user. */
export function jwtProblem(
  token: unknown,
  account: string,
  user: string,
  publicKeyPem: string | undefined,
): string | undefined {
  if (publicKeyPem === undefined) return 'no public key is registered for this user';
  if (typeof token !== 'string') return 'no token';
  const parts = token.split('.');
  if (parts.length !== 3) return 'malformed token';
  const [header, payload, signature] = parts as [string, string, string];
  let head: { alg?: unknown };
  let claims: { iss?: unknown; sub?: unknown; exp?: unknown };
  try {
    head = JSON.parse(base64url(header).toString('utf8'));
    claims = JSON.parse(base64url(payload).toString('utf8'));
  } catch {
    return 'malformed token';
  }
  if (head.alg !== 'RS256') return 'unsupported algorithm';
  const key = createPublicKey(publicKeyPem);
  if (!verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, base64url(signature)))
    return 'bad signature';
  const fingerprint = `SHA256:${createHash('sha256')
    .update(key.export({ format: 'der', type: 'spki' }))
    .digest('base64')}`;
  const subject = `${account.toUpperCase()}.${user.toUpperCase()}`;
  if (claims.iss !== `${subject}.${fingerprint}`) return 'issuer does not match the registered key';
  if (claims.sub !== subject) return 'subject does not match the user';
  // snowflake-sdk 3.3.0 sends exp in milliseconds; the service's other clients send seconds.
  const exp = typeof claims.exp === 'number' ? (claims.exp > 1e11 ? claims.exp : claims.exp * 1000) : 0;
  if (exp <= Date.now()) return 'token expired';
  return undefined;
}
