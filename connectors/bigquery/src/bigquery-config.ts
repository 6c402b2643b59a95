// The BigQuery connection config an owner writes, validated once when the connection is created.
// Credentials are a service-account key (the JSON file Google issues, as text or as an object),
// or an explicit opt-in to application-default credentials. Endpoints are https, or http on a
// loopback address only (a local emulator or the test fake): tokens never travel in clear text
// over a network.
import { createPrivateKey } from 'node:crypto';
import { fieldUi, secretField } from '@quarry/sdk-connector';
import { z } from 'zod';

/** BigQuery's public API origin. */
export const DEFAULT_API_ENDPOINT = 'https://bigquery.googleapis.com';

/** Google's OAuth token endpoint, used when a key file names none. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** The parts of a service-account key the connector uses. */
export interface ServiceAccountKey {
  readonly clientEmail: string;
  /** PEM-encoded RSA private key. */
  readonly privateKey: string;
  readonly privateKeyId: string | undefined;
  /** Where access tokens come from: the key's `token_uri` (see {@link isAllowedTokenUri}). */
  readonly tokenUri: string;
}

/** True for `localhost`, `127.0.0.0/8` and `::1`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** An https URL, or an http one on a loopback host; never with user info. */
function isSafeUrl(url: URL): boolean {
  if (url.username !== '' || url.password !== '') return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether a key's `token_uri` may be used: https on a `googleapis.com` host (Google's endpoint,
 * or a Private Service Connect one), or a loopback URL when the API endpoint is loopback too (a
 * local fake). Anything else would let a key file make the gateway POST to an arbitrary host.
 */
export function isAllowedTokenUri(tokenUri: string, apiEndpoint: string | undefined): boolean {
  const url = parseUrl(tokenUri);
  if (url === undefined || !isSafeUrl(url)) return false;
  if (isLoopbackHost(url.hostname)) {
    const api = apiEndpoint === undefined ? undefined : parseUrl(apiEndpoint);
    return api !== undefined && isLoopbackHost(api.hostname);
  }
  return url.protocol === 'https:' && /(^|\.)googleapis\.com$/i.test(url.hostname);
}

const keyFileSchema = z.looseObject({
  type: z.literal('service_account', { message: 'must be "service_account"' }).optional(),
  client_email: z
    .string()
    .min(3)
    .max(320)
    .regex(/^[^@\s]+@[^@\s]+$/, 'must be an email address'),
  private_key: z.string().refine(isPrivateKey, 'must be a PEM private key'),
  private_key_id: z.string().max(200).optional(),
  token_uri: z.string().optional(),
  universe_domain: z
    .literal('googleapis.com', { message: 'only the googleapis.com universe is supported' })
    .optional(),
});

function isPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}

/** A service-account key file: its JSON text, or the parsed object. */
const credentialsSchema = z
  .union([z.string().min(2), z.record(z.string(), z.unknown())])
  .transform((raw, ctx): ServiceAccountKey => {
    let json: unknown = raw;
    if (typeof raw === 'string') {
      try {
        json = JSON.parse(raw);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be the JSON text of a service-account key file' });
        return z.NEVER;
      }
    }
    const parsed = keyFileSchema.safeParse(json);
    if (!parsed.success) {
      // Zod's messages never quote the value, so no key material reaches the error.
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path.map(String) });
      }
      return z.NEVER;
    }
    const key = parsed.data;
    return {
      clientEmail: key.client_email,
      privateKey: key.private_key,
      privateKeyId: key.private_key_id,
      tokenUri: key.token_uri ?? GOOGLE_TOKEN_URI,
    };
  });

const BYTES_MESSAGE = 'must be a positive whole number of bytes';

const apiEndpointSchema = z.string().transform((text, ctx) => {
  const url = parseUrl(text);
  if (url === undefined || !isSafeUrl(url) || url.search !== '' || url.hash !== '' || url.pathname !== '/') {
    ctx.addIssue({
      code: 'custom',
      message: 'must be an https origin like https://bigquery.googleapis.com (http only on a loopback host)',
    });
    return z.NEVER;
  }
  return url.origin;
});

