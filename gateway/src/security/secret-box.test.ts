import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_SECRET_KEY_FILE, loadOrCreateDemoSecretKey } from './demo-secret-key.js';
import { createSecretBox } from './secret-box.js';
import { isSecurityError } from './security-error.js';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe('secret box', () => {
  it('round-trips text, with a fresh IV every time', () => {
    const box = createSecretBox({ keys: { k1 }, current: 'k1' });
    const plaintext = '{"password":"pässwörd 🔑"}';
    const a = box.seal(plaintext);
    const b = box.seal(plaintext);
    expect(a.equals(b)).toBe(false);
    expect(a.toString('latin1')).not.toContain('password');
    expect(box.open(a)).toBe(plaintext);
    expect(box.open(b)).toBe(plaintext);
    expect(box.keyIdOf(a)).toBe('k1');
  });

  it('opens secrets sealed under a retired key after rotation, and seals new ones with the new key', () => {
    const sealedBefore = createSecretBox({ keys: { k1 }, current: 'k1' }).seal('old secret');
    const rotated = createSecretBox({ keys: { k1, k2 }, current: 'k2' });
    expect(rotated.open(sealedBefore)).toBe('old secret');
    const sealedAfter = rotated.seal('new secret');
    expect(rotated.keyIdOf(sealedAfter)).toBe('k2');
    const withoutOld = createSecretBox({ keys: { k2 }, current: 'k2' });
    expect(withoutOld.open(sealedAfter)).toBe('new secret');
    expect(() => withoutOld.open(sealedBefore)).toThrow(/sealed with key "k1", which is not configured/);
  });

  it('refuses a wrong key under the same id', () => {
    const sealed = createSecretBox({ keys: { k1 }, current: 'k1' }).seal('secret');
    const impostor = createSecretBox({ keys: { k1: k2 }, current: 'k1' });
    let caught: unknown;
    try {
      impostor.open(sealed);
    } catch (error) {
      caught = error;
    }
    expect(isSecurityError(caught, 'SECRET_UNREADABLE')).toBe(true);
    expect(String(caught)).toMatch(/authentication failed/);
  });

  it('detects tampering with any byte, including the key id', () => {
    const box = createSecretBox({ keys: { k1, k2 }, current: 'k1' });
    const sealed = box.seal('the secret');
    fc.assert(
      fc.property(fc.nat(sealed.length - 1), fc.integer({ min: 1, max: 255 }), (index, flip) => {
        const tampered = Buffer.from(sealed);
        tampered[index] = (tampered[index] ?? 0) ^ flip;
        expect(() => box.open(tampered)).toThrow();
      }),
      { numRuns: 1000 },
    );
    expect(() => box.open(sealed.subarray(0, sealed.length - 1))).toThrow();
    expect(() => box.open(Buffer.alloc(0))).toThrow(/not a sealed secret/);
  });

  it('refuses a malformed key ring at once', () => {
    expect(() => createSecretBox({ keys: { short: randomBytes(16) }, current: 'short' })).toThrow(/32 bytes/);
    expect(() => createSecretBox({ keys: { k1 }, current: 'k9' })).toThrow(/not in the key ring/);
  });
});

describe('demo secret key', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'quarry-key-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('is created owner-only (0600) on first start and reused afterwards', async () => {
    const dir = join(await tempDir(), 'data');
    const first = await loadOrCreateDemoSecretKey(dir);
    expect(first.key).toHaveLength(32);
    const path = join(dir, DEMO_SECRET_KEY_FILE);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateDemoSecretKey(dir);
    expect(second.id).toBe(first.id);
    expect(second.key.equals(first.key)).toBe(true);
    const box = createSecretBox({ keys: { [second.id]: second.key }, current: second.id });
    expect(box.open(createSecretBox({ keys: { [first.id]: first.key }, current: first.id }).seal('x'))).toBe(
      'x',
    );
  });

  it('is the same key for processes starting at once', async () => {
    const dir = await tempDir();
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateDemoSecretKey(dir)));
    for (const key of keys) expect(key.key.equals(keys[0]!.key)).toBe(true);
    expect(JSON.parse(await readFile(join(dir, DEMO_SECRET_KEY_FILE), 'utf8')).id).toBe(keys[0]!.id);
  });

  it('tightens a key file whose permissions were widened', async () => {
    const dir = await tempDir();
    await loadOrCreateDemoSecretKey(dir);
    const path = join(dir, DEMO_SECRET_KEY_FILE);
    await chmod(path, 0o644);
    await loadOrCreateDemoSecretKey(dir);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});
