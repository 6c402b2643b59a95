// What a set of PostgreSQL sessions wait on under load, by sampling pg_stat_activity: every
// `intervalMs` it reads the sessions named `applicationName` that are running a statement, and
// counts them by wait event (`Lock:transactionid` and `Lock:tuple` are row locks: one transaction
// waiting for another's update of the same row to commit; `LWLock:WALWrite` and `IO:WALSync` are
// commits waiting for the WAL; `running` is on CPU or runnable). The mean count per sample times
// the window's seconds is the session-seconds spent in each state, so a row lock that serialises
// the writers shows as a large `Lock` share. Which row is not known: an upsert (`INSERT … ON
// CONFLICT DO UPDATE`, how counters and rollups are added to) that meets a row another
// transaction updated waits on that transaction's id, with no tuple lock naming the table.
import pg from 'pg';

/** What the samples of one window saw. */
export interface WaitProfile {
  readonly samples: number;
  readonly intervalMs: number;
  /** Mean sessions running a statement per sample. */
  readonly activeMean: number;
  /** Mean sessions per sample in each state (`Lock:transactionid`, `running`, …). */
  readonly byEvent: Readonly<Record<string, number>>;
  /** Mean sessions per sample waiting on any heavyweight lock (`Lock:*`). */
  readonly lockMean: number;
  /** Session-seconds spent waiting on locks over the window (lockMean × seconds). */
  readonly lockSeconds: number;
}

/** A running sampler; `stop()` ends it and summarises the window. */
export interface WaitSampler {
  stop(): Promise<WaitProfile>;
}

const SAMPLE_SQL = `
  SELECT coalesce(a.wait_event_type || ':' || a.wait_event, 'running') AS event
    FROM pg_stat_activity a
   WHERE a.application_name = $1 AND a.state = 'active' AND a.pid <> pg_backend_pid()`;

/** Starts sampling the sessions named `applicationName` on the server at `pgUrl`. */
export async function startWaitSampler(
  pgUrl: string,
  applicationName: string,
  intervalMs = 20,
): Promise<WaitSampler> {
  const client = new pg.Client({ connectionString: pgUrl, application_name: 'quarry_bench_wait_sampler' });
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  let active = 0;
  let running = true;
  const started = performance.now();
  const loop = (async () => {
    while (running) {
      const next = performance.now() + intervalMs;
      const { rows } = await client.query<{ event: string }>(SAMPLE_SQL, [applicationName]);
      samples++;
      active += rows.length;
      for (const row of rows) {
        counts.set(row.event, (counts.get(row.event) ?? 0) + 1);
      }
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      const seconds = (performance.now() - started) / 1000;
      const per = (n: number) => (samples === 0 ? 0 : n / samples);
      const byEvent = Object.fromEntries(
        [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([event, n]) => [event, per(n)]),
      );
      const lockMean = [...counts.entries()]
        .filter(([event]) => event.startsWith('Lock:'))
        .reduce((sum, [, n]) => sum + per(n), 0);
      return {
        samples,
        intervalMs,
        activeMean: per(active),
        byEvent,
        lockMean,
        lockSeconds: lockMean * seconds,
      };
    },
  };
}
