// The web console's accounts in a browser, over app.request(): sign-up with a password sets an
// HttpOnly SameSite session cookie (Secure under https), the cookie reaches the management API
// through the same routes and envelope as keys, every state change it makes needs the session's
// CSRF token and a same-origin Origin, logout ends it server-side (a copied cookie is dead),
// sessions expire, logins are throttled per address and per account, and an account made through
// the API sets its password with a key.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CallResult, createTestGateway, type TestGateway } from '../testing/test-gateway.js';

let tg: TestGateway;
const ORIGIN = 'http://localhost';
let counter = 0;
const email = () => `console${++counter}-${process.pid}-${Date.now()}@example.com`;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  tg = await createTestGateway();
});
afterAll(async () => {
  await tg?.close();
});

/** The session cookie `name=value` from a response's Set-Cookie. */
function cookieOf(res: CallResult): string {
  const set = res.headers.get('set-cookie') ?? '';
  const pair = set.split(';')[0] ?? '';
  expect(pair).toMatch(/^(__Host-)?quarry_session=qss_/);
  return pair;
}

async function signUpInBrowser(): Promise<{
  cookie: string;
  csrf: string;
  accountId: string;
  address: string;
}> {
  const address = email();
  const res = await tg.call('POST', '/v1/accounts', {
    body: { email: address, name: 'Browser user', password: PASSWORD },
    headers: { origin: ORIGIN },
  });
  expect(res.status).toBe(201);
  const cookie = cookieOf(res);
  const session = await tg.call('GET', '/v1/session', { headers: { cookie } });
  expect(session.status).toBe(200);
  return { cookie, csrf: session.json.csrf_token, accountId: res.json.account.id, address };
}

