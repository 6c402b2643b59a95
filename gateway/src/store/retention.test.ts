// Retention (issue 37, finding 6): change-log rows past QUARRY_CHANGE_LOG_RETENTION_HOURS and
// console sessions ended (expired or signed out) more than QUARRY_SESSION_RETENTION_DAYS ago are
// deleted, on both store backends; live sessions, recent rows and the newest change-log row stay;
// a second run deletes nothing more. And a gateway runs it on its own every
// QUARRY_RETENTION_INTERVAL_MS.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { createTestGateway } from '../testing/test-gateway.js';
import { migrate } from './migrate.js';
import { pruneStore } from './retention.js';
import type { SqlClient } from './sql-client.js';
import { storeBackends } from './testing/store-backends.js';

const backends = await storeBackends('retention', 'quarry_retention');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function seed(sql: SqlClient, now: number) {
  const account = `acct_${randomBytes(6).toString('hex')}`;
  await sql.query('INSERT INTO accounts (id, email, name) VALUES ($1, $2, $3)', [
    account,
    `${account}@example.com`,
    'Retention',
  ]);
  const at = (ms: number) => new Date(now - ms);
  for (const [ref, age] of [
    ['old-1', 3 * DAY],
    ['old-2', 2 * HOUR],
    ['recent', 10 * 60_000],
  ] as const) {
    await sql.query('INSERT INTO change_log (kind, ref, at) VALUES ($1, $2, $3)', ['key', ref, at(age)]);
  }
  const session = async (id: string, expiresAgo: number, revokedAgo?: number) =>
    sql.query(
      'INSERT INTO console_sessions (id, account_id, digest, created_at, expires_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [
        id,
        account,
        randomBytes(32),
        at(60 * DAY),
        at(expiresAgo),
        revokedAgo === undefined ? null : at(revokedAgo),
      ],
    );
  await session('live', -DAY);
  await session('expired-long-ago', 40 * DAY);
  await session('expired-lately', DAY);
  await session('signed-out-long-ago', -DAY, 31 * DAY);
  await session('signed-out-lately', -DAY, DAY);
  // Version pins (migration 024): one expired, one live; pinned calls 31 days and 1 day old.
  const analytic = `ana_${account}`;
  await sql.query('INSERT INTO analytic_names (name, account_id) VALUES ($1, $2)', [analytic, account]);
  await sql.query(
    `INSERT INTO analytics (id, account_id, name, current_version, visibility) VALUES ($1, $2, $1, 1, 'public')`,
    [analytic, account],
  );
  for (const [ref, expires] of [
    ['expired', at(HOUR)],
    ['live', at(-HOUR)],
  ] as const) {
    await sql.query(
      'INSERT INTO analytic_version_pins (analytic_id, version, ref, account_id, expires_at) VALUES ($1, 1, $2, $3, $4)',
      [analytic, ref, account, expires],
    );
  }
  await sql.query(
    'INSERT INTO analytic_version_calls (analytic_id, version, account_id, last_called_at) VALUES ($1, 1, $2, $3), ($1, 2, $2, $4)',
    [analytic, account, at(31 * DAY), at(DAY)],
  );
}
const pins = async (sql: SqlClient) =>
  (await sql.query<{ ref: string }>('SELECT ref FROM analytic_version_pins ORDER BY ref')).map((r) => r.ref);
const pinnedCalls = async (sql: SqlClient) =>
  (await sql.query<{ version: number }>('SELECT version FROM analytic_version_calls ORDER BY version')).map(
    (r) => r.version,
  );

const refs = async (sql: SqlClient) =>
  (await sql.query<{ ref: string }>('SELECT ref FROM change_log ORDER BY id')).map((r) => r.ref);
