// An in-memory signing key repository for unit tests: the same contract as the store's (one
// signer, rotation retiring the previous one, live = not yet retired by `now`), private keys kept
// as given (no sealing), and a count of `listLive` calls so tests can see how often the key ring
// goes to the store. Several key rings sharing one instance behave like gateway instances
// sharing one database.
import type {
  NewSigningKey,
  OAuthSigningKeyRepository,
  SigningKeyRecord,
} from '../../store/oauth-signing-key-repository.js';

export interface MemorySigningKeyRepository extends OAuthSigningKeyRepository {
  /** How many times `listLive` was called. */
  readonly loads: number;
}

/** `now`: milliseconds since the epoch, the "database clock". */
export function createMemorySigningKeyRepository(now: () => number = Date.now): MemorySigningKeyRepository {
  const records: SigningKeyRecord[] = [];
  const privateJwks = new Map<string, Readonly<Record<string, string>>>();
  let loads = 0;

  const store = (key: NewSigningKey): SigningKeyRecord => {
    const at = new Date(now());
    const record = {
      kid: key.kid,
      publicJwk: key.publicJwk,
      createdAt: at,
      activatedAt: at,
      supersededAt: null,
      retiredAt: null,
    };
    records.push(record);
    privateJwks.set(key.kid, key.privateJwk);
    return record;
  };

  return {
    get loads() {
      return loads;
    },
    async listLive() {
      loads += 1;
      const live = records.filter((r) => r.retiredAt === null || r.retiredAt.getTime() > now());
      return live.sort(
        (a, b) =>
          (a.supersededAt === null ? 0 : 1) - (b.supersededAt === null ? 0 : 1) ||
          b.activatedAt.getTime() - a.activatedAt.getTime(),
      );
    },
    async createFirst(key) {
      if (records.some((r) => r.supersededAt === null)) return false;
      store(key);
      return true;
    },
    async rotate(key, retireAfterMs) {
      const at = now();
      const superseded: SigningKeyRecord[] = [];
      records.forEach((record, index) => {
        if (record.supersededAt !== null) return;
        const replaced = { ...record, supersededAt: new Date(at), retiredAt: new Date(at + retireAfterMs) };
        records[index] = replaced;
        superseded.push(replaced);
      });
      return { activated: store(key), superseded };
    },
    async readPrivateJwk(kid) {
      return privateJwks.get(kid) ?? null;
    },
  };
}
