// An MCP tool call against the REST call it wraps, on a cache hit: the gateway's CPU per request
// of `POST /v1/query` (A) and of `POST /mcp` `tools/call` of the same analytic with the same
// params in an open session (B), in alternating windows on one gateway process (pinned to CPU 1,
// load on CPU 0), read from /proc. The figure is the median over the pairs of B's gateway µs per
// request over A's; issue 22's budget is 1.20. Each window's requests are checked to be hits.
// Run: npm run bench:mcp -w @quarry/bench -- [--pairs N] [--seconds N] [--connections N] [--rate N]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANALYTICS, createBenchWorld, gatewayEnv, provision, SALES_YEAR } from './bench-world.js';
import { type HttpTarget, runHttpWindow } from './http-load.js';
import { median } from './latency-stats.js';
import type { LoadWindow } from './load-window.js';
import { canPin, pinSelf, REPO_ROOT, startService } from './service-process.js';

const MCP_ACCEPT = 'application/json, text/event-stream';
const PROTOCOL = '2025-06-18';
const BUDGET = 1.2;

/** Opens an MCP session with `key`: its id. */
export async function openSession(base: string, key: string): Promise<string> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: MCP_ACCEPT };
  const init = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'quarry-bench', version: '1' },
      },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || session === null)
    throw new Error(`initialize: ${init.status} ${await init.text()}`);
  await init.arrayBuffer();
  const initialized = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  if (initialized.status !== 202) throw new Error(`initialized: ${initialized.status}`);
  return session;
}

/** A tools/call of `tool` in a fresh session, as a load target, with a distinct JSON-RPC id per request. */
export async function mcpToolCall(
  base: string,
  key: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ target: HttpTarget; bodyFor: (i: number) => string }> {
  const session = await openSession(base, key);
  // Every request its own JSON-RPC id: a session pairs answers with requests by id.
  const bodyFor = (i: number) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    });
  const target: HttpTarget = {
    url: `${base}/mcp`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: MCP_ACCEPT,
      authorization: `Bearer ${key}`,
      'mcp-session-id': session,
      'mcp-protocol-version': PROTOCOL,
    },
    body: bodyFor(0),
  };
  return { target, bodyFor };
}

interface Side {
  readonly window: LoadWindow;
  /** Gateway CPU µs per successful request. */
  readonly gatewayUs: number;
}

