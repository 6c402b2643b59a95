// The Postgres connection config (validated once, by zod) and the settings every session of a
// connector opens with. Either discrete fields or a `postgres://` URL; nothing is ever taken from
// the gateway's environment (PGHOST, PGPASSWORD, ~/.pgpass), which pg would otherwise consult for
// whatever a config leaves out, so one owner's connection can never pick up another's secrets.
import { fieldUi, secretField } from '@quarry/sdk-connector';
import { z } from 'zod';

const sslSchema = z.union([
  z.boolean(),
  z
    .object({
      /** Verify the server certificate (default true). */
      rejectUnauthorized: z.boolean().optional(),
      /** PEM CA certificate(s) to trust instead of Node's bundle. */
      ca: z.string().min(1).optional(),
    })
    .strict(),
]);

const TLS_OPTIONS = [
  { value: true, label: 'On, verifying the server certificate' },
  { value: { rejectUnauthorized: false }, label: 'On, without verifying the certificate' },
  { value: false, label: 'Off' },
];

const commonFields = {
  /** `true` (verify against Node's CAs), `false`, or `{rejectUnauthorized?, ca?}`. */
  ssl: fieldUi(sslSchema, {
    label: 'TLS',
    help: 'Encrypt the connection. Leave it at the default unless your server needs otherwise.',
    input: 'select',
    options: TLS_OPTIONS,
    order: 20,
  }).optional(),
  /** Shown in pg_stat_activity (default `quarry`). */
  applicationName: fieldUi(z.string().min(1).max(63), {
    label: 'Application name',
    help: 'How these sessions show in pg_stat_activity (default quarry).',
    placeholder: 'quarry',
    advanced: true,
    order: 30,
  }).optional(),
  /** A schema to put first on the search_path. */
  schema: fieldUi(z.string().min(1).max(63), {
    label: 'Schema',
    help: 'Put first on the search path, so queries can name its tables without a prefix.',
    placeholder: 'public',
    order: 21,
  }).optional(),
  /** Give up connecting after this long (default 5,000 ms). */
  connectTimeoutMs: fieldUi(z.number().int().positive().max(600_000), {
    label: 'Connect timeout (ms)',
    help: 'Give up connecting after this many milliseconds (default 5,000).',
    placeholder: '5000',
    advanced: true,
    order: 31,
  }).optional(),
  /** The statement_timeout a new session starts with (default 30,000 ms, the SDK's default query timeout). */
  statementTimeoutMs: fieldUi(z.number().int().nonnegative().max(2_147_483_647), {
    label: 'Statement timeout (ms)',
    help: 'The longest a query may run on the server (default 30,000).',
    placeholder: '30000',
    advanced: true,
    order: 32,
  }).optional(),
  /**
   * `true` (default): the server stops at the row cap. Postgres never uses parallel workers for
   * such a fetch; `false` lets it, and the server then sends every row while the connector keeps
   * only the first `rowLimit`.
   */
  portalRowLimit: fieldUi(z.boolean(), {
    label: 'Stop the server at the row cap',
    help: 'On by default. Off lets Postgres use parallel workers; it then sends every row and the extra ones are dropped here.',
    input: 'select',
    options: [
      { value: true, label: 'On' },
      { value: false, label: 'Off' },
    ],
    advanced: true,
    order: 33,
  }).optional(),
};

const discreteSchema = z
  .object({
    host: fieldUi(z.string().min(1), {
      label: 'Host',
      help: "The server's name or address, as this gateway reaches it.",
      placeholder: 'db.example.com',
      order: 1,
    }),
    port: fieldUi(z.number().int().min(1).max(65_535), {
      label: 'Port',
      placeholder: '5432',
      order: 2,
    }).default(5432),
    database: fieldUi(z.string().min(1), { label: 'Database', placeholder: 'analytics', order: 3 }),
    user: fieldUi(z.string().min(1), {
      label: 'User',
      help: 'Give it read-only grants: analytics only ever read.',
      placeholder: 'quarry_reader',
      order: 4,
    }),
    password: fieldUi(z.string(), { label: 'Password', secret: true, order: 5 }).optional(),
    ...commonFields,
  })
  .strict()
  .meta({ ui: { label: 'Host, database and user', order: 1 } });

const urlSchema = z
  .object({
    /** `postgres://user:password@host:port/database?sslmode=…&application_name=…`. */
    connectionString: fieldUi(
      secretField(
        z.string().refine((value) => parsePostgresUrl(value) !== undefined, {
          message: 'must be a postgres:// or postgresql:// URL naming a host',
        }),
      ),
      {
        label: 'Connection URL',
        help: 'The whole address, password included; it is stored encrypted and never shown again.',
        placeholder: 'postgres://user:password@db.example.com:5432/analytics',
        secret: true,
        order: 1,
      },
    ),
    ...commonFields,
  })
  .strict()
  .meta({ ui: { label: 'A connection URL', order: 2 } });