const sessions = async (sql: SqlClient) =>
  (await sql.query<{ id: string }>('SELECT id FROM console_sessions ORDER BY id')).map((r) => r.id);

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`retention on ${backend.name}`, () => {
    let sql: SqlClient;
    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
    }, 120_000);
    afterAll(() => backend.teardown());

    it('deletes what the policy no longer keeps, and only that', async () => {
      const now = Date.now();
      await seed(sql, now);
      const pruned = await pruneStore(sql, { changeLogMs: HOUR, sessionsMs: 30 * DAY }, now);
      expect(pruned).toEqual({ changeLog: 2, sessions: 2, versionPins: 2 });
      expect(await refs(sql)).toEqual(['recent']);
      expect(await sessions(sql)).toEqual(['expired-lately', 'live', 'signed-out-lately']);
      expect(await pins(sql)).toEqual(['live']);
      expect(await pinnedCalls(sql)).toEqual([2]);
      expect(await pruneStore(sql, { changeLogMs: HOUR, sessionsMs: 30 * DAY }, now)).toEqual({
        changeLog: 0,
        sessions: 0,
        versionPins: 0,
      });
      // A zero session retention deletes every ended session; the newest change-log row stays
      // even when it is past the retention (a starting instance begins its feed there).
      expect(await pruneStore(sql, { changeLogMs: HOUR, sessionsMs: 0 }, now + 2 * HOUR)).toEqual({
        changeLog: 0,
        sessions: 2,
        versionPins: 1,
      });
      expect(await pins(sql)).toEqual([]);
      expect(await sessions(sql)).toEqual(['live']);
      expect(await refs(sql)).toEqual(['recent']);
    });
  });
}

describe('retention settings', () => {
  it('default to a day of change log and 30 days of ended sessions, hourly; bad values refuse to start', () => {
    expect(loadConfig({}).retention).toEqual({ changeLogMs: DAY, sessionsMs: 30 * DAY, intervalMs: HOUR });
    expect(
      loadConfig({
        QUARRY_CHANGE_LOG_RETENTION_HOURS: '2',
        QUARRY_SESSION_RETENTION_DAYS: '0',
        QUARRY_RETENTION_INTERVAL_MS: '60000',
      }).retention,
    ).toEqual({ changeLogMs: 2 * HOUR, sessionsMs: 0, intervalMs: 60_000 });
    expect(() => loadConfig({ QUARRY_CHANGE_LOG_RETENTION_HOURS: '0' })).toThrow(
      /QUARRY_CHANGE_LOG_RETENTION_HOURS/,
    );
    expect(() => loadConfig({ QUARRY_SESSION_RETENTION_DAYS: '-1' })).toThrow(
      /QUARRY_SESSION_RETENTION_DAYS/,
    );
  });

  // The operator reads what is pruned in docs/deploy.md's "Retention": every retention setting the
  // gateway reads is there (the ledger's months were missing, and the section said usage events
  // were never pruned while closed months past QUARRY_LEDGER_RETENTION_MONTHS are dropped).
  it("are each in docs/deploy.md's Retention section, the ledger's months included", async () => {
    const source = await readFile(new URL('../config.ts', import.meta.url), 'utf8');
    const settings = [...new Set(source.match(/\bQUARRY_\w*RETENTION\w*\b/g))];
    expect(settings).toEqual(expect.arrayContaining(['QUARRY_LEDGER_RETENTION_MONTHS']));
    const guide = await readFile(new URL('../../../docs/deploy.md', import.meta.url), 'utf8');
    const from = guide.indexOf('## 8. Retention');
    expect(from).toBeGreaterThan(-1);
    const section = guide.slice(from, guide.indexOf('\n## ', from + 1));
    expect(settings.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
    for (const table of ['change_log', 'console_sessions', 'usage_events']) expect(section).toContain(table);
    expect(section).not.toMatch(/usage events[^.]*never pruned/i);
  });

  it('a gateway prunes on its own timer', async () => {
    const tg = await createTestGateway({
      QUARRY_RETENTION_INTERVAL_MS: '1000',
      QUARRY_SESSION_RETENTION_DAYS: '0',
    });
    try {
      // A browser sign-up opens a console session; signing out ends it: deleted at the next run.
      const origin = 'http://localhost';
      const res = await tg.call('POST', '/v1/accounts', {
        body: {
          email: `retention-${Date.now()}@example.com`,
          name: 'Console',
          password: 'a long enough password',
        },
        headers: { origin },
      });
      expect(res.status, res.text).toBe(201);
      const cookie = res.headers.get('set-cookie')?.split(';')[0] ?? '';
      const csrf = (await tg.call('GET', '/v1/session', { headers: { cookie } })).json.csrf_token;
      const out = await tg.call('DELETE', '/v1/session', {
        headers: { cookie, origin, 'x-csrf-token': csrf },
      });
      expect(out.status).toBe(204);
      const deadline = Date.now() + 15_000;
      let line: Record<string, unknown> | undefined;
      while (line === undefined && Date.now() < deadline) {
        line = tg.logs
          .records()
          .find((r) => r.msg === 'retention: pruned' && Number(r.console_sessions) >= 1);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(line).toBeDefined();
    } finally {
      await tg.close();
    }
  });
});
