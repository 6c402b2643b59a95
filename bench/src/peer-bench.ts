// The cheap scenario next to a peer and a bare server, in one run (issue 35): the same keyed
// lookup (`SELECT id, name, score FROM kv WHERE id = 42`, one row of a 10,000-row table) served by
//
//   bare    node:http answering the gateway's answer bytes (no work at all: the floor)
//   quarry  the gateway, POST /v1/query of the uncached lookup analytic: key, rate limit, quota,
//           a warehouse query through the connector, a durable usage event
//   peer    PostGraphile 4 on the same table (bench/src/postgraphile-peer.ts), POST /graphql
//           `kvById(id: 42)`: a warehouse query, no key, no limits, no metering
//
// each pinned to CPU 1 (the load generator, autocannon, to CPU 0), the same connections, in
// windows alternating bare, quarry, peer for `--rounds`. Per window: req/s, latency, and the CPU
// per request of the server process, of its own PostgreSQL sessions (by application_name), of
// every PostgreSQL process, and of the load generator. Prints each window, the medians, and the
// paired ratios per round (quarry over bare in server CPU, quarry over peer in req/s and CPU).
// Run: npm run bench:peer -w @quarry/bench -- [--rounds 3] [--seconds 5] [--warmup 2] [--connections 64]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ANALYTICS,
  type BenchWorld,
  createBenchWorld,
  gatewayEnv,
  provision,
  sessionsCpu,
} from './bench-world.js';
import { type HttpTarget, runHttpWindow } from './http-load.js';
import { median } from './latency-stats.js';
import { canPin, pinSelf, REPO_ROOT, type ServiceProcess, startService } from './service-process.js';

interface Side {
  readonly name: 'bare' | 'quarry' | 'peer';
  readonly label: string;
  readonly process: ServiceProcess;
  readonly target: HttpTarget;
  /** application_name of its PostgreSQL sessions (none for bare). */
  readonly pgApp: string | undefined;
}

export interface Measured {
  readonly side: Side['name'];
  readonly round: number;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly failures: number;
  readonly steal: number;
  /** CPU µs per request. */
  readonly server: number;
  readonly ownPostgres: number;
  readonly allPostgres: number;
  readonly loadgen: number;
}

function flag(argv: readonly string[], name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback;
}

async function measure(
  side: Side,
  round: number,
  connections: number,
  seconds: number,
  pgUrl: string,
  pgApps: readonly string[],
) {
  const ownCpu = await sessionsCpu(pgUrl, pgApps);
  const load = await runHttpWindow(side.target, { connections, seconds, serverPid: side.process.pid });
  const own = await ownCpu();
  const w = load.window;
  const per = (coresOrSeconds: number, isCores: boolean) =>
    w.requests === 0
      ? Number.NaN
      : ((isCores ? coresOrSeconds * w.seconds : coresOrSeconds) * 1e6) / w.requests;
  return {
    side: side.name,
    round,
    reqPerSec: w.reqPerSec,
    p50Ms: w.p50Ms,
    p99Ms: w.p99Ms,
    failures: w.failures,
    steal: w.steal,
    server: per(w.serverCpu, true),
    ownPostgres: per(own, false),
    allPostgres: per(w.postgresCpu, true),
    loadgen: per(w.loadCpu, true),
  } satisfies Measured;
}

