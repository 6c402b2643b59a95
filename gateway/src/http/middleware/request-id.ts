// Gives every request a fresh server-generated id and echoes it on every response, errors
// included. A caller-sent X-Request-Id is not trusted: the id keys usage events, so it must be
// unique and ours.
import { randomBytes } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';

// This process's part of every id it makes: 52 random bits (13 hex digits), drawn once.
const INSTANCE = randomBytes(7).toString('hex').slice(0, 13);
/** Ids made by this process within the current millisecond (7 hex digits, 2^28 per ms). */
let sequence = 0;
let lastMs = -1;
let msHex = '';

/**
 * A fresh request id: `req_` and 32 hex digits, time-ordered like a UUIDv7: 12 digits of the
 * Unix time in milliseconds, then 13 digits naming this process (52 random bits drawn at start)
 * and 7 digits counting the ids it made in that millisecond. Unique across instances as long as
 * no two live processes draw the same 52 bits (about 1 in 10^14 for 10 instances), and made
 * without a random draw per request (it is on the cache-hit path; measured with
 * bench/src/profile-gateway.ts). The id is the usage ledger's primary key, and a random key
 * scatters every insert over the whole index (a page split, and after each checkpoint a
 * full-page image in the WAL, per insert); time-ordered ids append at its right edge.
 */
export function newRequestId(): string {
  const ms = Date.now();
  // A clock that steps back keeps counting on from the later reading's ids: never a repeat.
  if (ms > lastMs) {
    lastMs = ms;
    msHex = ms.toString(16).padStart(12, '0');
    sequence = 0;
  }
  const n = sequence++;
  if (n >= 0x10000000) {
    // 2^28 ids in one millisecond cannot happen; if it did, borrow the next millisecond.
    lastMs += 1;
    msHex = lastMs.toString(16).padStart(12, '0');
    sequence = 1;
    return `req_${msHex}${INSTANCE}0000000`;
  }
  return `req_${msHex}${INSTANCE}${n.toString(16).padStart(7, '0')}`;
}

export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const id = newRequestId();
    c.set('requestId', id);
    c.header('x-request-id', id);
    await next();
  };
}