/** Validates a BigQuery connection config. */
export const bigqueryConfigSchema = z
  .strictObject({
    /** The project jobs run (and are billed) in; unqualified dataset names resolve here. */
    projectId: fieldUi(
      z
        .string()
        .regex(
          /^(?:[a-z][a-z0-9.-]{0,62}:)?[a-z][a-z0-9-]{4,61}[a-z0-9]$/,
          'must be a Google Cloud project id',
        ),
      {
        label: 'Project id',
        help: 'The Google Cloud project queries run and are billed in.',
        placeholder: 'my-project-123',
        order: 1,
      },
    ),
    /** Where jobs run (`US`, `EU`, `europe-west1`, …); must match the datasets' location. */
    location: fieldUi(
      z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a BigQuery location such as US or europe-west1'),
      {
        label: 'Location',
        help: "Where jobs run; must match the datasets' location.",
        placeholder: 'EU',
        order: 3,
      },
    ).optional(),
    /** The default dataset: unqualified table names in analytics resolve in it. */
    dataset: fieldUi(
      z.string().regex(/^[A-Za-z0-9_]{1,1024}$/, 'must be a dataset id (letters, digits, underscores)'),
      {
        label: 'Default dataset',
        help: 'Table names without a dataset resolve in it.',
        placeholder: 'sales',
        order: 2,
      },
    ).optional(),
    /** A service-account key file (JSON text or object). Secret. */
    credentials: fieldUi(secretField(credentialsSchema), {
      label: 'Service-account key',
      help: 'Paste the JSON key file Google gives for a service account with the BigQuery Job User and Data Viewer roles. It is stored encrypted and never shown again.',
      placeholder: '{"type": "service_account", "client_email": "…", "private_key": "…"}',
      input: 'textarea',
      secret: true,
      order: 4,
    }).optional(),
    /**
     * `true` to use the gateway's application-default credentials instead of a key: queries then
     * run as the gateway's own identity, so only operators should make such connections.
     */
    applicationDefaultCredentials: fieldUi(z.literal(true), {
      label: "Use the gateway's own Google credentials",
      help: "Instead of a key: queries then run as the gateway's identity, so only its operator should choose this.",
      input: 'checkbox',
      advanced: true,
      order: 10,
    }).optional(),
    /** The API origin (default `https://bigquery.googleapis.com`): a private endpoint or a local fake. */
    apiEndpoint: fieldUi(apiEndpointSchema, {
      label: 'API endpoint',
      help: 'A private endpoint instead of https://bigquery.googleapis.com.',
      placeholder: 'https://bigquery.googleapis.com',
      input: 'url',
      advanced: true,
      order: 11,
    }).optional(),
    /** The cost guard: a job that would bill more bytes fails (`bytesBilledLimitExceeded`). */
    maximumBytesBilled: fieldUi(
      z.union(
        [
          z.number().int(BYTES_MESSAGE).positive(BYTES_MESSAGE).max(Number.MAX_SAFE_INTEGER),
          z.string().regex(/^[1-9]\d{0,17}$/, BYTES_MESSAGE),
        ],
        { message: BYTES_MESSAGE },
      ),
      {
        label: 'Maximum bytes billed',
        help: 'A cost guard: a query that would bill more bytes fails instead of running.',
        placeholder: '10000000000',
        input: 'number',
        order: 5,
      },
    )
      .transform(String)
      .optional(),
    /** Rows asked for per result page (default 10,000; the service also caps pages at about 10 MB). */
    pageSize: fieldUi(z.number().int().min(1).max(100_000), {
      label: 'Rows per page',
      help: 'Rows asked for per result page (default 10,000).',
      advanced: true,
      order: 12,
    }).optional(),
    /** Retries of a request that failed with 429/5xx or no response (default 2). */
    maxRetries: fieldUi(z.number().int().min(0).max(5), {
      label: 'Retries',
      help: 'Retries of a request that failed with 429, 5xx or no answer (default 2).',
      advanced: true,
      order: 13,
    }).optional(),
    /** How long opening a session (access token and a dry-run check) may take (default 10,000 ms). */
    connectTimeoutMs: fieldUi(z.number().int().min(100).max(600_000), {
      label: 'Connect timeout (ms)',
      help: 'How long opening a session may take (default 10,000).',
      advanced: true,
      order: 14,
    }).optional(),
  })
  .superRefine((config, ctx) => {
    const hasKey = config.credentials !== undefined;
    if (hasKey === (config.applicationDefaultCredentials === true)) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentials'],
        message: hasKey
          ? 'give either credentials or applicationDefaultCredentials, not both'
          : 'give credentials (a service-account key) or set applicationDefaultCredentials: true',
      });
    }
    // Application-default credentials are the gateway's own identity: its tokens go to Google's
    // API and nowhere an owner chooses.
    if (
      config.applicationDefaultCredentials === true &&
      config.apiEndpoint !== undefined &&
      config.apiEndpoint !== DEFAULT_API_ENDPOINT
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiEndpoint'],
        message: `must be ${DEFAULT_API_ENDPOINT} (or left out) with applicationDefaultCredentials`,
      });
    }
    if (
      config.credentials !== undefined &&
      !isAllowedTokenUri(config.credentials.tokenUri, config.apiEndpoint)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentials', 'token_uri'],
        message:
          'must be https on a googleapis.com host (a loopback URL only together with a loopback apiEndpoint)',
      });
    }
  });

/** A validated BigQuery connection config. */
export type BigqueryConfig = z.output<typeof bigqueryConfigSchema>;
