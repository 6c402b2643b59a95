// A TCP fault proxy on loopback, between a real gateway and a real server (a warehouse, the
// control-plane PostgreSQL, Redis), whose behaviour the test switches at any moment, open
// connections included. The real servers are shared by every engineer's tests and must stay up,
// so their failures are played here:
//
// - pass: bytes flow both ways.
// - reset: every open connection is reset (RST); new connections are accepted and reset at once.
// - refuse: the listener closes (new connections are refused) and open connections are reset,
//   as when the server process dies. Switching to another mode listens again on the same port.
// - blackhole: nothing flows either way and nothing is closed, as when a host or link stops
//   answering: the proxy stops reading (the bytes wait in the kernel, like TCP retransmits), new
//   connections are accepted but never reach the server. Switching back lets it all through.
// - latency: each chunk is held `ms` before it is passed on (order kept).
// - drip: each direction passes at most `bytesPerSecond`, in slices ten times a second.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './gateway-process.js';

export type FaultMode =
  | { readonly kind: 'pass' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'refuse' }
  | { readonly kind: 'blackhole' }
  | { readonly kind: 'latency'; readonly ms: number }
  | { readonly kind: 'drip'; readonly bytesPerSecond: number };

export interface FaultProxy {
  /** The port the proxy listens on (kept across modes). */
  readonly port: number;
  readonly mode: FaultMode;
  /** Connections accepted since the proxy was created. */
  readonly accepted: number;
  /** Connections open right now (client side). */
  readonly open: number;
  /** Switches every open and future connection to `mode`; resolves once it applies. */
  set(mode: FaultMode): Promise<void>;
  /** Resets every connection and stops listening. */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  /** The port to listen on; default a free one. */
  readonly port?: number;
}

const DRIP_TICK_MS = 100;
/** Bytes a lane holds before it stops reading from its source. */
const HIGH_WATER = 1024 * 1024;

/** One direction of one connection: chunks read from `src`, written to `dst` as the mode allows. */
class Lane {
  private readonly chunks: { data: Buffer; at: number }[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  /** When the drip last passed a slice (performance.now()). */
  private lastDrip = 0;

  constructor(
    private readonly src: Socket,
    private readonly dst: Socket,
    private readonly mode: () => FaultMode,
  ) {
    src.on('data', (data: Buffer) => {
      this.chunks.push({ data, at: performance.now() });
      this.queued += data.length;
      if (this.queued > HIGH_WATER) src.pause();
      // A scheduled pass (latency, drip) picks the chunk up in its turn.
      if (this.timer === undefined) this.flush();
    });
    src.on('end', () => {
      this.ended = true;
      this.flush();
    });
  }

  /** Passes on what the current mode allows now, and schedules the rest. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dst.destroyed) return;
    const mode = this.mode();
    if (mode.kind === 'blackhole' || mode.kind === 'refuse' || mode.kind === 'reset') {
      this.src.pause();
      return;
    }
    if (mode.kind === 'pass') {
      for (const { data } of this.chunks.splice(0)) this.dst.write(data);
      this.queued = 0;
    } else if (mode.kind === 'latency') {
      const now = performance.now();
      while (this.chunks.length > 0 && this.chunks[0]!.at + mode.ms <= now) {
        const { data } = this.chunks.shift()!;
        this.queued -= data.length;
        this.dst.write(data);
      }
      if (this.chunks.length > 0) {
        this.timer = setTimeout(() => this.flush(), Math.max(1, this.chunks[0]!.at + mode.ms - now));
      }
    } else {
      const now = performance.now();
      const wait = this.lastDrip + DRIP_TICK_MS - now;
      if (wait > 0) {
        this.timer = setTimeout(() => this.flush(), wait);
        return;
      }
      this.lastDrip = now;
      let budget = Math.max(1, Math.floor((mode.bytesPerSecond * DRIP_TICK_MS) / 1000));
      while (budget > 0 && this.chunks.length > 0) {
        const head = this.chunks[0]!;
        const take = Math.min(budget, head.data.length);
        this.dst.write(head.data.subarray(0, take));
        budget -= take;
        this.queued -= take;
        if (take === head.data.length) this.chunks.shift();
        else head.data = head.data.subarray(take);
      }
      if (this.chunks.length > 0) this.timer = setTimeout(() => this.flush(), DRIP_TICK_MS);
    }
    if (this.queued <= HIGH_WATER) this.src.resume();
    if (this.ended && this.chunks.length === 0) this.dst.end();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

interface Pair {
  readonly client: Socket;
  upstream: Socket | undefined;
  readonly lanes: Lane[];
}

/** Starts a fault proxy to `targetHost:targetPort` in `pass` mode; resolves once it listens. */
export async function createFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const port = options.port ?? (await freePort());
  const pairs = new Set<Pair>();
  let mode: FaultMode = { kind: 'pass' };
  let server: Server | undefined;
  let accepted = 0;
  const currentMode = () => mode;

  const reset = (pair: Pair) => {
    for (const lane of pair.lanes) lane.stop();
    pair.client.resetAndDestroy();
    pair.upstream?.resetAndDestroy();
    pairs.delete(pair);
  };

  /** Connects a client to the server, once the mode lets bytes flow. */
  const bridge = (pair: Pair) => {
    if (pair.upstream !== undefined || pair.client.destroyed) return;
    const upstream = connect(options.targetPort, options.targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => {
      pair.client.destroy();
      pairs.delete(pair);
    });
    pair.lanes.push(
      new Lane(pair.client, upstream, currentMode),
      new Lane(upstream, pair.client, currentMode),
    );
    for (const lane of pair.lanes) lane.flush();
  };

  const onConnection = (client: Socket) => {
    accepted += 1;
    const pair: Pair = { client, upstream: undefined, lanes: [] };
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', () => {
      pair.upstream?.destroy();
      for (const lane of pair.lanes) lane.stop();
      pairs.delete(pair);
    });
    pairs.add(pair);
    if (mode.kind === 'reset' || mode.kind === 'refuse') reset(pair);
    else if (mode.kind === 'blackhole') client.pause();
    else bridge(pair);
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer(onConnection);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        resolve();
      });
    });

  const unlisten = async () => {
    const current = server;
    if (current === undefined) return;
    server = undefined;
    await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    port,
    get mode() {
      return mode;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    async set(next) {
      mode = next;
      if (next.kind === 'reset' || next.kind === 'refuse') {
        for (const pair of [...pairs]) reset(pair);
        if (next.kind === 'refuse') await unlisten();
        return;
      }
      if (server === undefined) await listen();
      for (const pair of pairs) {
        if (next.kind === 'blackhole') {
          pair.client.pause();
          pair.upstream?.pause();
        } else if (pair.upstream === undefined) bridge(pair);
        for (const lane of pair.lanes) lane.flush();
      }
    },
    async close() {
      mode = { kind: 'refuse' };
      for (const pair of [...pairs]) reset(pair);
      await unlisten();
    },
  };
}
