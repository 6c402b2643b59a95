// The change feed against an in-memory change log that, like PostgreSQL, can hand out an id
// before the row commits: a later id may become visible first.
import { describe, expect, it } from 'vitest';
import { createChangeFeed } from './change-feed.js';
import type { ChangeEvent, ChangeLogRepository } from './change-log-repository.js';

function createMemoryChangeLog() {
  const rows: (ChangeEvent & { visible: boolean })[] = [];
  const queries: { afterId: number; alsoIds: readonly number[] }[] = [];
  const repository: ChangeLogRepository = {
    async append(kind, ref) {
      rows.push({ id: rows.length + 1, kind, ref, at: new Date(), visible: true });
    },
    async since(afterId, options = {}) {
      const alsoIds = options.alsoIds ?? [];
      queries.push({ afterId, alsoIds });
      return rows
        .filter((row) => row.visible && (row.id > afterId || alsoIds.includes(row.id)))
        .slice(0, options.limit ?? 1000)
        .map(({ visible: _, ...event }) => event);
    },
    async latestId() {
      return rows.filter((row) => row.visible).reduce((max, row) => Math.max(max, row.id), 0);
    },
  };
  return {
    repository,
    queries,
    /** Takes an id now; the row becomes visible only when `commit` is called. */
    begin(kind: ChangeEvent['kind'], ref: string) {
      const row = { id: rows.length + 1, kind, ref, at: new Date(), visible: false };
      rows.push(row);
      return () => {
        row.visible = true;
      };
    },
  };
}

describe('change feed', () => {
  it('starts after the existing changes and delivers each new one once', async () => {
    const log = createMemoryChangeLog();
    await log.repository.append('key', 'key_old');
    const seen: string[] = [];
    const feed = await createChangeFeed({
      changes: log.repository,
      onChange: (e) => seen.push(e.ref),
      intervalMs: 60_000,
    });
    await log.repository.append('key', 'key_a');
    await log.repository.append('analytic', 'sales');
    await feed.poll();
    await feed.poll();
    expect(seen).toEqual(['key_a', 'sales']);
    expect(feed.lastSeenId).toBe(3);
    await feed.stop();
  });

  it('still delivers a change whose id was overtaken by a later commit', async () => {
    const log = createMemoryChangeLog();
    const seen: string[] = [];
    const feed = await createChangeFeed({
      changes: log.repository,
      onChange: (e) => seen.push(e.ref),
      intervalMs: 60_000,
    });
    const commitSlow = log.begin('key', 'key_slow'); // id 1, not yet committed
    await log.repository.append('key', 'key_fast'); // id 2, committed
    await feed.poll();
    expect(seen).toEqual(['key_fast']);
    commitSlow();
    await feed.poll();
    expect(seen).toEqual(['key_fast', 'key_slow']);
    await feed.poll();
    expect(seen).toEqual(['key_fast', 'key_slow']);
    await feed.stop();
  });

  it('stops asking for an id that never commits after the gap timeout', async () => {
    const log = createMemoryChangeLog();
    const feed = await createChangeFeed({
      changes: log.repository,
      onChange: () => {},
      intervalMs: 60_000,
      gapTimeoutMs: 0,
    });
    log.begin('key', 'rolled_back'); // id 1 never becomes visible
    await log.repository.append('key', 'key_b');
    await feed.poll();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await feed.poll();
    expect(log.queries.at(-1)?.alsoIds).toEqual([]);
    await feed.stop();
  });

  it('keeps running when a callback throws', async () => {
    const log = createMemoryChangeLog();
    const errors: unknown[] = [];
    const seen: string[] = [];
    const feed = await createChangeFeed({
      changes: log.repository,
      onChange: (e) => {
        if (e.ref === 'bad') throw new Error('handler failed');
        seen.push(e.ref);
      },
      onError: (error) => errors.push(error),
      intervalMs: 60_000,
    });
    await log.repository.append('key', 'bad');
    await log.repository.append('key', 'good');
    await feed.poll();
    expect(seen).toEqual(['good']);
    expect(errors).toHaveLength(1);
    await feed.stop();
  });
});
