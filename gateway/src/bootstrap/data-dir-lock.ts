// One gateway per data directory: the embedded store (PGlite) is one process's database, and a
// second gateway opening it would migrate and write it under the first. The lock is a file
// holding the owner's pid, created exclusively; a lock whose process is gone (killed, crashed)
// is taken over, so no one has to clean up after a `kill -9`.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `Another gateway (pid ${pid}) is using the data directory ${dataDir}; stop it, or start this one with another QUARRY_DATA_DIR.`,
    );
  }
}

export interface DataDirLock {
  /** Removes the lock (idempotent; only while it is still ours). */
  release(): void;
}

const LOCK_FILE = 'gateway.lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else: alive all the same.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory for this process, or throws DataDirLockedError naming the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    } catch {
      // Removed between our attempt and this read: try again.
    }
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new DataDirLockedError(dataDir, holder);
    }
    // A stale lock (its process is gone, or unreadable): take it over.
    try {
      unlinkSync(file);
    } catch {
      // Someone else took it over first: the next attempt sees theirs.
    }
  }
  throw new Error(`Could not lock the data directory ${dataDir}.`);
}
