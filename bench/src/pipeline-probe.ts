// What pipelining a warehouse session would save (issue 35's cheap call), measured before anyone
// builds it. Not a test; run it by hand:
//   npx tsx bench/src/pipeline-probe.ts [seconds] [callers]
// The cheap call's query (`SELECT id, name, score FROM kv WHERE id = $1`, a keyed lookup in a
// 10,000-row table) is run by `callers` concurrent loops (default 64) in two ways, in turns of
// `seconds` (default 5), three rounds:
// - `one at a time`: a pool of 7 pg Clients (what the gateway holds at 64 connections), each
//   session sending one query and waiting for its answer before the next, as the Postgres
//   connector does today (named statement, Bind/Describe/Execute/Sync in one write);
// - `raw, one at a time`: the raw sessions below on a pool of 7, one query at a time each: the
//   protocol client alone, without pipelining;
// - `pipelined`: N raw sessions speaking the extended protocol through pg-protocol, each writing
//   every query queued in one turn of the event loop in one write (Bind/Describe/Execute/Sync per
//   query), and matching the answers to the queries in order, one ReadyForQuery each.
// It prints queries a second, this process's CPU µs per query (user + system, kernel included)
// and the PostgreSQL backends' (from /proc, by application_name). Only the lookup runs: no
// deadline, cancellation or breaker, in either mode. A fresh schema in QUARRY_TEST_PG_URL
// (default postgres://postgres@127.0.0.1:5432/test), dropped at the end.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import pg from 'pg';
import { parse, serialize } from 'pg-protocol';
import type { BackendMessage, DatabaseError, DataRowMessage } from 'pg-protocol/dist/messages.js';
import { sessionsCpu } from './bench-world.js';
import { median } from './latency-stats.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const seconds = Number(process.argv[2] ?? 5);
const callers = Number(process.argv[3] ?? 64);
const ROWS = 10_000;

type Lookup = (id: number) => Promise<unknown[][]>;

interface Mode {
  readonly name: string;
  readonly lookup: Lookup;
  readonly close: () => Promise<void>;
}

/** A lookup over `sessions` that lends each to one query at a time; the others wait in turn. */
function onePerSession<S>(
  sessions: readonly S[],
  run: (session: S, id: number) => Promise<unknown[][]>,
): Lookup {
  const idle = [...sessions];
  const waiting: ((session: S) => void)[] = [];
  return async (id) => {
    const session = idle.pop() ?? (await new Promise<S>((resolve) => waiting.push(resolve)));
    try {
      return await run(session, id);
    } finally {
      const next = waiting.shift();
      if (next !== undefined) next(session);
      else idle.push(session);
    }
  };
}

