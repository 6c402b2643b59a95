// The only module that opens a port, reads the environment and handles signals. Shutdown:
// stop accepting, answer keep-alive clients with `Connection: close`, let in-flight requests
// finish within the grace period, then close pools and the store.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayListener } from './adapters/node-listener.js';
import { type DataDirLock, DataDirLockedError, lockDataDir } from './bootstrap/data-dir-lock.js';
import { ConfigError, loadConfig, redactedConfig } from './config.js';
import { PluginLoadError } from './connections/plugin-registry.js';
import { createGateway, type Gateway } from './create-gateway.js';
import { createLogger } from './observability/logger.js';
import { threadpoolWarning } from './security/threadpool-check.js';

async function main(): Promise<void> {
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
  const logger = createLogger({ level: config.logLevel });
  logger.info({ config: redactedConfig(config) }, 'starting');
  const threadpool = threadpoolWarning(process.env, config.passwordHash.concurrency);
  if (threadpool !== undefined) logger.warn(threadpool);
  let gateway: Gateway;
  try {
    gateway = await createGateway(config, { logger });
  } catch (error) {
    // An operator's mistake, like a bad variable: the message says what to fix; a stack would bury it.
    if (error instanceof PluginLoadError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
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
  if (gateway.demo) {
    const { key, keyFile } = gateway.demo;
    process.stdout.write(
      [
        '',
        `Quarry is running at ${base}  (API docs: ${base}/docs)`,
        `Demo key (also in ${keyFile}): ${key}`,
        'Try:',
        `  curl -s -X POST ${base}/v1/query -H "Authorization: Bearer ${key}" -H 'Content-Type: application/json' -d '{"source":"sales-by-region","params":{"year":2024}}'`,
        '',
      ].join('\n'),
    );
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
    logger.info({ signal }, 'shutting down');
    const grace = config.shutdownGraceMs;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const s = server as unknown as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
    s.closeIdleConnections?.();
    const timer = setTimeout(() => s.closeAllConnections?.(), grace);
    await closed;
    clearTimeout(timer);
    await gateway.close(grace);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
