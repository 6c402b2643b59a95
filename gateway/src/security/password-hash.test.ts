// Console passwords: stored only as scrypt hashes with a salt of their own, verified in constant
// time, and a malformed stored value never verifies.
import { describe, expect, it } from 'vitest';
import { createHashLimiter } from './hash-limiter.js';
import { createPasswordHasher, decoyPasswordHash, hashPassword, verifyPassword } from './password-hash.js';
import { csrfTokenMatches, csrfTokenOf, generateSessionToken, isSessionToken } from './session-token.js';

describe('password hashes', () => {
  it('never contain the password, differ per hash (salt), and verify only the right password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toContain('correct');
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
    expect(await verifyPassword('', a)).toBe(false);
  });

  it('refuses malformed or foreign stored values instead of throwing', async () => {
    for (const stored of [
      '',
      'plain',
      'scrypt$15$8$1$c2FsdA==',
      'bcrypt$1$2$3$4$5',
      'scrypt$40$8$1$AA==$AA==',
    ]) {
      expect(await verifyPassword('x', stored)).toBe(false);
    }
    expect(await verifyPassword('anything', await decoyPasswordHash())).toBe(false);
  });
});

describe('the password hasher (through the hash limiter)', () => {
  it('verifies an unknown email against the decoy in the same queue, and refuses with 429 when it is full', async () => {
    const limiter = createHashLimiter({ concurrency: 1, queue: 0 });
    const passwords = createPasswordHasher(limiter);
    const stored = await passwords.hash('correct horse battery');
    expect(await passwords.verify('correct horse battery', stored)).toBe(true);
    // No account: never true, whatever the password, and it still costs a hash.
    expect(await passwords.verify('correct horse battery', null)).toBe(false);
    let release!: () => void;
    const busy = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    await expect(passwords.verify('anything', null)).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    await expect(passwords.verify('anything', stored)).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    await expect(passwords.hash('a new password')).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    expect(() => passwords.refuseIfBusy()).toThrow();
    release();
    await busy;
    expect(limiter.stats()).toEqual({ inFlight: 0, queued: 0, refused: 4 });
  });
});

describe('session tokens', () => {
  it('are 256-bit random, recognisable, and each has its own CSRF token', () => {
    const one = generateSessionToken();
    const two = generateSessionToken();
    expect(one.token).not.toBe(two.token);
    expect(isSessionToken(one.token)).toBe(true);
    expect(isSessionToken(`${one.token}x`)).toBe(false);
    expect(isSessionToken('qry_live_abc')).toBe(false);
    expect(one.digest.length).toBe(32);
    expect(csrfTokenOf(one.token)).not.toBe(csrfTokenOf(two.token));
    expect(csrfTokenMatches(one.token, csrfTokenOf(one.token))).toBe(true);
    expect(csrfTokenMatches(one.token, csrfTokenOf(two.token))).toBe(false);
    expect(csrfTokenMatches(one.token, undefined)).toBe(false);
    expect(csrfTokenMatches(one.token, '')).toBe(false);
  });
});
