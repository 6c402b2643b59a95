// The instance's view of the shared ES256 signing keys (store/oauth-signing-key-repository.ts):
// which key signs, and which keys may verify a token. On first use a key is created (once, even
// when several instances start together). A rotation makes a new signer while the previous key
// keeps verifying, and stays in the JWKS, until its `retired_at`: by then every token it signed
// has expired, so rotating never logs anyone out.
//
// Instances learn about a rotation three ways: the change feed calls `invalidate()` (about a
// second), the key set is reloaded when older than `refreshMs` (the backstop, counted into the
// retirement delay), and a token whose kid is unknown triggers a reload. That last path is
// rate-limited: at most one reload per `minReloadIntervalMs`, shared by every caller waiting for
// it, so tokens with forged kids cannot hammer the store.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type {
  NewSigningKey,
  OAuthSigningKeyRepository,
  PublicJwk,
  SigningKeyRecord,
} from '../store/oauth-signing-key-repository.js';

/** The JWS algorithm of every access token. */
export const SIGNING_ALG = 'ES256';

/** A key as the runtime crypto uses it (jose's WebCrypto keys). */
export type RuntimeKey = Awaited<ReturnType<typeof importJWK>>;

/** A public key as the JWKS lists it. */
export interface PublishedJwk {
  readonly kid: string;
  readonly kty: string;
  readonly crv: string;
  readonly x: string;
  readonly y: string;
  readonly alg: typeof SIGNING_ALG;
  readonly use: 'sig';
}

/** The outcome of {@link SigningKeyRing.rotate}. */
export interface RotationResult {
  readonly activated: SigningKeyRecord;
  readonly superseded: readonly SigningKeyRecord[];
}

export interface SigningKeyRing {
  /** The key new tokens are signed with (created on first use). */
  signingKey(): Promise<{ readonly kid: string; readonly key: RuntimeKey }>;
  /** The public key for `kid` while it may verify tokens; null for an unknown or retired kid. */
  verificationKey(kid: string): Promise<RuntimeKey | null>;
  /** Every key that can still verify a live token, signer first (for the JWKS). */
  publishedKeys(): Promise<readonly PublishedJwk[]>;
  /** Makes a new key the signer; the previous one verifies until its tokens have expired. */
  rotate(): Promise<RotationResult>;
  /** Reload the key set on next use (the change feed reported a new key). */
  invalidate(): void;
}

export interface SigningKeyRingOptions {
  readonly keys: OAuthSigningKeyRepository;
  /**
   * How long a superseded key keeps verifying. Must cover the token lifetime, the clock leeway and
   * `refreshMs` (an instance that missed the change feed signs with the old key until it reloads).
   */
  readonly retireAfterMs: number;
  /** Reload the key set when it is older than this (default 60,000 ms). */
  readonly refreshMs?: number;
  /** At most one reload for unknown kids per this many ms (default 1,000). */
  readonly minReloadIntervalMs?: number;
  /** Milliseconds since the epoch (tests move it). */
  readonly now?: () => number;
}

interface LoadedKey {
  readonly record: SigningKeyRecord;
  readonly key: RuntimeKey;
}

interface KeySet {
  readonly byKid: ReadonlyMap<string, LoadedKey>;
  readonly signerKid: string | null;
  readonly loadedAt: number;
  /** The invalidation generation this load started at. */
  readonly generation: number;
}

/** Generates a P-256 key pair; its kid is the RFC 7638 thumbprint of the public key. */
export async function generateSigningKey(): Promise<NewSigningKey> {
  const pair = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const privateJwk = await exportJWK(pair.privateKey);
  const { kty, crv, x, y } = await exportJWK(pair.publicKey);
  if (kty === undefined || crv === undefined || x === undefined || y === undefined) {
    throw new Error('the generated key pair is not an EC key');
  }
  const publicJwk = { kty, crv, x, y };
  return {
    kid: await calculateJwkThumbprint(publicJwk),
    publicJwk,
    privateJwk: privateJwk as Record<string, string>,
  };
}

function publish(kid: string, jwk: PublicJwk): PublishedJwk {
  return {
    kid,
    kty: jwk.kty ?? 'EC',
    crv: jwk.crv ?? 'P-256',
    x: jwk.x ?? '',
    y: jwk.y ?? '',
    alg: SIGNING_ALG,
    use: 'sig',
  };
}