/** Today's way: a pool of pg Clients, one query at a time on each. */
async function oneAtATime(url: string, text: string, sessions: number): Promise<Mode> {
  const clients = await Promise.all(
    Array.from({ length: sessions }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  const lookup = onePerSession(clients, async (client, id) => {
    const result = await client.query({ name: 'lookup', text, values: [String(id)], rowMode: 'array' });
    return result.rows as unknown[][];
  });
  return {
    name: 'one at a time',
    lookup,
    close: async () => void (await Promise.all(clients.map((c) => c.end()))),
  };
}

/** One raw session that pipelines: every query queued in a turn goes in one write. */
async function pipelinedSession(url: string, text: string): Promise<{ lookup: Lookup; socket: Socket }> {
  const u = new URL(url);
  const socket = connect({ host: u.hostname, port: Number(u.port || 5432) });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const params: Record<string, string> = {
    user: decodeURIComponent(u.username),
    database: u.pathname.slice(1),
    client_encoding: 'UTF8',
  };
  const appName = u.searchParams.get('application_name');
  if (appName !== null) params.application_name = appName;
  interface Pending {
    rows: unknown[][];
    error?: Error;
    resolve: (rows: unknown[][]) => void;
    reject: (error: Error) => void;
  }
  const inFlight: Pending[] = [];
  let ready: (() => void) | undefined;
  void parse(socket, (message: BackendMessage) => {
    switch (message.name) {
      case 'dataRow': {
        const head = inFlight[0];
        if (head !== undefined) head.rows.push((message as DataRowMessage).fields);
        break;
      }
      case 'error': {
        const head = inFlight[0];
        if (head !== undefined) head.error = message as DatabaseError;
        else throw message;
        break;
      }
      case 'readyForQuery': {
        if (ready !== undefined) {
          ready();
          ready = undefined;
          break;
        }
        const done = inFlight.shift();
        if (done === undefined) break;
        if (done.error !== undefined) done.reject(done.error);
        else done.resolve(done.rows);
        break;
      }
      default:
        break;
    }
  });
  // Startup (trust authentication), then the statement parsed once.
  await new Promise<void>((resolve) => {
    ready = resolve;
    socket.write(serialize.startup(params));
  });
  await new Promise<void>((resolve) => {
    ready = resolve;
    socket.write(Buffer.concat([serialize.parse({ name: 'lookup', text, types: [] }), serialize.sync()]));
  });
  let queued: Buffer[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const out = queued;
    queued = [];
    socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
  };
  const describe = serialize.describe({ type: 'P', name: '' });
  const execute = serialize.execute({ portal: '', rows: 0 });
  const sync = serialize.sync();
  const lookup: Lookup = (id) =>
    new Promise<unknown[][]>((resolve, reject) => {
      inFlight.push({ rows: [], resolve, reject });
      queued.push(serialize.bind({ statement: 'lookup', values: [String(id)] }), describe, execute, sync);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  return { lookup, socket };
}

/** The same raw sessions, but each holding one query at a time: the protocol client without pipelining. */
async function rawOneAtATime(url: string, text: string, sessions: number): Promise<Mode> {
  const all = await Promise.all(Array.from({ length: sessions }, () => pipelinedSession(url, text)));
  const lookup = onePerSession(all, (session, id) => session.lookup(id));
  return {
    name: 'raw, one at a time',
    lookup,
    close: async () => {
      for (const s of all) s.socket.end(serialize.end());
    },
  };
}

async function pipelined(url: string, text: string, sessions: number): Promise<Mode> {
  const all = await Promise.all(Array.from({ length: sessions }, () => pipelinedSession(url, text)));
  let next = 0;
  const lookup: Lookup = (id) => {
    const session = all[next] as { lookup: Lookup };
    next = (next + 1) % all.length;
    return session.lookup(id);
  };
  return {
    name: `pipelined on ${sessions}`,
    lookup,
    close: async () => {
      for (const s of all) s.socket.end(serialize.end());
    },
  };
}

async function main(): Promise<void> {
  const schema = `quarry_pipeline_probe_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(
    `CREATE TABLE ${schema}.kv (id integer PRIMARY KEY, name text NOT NULL, score double precision NOT NULL)`,
  );
  await admin.query(
    `INSERT INTO ${schema}.kv SELECT g, 'name ' || g, g * 1.5 FROM generate_series(1, ${ROWS}) AS g`,
  );
  await admin.query(`ANALYZE ${schema}.kv`);
  const text = `SELECT id, name, score FROM ${schema}.kv WHERE id = $1`;
  const urlFor = (app: string) => {
    const url = new URL(PG_URL);
    url.searchParams.set('application_name', app);
    return url.toString();
  };
  const modes: Mode[] = [];
  const apps: string[] = [];
  try {
    for (const [build, sessions] of [
      [oneAtATime, 7],
      [rawOneAtATime, 7],
      [pipelined, 1],
      [pipelined, 2],
    ] as const) {
      const app = `qpp_${schema.slice(-8)}_${modes.length}`;
      apps.push(app);
      modes.push(await build(urlFor(app), text, sessions));
    }
    const results = new Map<string, { qps: number[]; us: number[]; pgUs: number[] }>();
    for (let round = 0; round < 3; round++) {
      for (const [i, mode] of modes.entries()) {
        // Warm up, then measure.
        for (const phase of ['warm', 'measure'] as const) {
          const ms = phase === 'warm' ? 1_000 : seconds * 1_000;
          const pgClock = await sessionsCpu(PG_URL, [apps[i] as string]);
          const cpu0 = process.cpuUsage();
          const t0 = performance.now();
          const deadline = t0 + ms;
          let done = 0;
          await Promise.all(
            Array.from({ length: callers }, async (_, c) => {
              let id = c + 1;
              while (performance.now() < deadline) {
                const rows = await mode.lookup(id);
                if (rows.length !== 1) throw new Error(`lookup ${id} gave ${rows.length} rows`);
                id = (id * 7919) % ROWS || 1;
                done++;
              }
            }),
          );
          if (phase === 'warm') continue;
          const cpu = process.cpuUsage(cpu0);
          const elapsed = (performance.now() - t0) / 1000;
          const pgCpu = await pgClock();
          const r = results.get(mode.name) ?? { qps: [], us: [], pgUs: [] };
          r.qps.push(done / elapsed);
          r.us.push((cpu.user + cpu.system) / done);
          r.pgUs.push((pgCpu * 1e6) / done);
          results.set(mode.name, r);
        }
      }
    }
    console.log(
      `${callers} callers, ${seconds} s windows, 3 rounds in turns; medians (per round in brackets):`,
    );
    console.log('mode                   queries/s   client µs/query   PostgreSQL µs/query');
    for (const [name, r] of results) {
      const fmt = (xs: number[], d: number) =>
        `${median(xs).toFixed(d)} [${xs.map((x) => x.toFixed(d)).join(', ')}]`;
      console.log(
        `${name.padEnd(20)} ${fmt(r.qps, 0).padStart(26)}  ${fmt(r.us, 1).padStart(24)}  ${fmt(r.pgUs, 1)}`,
      );
    }
  } finally {
    for (const mode of modes) await mode.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

await main();
