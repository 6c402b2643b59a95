// The `?period=YYYY-MM` query parameter of the reporting routes: a calendar month in UTC,
// defaulting to the current one.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { PERIOD_PATTERN, periodOf } from '../billing/billing-period.js';
import { ApiError } from '../errors/api-error.js';

export const PeriodQuerySchema = z.string().regex(PERIOD_PATTERN).optional().openapi({
  description: 'Calendar month in UTC, `YYYY-MM` (default: the current month)',
  example: '2026-11',
});

/** The request's period, or the current UTC month; INVALID_REQUEST when malformed. */
export function periodParam(c: Context, now: Date = new Date()): string {
  const raw = c.req.query('period');
  if (raw === undefined || raw === '') return periodOf(now);
  if (!PERIOD_PATTERN.test(raw)) {
    throw new ApiError('INVALID_REQUEST', `period must be a month as YYYY-MM, got "${raw.slice(0, 32)}".`);
  }
  return raw;
}

/** The query of a reporting route: `?period=YYYY-MM` and `?format=json|csv`. */
export const ReportQuerySchema = z.object({
  period: PeriodQuerySchema,
  format: z.enum(['json', 'csv']).optional(),
});

/** The 200 response of a reporting route: `schema` as JSON, or CSV text. */
export function jsonOrCsv(description: string, schema: z.ZodType) {
  return {
    description,
    content: { 'application/json': { schema }, 'text/csv': { schema: z.string() } },
  };
}
