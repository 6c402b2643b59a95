// Scenario e: `calls` identical requests for an answer nobody has asked for yet, all in flight at
// once, and the number of times the warehouse really ran the query. The analytic's SQL calls
// pg_notify on a channel this probe LISTENs on; a notification is delivered once per committed
// run, so the count is the warehouse's, not the gateway's own claim.
import pg from 'pg';

/** What the probe saw. */
export interface CoalesceResult {
  readonly calls: number;
  /** Query executions the warehouse committed for those calls. */
  readonly warehouseQueries: number;
  /** HTTP status → count. */
  readonly statuses: Readonly<Record<string, number>>;
  /** X-Cache header value (or "none") → count, over the 200 answers. */
  readonly xCache: Readonly<Record<string, number>>;
  readonly seconds: number;
}

export interface CoalesceOptions {
  readonly pgUrl: string;
  readonly channel: string;
  readonly baseUrl: string;
  readonly key: string;
  readonly source: string;
  readonly calls: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** Fires the calls together (each on its own connection) and counts the warehouse's runs. */
export async function probeCoalescing(options: CoalesceOptions): Promise<CoalesceResult> {
  const listener = new pg.Client({ connectionString: options.pgUrl });
  listener.on('error', () => {});
  await listener.connect();
  let notifications = 0;
  listener.on('notification', (message) => {
    if (message.channel === options.channel) notifications++;
  });
  try {
    await listener.query(`LISTEN ${options.channel}`);
    // A value no earlier call used: the first of these calls is a cold miss.
    const body = JSON.stringify({
      source: options.source,
      params: { run: Math.floor(Math.random() * 2_000_000_000) },
    });
    const statuses: Record<string, number> = {};
    const xCache: Record<string, number> = {};
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.calls }, async () => {
        try {
          const response = await fetch(`${options.baseUrl}/v1/query`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${options.key}` },
            body,
            signal: AbortSignal.timeout(60_000),
          });
          await response.arrayBuffer();
          bump(statuses, String(response.status));
          if (response.status === 200) bump(xCache, response.headers.get('x-cache') ?? 'none');
        } catch {
          bump(statuses, 'error');
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // Notifications travel on their own connection: give the last ones time to arrive.
    await sleep(500);
    return { calls: options.calls, warehouseQueries: notifications, statuses, xCache, seconds };
  } finally {
    await listener.end();
  }
}
