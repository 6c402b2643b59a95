// GET /v1/account/calls: the account's recent calls, newest first, over the last 30 days (the
// console's "Recent calls" page, docs/console.md): served calls from the usage ledger and failed
// calls (free), filterable by analytic and status, paged by an opaque keyset cursor.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { route, valid } from '../http/route.js';
import type { CallCursor, CallRecord, CallStatusFilter } from '../money/call-log-repository.js';
import { millicreditsToCredits } from '../money/units.js';

/** How far back the listing reaches. */
export const CALLS_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;
const AT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeCursor(c: CallCursor): string {
  return Buffer.from(JSON.stringify([c.at, c.requestId]), 'utf8').toString('base64url');
}

export function decodeCursor(text: string): CallCursor | null {
  if (text.length > 400 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [at, requestId] = value as unknown[];
    if (typeof at !== 'string' || !AT_PATTERN.test(at) || Number.isNaN(Date.parse(at))) return null;
    if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > 200) return null;
    return { at, requestId };
  } catch {
    return null;
  }
}

const CallsQuerySchema = z.object({
  analytic: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: 'Only calls of this analytic (its name as called)' }),
  status: z
    .string()
    .regex(/^(ok|failed|[A-Z][A-Z0-9_]{0,63})$/, 'must be ok, failed or an error code')
    .optional()
    .openapi({
      description: '`ok` (served), `failed` (every failed call), or an error code such as `QUERY_TIMEOUT`',
      example: 'failed',
    }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .openapi({ description: 'Calls in a page, 1 to 100 (default 50)' }),
  cursor: z
    .string()
    .max(400)
    .refine((v) => decodeCursor(v) !== null, 'not a cursor this listing gave')
    .optional()
    .openapi({ description: "The previous page's `next_cursor`" }),
});

const CallSchema = z
  .object({
    request_id: z.string().openapi({ description: 'The `X-Request-Id` the call was answered with' }),
    analytic: z.string(),
    version: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'The version that served the call (null: not recorded for failed calls)' }),
    status: z.string().openapi({ description: '`ok`, or the error code the caller got' }),
    error_code: z.string().nullable().openapi({ description: 'The error code; null for a served call' }),
    credits: z.number().openapi({ description: 'Credits charged (failed calls are free: 0)' }),
    latency_ms: z.number().nullable().openapi({
      description: 'Served: the call’s latency; failed: how long it waited on the warehouse',
    }),
    origin: z
      .enum(['paid', 'free', 'marketplace', 'owner'])
      .nullable()
      .openapi({ description: 'How a served call was counted (null for failed calls)' }),
    at: z.string().openapi({ description: 'When the call came in (served) or failed, ISO 8601 UTC' }),
  })
  .openapi('Call');

const CallsSchema = z
  .object({
    items: z.array(CallSchema),
    next_cursor: z
      .string()
      .nullable()
      .openapi({ description: 'Pass as `cursor` for older calls; null: no more' }),
  })
  .openapi('Calls');

function statusFilter(status: string | undefined): CallStatusFilter | undefined {
  if (status === undefined || status === 'ok' || status === 'failed') return status;
  return { code: status };
}

const callJson = (r: CallRecord) => ({
  request_id: r.requestId,
  analytic: r.analytic,
  version: r.version,
  status: r.status,
  error_code: r.status === 'ok' ? null : r.status,
  credits: millicreditsToCredits(r.millicredits),
  latency_ms: r.latencyMs === null ? null : Math.round(r.latencyMs),
  origin: r.origin,
  at: new Date(r.at).toISOString(),
});

export function registerCallsRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/calls',
      tags: ['Accounts'],
      summary: "The account's recent calls, newest first (last 30 days)",
      description: [
        'Served calls (from the usage ledger) and failed calls (timeouts, results too large,',
        'warehouse errors: free), newest first, over the last 30 days. Calls refused before any',
        'work (401, 403, 429, 400 such as invalid params) are not stored and never appear, and',
        'whether a served call was answered from the cache is not recorded. Page with `limit` and',
        'the opaque `next_cursor`; filter by `analytic` and `status`. On a gateway with a read',
        'replica (QUARRY_READ_DATABASE_URL) it is read there, and may lag by the replica’s delay.',
      ].join(' '),
      security: BEARER,
      request: { query: CallsQuerySchema },
      responses: {
        200: { description: 'Calls', content: { 'application/json': { schema: CallsSchema } } },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const q = valid(c, 'query', CallsQuerySchema);
      const limit = q.limit ?? 50;
      const now = new Date();
      const status = statusFilter(q.status);
      const before = q.cursor === undefined ? undefined : (decodeCursor(q.cursor) ?? undefined);
      const rows = await c.var.services.reads.calls.list({
        accountId: c.var.principal.accountId,
        since: new Date(now.getTime() - CALLS_WINDOW_DAYS * DAY_MS),
        until: now,
        limit: limit + 1,
        ...(q.analytic === undefined ? {} : { analytic: q.analytic }),
        ...(status === undefined ? {} : { status }),
        ...(before === undefined ? {} : { before }),
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return c.json({
        items: page.map(callJson),
        next_cursor:
          rows.length > limit && last !== undefined
            ? encodeCursor({ at: last.at, requestId: last.requestId })
            : null,
      });
    },
  );
}
