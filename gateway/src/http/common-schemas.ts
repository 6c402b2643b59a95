// Schemas shared by several routes: the error envelope and the standard error responses.
import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from './error-codes.js';

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES as [string, ...string[]]),
      message: z.string(),
      request_id: z.string(),
      retry_after: z.number().optional().openapi({ description: 'Seconds until a retry may succeed' }),
      details: z.array(
        z.object({ param: z.string().optional(), field: z.string().optional(), message: z.string() }),
      ),
    }),
  })
  .openapi('Error');

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelopeSchema } },
});

/** Error responses every authenticated route can return. */
export const AUTHED_ERRORS = {
  400: errorResponse('Invalid request'),
  401: errorResponse('Missing, malformed, unknown, revoked or expired credential'),
  403: errorResponse('The key lacks the scope this route needs'),
  429: errorResponse('Rate limit or quota exceeded'),
  500: errorResponse('Internal error'),
} as const;

export const NOT_FOUND_ERROR = { 404: errorResponse('Not found') } as const;
export const CONFLICT_ERROR = { 409: errorResponse('Conflict (e.g. a duplicate name)') } as const;
export const BODY_ERRORS = {
  413: errorResponse('Body over the size limit'),
  415: errorResponse('Body not sent as application/json'),
} as const;
export const QUERY_ERRORS = {
  404: errorResponse('Unknown analytic (also one the caller may not see)'),
  502: errorResponse('The warehouse rejected or failed the query'),
  503: errorResponse('Warehouse unreachable or busy'),
  504: errorResponse('The query ran past its time limit and was cancelled'),
} as const;

export const BEARER = [{ bearerAuth: [] }];
