// Schemas shared by several routes: the error envelope and the standard error responses.
import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../errors/error-codes.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      request_id: z.string(),
      retry_after: z.number().optional().openapi({ description: 'Seconds until a retry may succeed' }),
      details: z.array(
        z.object({
          param: z.string().optional(),
          field: z.string().optional(),
          value: z
            .number()
            .optional()
            .openapi({ description: 'QUOTA_EXCEEDED: the credits the call needs and those left' }),
          message: z.string(),
        }),
      ),
    }),
  })
  .openapi('Error');

/** An OpenAPI header object (a type alias, so it fits HeaderObject's `x-…` index signature). */
export type HeaderDoc = {
  readonly description: string;
  readonly schema: { type: 'string'; enum?: string[]; pattern?: string };
};

/** A string header and what it says, optionally with its values or their pattern. */
export const header = (
  description: string,
  values: { enum?: string[]; pattern?: string } = {},
): HeaderDoc => ({ description, schema: { type: 'string', ...values } });

/** Sent on every response. */
export const EVERY_RESPONSE_HEADERS = {
  'X-Request-Id': header(
    "This request's id, as in the error envelope and the access log: quote it to support",
  ),
  'X-Content-Type-Options': header('`nosniff`: a browser must not read an answer as another type'),
} as const;

/**
 * Sent once the caller is authenticated (IETF draft-ietf-httpapi-ratelimit-headers): the key's
 * rate limit as `"default"`, and on the query routes the account's monthly quota as `"monthly"`.
 */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': header(
    'The limits that apply: `"default";q=<requests>;w=<window seconds>` for the key\'s rate limit, then `"monthly";q=<calls>;w=<seconds to the period end>` for the plan\'s quota (query routes)',
  ),
  RateLimit: header(
    'What is left of each: `"default";r=<remaining>;t=<seconds to reset>`, then `"monthly";r=<calls left>;t=<seconds to the period end>`',
  ),
} as const;

const RETRY_AFTER_HEADER = {
  'Retry-After': header(
    'Whole seconds (rounded up) until a retry may succeed; `retry_after` has the exact figure',
    {
      pattern: '^[0-9]+$',
    },
  ),
} as const;

/** An error response in the envelope, with X-Request-Id and any other headers it carries. */
export const errorResponse = (description: string, headers: Record<string, HeaderDoc> = {}) => ({
  description,
  headers: { ...EVERY_RESPONSE_HEADERS, ...headers },
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
});

/** Error responses every authenticated route can return. */
export const AUTHED_ERRORS = {
  400: errorResponse('Invalid request', RATE_LIMIT_HEADERS),
  401: errorResponse('Missing, malformed, unknown, revoked or expired credential', {
    'WWW-Authenticate': header('`Bearer realm="quarry"`'),
  }),
  403: errorResponse('The key lacks the scope this route needs', RATE_LIMIT_HEADERS),
  429: errorResponse('Rate limit (RATE_LIMIT_EXCEEDED) or monthly quota (QUOTA_EXCEEDED) exceeded', {
    ...RATE_LIMIT_HEADERS,
    ...RETRY_AFTER_HEADER,
  }),
  500: errorResponse('Internal error', RATE_LIMIT_HEADERS),
} as const;

export const NOT_FOUND_ERROR = { 404: errorResponse('Not found') } as const;
export const CONFLICT_ERROR = {
  409: errorResponse("Conflict: a duplicate name, or the account's limit on such resources reached"),
} as const;
/** The account already holds as many of this resource as the operator allows. */
export const LIMIT_ERROR = { 409: errorResponse("The account's limit on this resource is reached") } as const;
export const BODY_ERRORS = {
  413: errorResponse('Body over the size limit', RATE_LIMIT_HEADERS),
  415: errorResponse('Body not sent as application/json', RATE_LIMIT_HEADERS),
} as const;
export const QUERY_ERRORS = {
  404: errorResponse('Unknown analytic (also one the caller may not see)', RATE_LIMIT_HEADERS),
  422: errorResponse(
    'RESULT_TOO_LARGE: the result for these params passed QUARRY_MAX_RESULT_BYTES (not retried, not charged)',
    RATE_LIMIT_HEADERS,
  ),
  502: errorResponse('The warehouse rejected or failed the query', RATE_LIMIT_HEADERS),
  503: errorResponse('Warehouse unreachable or busy', { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER_HEADER }),
  504: errorResponse('The query ran past its time limit and was cancelled', RATE_LIMIT_HEADERS),
} as const;

export const BEARER = [{ bearerAuth: [] }];
