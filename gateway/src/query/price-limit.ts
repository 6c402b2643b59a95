// A caller's price limit (issue 29): `max_credits` on a query call refuses it when the price in
// force is above it, before any warehouse work and with nothing charged or counted. It travels
// as a body field (POST /v1/query), a query-string parameter (GET /v1/analytics/{name}) and an
// MCP tool argument; the last two sit beside the analytic's own params, so the name is reserved
// for params at deploy (an analytic stored before that with such a param keeps it as its param).
import { ApiError } from '../errors/api-error.js';

export const MAX_CREDITS = 'max_credits';

/** A positive whole number of credits; INVALID_REQUEST otherwise. Strings are the query string's. */
export function parseMaxCredits(value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new ApiError('INVALID_REQUEST', `${MAX_CREDITS} must be a positive whole number of credits.`, {
      details: [{ field: MAX_CREDITS, message: 'must be a positive integer' }],
    });
  }
  return n;
}

/** PRICE_ABOVE_LIMIT when a call costing `credits` exceeds the caller's `max`. */
export function checkPriceLimit(source: string, credits: number, max: number | undefined): void {
  if (max === undefined || credits <= max) return;
  throw new ApiError(
    'PRICE_ABOVE_LIMIT',
    `A call of "${source}" costs ${credits} credits, above your max_credits of ${max}: nothing was run or charged.`,
    {
      details: [
        { field: 'price', value: credits, message: `This call costs ${credits} credits.` },
        { field: MAX_CREDITS, value: max, message: `You allowed at most ${max} credits.` },
      ],
    },
  );
}
