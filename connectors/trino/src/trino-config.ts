// The connection config an owner gives for a Trino (or Starburst) cluster, validated once when
// the connection is created: the coordinator URL, the user, one way to authenticate (basic
// password or JWT bearer token, both secret fields), and the default catalog and schema.
import { fieldUi } from '@quarry/sdk-connector';
import { z } from 'zod';

/** Printable ASCII: every field here travels in an HTTP header, where nothing else is allowed. */
const HEADER_SAFE = /^[\x20-\x7e]+$/;
const HEADER_SAFE_MESSAGE = 'must be printable ASCII (it is sent in an HTTP header)';

const headerText = (max: number) => z.string().min(1).max(max).regex(HEADER_SAFE, HEADER_SAFE_MESSAGE);

/** True for `localhost`, `127.0.0.0/8` and `[::1]`: the only hosts a credential may reach over http. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/** Validates a Trino connection config. */
export const trinoConfigSchema = z
  .strictObject({
    /** The coordinator's base URL, e.g. `https://trino.example.com` or `https://host:8443/prefix`. */
    server: fieldUi(z.string().min(1).max(2048), {
      label: 'Server URL',
      help: "The coordinator's address; https whenever a password or token is set.",
      placeholder: 'https://trino.example.com',
      input: 'url',
      order: 1,
    }),
    /** The Trino user (`X-Trino-User`); with `password`, also the basic-auth user name. */
    user: fieldUi(headerText(256), { label: 'User', placeholder: 'quarry', order: 2 }),
    /** Basic authentication (HTTPS only, except to loopback). */
    password: fieldUi(z.string().min(1).max(1024).regex(HEADER_SAFE, HEADER_SAFE_MESSAGE), {
      label: 'Password',
      help: 'Basic authentication; or give an access token instead.',
      secret: true,
      order: 3,
    }).optional(),
    /** A JWT sent as `Authorization: Bearer …` (HTTPS only, except to loopback). */
    accessToken: fieldUi(z.string().min(1).max(16_384).regex(HEADER_SAFE, HEADER_SAFE_MESSAGE), {
      label: 'Access token (JWT)',
      help: 'Sent as a bearer token, instead of a password.',
      secret: true,
      order: 4,
    }).optional(),
    /** The default catalog (`X-Trino-Catalog`); unqualified table names resolve in it. */
    catalog: fieldUi(headerText(256), {
      label: 'Catalog',
      help: 'Table names without a catalog resolve in it.',
      placeholder: 'hive',
      order: 5,
    }).optional(),
    /** The default schema (`X-Trino-Schema`); needs `catalog`. */
    schema: fieldUi(headerText(256), {
      label: 'Schema',
      help: 'Needs a catalog.',
      placeholder: 'sales',
      order: 6,
    }).optional(),
    /** Shown in Trino's query list as the query's source (`X-Trino-Source`, default `quarry`). */
    source: fieldUi(headerText(128), {
      label: 'Source name',
      help: "Shown in Trino's query list (default quarry).",
      placeholder: 'quarry',
      advanced: true,
      order: 10,
    }).optional(),
    /** How long opening a session (a `SELECT 1` round trip) may take (default 10,000 ms). */
    connectTimeoutMs: fieldUi(z.number().int().positive().max(600_000), {
      label: 'Connect timeout (ms)',
      help: 'How long opening a session may take (default 10,000).',
      advanced: true,
      order: 11,
    }).optional(),
  })
  .superRefine((config, ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(config.server);
    } catch {
      ctx.addIssue({ code: 'custom', path: ['server'], message: 'must be an http:// or https:// URL' });
    }
    if (url !== undefined) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        ctx.addIssue({ code: 'custom', path: ['server'], message: 'must be an http:// or https:// URL' });
      }
      if (url.username !== '' || url.password !== '') {
        ctx.addIssue({
          code: 'custom',
          path: ['server'],
          message: 'must not carry credentials: use user and password (or accessToken)',
        });
      }
      if (url.search !== '' || url.hash !== '') {
        ctx.addIssue({
          code: 'custom',
          path: ['server'],
          message: 'must not have a query string or fragment',
        });
      }
      const credential = config.password !== undefined || config.accessToken !== undefined;
      if (credential && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
        ctx.addIssue({
          code: 'custom',
          path: ['server'],
          message:
            'must use https:// when a password or accessToken is set (http is only allowed to loopback)',
        });
      }
    }
    if (config.password !== undefined && config.accessToken !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['accessToken'],
        message: 'give either password (basic auth) or accessToken (JWT), not both',
      });
    }
    if (config.schema !== undefined && config.catalog === undefined) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'needs catalog as well' });
    }
  });

/** A validated Trino connection config. */
export type TrinoConfig = z.output<typeof trinoConfigSchema>;

/** How a connector authenticates to Trino. */
export type TrinoAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'basic'; readonly password: string }
  | { readonly kind: 'jwt'; readonly token: string };

/** Everything a session needs, resolved once per connector. */
export interface TrinoSettings {
  /** The base URL without a trailing slash. */
  readonly server: string;
  readonly user: string;
  readonly auth: TrinoAuth;
  readonly catalog: string | undefined;
  readonly schema: string | undefined;
  readonly source: string;
  readonly connectTimeoutMs: number;
}

/** Resolves a validated config into session settings, with defaults. */
export function resolveTrinoSettings(config: TrinoConfig): TrinoSettings {
  const auth: TrinoAuth =
    config.password !== undefined
      ? { kind: 'basic', password: config.password }
      : config.accessToken !== undefined
        ? { kind: 'jwt', token: config.accessToken }
        : { kind: 'none' };
  return {
    server: config.server.replace(/\/+$/, ''),
    user: config.user,
    auth,
    catalog: config.catalog,
    schema: config.schema,
    source: config.source ?? 'quarry',
    connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
  };
}
