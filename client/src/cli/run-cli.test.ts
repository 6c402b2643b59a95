// The CLI in-process (runCli with its own streams and environment) against a local server
// playing the gateway: login storage and its file modes, where the URL and key come from,
// query output, analytics deploy reporting, cache purges, --help everywhere, error output and
// exit codes.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { billingAnswer } from '../testing/billing-fixture.js';
import { payoutAccountAnswer, payoutsAnswer } from '../testing/payouts-fixture.js';
import {
  envelope,
  queryAnswer,
  startTestServer,
  type TestHandler,
  type TestServer,
} from '../testing/test-server.js';
import type { Billing, PayoutAccount } from '../types.js';
import type { CliIo } from './cli-io.js';
import { runCli } from './run-cli.js';

const KEY = 'qry_live_cli';
let home: string;
let server: TestServer | undefined;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'quarry-cli-test-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(home, { recursive: true, force: true });
});

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

interface RunOptions {
  readonly env?: Record<string, string>;
  readonly stdin?: string;
  readonly tty?: boolean;
  readonly cwd?: string;
}

async function quarry(argv: string[], options: RunOptions = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const input = options.stdin ?? '';
  const io: CliIo = {
    stdout: { write: (t: string) => (stdout += t), isTTY: options.tty ?? false },
    stderr: { write: (t: string) => (stderr += t), isTTY: options.tty ?? false },
    stdin: {
      isTTY: false,
      async *[Symbol.asyncIterator]() {
        yield input;
      },
    },
    env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...options.env },
    cwd: options.cwd ?? home,
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** A gateway that knows one key: account, keys, queries (echoing the query string), deploys. */
const gateway: TestHandler = (req) => {
  if (req.headers.authorization !== `Bearer ${KEY}`) return envelope(401, 'UNAUTHENTICATED');
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/v1/account')
    return {
      status: 200,
      body: { account: { id: 'acc_1', email: 'ada@example.com', name: 'Ada', plan: 'smb' } },
    };
  if (url.pathname === '/v1/keys')
    return {
      status: 200,
      body: {
        keys: [
          {
            id: 'key_1',
            name: 'ci',
            prefix: 'qry_live_ab',
            scopes: ['query'],
            created_at: '2026-11-01T00:00:00Z',
            expires_at: null,
            revoked_at: null,
            last_used_at: null,
          },
        ],
      },
    };
  if (url.pathname === '/v1/analytics/sales-by-region') {
    if (url.searchParams.get('year') === 'x')
      return envelope(400, 'INVALID_PARAMS', { details: [{ param: 'year', message: 'must be an integer' }] });
    if (url.searchParams.get('year') === '1999')
      return envelope(429, 'QUOTA_EXCEEDED', { retry_after: 86_400 });
    if (url.searchParams.get('max_credits') === '1')
      return envelope(409, 'PRICE_ABOVE_LIMIT', {
        details: [
          { field: 'price', value: 2, message: 'This call costs 2 credits.' },
          { field: 'max_credits', value: 1, message: 'You allowed at most 1 credits.' },
        ],
      });
    return queryAnswer([
      { region: url.searchParams.getAll('region').join('+'), revenue: 1234.5 },
      { region: 'NA', revenue: 99 },
    ]);
  }
  if (url.pathname.endsWith('/cache') && req.method === 'DELETE')
    return url.pathname === '/v1/owner/analytics/mine/cache' ? { status: 204 } : envelope(404, 'NOT_FOUND');
  if (url.pathname.startsWith('/v1/owner/analytics/') && req.method === 'PUT') {
    const name = url.pathname.split('/').pop() ?? '';
    if (name === 'rejected')
      return envelope(400, 'INVALID_REQUEST', {
        details: [{ field: 'connection', message: 'no connection named "nope"' }],
      });
    return {
      status: 200,
      body: { outcome: name === 'changed' ? 'updated' : 'unchanged', analytic: { name, version: 3 } },
    };
  }
  return envelope(404, 'NOT_FOUND');
};

describe('login and where the key comes from', () => {
  it('checks a key read from stdin, stores it 0600 in a 0700 directory, and uses it afterwards', async () => {
    server = await startTestServer(gateway);
    const login = await quarry(['login', '--url', server.url], { stdin: `${KEY}\n` });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain('ada@example.com');
    const path = join(home, 'config', 'quarry', 'credentials.json');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ url: server.url, key: KEY });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'config', 'quarry'))).mode & 0o777).toBe(0o700);
    const list = await quarry(['keys', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^id\s+name\s+prefix/);
    expect(list.stdout).toContain('key_1');
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);
    const logout = await quarry(['logout']);
    expect(logout.stdout).toContain('Logged out');
    await expect(stat(path)).rejects.toThrow();
    expect((await quarry(['keys', 'list'])).code).toBe(3);
  });

  it('stores nothing when the gateway refuses the key, and exits 3 with the code and request id', async () => {
    server = await startTestServer(gateway);
    const login = await quarry(['login', '--url', server.url, '--key', 'qry_live_wrong']);
    expect(login.code).toBe(3);
    expect(login.stderr).toContain('UNAUTHENTICATED');
    expect(login.stderr).toContain('(request req_test)');
    expect(login.stderr).not.toMatch(/\n\s+at /);
    await expect(stat(join(home, 'config', 'quarry', 'credentials.json'))).rejects.toThrow();
  });

  it('takes flags over QUARRY_URL/QUARRY_API_KEY over the stored login, and never sends a stored key elsewhere', async () => {
    server = await startTestServer(gateway);
    const other = await startTestServer(gateway);
    try {
      await mkdir(join(home, 'config', 'quarry'), { recursive: true });
      await writeFile(
        join(home, 'config', 'quarry', 'credentials.json'),
        JSON.stringify({ url: server.url, key: KEY }),
      );
      // The environment's URL is another gateway: the stored key is not for it.
      const envUrl = await quarry(['keys', 'list'], { env: { QUARRY_URL: other.url } });
      expect(envUrl.code).toBe(3);
      expect(other.requests).toHaveLength(0);
      const envKey = await quarry(['keys', 'list'], { env: { QUARRY_URL: other.url, QUARRY_API_KEY: KEY } });
      expect(envKey.code, envKey.stderr).toBe(0);
      expect(other.requests).toHaveLength(1);
      const flags = await quarry(['keys', 'list', '--url', server.url, '--key', 'qry_live_flag'], {
        env: { QUARRY_API_KEY: KEY },
      });
      expect(flags.code).toBe(3);
      expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer qry_live_flag');
    } finally {
      await other.close();
    }
  });
});

