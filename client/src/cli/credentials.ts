// The stored login: `{url, key}` in $XDG_CONFIG_HOME/quarry/credentials.json (or
// ~/.config/quarry/credentials.json), the file 0600 in a 0700 directory, written atomically so
// a crash never leaves half a key behind.
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

export interface StoredLogin {
  readonly url: string;
  readonly key: string;
}

/** Where the login is stored for this environment. */
export function credentialsPath(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says to ignore a relative XDG_CONFIG_HOME.
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'quarry', 'credentials.json');
}

/** The stored login, or undefined when there is none. */
export async function readLogin(path: string): Promise<StoredLogin | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not valid JSON; run \`quarry login\` again.`);
  }
  const login = parsed as Partial<StoredLogin> | null;
  if (typeof login?.url !== 'string' || typeof login.key !== 'string') {
    throw new Error(`${path} has no url and key; run \`quarry login\` again.`);
  }
  return { url: login.url, key: login.key };
}

/** Stores the login (directory 0700, file 0600), replacing any previous one. */
export async function saveLogin(path: string, login: StoredLogin): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory's mode alone.
  await chmod(dir, 0o700);
  const temp = `${path}.${randomUUID()}.tmp`;
  await writeFile(temp, `${JSON.stringify({ url: login.url, key: login.key }, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

/** Removes the stored login; false when there was none. */
export async function removeLogin(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