describe('sign-up and sessions', () => {
  it('stores the password hashed and sets an HttpOnly, SameSite=Strict cookie (not Secure over http)', async () => {
    const address = email();
    const res = await tg.call('POST', '/v1/accounts', {
      body: { email: address, name: 'Ann', password: PASSWORD },
      headers: { origin: ORIGIN },
    });
    expect(res.status).toBe(201);
    expect(res.json.key.secret).toMatch(/^qry_live_/);
    const setCookie = res.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^quarry_session=qss_[0-9A-Za-z]{43};/);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(setCookie).not.toMatch(/Secure/);
    const rows = await tg.gateway.services.store.sessions.passwordHash(res.json.account.id);
    expect(rows).toMatch(/^scrypt\$/);
    expect(rows).not.toContain(PASSWORD);
  });

  it('a browser sign-up from another site is refused, and nothing is left behind', async () => {
    const address = email();
    const res = await tg.call('POST', '/v1/accounts', {
      body: { email: address, name: 'Eve', password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('FORBIDDEN');
    expect(await tg.gateway.services.store.accounts.findByEmail(address)).toBeNull();
  });

  it('the cookie reaches management routes with the same envelope as keys, never the query routes', async () => {
    const { cookie } = await signUpInBrowser();
    const account = await tg.call('GET', '/v1/account', { headers: { cookie } });
    expect(account.status).toBe(200);
    expect(account.headers.get('ratelimit-policy')).toMatch(/"default"/);
    const keys = await tg.call('GET', '/v1/keys', { headers: { cookie } });
    expect(keys.status).toBe(200);
    expect(keys.json.keys).toHaveLength(1);
    // A query spends credits: a cookie never does.
    const query = await tg.call('POST', '/v1/query', {
      headers: { cookie, origin: ORIGIN },
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(query.status).toBe(401);
    expect(query.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a state change without the CSRF token or from another origin (403), accepts it with both', async () => {
    const { cookie, csrf } = await signUpInBrowser();
    const body = { name: 'second' };
    const noToken = await tg.call('POST', '/v1/keys', { headers: { cookie, origin: ORIGIN }, body });
    expect(noToken.status).toBe(403);
    expect(noToken.json.error.code).toBe('FORBIDDEN');
    expect(noToken.json.error.message).toMatch(/CSRF/);
    const wrongToken = await tg.call('POST', '/v1/keys', {
      headers: { cookie, origin: ORIGIN, 'x-csrf-token': 'x'.repeat(43) },
      body,
    });
    expect(wrongToken.status).toBe(403);
    const otherSite = await tg.call('POST', '/v1/keys', {
      headers: { cookie, origin: 'https://evil.example', 'x-csrf-token': csrf },
      body,
    });
    expect(otherSite.status).toBe(403);
    expect(otherSite.json.error.message).toMatch(/Origin/);
    const noOrigin = await tg.call('POST', '/v1/keys', { headers: { cookie, 'x-csrf-token': csrf }, body });
    expect(noOrigin.status).toBe(403);
    // None of them made a key.
    expect((await tg.call('GET', '/v1/keys', { headers: { cookie } })).json.keys).toHaveLength(1);
    const ok = await tg.call('POST', '/v1/keys', {
      headers: { cookie, origin: ORIGIN, 'x-csrf-token': csrf },
      body,
    });
    expect(ok.status).toBe(201);
    expect(ok.json.key.secret).toMatch(/^qry_live_/);
  });

  it('logout ends the session server-side: the copied cookie is refused afterwards', async () => {
    const { cookie, csrf } = await signUpInBrowser();
    const stolen = cookie;
    const out = await tg.call('DELETE', '/v1/session', {
      headers: { cookie, origin: ORIGIN, 'x-csrf-token': csrf },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^quarry_session=; Max-Age=0/);
    const replay = await tg.call('GET', '/v1/account', { headers: { cookie: stolen } });
    expect(replay.status).toBe(401);
    expect(replay.json.error.code).toBe('UNAUTHENTICATED');
  });

  it('a session past its lifetime is refused', async () => {
    const { address } = await signUpInBrowser();
    // A login two days ago: its one-day session has expired.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 2 * 86_400_000);
    let old: CallResult;
    try {
      old = await tg.call('POST', '/v1/session', {
        headers: { origin: ORIGIN },
        body: { email: address, password: PASSWORD },
      });
    } finally {
      vi.useRealTimers();
    }
    expect(old.status).toBe(201);
    const later = await tg.call('GET', '/v1/account', { headers: { cookie: cookieOf(old) } });
    expect(later.status).toBe(401);
    expect(later.json.error.message).toMatch(/expired/);
  });

  it('a try-token minted by the session previews, and dies with the session', async () => {
    const { cookie, csrf } = await signUpInBrowser();
    const minted = await tg.call('POST', '/v1/marketplace/try-token', {
      headers: { cookie, origin: ORIGIN, 'x-csrf-token': csrf },
      body: { source: 'sales-by-region' },
    });
    expect(minted.status).toBe(201);
    const preview = await tg.call('POST', '/v1/query', {
      key: minted.json.token,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(preview.status).toBe(200);
    expect(preview.json.meta.preview).toBe(true);
    expect(preview.json.meta.credits).toBe(0);
    await tg.call('DELETE', '/v1/session', { headers: { cookie, origin: ORIGIN, 'x-csrf-token': csrf } });
    tg.gateway.services.auth.forgetAll();
    const after = await tg.call('POST', '/v1/query', {
      key: minted.json.token,
      body: { source: 'sales-by-region', params: { year: 2024 } },
    });
    expect(after.status).toBe(401);
  });
});

describe('login', () => {
  it('logs in with the right password only, with one answer for a wrong password and an unknown email', async () => {
    const { address } = await signUpInBrowser();
    const ok = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: address.toUpperCase(), password: PASSWORD },
    });
    expect(ok.status).toBe(201);
    expect(ok.json.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await tg.call('GET', '/v1/account', { headers: { cookie: cookieOf(ok) } })).status).toBe(200);
    const wrong = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: address, password: 'not the password' },
    });
    const unknown = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: email(), password: PASSWORD },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.json.error.message).toBe(unknown.json.error.message);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const crossSite = await tg.call('POST', '/v1/session', {
      headers: { origin: 'https://evil.example' },
      body: { email: address, password: PASSWORD },
    });
    expect(crossSite.status).toBe(403);
  });

  it('throttles failed logins per account: past 10, even the right password waits (429)', async () => {
    const { address } = await signUpInBrowser();
    for (let i = 0; i < 10; i += 1) {
      const res = await tg.call('POST', '/v1/session', {
        headers: { origin: ORIGIN },
        body: { email: address, password: `guess number ${i}` },
      });
      expect(res.status).toBe(401);
    }
    const locked = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: address, password: PASSWORD },
    });
    expect(locked.status).toBe(429);
    expect(locked.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(locked.json.error.retry_after).toBeGreaterThan(0);
    expect(locked.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('throttles failed logins per address across accounts', async () => {
    // app.request() has no socket: every call comes from one (unknown) address, which the
    // previous test already charged 10 failures; 10 more on fresh emails fill its 20.
    for (let i = 0; i < 10; i += 1) {
      await tg.call('POST', '/v1/session', {
        headers: { origin: ORIGIN },
        body: { email: email(), password: 'whatever it is' },
      });
    }
    const { address } = await signUpInBrowser();
    const locked = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN },
      body: { email: address, password: PASSWORD },
    });
    expect(locked.status).toBe(429);
  });
});

