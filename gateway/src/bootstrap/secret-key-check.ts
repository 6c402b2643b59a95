// Before an instance serves, it proves that its key ring (QUARRY_SECRET_KEY and
// QUARRY_SECRET_KEYS_READABLE) opens what the fleet sealed: every key id something is sealed
// with must be in the ring, a sample of each key's rows (connection secrets, OAuth signing keys)
// must open, and so must the check value each key id left in the store (secret_key_checks). A
// key that seals must be one the fleet already knows, unless nothing is sealed yet.
// Otherwise it refuses to start (server.ts exits 2 with this message): an instance with a wrong
// key would answer 500 on every sealed connection, and might seal the fleet's first OAuth
// signing key with a key no other instance can read.
import type { Keyring } from '../security/keyring.js';
import { createSecretBox } from '../security/secret-box.js';
import type { SealedCount, SealedSecretsRepository } from '../store/sealed-secrets-repository.js';

/** The value each key id's check seals. */
const CHECK_TEXT = 'quarry secret key check v1';
/** Connection secrets opened per key id at start (every signing key is opened). */
const SAMPLE = 3;

/** The instance's key ring cannot open what the fleet sealed; `keyId` names the key at fault. */
export class SecretKeyCheckError extends Error {
  override readonly name = 'SecretKeyCheckError';
  readonly keyId: string;
  constructor(keyId: string, message: string) {
    super(message);
    this.keyId = keyId;
  }
}

const HOW =
  'set QUARRY_SECRET_KEY and QUARRY_SECRET_KEYS_READABLE as on the other instances (docs/deploy.md, "Rotating the secret key")';

function describe(count: SealedCount): string {
  const parts = [];
  if (count.connections > 0) parts.push(`${count.connections} connection secret(s)`);
  if (count.signingKeys > 0) parts.push(`${count.signingKeys} OAuth signing key(s)`);
  if (count.webhookSecrets > 0) parts.push(`${count.webhookSecrets} webhook signing secret(s)`);
  if (count.embedSecrets > 0) parts.push(`${count.embedSecrets} embed secret(s)`);
  return parts.join(' and ');
}

/** Throws SecretKeyCheckError when `keyring` cannot open what is sealed; registers its keys' checks. */
export async function checkSecretKeys(sealed: SealedSecretsRepository, keyring: Keyring): Promise<void> {
  const boxes = new Map(
    Object.entries(keyring.keys).map(([id, key]) => [
      id,
      createSecretBox({ keys: { [id]: key }, current: id }),
    ]),
  );
  const opens = (id: string, value: Buffer) => {
    try {
      boxes.get(id)?.open(value);
      return boxes.has(id);
    } catch {
      return false;
    }
  };
  const counts = await sealed.countByKey();
  for (const [id, count] of counts) {
    if (!boxes.has(id)) {
      throw new SecretKeyCheckError(
        id,
        `QUARRY_SECRET_KEY: ${describe(count)} are sealed with key "${id}", which this instance does not have: ${HOW}`,
      );
    }
    for (const sample of await sealed.samples(id, SAMPLE)) {
      if (!opens(id, sample.sealed)) {
        throw new SecretKeyCheckError(
          id,
          `QUARRY_SECRET_KEY: this instance's key "${id}" does not open ${sample.what}, which was sealed with a key "${id}" that has other bytes: ${HOW}`,
        );
      }
    }
  }
  const verifyChecks = async () => {
    const checks = await sealed.checks();
    for (const [id, value] of checks) {
      if (boxes.has(id) && !opens(id, value)) {
        throw new SecretKeyCheckError(
          id,
          `QUARRY_SECRET_KEY: this instance's key "${id}" is not the key "${id}" the other instances use (its check value does not open): ${HOW}`,
        );
      }
    }
    return checks;
  };
  const checks = await verifyChecks();
  // A new key may seal only once every instance can open what it seals: it was added as
  // readable first (and so left its check), or nothing is sealed yet.
  const current = keyring.current;
  if (!checks.has(current) && !counts.has(current) && (checks.size > 0 || counts.size > 0)) {
    throw new SecretKeyCheckError(
      current,
      `QUARRY_SECRET_KEY: key "${current}" would seal new secrets, but no instance of this fleet has had it yet, so the others could not open them: add it to QUARRY_SECRET_KEYS_READABLE on every instance first, then make it current (docs/deploy.md, "Rotating the secret key")`,
    );
  }
  const missing = [...boxes].filter(([id]) => !checks.has(id));
  for (const [id, box] of missing) await sealed.addCheck(id, box.seal(CHECK_TEXT));
  // Two instances starting at once with different bytes under one id: the second one's check lost.
  if (missing.length > 0) await verifyChecks();
}