/** The config schema of the Postgres connector: discrete fields, or a `connectionString`. */
export const postgresConfigSchema = z.union([urlSchema, discreteSchema]);

/** A validated Postgres connection config. */
export type PostgresConfig = z.infer<typeof postgresConfigSchema>;

/** The parts of a connection URL we honour. */
export interface PostgresUrlParts {
  readonly host: string;
  readonly port: number;
  readonly database: string | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly ssl: boolean | { readonly rejectUnauthorized: boolean } | undefined;
  readonly applicationName: string | undefined;
}

function decode(text: string): string | undefined {
  return text === '' ? undefined : decodeURIComponent(text);
}

/**
 * Parses `postgres[ql]://[user[:password]@]host[:port][/database][?params]`; honours `sslmode`
 * (disable; require/prefer/no-verify = TLS without verification; verify-ca/verify-full = TLS
 * verified), `host` (e.g. a Unix socket directory) and `application_name`; ignores the rest.
 * Undefined when the text is not such a URL.
 */
export function parsePostgresUrl(text: string): PostgresUrlParts | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return undefined;
  const params = url.searchParams;
  const host = params.get('host') ?? decode(url.hostname.replace(/^\[(.*)\]$/, '$1'));
  if (host === undefined || host === '') return undefined;
  const sslmode = params.get('sslmode');
  const ssl =
    sslmode === null
      ? params.get('ssl') === 'true'
        ? true
        : undefined
      : sslmode === 'disable' || sslmode === 'allow'
        ? false
        : sslmode === 'verify-ca' || sslmode === 'verify-full'
          ? true
          : { rejectUnauthorized: false };
  return {
    host,
    port: url.port === '' ? 5432 : Number(url.port),
    database: decode(url.pathname.slice(1)),
    user: decode(url.username),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
    ssl,
    applicationName: params.get('application_name') ?? undefined,
  };
}

/** TLS options in pg's shape. */
export type PostgresSsl =
  | false
  | { readonly rejectUnauthorized?: boolean; readonly ca?: string; readonly servername?: string };

/** Everything a session needs to connect, resolved once per connector. */
export interface PostgresSettings {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  readonly ssl: PostgresSsl;
  readonly applicationName: string;
  readonly connectTimeoutMs: number;
  readonly statementTimeoutMs: number;
  readonly portalRowLimit: boolean;
  /** The startup `options` (`-c name=value …`) that make every session read-only and predictable. */
  readonly startupOptions: string;
}

/** Quotes an identifier for search_path (`"my schema"`). */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Escapes a value inside the startup `options` string, where spaces separate arguments. */
function escapeOption(value: string): string {
  return value.replace(/[\\ ]/g, '\\$&');
}

/** The `-c` settings every session starts with; `statementTimeoutMs` may change per query. */
export function postgresStartupOptions(statementTimeoutMs: number, schema: string | undefined): string {
  const settings = [
    // The guard against writes: every transaction, implicit ones included, starts read-only.
    'default_transaction_read_only=on',
    `statement_timeout=${statementTimeoutMs}`,
    // Output formats our parsers rely on, whatever the server's or the role's defaults are.
    'DateStyle=ISO',
    'bytea_output=hex',
    'client_encoding=UTF8',
    // Shortest exact float text on every server version (the default before Postgres 12 was lossy).
    'extra_float_digits=3',
    // The SDK's read-only check reads '…' without backslash escapes; the server must agree.
    'standard_conforming_strings=on',
  ];
  if (schema !== undefined) settings.push(`search_path=${quoteIdentifier(schema)}`);
  return settings.map((setting) => `-c ${escapeOption(setting)}`).join(' ');
}

function toPgSsl(ssl: PostgresConfig['ssl'] | PostgresUrlParts['ssl']): PostgresSsl {
  if (ssl === undefined || ssl === false) return false;
  if (ssl === true) return {};
  return ssl;
}

/** Resolves a validated config into session settings: explicit fields win over URL parts. */
export function resolvePostgresSettings(config: PostgresConfig): PostgresSettings {
  const url = 'connectionString' in config ? parsePostgresUrl(config.connectionString) : undefined;
  const statementTimeoutMs = config.statementTimeoutMs ?? 30_000;
  const common = {
    ssl: toPgSsl(config.ssl ?? url?.ssl),
    applicationName: config.applicationName ?? url?.applicationName ?? 'quarry',
    connectTimeoutMs: config.connectTimeoutMs ?? 5000,
    statementTimeoutMs,
    portalRowLimit: config.portalRowLimit ?? true,
    startupOptions: postgresStartupOptions(statementTimeoutMs, config.schema),
  };
  if ('connectionString' in config) {
    // The refine above guarantees the URL parses.
    const parts = url!;
    const user = parts.user ?? 'postgres';
    return {
      host: parts.host,
      port: parts.port,
      database: parts.database ?? user,
      user,
      password: parts.password ?? '',
      ...common,
    };
  }
  return {
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    password: config.password ?? '',
    ...common,
  };
}