const side = (window: LoadWindow): Side => ({
  window,
  gatewayUs: window.requests === 0 ? Number.NaN : (window.serverCpu * window.seconds * 1e6) / window.requests,
});

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: string) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback;
  };
  const pairs = Number(flag('--pairs', '5'));
  const seconds = Number(flag('--seconds', '5'));
  const connections = Number(flag('--connections', '64'));
  // A fixed offered rate for both sides (requests/s): the gateway's per-request CPU includes work
  // shared by the calls of a moment (a usage batch, an event-loop turn), so two sides compared at
  // their own saturation rates are compared at different batch sizes. Unset: as fast as it goes.
  const rateFlag = flag('--rate', '');
  const rate = rateFlag === '' ? undefined : Number(rateFlag);
  const paced = rate === undefined ? {} : { overallRate: rate };
  const pgUrl = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pinned = canPin(1) ? pinSelf(0) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'quarry-mcp-bench-'));
  const world = await createBenchWorld(pgUrl);
  try {
    const gateway = await startService({
      entry: 'gateway/src/server.ts',
      env: gatewayEnv(world, flag('--log-level', 'warn')),
      cpu: pinned === undefined ? undefined : 1,
      logFile: join(dir, 'gateway.log'),
    });
    try {
      const key = await provision(gateway.url, world, 1000);
      const params = { year: SALES_YEAR };
      const rest: HttpTarget = {
        url: `${gateway.url}/v1/query`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ source: ANALYTICS.revenueCached, params }),
      };
      const { target: mcp, bodyFor: mcpBody } = await mcpToolCall(
        gateway.url,
        key,
        ANALYTICS.revenueCached,
        params,
      );
      // Fill the cache, then check both sides are hits answering the same rows.
      const first = await fetch(rest.url, { method: 'POST', headers: rest.headers, body: rest.body ?? '' });
      await first.arrayBuffer();
      const restHit = await fetch(rest.url, { method: 'POST', headers: rest.headers, body: rest.body ?? '' });
      const restAnswer = (await restHit.json()) as { results: unknown[] };
      const mcpHit = await fetch(mcp.url, { method: 'POST', headers: mcp.headers, body: mcpBody(0) });
      const mcpAnswer = (await mcpHit.json()) as {
        result?: { isError?: boolean; structuredContent?: { results: unknown[]; meta: { cached: boolean } } };
      };
      const structured = mcpAnswer.result?.structuredContent;
      if (restHit.headers.get('x-cache') !== 'HIT' || structured?.meta.cached !== true)
        throw new Error(
          `not cache hits: REST ${restHit.headers.get('x-cache')}, MCP ${JSON.stringify(mcpAnswer)}`,
        );
      if (JSON.stringify(structured.results) !== JSON.stringify(restAnswer.results))
        throw new Error('the MCP tool call and the REST call answered different rows');

      const warm = { connections, seconds: 2, serverPid: gateway.pid };
      await runHttpWindow(rest, warm);
      await runHttpWindow(mcp, { ...warm, bodyFor: mcpBody });
      const measured: { a: Side; b: Side; ratio: number }[] = [];
      console.log(
        `MCP bench: ${connections} connections${rate === undefined ? '' : ` at ${rate} req/s`}, ${pairs} A/B pairs × ${seconds} s, gateway ${pinned === undefined ? 'unpinned' : 'on CPU 1'}; A = POST /v1/query, B = POST /mcp tools/call (same analytic and params, cache hits)`,
      );
      for (let pair = 1; pair <= pairs; pair++) {
        const a = side(
          (await runHttpWindow(rest, { connections, seconds, serverPid: gateway.pid, ...paced })).window,
        );
        const b = side(
          (
            await runHttpWindow(mcp, {
              connections,
              seconds,
              serverPid: gateway.pid,
              bodyFor: mcpBody,
              ...paced,
            })
          ).window,
        );
        const ratio = b.gatewayUs / a.gatewayUs;
        measured.push({ a, b, ratio });
        const line = (s: Side) =>
          `${s.window.reqPerSec.toFixed(0).padStart(6)} req/s, gateway ${s.gatewayUs.toFixed(1).padStart(6)} µs/req, fails ${s.window.failures}, steal ${(100 * s.window.steal).toFixed(1)}%`;
        console.log(`pair ${pair}: A ${line(a)} | B ${line(b)} | B/A gateway CPU ${ratio.toFixed(3)}`);
      }
      const kept = measured.filter((m) => m.a.window.steal <= 0.05 && m.b.window.steal <= 0.05);
      const used = kept.length > 0 ? kept : measured;
      const ratio = median(used.map((m) => m.ratio));
      const aUs = median(used.map((m) => m.a.gatewayUs));
      const bUs = median(used.map((m) => m.b.gatewayUs));
      console.log(
        `gateway CPU per request (median of ${used.length} pairs${kept.length === 0 ? ', all over 5% steal' : ''}): REST ${aUs.toFixed(1)} µs, MCP ${bUs.toFixed(1)} µs; B/A ${ratio.toFixed(3)} (budget ≤ ${BUDGET}: ${ratio <= BUDGET ? 'PASS' : 'OVER'})`,
      );
      const results = join(REPO_ROOT, 'bench/results');
      await mkdir(results, { recursive: true });
      const file = join(results, `mcp-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
      await writeFile(
        file,
        `${JSON.stringify({ connections, rate: rate ?? null, seconds, pairs: measured, aUs, bUs, ratio }, null, 2)}\n`,
      );
      console.log(`results: ${file}`);
    } finally {
      await gateway.stop();
    }
  } finally {
    pinned?.();
    await world.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('mcp-bench.ts')) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