describe('query', () => {
  it('sends params as a query string (repeats as lists) and prints JSON when stdout is not a terminal', async () => {
    server = await startTestServer(gateway);
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const run = await quarry(
      ['query', 'sales-by-region', '-p', 'year=2024', '--param', 'region=EU', '--param', 'region=NA'],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(server.requests[0]?.url).toBe('/v1/analytics/sales-by-region?year=2024&region=EU&region=NA');
    expect(JSON.parse(run.stdout).results[0]).toEqual({ region: 'EU+NA', revenue: 1234.5 });
    expect(run.stderr).toBe('');
  });

  it('prints an aligned table on a terminal', async () => {
    server = await startTestServer(gateway);
    const run = await quarry(
      ['query', 'sales-by-region', '-p', 'year=2024', '-p', 'region=EU', '--no-cache'],
      {
        env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
        tty: true,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'region  revenue',
      '------  -------',
      'EU       1234.5',
      'NA           99',
    ]);
    expect(lines[4]).toContain('2 rows');
    expect(server.requests[0]?.headers['cache-control']).toBe('no-cache');
  });

  it('exits 1 on refused params (listing each), 4 on a quota, 2 on a malformed --param', async () => {
    server = await startTestServer(gateway);
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const invalid = await quarry(['query', 'sales-by-region', '-p', 'year=x'], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe(
      'quarry: INVALID_PARAMS: INVALID_PARAMS from the test server (request req_test)\n  - year: must be an integer\n',
    );
    const quota = await quarry(['query', 'sales-by-region', '-p', 'year=1999'], { env });
    expect(quota.code).toBe(4);
    expect(quota.stderr).toContain('QUOTA_EXCEEDED');
    const usage = await quarry(['query', 'sales-by-region', '-p', 'year'], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--param takes name=value');
    expect(server.requests).toHaveLength(2);
  });

  it('sends --max-credits beside the params and exits 1 on PRICE_ABOVE_LIMIT; refuses a bad value unsent', async () => {
    server = await startTestServer(gateway);
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const refused = await quarry(['query', 'sales-by-region', '-p', 'year=2024', '--max-credits', '1'], {
      env,
    });
    expect(server.requests[0]?.url).toBe('/v1/analytics/sales-by-region?year=2024&max_credits=1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PRICE_ABOVE_LIMIT');
    expect(refused.stderr).toContain('Nothing was run or charged');
    const bad = await quarry(['query', 'sales-by-region', '--max-credits', '0'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-credits takes a positive whole number');
    expect(server.requests).toHaveLength(1);
  });
});

describe('analytics deploy', () => {
  it('reports each file, names the broken ones, deploys the rest, and exits 1', async () => {
    server = await startTestServer(gateway);
    const dir = join(home, 'defs');
    await mkdir(dir);
    await writeFile(join(dir, 'a-changed.yaml'), 'name: changed\nconnection: demo\nsql: SELECT 1\n');
    await writeFile(join(dir, 'b-broken.yml'), 'name: [unclosed\n');
    await writeFile(join(dir, 'c-rejected.yaml'), 'name: rejected\nconnection: nope\nsql: SELECT 1\n');
    await writeFile(join(dir, 'd-same.yaml'), 'name: same\nconnection: demo\nsql: SELECT 1\n');
    await writeFile(join(dir, 'notes.txt'), 'not a definition');
    const run = await quarry(['analytics', 'deploy', 'defs'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
    });
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')).toEqual([
      expect.stringMatching(/^changed\s+updated \(v3\)$/),
      expect.stringMatching(/^same\s+unchanged$/),
      '',
    ]);
    expect(run.stderr).toMatch(/b-broken\.yml\s+failed: not valid YAML/);
    expect(run.stderr).toMatch(
      /c-rejected\.yaml\s+failed: INVALID_REQUEST: .*\n\s+- connection: no connection named "nope"/,
    );
    expect(run.stderr).toContain('2 of 4 definitions failed.');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      name: 'changed',
      connection: 'demo',
      sql: 'SELECT 1',
    });
    expect(server.requests.map((r) => r.url)).toEqual([
      '/v1/owner/analytics/changed',
      '/v1/owner/analytics/rejected',
      '/v1/owner/analytics/same',
    ]);
  });

  it('shows progress on stderr only when it is a terminal', async () => {
    server = await startTestServer(gateway);
    const dir = join(home, 'defs');
    await mkdir(dir);
    await writeFile(join(dir, 'same.yaml'), 'name: same\nconnection: demo\nsql: SELECT 1\n');
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const tty = await quarry(['analytics', 'deploy', dir], { env, tty: true });
    expect(tty.stderr).toContain('deploying 1/1 same.yaml');
    const piped = await quarry(['analytics', 'deploy', dir], { env });
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
  });
});

describe('analytics purge-cache', () => {
  it('drops each named analytic in turn and stops, exiting 1, at one that is not yours', async () => {
    server = await startTestServer(gateway);
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const ok = await quarry(['analytics', 'purge-cache', 'mine'], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('Dropped the cached answers of mine.\n');
    const refused = await quarry(['analytics', 'purge-cache', 'mine', 'theirs', 'mine'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('Dropped the cached answers of mine.\n');
    expect(refused.stderr).toContain('NOT_FOUND');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'DELETE /v1/owner/analytics/mine/cache',
      'DELETE /v1/owner/analytics/mine/cache',
      'DELETE /v1/owner/analytics/theirs/cache',
    ]);
  });
});

/**
 * A gateway selling plans: the account is on `state.plan`; a checkout answers a sandbox URL, and
 * the plan changes (as the payment's webhook would) on the `arriveAt`-th billing read after it.
 */
function billingGateway(state: { plan: string; arriveAt: number; card?: boolean; provider?: string }) {
  let checkout: string | undefined;
  let reads = 0;
  const handler: TestHandler = (req) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) return envelope(401, 'UNAUTHENTICATED');
    if (req.url === '/v1/billing') {
      if (checkout !== undefined && ++reads >= state.arriveAt) state.plan = checkout;
      const overrides: Partial<Billing> = {
        ...(state.provider === 'none' ? { provider: 'none' } : {}),
        ...(state.card === undefined ? {} : { card_on_file: state.card }),
      };
      return { status: 200, body: billingAnswer(state.plan, overrides) };
    }
    if (req.url === '/v1/billing/checkout') {
      if (state.provider === 'none')
        return envelope(409, 'CONFLICT', {
          details: [{ message: 'This gateway takes no payments: the operator sets plans.' }],
        });
      const { plan } = JSON.parse(req.body) as { plan: string };
      if (plan === state.plan) return envelope(400, 'INVALID_REQUEST');
      checkout = plan;
      return {
        status: 200,
        body: {
          id: 'cs_1',
          url: 'http://127.0.0.1:8787/billing/sandbox/checkout/cs_1',
          mode: plan === 'payg' ? 'setup' : 'subscription',
        },
      };
    }
    if (req.url === '/v1/billing/portal')
      return state.plan === 'free'
        ? envelope(409, 'CONFLICT')
        : { status: 200, body: { url: 'http://127.0.0.1:8787/billing/sandbox/portal/cus_1' } };
    return envelope(404, 'NOT_FOUND');
  };
  return handler;
}

