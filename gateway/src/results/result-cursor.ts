// Page cursors (`meta.next`): opaque to callers, unforgeable, bound to the account. A cursor
// names the instance holding its snapshot, then carries the snapshot id, the account, where the
// page starts (row and byte offset in the snapshot's file) and the page size, signed with
// HMAC-SHA256 under a key drawn at start by this process: no other process can make or alter
// one, and a cursor outlives neither its snapshot nor the process that made it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';

/** Where a page starts, and for whom. */
export interface CursorState {
  readonly snapshot: string;
  readonly accountId: string;
  /** Row index of the page's first row. */
  readonly row: number;
  /** Byte offset of that row in the snapshot's file. */
  readonly byte: number;
  readonly pageSize: number;
}

export interface ResultCursors {
  encode(state: CursorState): string;
  /**
   * The state of a cursor this process made for `accountId`. INVALID_REQUEST for anything
   * malformed, forged or another account's; CURSOR_EXPIRED for one another instance made.
   */
  decode(cursor: string, accountId: string): CursorState;
}

/** The error of a cursor whose snapshot is gone: the caller reruns the query. */
export function cursorExpired(why: string): ApiError {
  return new ApiError(
    'CURSOR_EXPIRED',
    `${why} Rerun the query (without the cursor) to get a fresh first page; it is charged as a new call.`,
  );
}

const invalid = () =>
  new ApiError('INVALID_REQUEST', 'The cursor is not one this gateway gave this account.', {
    details: [{ param: 'cursor', message: 'not a valid cursor' }],
  });

export function createResultCursors(instance: string): ResultCursors {
  const key = randomBytes(32);
  const mac = (text: string) => createHmac('sha256', key).update(text).digest().subarray(0, 16);
  return {
    encode(state) {
      const payload = Buffer.from(
        JSON.stringify([state.snapshot, state.accountId, state.row, state.byte, state.pageSize]),
      ).toString('base64url');
      const body = `${instance}.${payload}`;
      return `${body}.${mac(body).toString('base64url')}`;
    },

    decode(cursor, accountId) {
      if (cursor.length > 1_000) throw invalid();
      const parts = cursor.split('.');
      if (parts.length !== 3) throw invalid();
      const [owner, payload, signature] = parts as [string, string, string];
      if (owner !== instance) {
        throw cursorExpired(
          'This cursor was made by another instance of the gateway, whose result snapshot this one does not hold (or by this gateway before a restart).',
        );
      }
      const expected = mac(`${owner}.${payload}`);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
      let fields: unknown;
      try {
        fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid();
      }
      if (!Array.isArray(fields) || fields.length !== 5) throw invalid();
      const [snapshot, account, row, byte, pageSize] = fields as [string, string, number, number, number];
      if (account !== accountId) throw invalid();
      return { snapshot, accountId: account, row, byte, pageSize };
    },
  };
}
