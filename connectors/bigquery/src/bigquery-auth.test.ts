// The JWT-bearer assertion the token client signs: its claims, and a signature only its key verifies.
import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BIGQUERY_SCOPE, signAssertion } from './bigquery-auth.js';

describe('signAssertion', () => {
  it('signs an RS256 JWT for the key, addressed to its token_uri, valid for one hour', () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const key = {
      clientEmail: 'reader@p.iam.gserviceaccount.com',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      privateKeyId: 'kid-1',
      tokenUri: 'https://oauth2.googleapis.com/token',
    };
    const jwt = signAssertion(key, 1_700_000_000);
    const [header, claims, signature] = jwt.split('.') as [string, string, string];
    const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    expect(json(header)).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'kid-1' });
    expect(json(claims)).toEqual({
      iss: key.clientEmail,
      scope: BIGQUERY_SCOPE,
      aud: key.tokenUri,
      iat: 1_700_000_000,
      exp: 1_700_003_600,
    });
    const signed = Buffer.from(`${header}.${claims}`);
    expect(verify('RSA-SHA256', signed, publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(verify('RSA-SHA256', signed, other, Buffer.from(signature, 'base64url'))).toBe(false);
  });
});
