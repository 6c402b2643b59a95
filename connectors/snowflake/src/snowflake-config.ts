// The Snowflake connection config an owner writes, validated once when the connection is created:
// the account, the user and exactly one way to authenticate (password, or a key pair's private
// key with an optional passphrase), the session context (warehouse, database, schema, role), and
// an optional `accessUrl` for private link or a local test double. Secrets are marked so they are
// redacted from logs and listings and never echoed in errors.
import { secretField } from '@quarry/sdk-connector';
import { z } from 'zod';

/** What snowflake-sdk itself accepts as an account (`xy12345`, `xy12345.eu-west-1.aws`, `org-acct`). */
const ACCOUNT = /^\w+([.-]\w+)*$/;

const PEM_HEADERS = ['PRIVATE KEY', 'ENCRYPTED PRIVATE KEY', 'RSA PRIVATE KEY'] as const;

/** The PEM forms snowflake-sdk 3.3.0 takes for `privateKey` (PKCS#8, encrypted PKCS#8, PKCS#1). */
export function isPemPrivateKey(value: string): boolean {
  const pem = value.trim();
  return PEM_HEADERS.some(
    (label) => pem.startsWith(`-----BEGIN ${label}-----`) && pem.endsWith(`\n-----END ${label}-----`),
  );
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why `value` cannot be an access URL, or undefined when it can. */
function accessUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL such as https://myorg-myaccount.privatelink.snowflakecomputing.com';
  }
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    return 'must be the service root only (no path, query or fragment)';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (plain http is allowed only for a loopback test server)';
}

/** Validates a Snowflake connection config. */
export const snowflakeConfigSchema = z
  .strictObject({
    /** Account identifier: `orgname-accountname`, or a locator with region (`xy12345.eu-west-1.aws`). */
    account: z.string().regex(ACCOUNT, 'an account identifier such as myorg-myaccount or xy12345.eu-west-1'),
    /** Login name of a user with SELECT-only grants (see the README). */
    username: z.string().min(1),
    /** Password authentication. */
    password: secretField(z.string().min(1)).optional(),
    /** Key-pair authentication: the user's private key, PEM (PKCS#8, encrypted PKCS#8 or PKCS#1). */
    privateKey: secretField(
      z.string().refine(isPemPrivateKey, 'must be a PEM private key (-----BEGIN … PRIVATE KEY-----)'),
    ).optional(),
    /** Passphrase of an encrypted `privateKey`. */
    privateKeyPassphrase: secretField(z.string().min(1)).optional(),
    warehouse: z.string().min(1).optional(),
    database: z.string().min(1).optional(),
    schema: z.string().min(1).optional(),
    role: z.string().min(1).optional(),
    /**
     * The service root to talk to instead of `https://<account>.snowflakecomputing.com`, e.g. a
     * private-link host. https only; plain http only for loopback (a local test server).
     */
    accessUrl: z
      .string()
      .superRefine((value, ctx) => {
        const problem = accessUrlProblem(value);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .transform((value) => value.replace(/\/+$/, ''))
      .optional(),
  })
  .superRefine((config, ctx) => {
    const password = config.password !== undefined;
    const key = config.privateKey !== undefined;
    if (password === key) {
      ctx.addIssue({
        code: 'custom',
        path: [password ? 'privateKey' : 'password'],
        message: 'give exactly one of password or privateKey (key-pair authentication)',
      });
    }
    if (config.privateKeyPassphrase !== undefined && !key) {
      ctx.addIssue({
        code: 'custom',
        path: ['privateKeyPassphrase'],
        message: 'privateKeyPassphrase is only used with privateKey',
      });
    }
  });

/** A validated Snowflake connection config. */
export type SnowflakeConfig = z.output<typeof snowflakeConfigSchema>;
