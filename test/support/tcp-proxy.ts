// A TCP proxy on loopback that the tests can stop and restart on the same port: the stand-in for
// a service going down when the real one (Redis, shared by every engineer's tests) must stay up.
// Stopping closes the listener and destroys every open connection, so clients see their
// connection drop and new connections refused, as when the server process dies.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './gateway-process.js';

export interface TcpProxy {
  /** The port the proxy listens on (kept across stop/start). */
  readonly port: number;
  /** Whether the proxy accepts and forwards connections right now. */
  readonly running: boolean;
  /** Connections accepted since the proxy was created. */
  readonly accepted: number;
  /** Starts listening again on the same port (no-op when running). */
  start(): Promise<void>;
  /** Closes the listener and destroys every open connection (no-op when stopped). */
  stop(): Promise<void>;
}

export interface TcpProxyOptions {
  readonly targetHost: string;
  readonly targetPort: number;
  /** The port to listen on; default a free one. */
  readonly port?: number;
}

/** Starts a proxy to `targetHost:targetPort` and resolves once it listens. */
export async function createTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const port = options.port ?? (await freePort());
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let accepted = 0;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        accepted += 1;
        const upstream = connect(options.targetPort, options.targetHost);
        track(client);
        track(upstream);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        resolve();
      });
    });

  await listen();
  return {
    port,
    get running() {
      return server !== undefined;
    },
    get accepted() {
      return accepted;
    },
    async start() {
      if (server === undefined) await listen();
    },
    async stop() {
      const current = server;
      if (current === undefined) return;
      server = undefined;
      const closed = new Promise<void>((resolve) => current.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closed;
    },
  };
}