const importKey = (jwk: PublicJwk | Readonly<Record<string, string>>) =>
  importJWK({ ...jwk } as JWK, SIGNING_ALG);

export function createSigningKeyRing(options: SigningKeyRingOptions): SigningKeyRing {
  const { keys } = options;
  const now = options.now ?? Date.now;
  const refreshMs = options.refreshMs ?? 60_000;
  const minReloadIntervalMs = options.minReloadIntervalMs ?? 1_000;
  let set: KeySet | undefined;
  // Bumped by invalidate(): a load that started before the bump cannot satisfy it.
  let generation = 0;
  let loading: { readonly generation: number; readonly promise: Promise<KeySet> } | undefined;
  let throttledReload: Promise<KeySet> | undefined;
  let signer: { readonly kid: string; readonly key: RuntimeKey } | undefined;

  const load = (): Promise<KeySet> => {
    if (loading !== undefined && loading.generation >= generation) return loading.promise;
    const started = generation;
    const promise = (async () => {
      const previous = set?.byKid;
      const byKid = new Map<string, LoadedKey>();
      for (const record of await keys.listLive()) {
        // Public keys are imported once per kid, not on every reload.
        const known = previous?.get(record.kid);
        byKid.set(record.kid, { record, key: known?.key ?? (await importKey(record.publicJwk)) });
      }
      const signerKid = [...byKid.values()].find((k) => k.record.supersededAt === null)?.record.kid ?? null;
      const loaded: KeySet = { byKid, signerKid, loadedAt: now(), generation: started };
      // A slower, older load never replaces a newer one.
      if (set === undefined || started >= set.generation) set = loaded;
      return loaded;
    })().finally(() => {
      if (loading?.promise === promise) loading = undefined;
    });
    loading = { generation: started, promise };
    return promise;
  };

  const current = async (): Promise<KeySet> =>
    set === undefined || set.generation < generation || now() - set.loadedAt >= refreshMs ? load() : set;

  /** A reload for an unknown kid: now if allowed, else at the next allowed moment (shared). */
  const reloadForUnknownKid = (loadedAt: number): Promise<KeySet> => {
    if (loading !== undefined) return loading.promise;
    const wait = loadedAt + minReloadIntervalMs - now();
    if (wait <= 0) return load();
    throttledReload ??= new Promise<void>((resolve) => setTimeout(resolve, wait).unref())
      .then(load)
      .finally(() => {
        throttledReload = undefined;
      });
    return throttledReload;
  };

  const live = (loaded: LoadedKey | undefined): loaded is LoadedKey =>
    loaded !== undefined && (loaded.record.retiredAt === null || loaded.record.retiredAt.getTime() > now());

  async function ensureSigner(): Promise<KeySet> {
    let keySet = await current();
    if (keySet.signerKid === null) {
      await keys.createFirst(await generateSigningKey());
      keySet = await load();
      if (keySet.signerKid === null) throw new Error('no OAuth signing key could be created or found');
    }
    return keySet;
  }

  return {
    async signingKey() {
      const keySet = await ensureSigner();
      const kid = keySet.signerKid as string;
      if (signer?.kid !== kid) {
        const jwk = await keys.readPrivateJwk(kid);
        if (jwk === null) throw new Error(`the OAuth signing key ${kid} disappeared from the store`);
        signer = { kid, key: await importKey(jwk) };
      }
      return signer;
    },

    async verificationKey(kid) {
      let keySet = await current();
      let found = keySet.byKid.get(kid);
      if (found === undefined) {
        keySet = await reloadForUnknownKid(keySet.loadedAt);
        found = keySet.byKid.get(kid);
      }
      return live(found) ? found.key : null;
    },

    async publishedKeys() {
      const keySet = await ensureSigner();
      return [...keySet.byKid.values()].filter(live).map((k) => publish(k.record.kid, k.record.publicJwk));
    },

    async rotate() {
      const rotation = await keys.rotate(await generateSigningKey(), options.retireAfterMs);
      generation += 1;
      await load();
      return rotation;
    },

    invalidate() {
      generation += 1;
    },
  };
}
