// The principal an access token stands for (account, token scopes, the account's plan and its
// rate limit, a bucket per client, origin api), and the client verdict cache: bounded by cacheMs,
// dropped when the client is revoked (change feed), shared by every token of the client.
import { describe, expect, it } from 'vitest';
import type { ApiError } from '../errors/api-error.js';
import { createAccessTokens } from '../oauth/access-tokens.js';
import { createSigningKeyRing } from '../oauth/signing-key-ring.js';
import { createMemorySigningKeyRepository } from '../oauth/testing/memory-signing-key-repository.js';
import { createPlanPolicies } from '../rate-limit/plan-policies.js';
import type { LiveOAuthClient, OAuthClient } from '../store/oauth-client-repository.js';
import { createTokenAuthenticator } from './access-token-authenticator.js';

const CLIENT: OAuthClient = {
  id: 'ocl_0123456789abcdefghijkl',
  clientId: 'qci_0123456789abcdefghijkl',
  accountId: 'acc_0123456789abcdefghijkl',
  name: 'reporting',
  scopes: ['query', 'keys'],
  createdAt: new Date(),
  revokedAt: null,
};

/** A client table in memory that counts lookups. */
function memoryClients(plan: string) {
  const live = new Map<string, LiveOAuthClient>([[CLIENT.id, { client: CLIENT, plan }]]);
  let lookups = 0;
  return {
    live,
    get lookups() {
      return lookups;
    },
    async findLive(id: string) {
      lookups += 1;
      return live.get(id) ?? null;
    },
  };
}

function setup(cacheMs = 5_000) {
  const ring = createSigningKeyRing({ keys: createMemorySigningKeyRepository(), retireAfterMs: 2_000_000 });
  const tokens = createAccessTokens({ ring, issuer: 'http://127.0.0.1:8787', ttlSeconds: 900 });
  const clients = memoryClients('smb');
  const policies = createPlanPolicies();
  const authenticator = createTokenAuthenticator({ tokens, clients, policies, cacheMs });
  const issue = (scopes: readonly ('query' | 'keys')[] = ['query']) =>
    tokens.issue({ clientId: CLIENT.clientId, client: CLIENT.id, accountId: CLIENT.accountId, scopes });
  return { authenticator, clients, policies, tokens, issue };
}

const code = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return (error as ApiError).code;
  }
};

describe('token authenticator', () => {
  it("makes the principal from the token and the client's account, metered like a key", async () => {
    const { authenticator, policies, issue } = setup();
    const principal = await authenticator.authenticate((await issue(['query'])).token);
    expect(principal).toEqual({
      accountId: CLIENT.accountId,
      keyId: CLIENT.id,
      scopes: ['query'],
      plan: 'smb',
      rateLimit: policies.resolve('smb', null),
      rateLimitBucket: `account:${CLIENT.accountId}`,
      origin: 'api',
      credential: 'oauth',
    });
  });

  it("caches the client's verdict: one lookup for many calls and tokens", async () => {
    const { authenticator, clients, issue } = setup();
    const [a, b] = [await issue(), await issue(['query', 'keys'])];
    for (let i = 0; i < 5; i += 1) {
      await authenticator.authenticate(a.token);
      await authenticator.authenticate(b.token);
    }
    expect(clients.lookups).toBe(1);
  });

  it('refuses the tokens of a revoked client once its verdict is forgotten', async () => {
    const { authenticator, clients, issue } = setup();
    const { token } = await issue();
    expect(await code(authenticator.authenticate(token))).toBe('accepted');
    clients.live.delete(CLIENT.id);
    // Within the cache bound the verdict may still stand; the change feed drops it at once.
    authenticator.forgetClient(CLIENT.id);
    expect(await code(authenticator.authenticate(token))).toBe('UNAUTHENTICATED');
  });

  it('asks the store every time with the cache off', async () => {
    const { authenticator, clients, issue } = setup(0);
    const { token } = await issue();
    await authenticator.authenticate(token);
    clients.live.delete(CLIENT.id);
    expect(await code(authenticator.authenticate(token))).toBe('UNAUTHENTICATED');
    expect(clients.lookups).toBe(2);
  });

  it("refuses a token whose claims disagree with its client's record", async () => {
    const { authenticator, tokens } = setup();
    const otherAccount = await tokens.issue({
      clientId: CLIENT.clientId,
      client: CLIENT.id,
      accountId: 'acc_someoneelse0000000000',
      scopes: ['query'],
    });
    expect(await code(authenticator.authenticate(otherAccount.token))).toBe('UNAUTHENTICATED');
    const otherClientId = await tokens.issue({
      clientId: 'qci_someoneelse0000000000',
      client: CLIENT.id,
      accountId: CLIENT.accountId,
      scopes: ['query'],
    });
    expect(await code(authenticator.authenticate(otherClientId.token))).toBe('UNAUTHENTICATED');
    expect(await code(authenticator.authenticate('not-a-token'))).toBe('UNAUTHENTICATED');
  });
});
