// Access tokens: what an issued token carries, and every forgery or misuse verification refuses —
// another key under the same kid, `alg: none`, HS256 keyed with our public key, an expired token
// (beyond the clock leeway), the wrong audience or issuer, an unknown kid, a try-token's `typ`,
// a future `iat`, missing or malformed claims. Rotation keeps earlier tokens valid.
import { createHmac, createPublicKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ACCESS_TOKEN_AUDIENCE,
  type AccessTokens,
  CLOCK_LEEWAY_S,
  createAccessTokens,
  isAccessToken,
  type TokenSubject,
} from './access-tokens.js';
import { createSigningKeyRing, type SigningKeyRing } from './signing-key-ring.js';
import { createMemorySigningKeyRepository } from './testing/memory-signing-key-repository.js';

const ISSUER = 'https://quarry.example.com';
const TTL_S = 900;
const SUBJECT: TokenSubject = {
  clientId: 'qci_0123456789abcdefghijkl',
  client: 'ocl_0123456789abcdefghijkl',
  accountId: 'acc_0123456789abcdefghijkl',
  scopes: ['query', 'keys'],
};
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

let ring: SigningKeyRing;
let tokens: AccessTokens;
let clock: number;

beforeEach(() => {
  clock = Date.now();
  ring = createSigningKeyRing({
    keys: createMemorySigningKeyRepository(),
    retireAfterMs: 2_000_000,
    minReloadIntervalMs: 10,
  });
  tokens = createAccessTokens({ ring, issuer: ISSUER, ttlSeconds: TTL_S, now: () => clock });
});

/** The claims a genuine token of SUBJECT carries now. */
function genuineClaims(): JWTPayload {
  const iat = Math.floor(clock / 1000);
  return {
    iss: ISSUER,
    aud: ACCESS_TOKEN_AUDIENCE,
    sub: SUBJECT.clientId,
    account: SUBJECT.accountId,
    scope: 'query keys',
    client: SUBJECT.client,
    iat,
    exp: iat + TTL_S,
    jti: 'f0e1d2c3-0000-4000-8000-000000000000',
  };
}

/** Signs `claims` with the ring's real signing key, under the header given. */
async function signWithRealKey(claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const { kid, key } = await ring.signingKey();
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid, ...header }).sign(key);
}

describe('issued access tokens', () => {
  it('carry the contract claims and header, and verify', async () => {
    const issued = await tokens.issue(SUBJECT);
    expect(issued).toMatchObject({ expiresIn: TTL_S, scope: 'query keys' });
    const header = decodeProtectedHeader(issued.token);
    const { kid } = await ring.signingKey();
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid });
    const claims = decodeJwt(issued.token);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: 'quarry-api',
      sub: SUBJECT.clientId,
      account: SUBJECT.accountId,
      scope: 'query keys',
      client: SUBJECT.client,
    });
    expect(claims.exp).toBe((claims.iat as number) + TTL_S);
    expect(typeof claims.jti).toBe('string');
    expect(isAccessToken(issued.token)).toBe(true);
    expect(await tokens.verify(issued.token)).toEqual({
      clientId: SUBJECT.clientId,
      client: SUBJECT.client,
      accountId: SUBJECT.accountId,
      scopes: ['query', 'keys'],
      tokenId: claims.jti,
      expiresAt: new Date((claims.exp as number) * 1000),
    });
  });

  it('list scopes in canonical order and get a fresh jti each', async () => {
    const first = await tokens.issue({ ...SUBJECT, scopes: ['account', 'query'] });
    const second = await tokens.issue({ ...SUBJECT, scopes: ['account', 'query'] });
    expect(first.scope).toBe('query account');
    expect(decodeJwt(first.token).jti).not.toBe(decodeJwt(second.token).jti);
  });

  it('stay valid across a rotation, while new ones carry the new kid', async () => {
    const before = await tokens.issue(SUBJECT);
    const rotation = await ring.rotate();
    const after = await tokens.issue(SUBJECT);
    expect(decodeProtectedHeader(after.token).kid).toBe(rotation.activated.kid);
    expect(decodeProtectedHeader(before.token).kid).toBe(rotation.superseded[0]?.kid);
    expect(await tokens.verify(before.token)).not.toBeNull();
    expect(await tokens.verify(after.token)).not.toBeNull();
  });
});

