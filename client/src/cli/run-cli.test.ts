// The CLI in-process (runCli with its own streams and environment) against a local server
// playing the gateway: login storage and its file modes, where the URL and key come from,
// query output, analytics deploy reporting, cache purges, --help everywhere, error output and
// exit codes.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  envelope,
  queryAnswer,
  startTestServer,
  type TestHandler,
  type TestServer,
} from '../testing/test-server.js';
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
      ['statements', '--help'],
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
    ]) {
      const run = await quarry(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.stderr.length, argv.join(' ')).toBeGreaterThan(0);
    }
  });
});
