// The only module that opens a port, reads the environment and handles signals. Shutdown:
// fail /readyz for the delay while serving, then drain: answer keep-alive clients with
// `Connection: close`, let in-flight requests finish within the grace period (/readyz answers
// 503 `draining` meanwhile), then close pools and the store. A start that fails says why in one
// line, never as a bare stack.
// First: V8 flags that must hold before anything else allocates (see the module).
import './bootstrap/v8-flags.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayListener } from './adapters/node-listener.js';
import { warmUp } from './app.js';
import { demoBanner } from './bootstrap/banner.js';
import { type DataDirLock, DataDirLockedError, lockDataDir } from './bootstrap/data-dir-lock.js';
import { SecretKeyCheckError } from './bootstrap/secret-key-check.js';
import { ConfigError, loadConfig, redactedConfig } from './config.js';
import { PluginLoadError } from './connections/plugin-registry.js';
import { createGateway, type Gateway } from './create-gateway.js';
import { createLogger } from './observability/logger.js';
import { threadpoolWarning } from './security/threadpool-check.js';

/** How long after listening the /docs page and the OpenAPI document are made (about a second of CPU). */
const DOCS_WARM_DELAY_MS = 3_000;

async function main(): Promise<void> {
  // Until the port is open, a timer holds the event loop (cleared once listening). During the
  // embedded store's start the only work pending is at times V8's own: PGlite's WebAssembly being
  // compiled and optimised on V8's threads, its queries promises only. With nothing of its own
  // pending, node runs V8's background tasks to the end before any more JavaScript (its
  // DrainTasks): a restart waited on the optimising compiler ~0.1 s at a time (bench/README.md,
  // "A restart waiting on the WebAssembly compiler").
  const holdLoop = setInterval(() => {}, 3_600_000);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  // Before anything opens the embedded store: one gateway per data directory.
  let lock: DataDirLock | undefined;
  if (config.databaseUrl === undefined) {
    try {
      lock = lockDataDir(config.dataDir);
    } catch (error) {
      if (error instanceof DataDirLockedError) {
        console.error(error.message);
        process.exit(2);
      }
      throw error;
    }
    process.once('exit', () => lock?.release());
  }
  const logger = createLogger({
    level: config.logLevel,
    pretty: config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY === true),
  });
  // One short line at info; the whole configuration (secrets redacted) at debug.
  logger.info(
    {
      store: config.databaseUrl === undefined ? `embedded (${config.dataDir})` : 'postgres',
      payments: config.payments.kind,
      redis: config.redisUrl !== undefined,
    },
    'starting',
  );
  logger.debug({ config: redactedConfig(config) }, 'configuration');
  const threadpool = threadpoolWarning(process.env, config.passwordHash.concurrency);
  if (threadpool !== undefined) logger.warn(threadpool);
  let gateway: Gateway;
  try {
    gateway = await createGateway(config, { logger });
  } catch (error) {
    // An operator's mistake, like a bad variable: the message says what to fix; a stack would bury it.
    if (error instanceof PluginLoadError || error instanceof SecretKeyCheckError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  if (config.shutdownGraceMs < config.maxAnalyticTimeoutMs) {
    logger.warn(
      { grace_ms: config.shutdownGraceMs, max_analytic_timeout_ms: config.maxAnalyticTimeoutMs },
      'QUARRY_SHUTDOWN_GRACE_MS is below QUARRY_MAX_ANALYTIC_TIMEOUT_MS: a restart may cut long queries',
    );
  }

  let shuttingDown = false;
  const server = createServer(
    {
      // A client must send its headers within QUARRY_HEADERS_TIMEOUT_MS and its whole request
      // within 30 s, or the socket is answered 408 and closed: a slow-drip client (slowloris)
      // cannot hold sockets for minutes. Checked every second, not Node's default 30 s.
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: Math.max(30_000, config.headersTimeoutMs),
      connectionsCheckingInterval: 1_000,
    },
    createGatewayListener(gateway.app, gateway.services, { shuttingDown: () => shuttingDown }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    server.listen(config.port, config.host);
  });
  const { port } = server.address() as AddressInfo;
  const base = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info({ url: base }, 'listening');
  clearInterval(holdLoop);
  // The OpenAPI document and the /docs page are made on first use: made a little after the start,
  // so the first reader of /docs does not wait for them, and the first calls of a start (a
  // newcomer's first answer, a fleet's health checks) do not wait behind their second of CPU.
  setTimeout(() => {
    warmUp(gateway.app).catch((error) =>
      logger.warn({ err: error }, 'preparing /docs failed; made on first use'),
    );
  }, DOCS_WARM_DELAY_MS).unref();
  if (gateway.demo) {
    const { key, keyFile } = gateway.demo;
    process.stdout.write(demoBanner(base, key, keyFile));
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // First fail /readyz while serving as before, so a proxy stops sending new connections, then
    // stop listening (a connection the kernel queued after that would be reset unanswered).
    gateway.services.health.stopping();
    if (config.shutdownDelayMs > 0) {
      logger.info({ signal, delay_ms: config.shutdownDelayMs }, 'stopping: /readyz fails, still serving');
      await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
    }
    shuttingDown = true;
    // An agent's event stream would hold its connection open for the whole grace period; its
    // client reconnects elsewhere (docs/mcp.md).
    gateway.services.mcp.endStreams();
    // Connections still open once idle ones are closed: each carries a request in flight (its
    // answer says `Connection: close`), so counting them costs the request path nothing.
    const openConnections = () =>
      new Promise<number>((resolve) => {
        server.closeIdleConnections();
        server.getConnections((error, count) => resolve(error ? 0 : count));
      });
    let open = await openConnections();
    gateway.services.health.draining(() => open);
    const grace = config.shutdownGraceMs;
    logger.info({ signal, connections: open, grace_ms: grace }, 'shutting down: draining');
    const deadline = Date.now() + grace;
    if (config.shutdownDelayMs > 0) {
      // Behind a proxy that has taken the instance out (the delay), keep listening while the
      // requests in flight finish: its health checks read 503 `draining` instead of a refused
      // connection, and no connection the kernel accepts meanwhile is reset unanswered.
      while (open > 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        open = await openConnections();
      }
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), Math.max(0, deadline - Date.now()));
    await closed;
    clearTimeout(timer);
    await gateway.close(Math.max(1_000, deadline - Date.now()));
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** An error and its causes as one line each: what failed, then why (`database "x" does not exist`). */
function causeChain(error: unknown): string[] {
  const lines: string[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && lines.length < 5; ) {
    if (e instanceof Error) {
      const code = (e as { code?: unknown }).code;
      lines.push(`${e.message}${typeof code === 'string' && !e.message.includes(code) ? ` (${code})` : ''}`);
      e = e.cause;
    } else {
      lines.push(String(e));
      break;
    }
  }
  return lines;
}

main().catch((error: unknown) => {
  const [what, ...why] = causeChain(error);
  console.error(`Quarry could not start: ${what}${why.map((line) => `\n  because: ${line}`).join('')}`);
  // The stack is for a bug report, not for the operator's first look.
  if (process.env.QUARRY_LOG_LEVEL === 'debug' || process.env.QUARRY_LOG_LEVEL === 'trace') {
    console.error(error instanceof Error ? error.stack : error);
  }
  process.exit(1);
});