describe('verification refuses', () => {
  it('a token signed with another key under our kid', async () => {
    const { kid } = await ring.signingKey();
    const other = await generateKeyPair('ES256');
    const forged = await new SignJWT(genuineClaims())
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
      .sign(other.privateKey);
    expect(await tokens.verify(forged)).toBeNull();
  });

  it('an unsigned token (alg: none)', async () => {
    const { kid } = await ring.signingKey();
    const forged = `${b64url({ alg: 'none', typ: 'at+jwt', kid })}.${b64url(genuineClaims())}.`;
    expect(isAccessToken(forged)).toBe(true);
    expect(await tokens.verify(forged)).toBeNull();
  });

  it('HS256 keyed with our public key (PEM or JWK), the algorithm-confusion attack', async () => {
    const { kid } = await ring.signingKey();
    const [published] = await ring.publishedKeys();
    const pem = createPublicKey({ key: { ...published }, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    for (const secret of [pem, JSON.stringify(published)]) {
      const head = `${b64url({ alg: 'HS256', typ: 'at+jwt', kid })}.${b64url(genuineClaims())}`;
      const forged = `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
      expect(await tokens.verify(forged)).toBeNull();
    }
  });

  it('an expired token, beyond the clock leeway only', async () => {
    const issued = await tokens.issue(SUBJECT);
    clock += (TTL_S + CLOCK_LEEWAY_S - 5) * 1000;
    expect(await tokens.verify(issued.token)).not.toBeNull();
    clock += 10_000;
    expect(await tokens.verify(issued.token)).toBeNull();
  });

  it('a token issued in the future (beyond the leeway)', async () => {
    const claims = genuineClaims();
    const iat = (claims.iat as number) + CLOCK_LEEWAY_S + 60;
    expect(await tokens.verify(await signWithRealKey({ ...claims, iat, exp: iat + TTL_S }))).toBeNull();
  });

  it('the wrong audience, or none', async () => {
    expect(await tokens.verify(await signWithRealKey(genuineClaims()))).not.toBeNull();
    expect(
      await tokens.verify(await signWithRealKey({ ...genuineClaims(), aud: 'quarry:marketplace-try' })),
    ).toBeNull();
    const { aud: _aud, ...noAudience } = genuineClaims();
    expect(await tokens.verify(await signWithRealKey(noAudience))).toBeNull();
  });

  it('the wrong issuer (another gateway with the same key set)', async () => {
    const elsewhere = createAccessTokens({ ring, issuer: 'https://other.example.com', ttlSeconds: TTL_S });
    const issued = await elsewhere.issue(SUBJECT);
    expect(await elsewhere.verify(issued.token)).not.toBeNull();
    expect(await tokens.verify(issued.token)).toBeNull();
  });

  it('an unknown kid, or none', async () => {
    expect(
      await tokens.verify(await signWithRealKey(genuineClaims(), { kid: 'not-a-key-we-have' })),
    ).toBeNull();
    const { key } = await ring.signingKey();
    const noKid = await new SignJWT(genuineClaims())
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' })
      .sign(key);
    expect(await tokens.verify(noKid)).toBeNull();
  });

  it('a token typed as something else (a try-token is `JWT`)', async () => {
    const typed = await signWithRealKey(genuineClaims(), { typ: 'JWT' });
    expect(isAccessToken(typed)).toBe(false);
    expect(await tokens.verify(typed)).toBeNull();
  });

  it('missing or malformed claims', async () => {
    const { account: _account, ...noAccount } = genuineClaims();
    const { client: _client, ...noClient } = genuineClaims();
    const { jti: _jti, ...noJti } = genuineClaims();
    const { exp: _exp, ...noExp } = genuineClaims();
    for (const claims of [
      noAccount,
      noClient,
      noJti,
      noExp,
      { ...genuineClaims(), scope: 'query admin' },
      { ...genuineClaims(), scope: ['query'] },
      { ...genuineClaims(), account: 42 },
    ]) {
      expect(await tokens.verify(await signWithRealKey(claims))).toBeNull();
    }
  });

  it('garbage, and API keys', async () => {
    for (const text of ['', 'abc', 'a.b.c', 'qry_live_0123456789012345678901234567']) {
      expect(isAccessToken(text)).toBe(false);
      expect(await tokens.verify(text)).toBeNull();
    }
  });
});

describe('a key from elsewhere', () => {
  it('never verifies, even when its public JWK is published under our kid by mistake', async () => {
    // The JWKS is output only: verification reads keys from the store, never from a token header.
    const other = await generateKeyPair('ES256');
    const jwk = await exportJWK(other.publicKey);
    const forged = await new SignJWT(genuineClaims())
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: (await ring.signingKey()).kid, jwk })
      .sign(other.privateKey);
    expect(await tokens.verify(forged)).toBeNull();
  });
});