describe('billing', () => {
  it('status shows the plan, status, card, budget and each plan with its action', async () => {
    server = await startTestServer(billingGateway({ plan: 'free', arriveAt: 1 }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const run = await quarry(['billing', 'status'], { env });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'Plan: Forever Free (30 credits a month, free)',
      'Status: no subscription',
      'Card on file: no',
      'Payments: sandbox (no money moves)',
    ]);
    expect(lines[5]).toMatch(/^plan\s+name\s+credits\/month\s+price\s+a credit costs\s+action$/);
    expect(lines.slice(7, 11)).toEqual([
      expect.stringMatching(/^free\s+Forever Free\s+30\s+free\s+\$0\.00\s+current plan$/),
      expect.stringMatching(
        /^smb\s+SMB\s+250\s+\$49\.00\/month\s+\$0\.196\s+upgrade: quarry billing upgrade smb$/,
      ),
      expect.stringMatching(/^enterprise\s+Enterprise\s+2,000\s+\$199\.00\/month\s+\$0\.0995\s+upgrade:/),
      expect.stringMatching(
        /^payg\s+Pay as you Go\s+pay per credit\s+\$0\.50\/credit\s+\$0\.50\s+add a card: quarry billing upgrade payg$/,
      ),
    ]);
    const json = await quarry(['billing', 'status', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(billingAnswer('free'));
  });

  it('status of a paid plan past due, with a pending change and a budget', async () => {
    server = await startTestServer((req) => ({
      status: 200,
      body: billingAnswer(req.url === '/v1/billing' ? 'payg' : 'free', {
        status: 'past_due',
        grace_ends_at: '2026-12-14T00:00:00.000Z',
        pending_plan: 'free',
        pending_at: '2026-12-31T23:59:59.000Z',
        invoices: [
          {
            period: '2026-10',
            status: 'paid',
            invoice_id: 'in_1',
            amount_cents: 350,
            amount_usd: 3.5,
            lines: [{ description: '7 credits', amount_cents: 350, analytic: 'sales-by-region' }],
          },
        ],
      }),
    }));
    const run = await quarry(['billing', 'status'], { env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Plan: Pay as you Go (pay per credit credits a month, $0.50/credit)');
    expect(run.stdout).toContain(
      'Status: past due: the last payment failed; the account falls back to the Free plan at 2026-12-14T00:00:00.000Z',
    );
    expect(run.stdout).toContain('Card on file: yes');
    expect(run.stdout).toContain('Pending: changes to Forever Free at 2026-12-31T23:59:59.000Z');
    expect(run.stdout).toContain('Budget: $1.50 spent of $100.00 this month, $98.50 left');
    expect(run.stdout).toContain('Invoice 2026-10: $3.50, paid');
  });

  it('upgrade prints the checkout URL, then waits (progress on a terminal) until the plan changed', async () => {
    server = await startTestServer(billingGateway({ plan: 'free', arriveAt: 2 }));
    const run = await quarry(['billing', 'upgrade', 'smb'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
      tty: true,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      'Open this page to pay for smb:\nhttp://127.0.0.1:8787/billing/sandbox/checkout/cs_1\nPaid: you are on SMB.\n',
    );
    expect(run.stderr).toContain('Waiting up to 600 s for the payment');
    expect(run.stderr).toContain('waiting for the payment (plan free, 0 s of 600 s)');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1/billing/checkout',
      'GET /v1/billing',
      'GET /v1/billing',
    ]);
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({ plan: 'smb' });
  });

  it('upgrade to payg waits for the card too, and --json prints the checkout then the billing', async () => {
    const state = { plan: 'free', arriveAt: 1, card: false };
    const gateway = billingGateway(state);
    server = await startTestServer((req, i) => {
      // The plan arrives at once, the card on the next read.
      if (req.url === '/v1/billing' && state.plan === 'payg') state.card = true;
      return gateway(req, i);
    });
    const run = await quarry(['billing', 'upgrade', 'payg', '--json'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
    });
    expect(run.code, run.stderr).toBe(0);
    const [checkout, billing, rest] = run.stdout.split('\n');
    expect(JSON.parse(checkout ?? '')).toMatchObject({ id: 'cs_1', mode: 'setup' });
    expect(JSON.parse(billing ?? '')).toMatchObject({ plan: { id: 'payg' }, card_on_file: true });
    expect(rest).toBe('');
    expect(server.requestsTo('/v1/billing').length).toBe(3);
  });

  it('upgrade gives up after --timeout with a clear message and exit 1; --no-wait does not wait', async () => {
    server = await startTestServer(billingGateway({ plan: 'free', arriveAt: 1_000 }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const late = await quarry(['billing', 'upgrade', 'smb', '--timeout', '0.2'], { env });
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(
      'quarry: The plan is still Forever Free after 0.2 s: no payment for smb has arrived. Pay on http://127.0.0.1:8787/billing/sandbox/checkout/cs_1',
    );
    const quick = await quarry(['billing', 'upgrade', 'enterprise', '--no-wait'], { env });
    expect(quick.code, quick.stderr).toBe(0);
    expect(quick.stdout).toBe(
      'Open this page to pay for enterprise:\nhttp://127.0.0.1:8787/billing/sandbox/checkout/cs_1\n',
    );
    expect(server.requests.at(-1)?.url).toBe('/v1/billing/checkout');
    const bad = await quarry(['billing', 'upgrade', 'smb', '--timeout', 'soon'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--timeout takes a number of seconds');
  });

  it('upgrade on a gateway that takes no payments exits 1 with the reason; portal prints its URL', async () => {
    server = await startTestServer(billingGateway({ plan: 'free', arriveAt: 1, provider: 'none' }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const refused = await quarry(['billing', 'upgrade', 'smb'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('CONFLICT');
    expect(refused.stderr).toContain('This gateway takes no payments');
    const status = await quarry(['billing', 'status'], { env });
    expect(status.stdout).toContain('Payments: none; plans are set by the operator of this gateway.');
    expect(status.stdout).not.toContain('quarry billing upgrade');
    const noCustomer = await quarry(['billing', 'portal'], { env });
    expect(noCustomer.code).toBe(1);
    await server.close();
    server = await startTestServer(billingGateway({ plan: 'smb', arriveAt: 1 }));
    const portal = await quarry(['billing', 'portal'], { env: { ...env, QUARRY_URL: server.url } });
    expect(portal.code, portal.stderr).toBe(0);
    expect(portal.stdout).toBe('http://127.0.0.1:8787/billing/sandbox/portal/cus_1\n');
  });
});

/**
 * A gateway paying owners: the payout account is `state.status` until an onboarding link was
 * made, then complete on the `completeAt`-th account read after it (as the provider's webhook
 * would say).
 */
function payoutsGateway(state: {
  status: PayoutAccount['status'];
  completeAt: number;
  provider?: PayoutAccount['provider'];
}) {
  let links = 0;
  let reads = 0;
  const handler: TestHandler = (req) => {
    if (req.headers.authorization !== `Bearer ${KEY}`) return envelope(401, 'UNAUTHENTICATED');
    const provider = state.provider ?? 'sandbox';
    if (req.url === '/v1/owner/payouts/account') {
      if (links > 0 && ++reads >= state.completeAt) state.status = 'complete';
      return { status: 200, body: payoutAccountAnswer(state.status, { provider }) };
    }
    if (req.url === '/v1/owner/payouts') return { status: 200, body: payoutsAnswer() };
    if (req.url === '/v1/owner/payouts/onboarding' && req.method === 'POST') {
      if (provider === 'none')
        return envelope(409, 'CONFLICT', {
          details: [{ message: 'This gateway has no payment provider: the operator pays owners by hand.' }],
        });
      return {
        status: 200,
        body: { url: `http://127.0.0.1:8787/billing/sandbox/onboarding/acct_${++links}` },
      };
    }
    return envelope(404, 'NOT_FOUND');
  };
  return handler;
}

describe('payouts', () => {
  it('shows where payouts go, the minimum, the balance and each month with its reason and transfer', async () => {
    server = await startTestServer(payoutsGateway({ status: 'pending', completeAt: 1 }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const run = await quarry(['payouts'], { env });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'Payouts: setup pending (sandbox: no money moves); still needed: external account. Continue with `quarry payouts onboard`.',
      'Minimum payout: 10.00 USD; smaller amounts are held and carried to the next month.',
      'Balance: 0.00 USD held and carried',
    ]);
    expect(lines[4]).toMatch(/^period\s+status\s+reason\s+amount\s+transfer id$/);
    expect(lines[6]).toMatch(/^2026-10\s+paid\s+12\.54 USD\s+tr_sandbox_1a2b3c$/);
    expect(lines[7]).toMatch(
      /^2026-09\s+held\s+below the 10\.00 USD minimum: carried to next month\s+0\.00 USD$/,
    );
    expect(lines[8]).toMatch(/^2026-08\s+held\s+payouts not set up yet\s+0\.00 USD$/);

    const json = await quarry(['payouts', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual({ account: payoutAccountAnswer('pending'), ...payoutsAnswer() });
  });

  it('onboard prints the link, then waits (progress on a terminal) until the account is complete', async () => {
    server = await startTestServer(payoutsGateway({ status: 'not_started', completeAt: 2 }));
    const run = await quarry(['payouts', 'onboard'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
      tty: true,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      'Open this page to set up your payouts:\nhttp://127.0.0.1:8787/billing/sandbox/onboarding/acct_1\nPayouts: set up (sandbox: no money moves); payouts enabled.\n',
    );
    expect(run.stderr).toContain('waiting for the onboarding (not started, 0 s of 600 s)');
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1/owner/payouts/onboarding',
      'GET /v1/owner/payouts/account',
      'GET /v1/owner/payouts/account',
    ]);
  });

  it('onboard --json prints the link then the account; --no-wait does not wait; --timeout gives up with exit 1', async () => {
    server = await startTestServer(payoutsGateway({ status: 'pending', completeAt: 1 }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const run = await quarry(['payouts', 'onboard', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const [link, account, rest] = run.stdout.split('\n');
    expect(JSON.parse(link ?? '')).toEqual({
      url: 'http://127.0.0.1:8787/billing/sandbox/onboarding/acct_1',
    });
    expect(JSON.parse(account ?? '')).toMatchObject({ status: 'complete', payouts_enabled: true });
    expect(rest).toBe('');

    await server.close();
    server = await startTestServer(payoutsGateway({ status: 'pending', completeAt: 1_000 }));
    const env2 = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const quick = await quarry(['payouts', 'onboard', '--no-wait'], { env: env2 });
    expect(quick.code).toBe(0);
    expect(quick.stdout).toBe(
      'Open this page to set up your payouts:\nhttp://127.0.0.1:8787/billing/sandbox/onboarding/acct_1\n',
    );
    expect(server.requests.at(-1)?.url).toBe('/v1/owner/payouts/onboarding');
    const late = await quarry(['payouts', 'onboard', '--timeout', '0.2'], { env: env2 });
    expect(late.code).toBe(1);
    expect(late.stderr).toContain(
      'quarry: Payouts are still pending after 0.2 s. Finish on http://127.0.0.1:8787/billing/sandbox/onboarding/acct_2',
    );
    const bad = await quarry(['payouts', 'onboard', '--timeout', 'soon'], { env: env2 });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--timeout takes a number of seconds above 0, got "soon"');
  });

  it('statements of a closed month show its adjustments and its payout with status and transfer', async () => {
    const amounts = {
      calls: 64,
      credits: 64,
      owner_share: 51.2,
      platform_share: 12.8,
      value_usd: 12.544,
      owner_share_usd: 10.0352,
      platform_share_usd: 2.5088,
    };
    server = await startTestServer((req) => {
      if (req.headers.authorization !== `Bearer ${KEY}`) return envelope(401, 'UNAUTHENTICATED');
      return {
        status: 200,
        body: {
          period: '2026-10',
          closed_at: '2026-11-01T00:00:00.000Z',
          analytics: [{ name: 'sales', ...amounts }],
          totals: amounts,
          by_day: [],
          adjustments: [
            {
              analytic: 'sales',
              usage_period: '2026-09',
              reason: 'refund',
              owner_micro_usd: -250_000,
              owner_usd: -0.25,
              platform_micro_usd: -62_500,
            },
          ],
          payout: {
            carried_in_micro_usd: 3_794_000,
            earned_micro_usd: 9_000_000,
            adjusted_micro_usd: 250_000,
            payout_cents: 1_254,
            payout_usd: 12.54,
            carried_out_micro_usd: 4_000,
            status: 'paid',
            reason: null,
            transfer_id: 'tr_sandbox_1a2b3c',
          },
        },
      };
    });
    const run = await quarry(['statements', '--period', '2026-10'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
    });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^refund\s+2026-09\s+sales\s+-0\.25\s+-0\.0625$/));
    expect(lines).toContain('Payout: 12.54 USD, paid, transfer tr_sandbox_1a2b3c');
    expect(lines).toContain('  earned 9.00, adjusted -0.25, carried in 3.794, carried out 0.004 USD');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(100);
  });

  it('statements cut a long analytic name to fit 100 columns; --wide and --json show it whole', async () => {
    // The longest name an analytic may have: 64 characters.
    const name = `quarterly-revenue-by-region-and-product-line-${'x'.repeat(19)}`;
    const amounts = {
      calls: 123_456_789,
      credits: 987_654_321,
      calls_by_origin: { paid: 123_456_000, free: 789, owner: 0 },
      value_usd: 1_234_567.891234,
      owner_share_usd: 987_654.3212,
      platform_share_usd: 246_913.57,
    };
    const statement = {
      period: '2026-11',
      closed_at: null,
      analytics: [{ name, ...amounts }],
      totals: amounts,
      by_day: [],
      adjustments: [
        {
          analytic: name,
          usage_period: '2026-09',
          reason: 'dispute',
          owner_micro_usd: -123_456_789_000,
          owner_usd: -123_456.789,
          platform_micro_usd: -30_864_197_250,
        },
      ],
      payout: null,
    };
    server = await startTestServer(() => ({ status: 200, body: statement }));
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const run = await quarry(['statements'], { env });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n');
    expect(Math.max(...lines.map((line) => [...line].length)), run.stdout).toBeLessThanOrEqual(100);
    expect(lines).toContainEqual(expect.stringMatching(/^quarterly-revenue-\S*… +123456789 /));
    expect(lines).toContainEqual(expect.stringMatching(/^total +123456789 /));
    // The adjustments table cuts the same name to fit as well.
    expect(lines).toContainEqual(
      expect.stringMatching(/^dispute +2026-09 +quarterly-revenue-\S*… +-123456\.789/),
    );
    const wide = await quarry(['statements', '--wide'], { env });
    expect(wide.stdout).toContain(name);
    expect(wide.stdout).toContain('platform share usd');
    // The calls by origin the short table shows are in the wide one too.
    expect(wide.stdout).toMatch(/calls by origin paid +calls by origin free +calls by origin owner/);
    const json = await quarry(['statements', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(statement);
  });

  it('on a gateway whose operator pays by hand: says so, and onboard exits 1 with the reason', async () => {
    server = await startTestServer(
      payoutsGateway({ status: 'not_started', completeAt: 1, provider: 'none' }),
    );
    const env = { QUARRY_URL: server.url, QUARRY_API_KEY: KEY };
    const status = await quarry(['payouts'], { env });
    expect(status.code).toBe(0);
    expect(status.stdout.split('\n').slice(0, 2)).toEqual([
      'Payouts: paid by the operator of this gateway (no payment provider): nothing to set up.',
      'Balance: 0.00 USD held and carried',
    ]);
    const refused = await quarry(['payouts', 'onboard'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the operator pays owners by hand');
    expect(refused.stdout).toBe('');
  });
});

describe('usage errors and help', () => {
  it('answers --help for every command and subcommand', async () => {
    for (const argv of [
      ['--help'],
      ['login', '--help'],
      ['logout', '--help'],
      ['query', '--help'],
      ['keys', '--help'],
      ['keys', 'create', '--help'],
      ['keys', 'list', '-h'],
      ['keys', 'revoke', '--help'],
      ['analytics', '--help'],
      ['analytics', 'deploy', '--help'],
      ['analytics', 'list', '--help'],
      ['analytics', 'purge-cache', '--help'],
      ['usage', '--help'],
      ['account', '--help'],
      ['account', 'password', '--help'],
      ['statements', '--help'],
      ['billing', '--help'],
      ['billing', 'status', '--help'],
      ['billing', 'upgrade', '--help'],
      ['billing', 'portal', '--help'],
      ['payouts', '--help'],
      ['payouts', 'onboard', '--help'],
    ]) {
      const run = await quarry(argv);
      expect(run.code, argv.join(' ')).toBe(0);
      const name = argv.filter((a) => !a.startsWith('-')).join(' ');
      expect(run.stdout, argv.join(' ')).toMatch(new RegExp(`^Usage: quarry ${name ? `${name}\\b` : ''}`));
    }
  });

  it('exits 2 on unknown commands, flags and missing arguments', async () => {
    for (const argv of [
      [],
      ['frobnicate'],
      ['keys'],
      ['keys', 'rotate'],
      ['keys', 'revoke'],
      ['usage', '--period', '2026-13'],
      ['query', 'x', '--bogus'],
      ['billing'],
      ['billing', 'upgrade'],
      ['payouts', 'refund'],
      ['payouts', 'onboard', 'now'],
    ]) {
      const run = await quarry(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr.length, argv.join(' ')).toBeGreaterThan(0);
    }
  });
});

describe('403s', () => {
  /** A gateway refusing connections to a private host, and keys without the owner scope. */
  const refusing: TestHandler = (req) => {
    const forbidden = (message: string, details: unknown[] = []) => ({
      status: 403,
      body: { error: { code: 'FORBIDDEN', message, request_id: 'req_test', details } },
    });
    if (req.headers.authorization === 'Bearer qry_live_query_only')
      return forbidden('This key lacks the "owner" scope.', [
        { field: 'scope', message: 'this route needs the "owner" scope' },
      ]);
    return forbidden(
      'This connection is not allowed: 10.0.0.5 is a private network address; the operator has not allowed private networks (QUARRY_ALLOW_PRIVATE_NETWORKS).',
      [{ field: 'config.host', message: '10.0.0.5 is a private network address' }],
    );
  };

  it("prints the gateway's reason for a connection refused by network policy, exit 1, without blaming the key", async () => {
    server = await startTestServer(refusing);
    const run = await quarry(['connections', 'add', 'shop', '--type', 'postgres', '--set', 'host=10.0.0.5'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('private network address');
    expect(run.stderr).toContain('config.host');
    expect(run.stderr).not.toContain('scope');
  });

  it('still says a key lacking a scope needs another key, exit 3', async () => {
    server = await startTestServer(refusing);
    const run = await quarry(['connections', 'list'], {
      env: { QUARRY_URL: server.url, QUARRY_API_KEY: 'qry_live_query_only' },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('lacks the "owner" scope');
    expect(run.stderr).toContain('The key lacks a scope this command needs');
  });
});

describe('agent tools', () => {
  const tool = {
    name: 'sales-by-region',
    title: 'Revenue by region',
    owner_id: 'acc_2',
    owned: false,
    listed: true,
    price: 3,
    scheduled_price: null,
    price_effective_at: null,
  };
  let limit: number | null = null;
  const tools: TestHandler = (req) => {
    if (req.url === '/v1/account/tools' && req.method === 'GET')
      return { status: 200, body: { items: [tool] } };
    if (req.url === '/v1/account/tools' && req.method === 'POST') return { status: 201, body: { tool } };
    if (req.url === '/v1/account/tools/sales-by-region' && req.method === 'DELETE') return { status: 204 };
    if (req.url === '/v1/account/mcp' && req.method === 'PUT') {
      limit = (JSON.parse(req.body) as { max_credits: number | null }).max_credits;
      return { status: 200, body: { mcp: { max_credits: limit } } };
    }
    if (req.url === '/v1/account/mcp') return { status: 200, body: { mcp: { max_credits: limit } } };
    return envelope(404, 'NOT_FOUND');
  };

  it('lists, adds and removes tools and sets the default price limit', async () => {
    server = await startTestServer(tools);
    const env = { env: { QUARRY_URL: server.url, QUARRY_API_KEY: KEY } };
    const list = await quarry(['tools', 'list'], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^name\s+title\s+price\s+yours/);
    expect(list.stdout).toContain('sales-by-region');
    const add = await quarry(['tools', 'add', 'sales-by-region'], env);
    expect(add.stdout).toContain("sales-by-region is one of your agent's tools (3 credits a call)");
    expect(JSON.parse(server.requests.at(-1)?.body ?? '')).toEqual({ source: 'sales-by-region' });
    expect((await quarry(['tools', 'remove', 'sales-by-region'], env)).code).toBe(0);
    expect((await quarry(['tools', 'limit'], env)).stdout).toContain('No default price limit');
    expect((await quarry(['tools', 'limit', '5'], env)).stdout).toContain('at most 5 credits');
    expect(limit).toBe(5);
    expect((await quarry(['tools', 'limit', 'none'], env)).stdout).toContain('No default price limit');
    const bad = await quarry(['tools', 'limit', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('whole number of credits');
  });
});

describe('quarry account password on a terminal', () => {
  it('asks twice in raw mode, echoes nothing, and sends the password', async () => {
    const sent: unknown[] = [];
    server = await startTestServer((req) => {
      if (req.headers.authorization !== `Bearer ${KEY}`) return envelope(401, 'UNAUTHENTICATED');
      if (req.method === 'PUT' && req.url === '/v1/account/password') {
        sent.push(JSON.parse(req.body));
        return { status: 204 };
      }
      return {
        status: 200,
        body: { account: { id: 'acc_1', email: 'ada@example.com', name: 'Ada', plan: 'free' } },
      };
    });
    const modes: boolean[] = [];
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: { write: (t: string) => (stdout += t), isTTY: true },
      stderr: { write: (t: string) => (stderr += t), isTTY: true },
      stdin: {
        isTTY: true,
        setRawMode: (mode: boolean) => modes.push(mode),
        async *[Symbol.asyncIterator]() {
          // Typed key by key, with a typo taken back (DEL), then the confirmation.
          for (const key of ['s', 'e', 'c', 'x', '\u007f', 'r', 'e', 't', ' ', 'p', 'w', 'd', '!', '\r'])
            yield key;
          yield 'secret pwd!\r';
        },
      },
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
      cwd: home,
    };
    const code = await runCli(['account', 'password'], io);
    expect(code, stderr).toBe(0);
    expect(sent).toEqual([{ password: 'secret pwd!' }]);
    expect(modes).toEqual([true, false]);
    expect(stderr).toBe('New console password: \nAgain: \n');
    expect(stdout).toContain('ada@example.com');
  });

  it('changes nothing when the two entries differ', async () => {
    let calls = 0;
    server = await startTestServer(() => {
      calls++;
      return { status: 204 };
    });
    const io: CliIo = {
      stdout: { write: () => true },
      stderr: { write: () => true },
      stdin: {
        isTTY: true,
        setRawMode: () => undefined,
        async *[Symbol.asyncIterator]() {
          yield 'first one!!\rsecond one!\r';
        },
      },
      env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), QUARRY_URL: server.url, QUARRY_API_KEY: KEY },
      cwd: home,
    };
    expect(await runCli(['account', 'password'], io)).toBe(2);
    expect(calls).toBe(0);
  });
});
