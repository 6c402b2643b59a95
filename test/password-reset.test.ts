// A forgotten password and a changed login email, end to end: a real gateway process sends its
// mail with nodemailer to an SMTP server in this process (smtp-server, the protocol as any mail
// relay speaks it), and a second gateway without QUARRY_SMTP_URL writes it to the operator's log.
// - a reset link arrives for an account's email and for nobody else's, with the same answer;
//   it sets a new password once, ends every session, and a newer link replaces an older one;
// - asking is throttled per email;
// - a new login email needs the current password even with an all-scope key, is refused when
//   another account has it, and the old address is told.

import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGateway } from './support/gateway-process.js';
import { uniqueSuffix } from './support/test-services.js';

interface Mail {
  readonly to: string;
  readonly body: string;
}

/** A message's quoted-printable text as written: soft line breaks joined, `=3D` as `=`. */
function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

const suffix = uniqueSuffix();
const PASSWORD = 'correct horse battery staple';

describe('password resets and email changes', () => {
  const mails: Mail[] = [];
  let smtp: SMTPServer;
  let gateway: GatewayProcess;
  let logOnly: GatewayProcess;
  const dirs: string[] = [];

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onAuth: (_auth, _session, callback) => callback(null, { user: 'quarry' }),
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const to = session.envelope.rcptTo.map((r) => r.address).join(',');
          mails.push({ to, body: decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8')) });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    const start = async (env: Record<string, string>) => {
      const dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-reset-'));
      dirs.push(dir);
      return startGateway({
        env: { QUARRY_DATA_DIR: dir, QUARRY_DEMO: 'false', QUARRY_SIGNUPS_PER_HOUR: '1000', ...env },
        readyTimeoutMs: 90_000,
      });
    };
    [gateway, logOnly] = await Promise.all([
      start({
        QUARRY_SMTP_URL: `smtp://quarry:mail-secret@127.0.0.1:${port}`,
        QUARRY_MAIL_FROM: 'Quarry <no-reply@quarry.test>',
      }),
      start({}),
    ]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), logOnly?.stop()]);
    await new Promise<void>((resolve) => (smtp ? smtp.close(resolve) : resolve()));
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  async function call(
    on: GatewayProcess,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${on.url}${path}`, {
      method,
      headers: {
        origin: on.url,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary response shapes.
    return { status: response.status, text, json: (text === '' ? {} : JSON.parse(text)) as any, response };
  }

  /** Signs up; the first key and the session cookie the sign-up set. */
  async function signUp(on: GatewayProcess, email: string) {
    const res = await call(on, 'POST', '/v1/accounts', { email, name: 'Rita Reset', password: PASSWORD });
    expect(res.status, res.text).toBe(201);
    const cookie = res.response.headers.get('set-cookie')?.split(';')[0] ?? '';
    return { key: res.json.key.secret as string, cookie };
  }

  const logIn = (on: GatewayProcess, email: string, password: string) =>
    call(on, 'POST', '/v1/session', { email, password });

  async function mailTo(address: string, count = 1): Promise<Mail> {
    await expect
      .poll(() => mails.filter((m) => m.to === address).length, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(count);
    return mails.filter((m) => m.to === address)[count - 1] as Mail;
  }

  const tokenIn = (mail: Mail) => /#\/reset\?token=(qpr_[0-9A-Za-z]{43})/.exec(mail.body)?.[1];

  it('mails a one-time link to an account’s address, and answers a stranger’s email the same way', async () => {
    const email = `rita-${suffix}@example.com`;
    const { cookie } = await signUp(gateway, email);
    const asked = await call(gateway, 'POST', '/v1/password-resets', { email: email.toUpperCase() });
    const stranger = await call(gateway, 'POST', '/v1/password-resets', {
      email: `nobody-${suffix}@example.com`,
    });
    expect(asked.status, asked.text).toBe(202);
    expect(stranger.status).toBe(202);
    expect(stranger.json).toEqual(asked.json);

    const mail = await mailTo(email);
    expect(mail.body).toContain('Reset your Quarry password');
    expect(mail.body).toContain(`${gateway.url}/#/reset?token=`);
    const token = tokenIn(mail);
    expect(token).toBeDefined();
    // Nothing went to the stranger's address.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mails.some((m) => m.to.startsWith('nobody-'))).toBe(false);

    const newPassword = 'a brand new passphrase';
    const reset = await call(gateway, 'POST', '/v1/password-resets/confirm', {
      token,
      password: newPassword,
    });
    expect(reset.status, reset.text).toBe(204);
    expect((await logIn(gateway, email, PASSWORD)).status).toBe(401);
    expect((await logIn(gateway, email, newPassword)).status).toBe(201);
    // The session the sign-up opened ended with the reset.
    expect((await call(gateway, 'GET', '/v1/session', undefined, { cookie })).status).toBe(401);
    // The link works once.
    const again = await call(gateway, 'POST', '/v1/password-resets/confirm', { token, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.json.error.code).toBe('INVALID_REQUEST');
    expect(again.json.error.message).toContain('ask for a new one');
  });

  it('a newer link replaces an older one, a forged token is refused, and asking is throttled per email', async () => {
    const email = `twice-${suffix}@example.com`;
    await signUp(gateway, email);
    expect((await call(gateway, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    const first = tokenIn(await mailTo(email, 1));
    expect((await call(gateway, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    const second = tokenIn(await mailTo(email, 2));
    expect(second).not.toBe(first);
    const old = await call(gateway, 'POST', '/v1/password-resets/confirm', {
      token: first,
      password: PASSWORD,
    });
    expect(old.status).toBe(400);
    const forged = await call(gateway, 'POST', '/v1/password-resets/confirm', {
      token: `qpr_${'A'.repeat(43)}`,
      password: PASSWORD,
    });
    expect(forged.status).toBe(400);
    const fresh = await call(gateway, 'POST', '/v1/password-resets/confirm', {
      token: second,
      password: 'the second new passphrase',
    });
    expect(fresh.status, fresh.text).toBe(204);
    // Three requests for one email an hour: the fourth waits.
    expect((await call(gateway, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    const throttled = await call(gateway, 'POST', '/v1/password-resets', { email });
    expect(throttled.status).toBe(429);
    expect(throttled.json.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(throttled.json.error.retry_after).toBeGreaterThan(0);
    // From another site's page: refused.
    const crossSite = await call(
      gateway,
      'POST',
      '/v1/password-resets',
      { email },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
  });

  it('a new login email needs the current password even with a key, must be free, and the old address is told', async () => {
    const email = `mover-${suffix}@example.com`;
    const taken = `taken-${suffix}@example.com`;
    const moved = `moved-${suffix}@example.com`;
    const { key } = await signUp(gateway, email);
    const other = await signUp(gateway, taken);
    const auth = { authorization: `Bearer ${key}` };
    const withoutPassword = await call(gateway, 'PATCH', '/v1/account', { email: moved }, auth);
    expect(withoutPassword.status).toBe(403);
    const wrong = await call(
      gateway,
      'PATCH',
      '/v1/account',
      { email: moved, current_password: 'nope nope nope' },
      auth,
    );
    expect(wrong.status).toBe(403);
    const clash = await call(
      gateway,
      'PATCH',
      '/v1/account',
      { email: taken, current_password: PASSWORD },
      auth,
    );
    expect(clash.status).toBe(409);
    const ok = await call(
      gateway,
      'PATCH',
      '/v1/account',
      { email: moved, current_password: PASSWORD },
      auth,
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.account.email).toBe(moved);
    const notice = await mailTo(email);
    expect(notice.body).toContain(`now logs in with ${moved}`);
    expect((await logIn(gateway, moved, PASSWORD)).status).toBe(201);
    expect((await logIn(gateway, email, PASSWORD)).status).toBe(401);
    // A name needs no password (the other account: this key's 10 calls a minute are spent).
    const otherAuth = { authorization: `Bearer ${other.key}` };
    const renamed = await call(gateway, 'PATCH', '/v1/account', { name: 'Tara Taken' }, otherAuth);
    expect(renamed.json.account.name).toBe('Tara Taken');
    const empty = await call(gateway, 'PATCH', '/v1/account', {}, otherAuth);
    expect(empty.status, empty.text).toBe(400);
  });

  it('without QUARRY_SMTP_URL the link goes to the operator’s log, and the SMTP password never does', async () => {
    const email = `operator-${suffix}@example.com`;
    await signUp(logOnly, email);
    expect((await call(logOnly, 'POST', '/v1/password-resets', { email })).status).toBe(202);
    await expect.poll(() => logOnly.stdout() + logOnly.stderr(), { timeout: 15_000 }).toContain(email);
    const log = logOnly.stdout() + logOnly.stderr();
    const token = /#\/reset\?token=(qpr_[0-9A-Za-z]{43})/.exec(log)?.[1];
    expect(token).toBeDefined();
    expect(log).toContain('no QUARRY_SMTP_URL');
    const reset = await call(logOnly, 'POST', '/v1/password-resets/confirm', {
      token,
      password: 'from the operator log',
    });
    expect(reset.status, reset.text).toBe(204);
    expect(gateway.stdout() + gateway.stderr()).not.toContain('mail-secret');
  });
});
