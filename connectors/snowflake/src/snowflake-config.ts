// The Snowflake connection config an owner writes, validated once when the connection is created:
// the account, the user and exactly one way to authenticate (password, or a key pair's private
// key with an optional passphrase), the session context (warehouse, database, schema, role), and
// an optional `accessUrl` for private link or a local test double. Secrets are marked so they are
// redacted from logs and listings and never echoed in errors.
import { fieldUi } from '@quarry/sdk-connector';
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
    account: fieldUi(
      z.string().regex(ACCOUNT, 'an account identifier such as myorg-myaccount or xy12345.eu-west-1'),
      {
        label: 'Account',
        help: 'Your account identifier: organisation-account, or a locator with its region.',
        placeholder: 'myorg-myaccount',
        order: 1,
      },
    ),
    /** Login name of a user with SELECT-only grants (see the README). */
    username: fieldUi(z.string().min(1), {
      label: 'User',
      help: 'A user with SELECT-only grants.',
      placeholder: 'QUARRY_READER',
      order: 2,
    }),
    /** Password authentication. */
    password: fieldUi(z.string().min(1), {
      label: 'Password',
      help: 'Give a password or a private key, not both.',
      secret: true,
      order: 3,
    }).optional(),
    /** Key-pair authentication: the user's private key, PEM (PKCS#8, encrypted PKCS#8 or PKCS#1). */
    privateKey: fieldUi(
      z.string().refine(isPemPrivateKey, 'must be a PEM private key (-----BEGIN … PRIVATE KEY-----)'),
      {
        label: 'Private key (key-pair authentication)',
        help: "The user's private key, PEM, instead of a password.",
        placeholder: '-----BEGIN PRIVATE KEY-----',
        input: 'textarea',
        secret: true,
        order: 4,
      },
    ).optional(),
    /** Passphrase of an encrypted `privateKey`. */
    privateKeyPassphrase: fieldUi(z.string().min(1), {
      label: 'Private key passphrase',
      help: 'Only for an encrypted private key.',
      secret: true,
      order: 5,
    }).optional(),
    warehouse: fieldUi(z.string().min(1), {
      label: 'Warehouse',
      placeholder: 'COMPUTE_WH',
      order: 6,
    }).optional(),
    database: fieldUi(z.string().min(1), {
      label: 'Database',
      placeholder: 'ANALYTICS',
      order: 7,
    }).optional(),
    schema: fieldUi(z.string().min(1), { label: 'Schema', placeholder: 'PUBLIC', order: 8 }).optional(),
    role: fieldUi(z.string().min(1), { label: 'Role', placeholder: 'REPORTER', order: 9 }).optional(),
    /**
     * The service root to talk to instead of `https://<account>.snowflakecomputing.com`, e.g. a
     * private-link host. https only; plain http only for loopback (a local test server).
     */
    accessUrl: fieldUi(z.string(), {
      label: 'Access URL',
      help: 'A private-link address to use instead of https://<account>.snowflakecomputing.com.',
      placeholder: 'https://myorg-myaccount.privatelink.snowflakecomputing.com',
      input: 'url',
      advanced: true,
      order: 20,
    })
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
