// Creates the sessions of one SQLite connection: each is a worker thread with its own in-memory
// copy of the database file (see sqlite-session.ts). The driver polls the file, so when an owner
// replaces or rewrites it, every session holding the old copy fails `validate()` on its next
// borrow and the pool opens a fresh one: queries see the new file within about a second.
import { type Stats, unwatchFile, watchFile } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import {
  type ConnectorDriver,
  ConnectorError,
  type ConnectorSession,
  type DriverContext,
} from '@quarry/sdk-connector';
import type { SqliteConfig } from './sqlite-config.js';
import { connectFailed } from './sqlite-errors.js';
import type { WorkerStart } from './sqlite-protocol.js';
import { openSqliteSession, spawnSqliteWorker } from './sqlite-session.js';

/** How often the database file's size, modification time and inode are checked. */
export const FILE_POLL_MS = 1_000;

/** Options for {@link createSqliteDriver}. */
export interface SqliteDriverOptions {
  /** Starts a session's worker (default: spawnSqliteWorker); tests use it to reach the workers. */
  readonly spawnWorker?: (start: WorkerStart) => Worker;
}

/** Creates the driver for one validated SQLite connection config. */
export function createSqliteDriver(
  config: SqliteConfig,
  context: DriverContext,
  options: SqliteDriverOptions = {},
): ConnectorDriver {
  // A file on the gateway host: only where the operator allows host files (refused here too, so
  // a connection saved before the switch went off stays shut).
  context.destinations.checkFile(config.path);
  const start: WorkerStart = { path: config.path, maxFileBytes: config.maxFileBytes };
  const spawnWorker = options.spawnWorker ?? spawnSqliteWorker;
  let fileVersion = 0;
  let destroyed = false;

  function onFileChange(current: Stats, previous: Stats): void {
    if (
      current.mtimeMs !== previous.mtimeMs ||
      current.size !== previous.size ||
      current.ino !== previous.ino
    ) {
      fileVersion++;
    }
  }
  // Not persistent: an open connector must not keep a process alive by polling.
  watchFile(config.path, { persistent: false, interval: FILE_POLL_MS }, onFileChange);

  return {
    async createSession(): Promise<ConnectorSession> {
      if (destroyed) throw new ConnectorError('CLOSED', 'the SQLite driver has been destroyed');
      const version = fileVersion;
      try {
        return await openSqliteSession({
          start,
          spawnWorker,
          isCurrent: () => !destroyed && fileVersion === version,
        });
      } catch (error) {
        const failure = connectFailed(error);
        context.logger.debug({ driverCode: failure.driverCode }, 'sqlite: could not open a session');
        throw failure;
      }
    },

    async destroy(): Promise<void> {
      destroyed = true;
      unwatchFile(config.path, onFileChange);
    },
  };
}
