// Scenario c: the warehouse's own limit. `concurrency` workers each run the analytic's SQL on a
// pg Pool in a closed loop for a fixed time, as the gateway's callers would, with no HTTP at all.
import type pg from 'pg';
import { type MeasuredLoad, startWindow } from './load-window.js';

/** The query every worker repeats. */
export interface PgQuery {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** Runs one window: `concurrency` workers for `seconds`. */
export async function runPgWindow(
  pool: pg.Pool,
  query: PgQuery,
  options: { readonly concurrency: number; readonly seconds: number },
): Promise<MeasuredLoad> {
  const recorder = startWindow();
  const deadline = performance.now() + options.seconds * 1000;
  const config = { text: query.text, values: [...query.values] };
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        await pool.query(config);
        recorder.record(performance.now() - started);
      } catch {
        recorder.fail();
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return recorder.finish();
}