describe('passwords of accounts made through the API', () => {
  it('are set with a key; with a session the current password is required', async () => {
    const api = await tg.signUp('API user');
    const before = await tg.call('POST', '/v1/session', {
      headers: { origin: ORIGIN, 'x-forwarded-for': '198.51.100.9' },
      body: { email: api.email, password: PASSWORD },
    });
    expect([401, 429]).toContain(before.status);
    const tooShort = await tg.call('PUT', '/v1/account/password', {
      key: api.key,
      body: { password: 'short' },
    });
    expect(tooShort.status).toBe(400);
    const set = await tg.call('PUT', '/v1/account/password', { key: api.key, body: { password: PASSWORD } });
    expect(set.status).toBe(204);
    const hash = await tg.gateway.services.store.sessions.passwordHash(api.accountId);
    expect(hash).toMatch(/^scrypt\$/);
    const session = await tg.gateway.services.sessions.open(
      (await tg.gateway.services.store.accounts.get(api.accountId))!,
    );
    const cookie = `quarry_session=${session.token}`;
    const csrf = (await tg.call('GET', '/v1/session', { headers: { cookie } })).json.csrf_token;
    const headers = { cookie, origin: ORIGIN, 'x-csrf-token': csrf };
    const noCurrent = await tg.call('PUT', '/v1/account/password', {
      headers,
      body: { password: 'another long one' },
    });
    expect(noCurrent.status).toBe(403);
    const changed = await tg.call('PUT', '/v1/account/password', {
      headers,
      body: { password: 'another long one', current_password: PASSWORD },
    });
    expect(changed.status).toBe(204);
    expect(await tg.gateway.services.store.sessions.passwordHash(api.accountId)).not.toBe(hash);
  });
});

describe('over https', () => {
  it('the cookie is Secure under the __Host- name', async () => {
    const secure = await createTestGateway({ QUARRY_PUBLIC_URL: 'https://console.example' });
    try {
      const res = await secure.call('POST', '/v1/accounts', {
        body: { email: email(), name: 'Sam', password: PASSWORD },
        headers: { origin: 'https://console.example' },
      });
      expect(res.status).toBe(201);
      const setCookie = res.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(/^__Host-quarry_session=qss_/);
      expect(setCookie).toMatch(/; Secure/);
      expect(setCookie).toMatch(/; HttpOnly/);
      const cookie = setCookie.split(';')[0] as string;
      expect((await secure.call('GET', '/v1/account', { headers: { cookie } })).status).toBe(200);
      // The plain name is not read over https (a cookie a http page could have planted).
      const planted = cookie.replace('__Host-', '');
      expect((await secure.call('GET', '/v1/account', { headers: { cookie: planted } })).status).toBe(401);
    } finally {
      await secure.close();
    }
  });
});

describe('password hashes past the limiter', () => {
  it('answer 429 RATE_LIMIT_EXCEEDED at once with retry_after, and a login goes through once the queue drains', async () => {
    const busy = await createTestGateway({
      QUARRY_PASSWORD_HASH_CONCURRENCY: '1',
      QUARRY_PASSWORD_HASH_QUEUE: '1',
    });
    try {
      const address = email();
      const signUp = await busy.call('POST', '/v1/accounts', {
        body: { email: address, name: 'Busy user', password: PASSWORD },
        headers: { origin: ORIGIN },
      });
      expect(signUp.status).toBe(201);
      // Six at once, unknown emails: one hashing, one waiting, four refused without a hash.
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          busy.call('POST', '/v1/session', {
            headers: { origin: ORIGIN },
            body: { email: email(), password: PASSWORD },
          }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([401, 401, 429, 429, 429, 429]);
      for (const refused of answers.filter((a) => a.status === 429)) {
        expect(refused.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
        expect(refused.json.error.retry_after).toBe(1);
        expect(refused.headers.get('retry-after')).toBe('1');
      }
      const later = await busy.call('POST', '/v1/session', {
        headers: { origin: ORIGIN },
        body: { email: address, password: PASSWORD },
      });
      expect(later.status).toBe(201);
      const metrics = await busy.call('GET', '/metrics');
      expect(metrics.text).toMatch(/quarry_password_hashes_refused_total 4/);
    } finally {
      await busy.close();
    }
  });
});
