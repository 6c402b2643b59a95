// The embedded demo's secret-box key: generated on first start into the data directory with
// owner-only permissions (0600), reused afterwards, so `npm start` encrypts connection
// credentials at rest without any setup. Production passes its keys through configuration.
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A key for createSecretBox. */
export interface SecretKey {
  readonly id: string;
  readonly key: Buffer;
}

/** The file name inside the data directory. */
export const DEMO_SECRET_KEY_FILE = 'secret-key.json';

interface KeyFile {
  readonly id: string;
  readonly key: string;
}

function parseKeyFile(text: string, path: string): SecretKey {
  const parsed = JSON.parse(text) as Partial<KeyFile>;
  const key = typeof parsed.key === 'string' ? Buffer.from(parsed.key, 'base64') : Buffer.alloc(0);
  if (typeof parsed.id !== 'string' || parsed.id === '' || key.length !== 32) {
    throw new Error(`${path} is not a Quarry secret key file (expected {"id", "key": base64 of 32 bytes})`);
  }
  return { id: parsed.id, key };
}

/** Reads `dataDir`'s demo key, creating the directory and a new key file when absent. */
export async function loadOrCreateDemoSecretKey(dataDir: string): Promise<SecretKey> {
  const path = join(dataDir, DEMO_SECRET_KEY_FILE);
  await mkdir(dataDir, { recursive: true });
  const fresh: KeyFile = { id: `demo-${Date.now().toString(36)}`, key: randomBytes(32).toString('base64') };
  // Written to a private temp file, then hard-linked into place: link() fails when the target
  // exists, so two processes starting at once never overwrite each other's key, and nobody
  // ever reads a half-written file.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(fresh)}\n`, { flag: 'wx', mode: 0o600 });
  try {
    await link(temp, path);
    return parseKeyFile(JSON.stringify(fresh), path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temp);
  }
  // An existing file keeps working, but is made owner-only if someone widened it.
  await chmod(path, 0o600);
  return parseKeyFile(await readFile(path, 'utf8'), path);
}
