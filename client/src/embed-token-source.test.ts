import { describe, expect, it } from 'vitest';
import { createEmbedTokenSource, jwtExpiry } from './embed-token-source.js';

const b64url = (value: unknown) =>
  btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const jwt = (exp: number, n: number) => `${b64url({ alg: 'ES256' })}.${b64url({ exp, n })}.sig`;
const signal = new AbortController().signal;

describe('createEmbedTokenSource', () => {
  it("reads a token's exp and asks the provider again shortly before it", async () => {
    let clock = 1_000_000_000_000;
    let calls = 0;
    const source = createEmbedTokenSource(
      () => {
        calls += 1;
        return jwt(clock / 1000 + 600, calls);
      },
      () => clock,
    );
    const first = await source.token(signal);
    expect(jwtExpiry(first)).toBe(clock / 1000 + 600);
    clock += 530_000; // 70 s before expiry: still kept (the margin is 60 s)
    expect(await source.token(signal)).toBe(first);
    clock += 20_000; // 50 s before expiry: refreshed
    const second = await source.token(signal);
    expect(second).not.toBe(first);
    expect(calls).toBe(2);
  });

  it('shares one provider call between concurrent calls, and asks again after a refusal', async () => {
    let calls = 0;
    let release: (token: string) => void = () => {};
    const source = createEmbedTokenSource(
      () =>
        new Promise<{ token: string; expiresAt: Date }>((resolve) => {
          calls += 1;
          release = (token) => resolve({ token, expiresAt: new Date(Date.now() + 3_600_000) });
        }),
    );
    const both = Promise.all([source.token(signal), source.token(signal)]);
    release('t1');
    expect(await both).toEqual(['t1', 't1']);
    expect(calls).toBe(1);
    source.invalidate('t1');
    const next = source.token(signal);
    release('t2');
    expect(await next).toBe('t2');
    expect(calls).toBe(2);
  });

  it('refuses a provider that returns no token', async () => {
    const source = createEmbedTokenSource(() => '');
    await expect(source.token(signal)).rejects.toThrow(TypeError);
  });
});