async function startSides(world: BenchWorld, dir: string, pinned: boolean): Promise<Side[]> {
  const cpu = pinned ? 1 : undefined;
  const started: ServiceProcess[] = [];
  try {
    const gateway = await startService({
      entry: 'gateway/src/server.ts',
      env: gatewayEnv(world, 'warn'),
      cpu,
      logFile: join(dir, 'gateway.log'),
    });
    started.push(gateway);
    const key = await provision(gateway.url, world, 1000);
    const quarry: HttpTarget = {
      url: `${gateway.url}/v1/query`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ source: ANALYTICS.lookup, params: { id: 42 } }),
    };
    const answer = await fetch(quarry.url, { method: 'POST', headers: quarry.headers, body: quarry.body });
    const bytes = Buffer.from(await answer.arrayBuffer());
    if (answer.status !== 200) throw new Error(`the lookup answered ${answer.status}: ${bytes}`);
    const bodyFile = join(dir, 'answer.json');
    await writeFile(bodyFile, bytes);
    const bare = await startService({
      entry: 'bench/src/bare-http-server.ts',
      args: [bodyFile],
      cpu,
      readyPath: '/',
      logFile: join(dir, 'bare.log'),
    });
    started.push(bare);
    const peerApp = `qb_peer_${world.id}`;
    const peerUrl = new URL(world.pgUrl);
    peerUrl.searchParams.set('application_name', peerApp);
    const peer = await startService({
      entry: 'bench/src/postgraphile-peer.ts',
      args: [peerUrl.toString(), world.warehouseSchema],
      cpu,
      logFile: join(dir, 'peer.log'),
    });
    started.push(peer);
    const peerTarget: HttpTarget = {
      url: `${peer.url}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'query Lookup($id: Int!) { kvById(id: $id) { id name score } }',
        variables: { id: 42 },
      }),
    };
    // Both must answer the same row before anything is measured.
    const peerAnswer = (await (
      await fetch(peerTarget.url, { method: 'POST', headers: peerTarget.headers, body: peerTarget.body })
    ).json()) as { data?: { kvById?: unknown } };
    const quarryRows = (JSON.parse(bytes.toString('utf8')) as { results: unknown[] }).results;
    if (JSON.stringify(peerAnswer.data?.kvById) !== JSON.stringify(quarryRows[0]))
      throw new Error(
        `the peer and the gateway disagree: ${JSON.stringify(peerAnswer)} / ${JSON.stringify(quarryRows)}`,
      );
    return [
      {
        name: 'bare',
        label: 'bare node:http, same bytes',
        process: bare,
        target: { ...quarry, url: `${bare.url}/v1/query` },
        pgApp: undefined,
      },
      { name: 'quarry', label: 'Quarry, cheap lookup', process: gateway, target: quarry, pgApp: undefined },
      {
        name: 'peer',
        label: 'PostGraphile 4, same lookup',
        process: peer,
        target: peerTarget,
        pgApp: peerApp,
      },
    ];
  } catch (error) {
    await Promise.all(started.map((s) => s.stop()));
    throw error;
  }
}

/** What a run is asked to do. */
export interface PeerBenchOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly warmup: number;
  readonly connections: number;
  readonly pgUrl: string;
  /** Pin the servers to CPU 1 and this process to CPU 0, when taskset can. */
  readonly pin: boolean;
}

/** Every window measured, and the paired ratios per round; the JSON's path. */
export interface PeerBenchResult {
  readonly results: readonly Measured[];
  readonly pairs: readonly {
    readonly quarryOverBareCpu: number;
    readonly quarryOverPeerReqs: number;
    readonly quarryOverPeerCpu: number;
  }[];
  readonly file: string;
}

export async function runPeerBench(options: PeerBenchOptions): Promise<PeerBenchResult> {
  const { rounds, seconds, warmup, connections, pgUrl } = options;
  const unpin = options.pin && canPin(1) ? pinSelf(0) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'quarry-peer-'));
  const world = await createBenchWorld(pgUrl);
  try {
    const sides = await startSides(world, dir, unpin !== undefined);
    // The gateway's own sessions are two pools: its store's and the warehouse connection's.
    const quarryApps = [world.storeApp, world.warehouseApp];
    try {
      if (warmup > 0)
        for (const side of sides) await runHttpWindow(side.target, { connections, seconds: warmup });
      const results: Measured[] = [];
      console.log(
        `peer bench: ${connections} connections, ${rounds} rounds × ${seconds} s windows (bare, quarry, peer), ${unpin === undefined ? 'not pinned' : 'servers on CPU 1, autocannon on CPU 0'}`,
      );
      const header =
        'round  side    req/s  p50 ms  p99 ms  fails  steal  server µs/req  own pg µs/req  all pg µs/req  loadgen µs/req';
      console.log(header);
      for (let round = 1; round <= rounds; round++) {
        for (const side of sides) {
          // Quarry's PostgreSQL sessions: the store's and the warehouse's pools, together.
          const apps = side.name === 'quarry' ? quarryApps : side.pgApp === undefined ? [] : [side.pgApp];
          const m = await measure(side, round, connections, seconds, pgUrl, apps);
          results.push(m);
          const f = (n: number, width: number, digits = 1) =>
            (Number.isNaN(n) ? '—' : n.toFixed(digits)).padStart(width);
          console.log(
            `${String(round).padStart(5)}  ${side.name.padEnd(6)} ${f(m.reqPerSec, 6, 0)}  ${f(m.p50Ms, 6, 2)}  ${f(m.p99Ms, 6, 2)}  ${String(m.failures).padStart(5)}  ${f(100 * m.steal, 4)}%  ${f(m.server, 13)}  ${side.name === 'bare' ? '—'.padStart(13) : f(m.ownPostgres, 13)}  ${f(m.allPostgres, 13)}  ${f(m.loadgen, 14)}`,
          );
        }
      }
      const of = (name: Side['name']) => results.filter((r) => r.side === name);
      const med = (name: Side['name'], pick: (m: Measured) => number) => median(of(name).map(pick));
      console.log('\nmedians over the rounds:');
      console.log(
        'side                          req/s  p50 ms  server µs/req  own pg µs/req  server + own pg',
      );
      for (const side of sides) {
        const server = med(side.name, (m) => m.server);
        const own = side.name === 'bare' ? 0 : med(side.name, (m) => m.ownPostgres);
        console.log(
          `${side.label.padEnd(28)} ${med(side.name, (m) => m.reqPerSec)
            .toFixed(0)
            .padStart(6)}  ${med(side.name, (m) => m.p50Ms)
            .toFixed(2)
            .padStart(
              6,
            )}  ${server.toFixed(1).padStart(13)}  ${(side.name === 'bare' ? '—' : own.toFixed(1)).padStart(13)}  ${(server + own).toFixed(1).padStart(15)}`,
        );
      }
      const pairs = Array.from({ length: rounds }, (_, i) => {
        const at = (name: Side['name']) =>
          results.find((r) => r.side === name && r.round === i + 1) as Measured;
        const [b, q, p] = [at('bare'), at('quarry'), at('peer')];
        return {
          quarryOverBareCpu: q.server / b.server,
          quarryOverPeerReqs: q.reqPerSec / p.reqPerSec,
          quarryOverPeerCpu: (q.server + q.ownPostgres) / (p.server + p.ownPostgres),
        };
      });
      console.log('\npaired ratios per round (then the median):');
      for (const [key, label] of [
        ['quarryOverBareCpu', 'Quarry server CPU / bare server CPU'],
        ['quarryOverPeerReqs', 'Quarry req/s / PostGraphile req/s'],
        ['quarryOverPeerCpu', 'Quarry (server + own pg) CPU / PostGraphile (server + own pg) CPU'],
      ] as const) {
        const values = pairs.map((p) => p[key]);
        console.log(`${label}: ${values.map((v) => v.toFixed(2)).join(', ')} → ${median(values).toFixed(2)}`);
      }
      const out = join(REPO_ROOT, 'bench', 'results');
      await mkdir(out, { recursive: true });
      const file = join(out, `peer-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
      await writeFile(file, JSON.stringify({ connections, rounds, seconds, results, pairs }, null, 2));
      console.log(`\n${file}`);
      return { results, pairs, file };
    } finally {
      await Promise.all(sides.map((s) => s.process.stop()));
    }
  } finally {
    unpin?.();
    await world.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  runPeerBench({
    rounds: Number(flag(argv, '--rounds', '3')),
    seconds: Number(flag(argv, '--seconds', '5')),
    warmup: Number(flag(argv, '--warmup', '2')),
    connections: Number(flag(argv, '--connections', '64')),
    pgUrl: process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    pin: true,
  }).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
