// The `?period=YYYY-MM` query parameter of the reporting routes: a calendar month in UTC,
// defaulting to the current one.
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { PERIOD_PATTERN, periodOf } from '../money/billing-period.js';
import type { AppEnv } from './app-env.js';
import { valid } from './route.js';

/** A calendar month in UTC, `YYYY-MM`. */
export const PeriodSchema = z.string().regex(PERIOD_PATTERN, 'must be a month as YYYY-MM');

export const PeriodQuerySchema = z
  .union([PeriodSchema, z.literal('')])
  .optional()
  .openapi({
    description: 'Calendar month in UTC, `YYYY-MM` (default: the current month)',
    example: '2026-11',
  });

/** The request's validated `?period=`, or the current UTC month. */
export function periodParam(c: Context<AppEnv>, now: Date = new Date()): string {
  const { period } = valid(c, 'query', ReportQuerySchema);
  return period === undefined || period === '' ? periodOf(now) : period;
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
