// Configuration is parsed once and fails fast listing every problem (README.md, "Configuration").
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactedConfig } from './config.js';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env, '/srv');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('loadConfig', () => {
  it('bounds asynchronous jobs by QUARRY_MAX_ASYNC_TIMEOUT_MS (30 minutes, whatever the reaper), with their lease', () => {
    expect(loadConfig({}).jobs).toEqual({ maxTimeoutMs: 1_800_000, leaseMs: 30_000 });
    expect(loadConfig({ QUARRY_REAP_AFTER_MS: '60000' }).jobs.maxTimeoutMs).toBe(1_800_000);
    expect(loadConfig({ QUARRY_MAX_ASYNC_TIMEOUT_MS: '120000', QUARRY_JOB_LEASE_MS: '5000' }).jobs).toEqual({
      maxTimeoutMs: 120_000,
      leaseMs: 5000,
    });
    expect(problemsOf({ QUARRY_MAX_ASYNC_TIMEOUT_MS: '1800001' }).join('\n')).toContain(
      'QUARRY_MAX_ASYNC_TIMEOUT_MS',
    );
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      QUARRY_LOG_LEVEL: 'loud',
      QUARRY_BODY_LIMIT: '10',
      QUARRY_ALLOW_PRIVATE_NETWORKS: 'maybe',
      DATABASE_URL: 'postgres://quarry@db.internal/quarry',
    });
    const variables = problems.map((p) => p.split(':')[0]).sort();
    expect(variables).toEqual([
      'PORT',
      'QUARRY_ALLOW_PRIVATE_NETWORKS',
      'QUARRY_BODY_LIMIT',
      'QUARRY_LOG_LEVEL',
      'QUARRY_SECRET_KEY',
    ]);
    const message = (() => {
      try {
        loadConfig({ PORT: 'eighty', QUARRY_LOG_LEVEL: 'loud' });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain('PORT');
    expect(message).toContain('QUARRY_LOG_LEVEL');
  });

  it('takes the three destination switches separately, and refuses the old all-in-one switch', () => {
    const config = loadConfig({ QUARRY_ALLOW_PRIVATE_NETWORKS: 'true', QUARRY_ALLOW_HOST_IDENTITY: '1' });
    expect(config.destinations).toEqual({ privateNetworks: true, hostFiles: false, hostIdentity: true });
    expect(problemsOf({ QUARRY_ALLOW_PRIVATE_HOSTS: 'true' })).toEqual([
      expect.stringMatching(
        /^QUARRY_ALLOW_PRIVATE_HOSTS: replaced by QUARRY_ALLOW_PRIVATE_NETWORKS, QUARRY_ALLOW_HOST_FILES and QUARRY_ALLOW_HOST_IDENTITY/,
      ),
    ]);
  });

  it('takes QUARRY_PUBLIC_URL with a domain name, an IP address or localhost, http(s) only', () => {
    for (const url of ['https://quarry.example.com', 'http://127.0.0.1:8080', 'http://localhost:8787/']) {
      expect(loadConfig({ QUARRY_PUBLIC_URL: url }).publicUrl).toBe(url.replace(/\/$/, ''));
    }
    for (const url of ['ftp://quarry.example.com', 'https://quarry.example.com/?a=1', 'quarry']) {
      expect(problemsOf({ QUARRY_PUBLIC_URL: url }).map((p) => p.split(':')[0])).toEqual([
        'QUARRY_PUBLIC_URL',
      ]);
    }
  });

  it('refuses DATABASE_URL without QUARRY_SECRET_KEY', () => {
    const problems = problemsOf({ DATABASE_URL: 'postgres://quarry@db.internal/quarry' });
    expect(problems).toEqual([
      expect.stringMatching(/^QUARRY_SECRET_KEY: required when DATABASE_URL is set/),
    ]);
    const config = loadConfig({
      DATABASE_URL: 'postgres://quarry@db.internal/quarry',
      QUARRY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(config.databaseUrl).toBe('postgres://quarry@db.internal/quarry');
    expect(config.demo).toBe(false);
  });

  it("reads a rotation's key ring: QUARRY_SECRET_KEY seals, QUARRY_SECRET_KEYS_READABLE only opens", () => {
    const OLD = Buffer.alloc(32, 1).toString('base64');
    const NEW = Buffer.alloc(32, 2).toString('base64');
    // An existing config: a bare key is `k1`; a list's first key seals, the others open.
    expect(loadConfig({ QUARRY_SECRET_KEY: OLD }).keyring).toEqual({
      keys: { k1: Buffer.alloc(32, 1) },
      current: 'k1',
    });
    expect(loadConfig({ QUARRY_SECRET_KEY: `k2:${NEW},k1:${OLD}` }).keyring?.current).toBe('k2');
    // Step 1: the new key readable only; step 2: current, the old one readable.
    const step1 = loadConfig({ QUARRY_SECRET_KEY: OLD, QUARRY_SECRET_KEYS_READABLE: `k2:${NEW}` }).keyring;
    expect(step1?.current).toBe('k1');
    expect(Object.keys(step1?.keys ?? {}).sort()).toEqual(['k1', 'k2']);
    const step2 = loadConfig({
      QUARRY_SECRET_KEY: `k2:${NEW}`,
      QUARRY_SECRET_KEYS_READABLE: `k1:${OLD}`,
    }).keyring;
    expect(step2?.current).toBe('k2');
    expect(step2?.keys.k1).toEqual(Buffer.alloc(32, 1));
    expect(problemsOf({ QUARRY_SECRET_KEYS_READABLE: `k2:${NEW}` })).toEqual([
      'QUARRY_SECRET_KEYS_READABLE: needs QUARRY_SECRET_KEY (the key that seals)',
    ]);
    expect(problemsOf({ QUARRY_SECRET_KEY: `k1:${OLD}`, QUARRY_SECRET_KEYS_READABLE: `k1:${NEW}` })).toEqual([
      'QUARRY_SECRET_KEYS_READABLE: key id "k1" is also in QUARRY_SECRET_KEY with another key',
    ]);
    expect(problemsOf({ QUARRY_SECRET_KEY: `k1:${OLD},k1:${NEW}` })).toEqual([
      'QUARRY_SECRET_KEY: key id "k1" appears twice',
    ]);
  });

  it('refuses a DATABASE_URL that is not postgres', () => {
    expect(
      problemsOf({
        DATABASE_URL: 'mysql://root@db/quarry',
        QUARRY_SECRET_KEY: Buffer.alloc(32).toString('base64'),
      }),
    ).toEqual([expect.stringMatching(/^DATABASE_URL: /)]);
  });

  it('takes a read replica only beside a PostgreSQL store, with its own pool size', () => {
    const secret = Buffer.alloc(32).toString('base64');
    const primary = { DATABASE_URL: 'postgres://quarry@db.internal/quarry', QUARRY_SECRET_KEY: secret };
    expect(loadConfig(primary).readReplica).toBeUndefined();
    expect(
      loadConfig({ ...primary, QUARRY_READ_DATABASE_URL: 'postgresql://reader@replica.internal/quarry' })
        .readReplica,
    ).toEqual({ url: 'postgresql://reader@replica.internal/quarry', poolSize: 10 });
    expect(
      loadConfig({
        ...primary,
        QUARRY_READ_DATABASE_URL: 'postgres://reader@replica.internal/quarry',
        QUARRY_READ_POOL_SIZE: '25',
      }).readReplica?.poolSize,
    ).toBe(25);
    expect(problemsOf({ QUARRY_READ_DATABASE_URL: 'postgres://reader@replica.internal/quarry' })).toEqual([
      expect.stringMatching(/^QUARRY_READ_DATABASE_URL: needs DATABASE_URL/),
    ]);
    expect(problemsOf({ ...primary, QUARRY_READ_DATABASE_URL: 'mysql://reader@replica/quarry' })).toEqual([
      'QUARRY_READ_DATABASE_URL: must be a postgres:// URL',
    ]);
    for (const bad of ['0', '2.5', 'many']) {
      expect(problemsOf({ ...primary, QUARRY_READ_POOL_SIZE: bad }).map((p) => p.split(':')[0])).toEqual([
        'QUARRY_READ_POOL_SIZE',
      ]);
    }
  });

  it('has defaults for the embedded demo', () => {
    const config = loadConfig({}, '/srv');
    expect(config).toMatchObject({
      port: 8787,
      host: '127.0.0.1',
      dataDir: '/srv/.quarry',
      databaseUrl: undefined,
      destinations: { privateNetworks: false, hostFiles: false, hostIdentity: false },
      signup: 'open',
      demo: true,
      // Shipped files are found from the package, whatever the working directory.
      analyticsDir: fileURLToPath(new URL('../../examples/analytics', import.meta.url)),
      consoleDir: fileURLToPath(new URL('../../console/dist', import.meta.url)),
      // The shutdown grace covers the longest analytic an owner may deploy.
      maxAnalyticTimeoutMs: 60_000,
      shutdownGraceMs: 65_000,
      bodyLimit: 64 * 1024,
      keyCacheMs: 1_000,
      signupsPerHour: 5,
      sessionTtlSeconds: 86_400,
      trustProxyHops: 0,
    });
    expect(config.connectors).toEqual(
      expect.arrayContaining([
        '@quarry/connector-postgres',
        '@quarry/connector-mysql',
        '@quarry/connector-duckdb',
      ]),
    );
  });

  it('reads the sign-up throttle and how many proxies to trust', () => {
    const hops = (value: string) => loadConfig({ QUARRY_TRUST_PROXY: value }, '/srv').trustProxyHops;
    expect([hops('true'), hops('false'), hops(''), hops('0'), hops('2')]).toEqual([1, 0, 0, 0, 2]);
    expect(loadConfig({ QUARRY_SIGNUPS_PER_HOUR: '20' }, '/srv').signupsPerHour).toBe(20);
    const problems = problemsOf({ QUARRY_TRUST_PROXY: 'yes please', QUARRY_SIGNUPS_PER_HOUR: '0' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'QUARRY_SIGNUPS_PER_HOUR',
      'QUARRY_TRUST_PROXY',
    ]);
  });

  it('chooses payments: the sandbox embedded, none with DATABASE_URL, and Stripe only with both keys', () => {
    expect(loadConfig({}, '/srv').payments.kind).toBe('sandbox');
    const pg = {
      DATABASE_URL: 'postgres://db/quarry',
      QUARRY_SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
    };
    expect(loadConfig(pg, '/srv').payments.kind).toBe('none');
    expect(problemsOf({ QUARRY_PAYMENTS: 'stripe' }).map((p) => p.split(':')[0])).toEqual([
      'STRIPE_SECRET_KEY',
      'STRIPE_WEBHOOK_SECRET',
    ]);
    expect(
      problemsOf({
        QUARRY_PAYMENTS: 'paypal',
        STRIPE_SECRET_KEY: 'pk_test_public',
        QUARRY_STRIPE_PRICES: '{"smb":"prod_1"}',
        QUARRY_PAYMENT_GRACE_DAYS: '-1',
      })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['QUARRY_PAYMENTS', 'QUARRY_PAYMENT_GRACE_DAYS', 'QUARRY_STRIPE_PRICES', 'STRIPE_SECRET_KEY']);
    const stripe = loadConfig(
      {
        QUARRY_PAYMENTS: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_abc123',
        STRIPE_WEBHOOK_SECRET: 'whsec_abc123',
        QUARRY_STRIPE_PRICES: '{"smb":"price_123"}',
        QUARRY_PAYMENT_GRACE_DAYS: '0.5',
      },
      '/srv',
    );
    expect(stripe.payments).toMatchObject({
      kind: 'stripe',
      stripe: { secretKey: 'sk_test_abc123', prices: { smb: 'price_123' } },
      graceMs: 43_200_000,
    });
    const logged = JSON.stringify(redactedConfig(stripe));
    expect(logged).not.toContain('sk_test_abc123');
    expect(logged).not.toContain('whsec_abc123');
  });

  it('keeps 13 months of raw usage events unless told otherwise, and refuses a retention below one month', () => {
    expect(loadConfig({}, '/srv').payments.ledgerRetentionMonths).toBe(13);
    expect(loadConfig({ QUARRY_LEDGER_RETENTION_MONTHS: '4' }, '/srv').payments.ledgerRetentionMonths).toBe(
      4,
    );
    for (const bad of ['0', '-1', '2.5', 'forever']) {
      expect(problemsOf({ QUARRY_LEDGER_RETENTION_MONTHS: bad }).map((p) => p.split(':')[0])).toEqual([
        'QUARRY_LEDGER_RETENTION_MONTHS',
      ]);
    }
  });

  it('redacts secrets for logging', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://quarry:hunter2@db.internal/quarry',
      QUARRY_READ_DATABASE_URL: 'postgres://reader:swordfish@replica.internal/quarry',
      QUARRY_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
      QUARRY_ADMIN_TOKEN: 'admin-token-0123456789',
    });
    const text = JSON.stringify(redactedConfig(config));
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('swordfish');
    expect(text).toContain('replica.internal');
    expect(text).not.toContain(Buffer.alloc(32, 7).toString('base64'));
    expect(text).not.toContain('admin-token-0123456789');
    expect(text).toContain('db.internal');
  });
});
