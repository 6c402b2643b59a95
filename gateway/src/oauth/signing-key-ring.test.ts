// The signing key ring: one key created on first use however many instances start at once,
// rotation without downtime (the previous key verifies until it retires, new tokens use the new
// key), other instances following through the change feed, the periodic reload or an unknown
// kid, and forged kids costing at most one store read per reload interval.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSigningKeyRing, type SigningKeyRing } from './signing-key-ring.js';
import {
  createMemorySigningKeyRepository,
  type MemorySigningKeyRepository,
} from './testing/memory-signing-key-repository.js';

const RETIRE_AFTER_MS = 1_050_000;
const REFRESH_MS = 60_000;

function setup() {
  let clock = Date.now();
  const now = () => clock;
  const repo = createMemorySigningKeyRepository(now);
  const ring = (keys: MemorySigningKeyRepository = repo): SigningKeyRing =>
    createSigningKeyRing({
      keys,
      retireAfterMs: RETIRE_AFTER_MS,
      refreshMs: REFRESH_MS,
      minReloadIntervalMs: 50,
      now,
    });
  return {
    repo,
    ring,
    advance(ms: number) {
      clock += ms;
    },
  };
}

describe('signing key ring', () => {
  it('creates a single key on first use, shared by every instance', async () => {
    const { repo, ring } = setup();
    const [a, b, c] = [ring(), ring(), ring()];
    const keys = await Promise.all([a.signingKey(), b.signingKey(), c.signingKey()]);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await repo.listLive()).toHaveLength(1);
    const published = await a.publishedKeys();
    expect(published).toEqual([
      expect.objectContaining({ kid: keys[0]?.kid, kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' }),
    ]);
    expect(published[0]).not.toHaveProperty('d');
  });

  it('rotates without downtime: the old key verifies and is published until it retires', async () => {
    const { ring, advance } = setup();
    const instance = ring();
    const before = await instance.signingKey();
    const rotation = await instance.rotate();
    expect(rotation.superseded.map((k) => k.kid)).toEqual([before.kid]);
    const after = await instance.signingKey();
    expect(after.kid).toBe(rotation.activated.kid);
    expect(after.kid).not.toBe(before.kid);
    expect(await instance.verificationKey(before.kid)).not.toBeNull();
    expect((await instance.publishedKeys()).map((k) => k.kid)).toEqual([after.kid, before.kid]);

    advance(RETIRE_AFTER_MS - 1_000);
    expect(await instance.verificationKey(before.kid)).not.toBeNull();
    advance(2_000);
    expect(await instance.verificationKey(before.kid)).toBeNull();
    expect((await instance.publishedKeys()).map((k) => k.kid)).toEqual([after.kid]);
    expect(await instance.verificationKey(after.kid)).not.toBeNull();
  });

  it('another instance switches signer when the change feed reports the rotation', async () => {
    const { ring } = setup();
    const [a, b] = [ring(), ring()];
    const old = await b.signingKey();
    const rotation = await a.rotate();
    // Without news, b keeps its loaded set (no store read per token).
    expect((await b.signingKey()).kid).toBe(old.kid);
    b.invalidate();
    expect((await b.signingKey()).kid).toBe(rotation.activated.kid);
  });

  it('another instance that missed the event switches at its periodic reload', async () => {
    const { ring, advance } = setup();
    const [a, b] = [ring(), ring()];
    await b.signingKey();
    const rotation = await a.rotate();
    advance(REFRESH_MS);
    expect((await b.signingKey()).kid).toBe(rotation.activated.kid);
  });

  it("finds a key it has not loaded yet when a token names it (another instance's rotation)", async () => {
    const { repo, ring } = setup();
    const [a, b] = [ring(), ring()];
    await b.signingKey();
    const rotation = await a.rotate();
    const loads = repo.loads;
    expect(await b.verificationKey(rotation.activated.kid)).not.toBeNull();
    expect(repo.loads).toBe(loads + 1);
  });

  it('lets forged kids cost at most one store read per reload interval', async () => {
    const { repo, ring } = setup();
    const instance = ring();
    await instance.signingKey();
    const loads = repo.loads;
    const forged = Array.from({ length: 200 }, () => randomBytes(16).toString('base64url'));
    const found = await Promise.all(forged.map((kid) => instance.verificationKey(kid)));
    expect(found.every((key) => key === null)).toBe(true);
    expect(repo.loads - loads).toBe(1);
  });
});
