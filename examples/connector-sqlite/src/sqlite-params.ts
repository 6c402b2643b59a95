// Validated parameters → values sql.js binds. SQLite has no boolean, date or timestamp storage
// class, so those are bound the way SQLite itself writes them: 1/0, `YYYY-MM-DD`, and
// `YYYY-MM-DD HH:MM:SS.SSS` in UTC (what `strftime('%Y-%m-%d %H:%M:%f')` produces). Integers beyond
// 2^53 arrive as bigints; sql.js cannot bind a 64-bit integer, so they are bound as their exact
// decimal text, which SQLite converts exactly wherever the other operand has INTEGER affinity
// (a column) or through `CAST(:x AS INTEGER)`.
import { type BoundParam, ConnectorError } from '@quarry/sdk-connector';
import type { WorkerParam } from './sqlite-protocol.js';

/** One validated value (`YYYY-MM-DDTHH:MM:SS.sssZ` for timestamps) as sql.js binds it. */
function toWorkerParam(param: BoundParam): WorkerParam {
  const { value } = param;
  if (value === null) return null;
  if (typeof value === 'object') {
    // The positional dialect expands arrays into one scalar per placeholder.
    throw new ConnectorError('PARAM_INVALID', `:${param.name} cannot bind an array to one placeholder`, {
      details: [{ param: param.name, message: 'an array needs an IN (:name) list' }],
    });
  }
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && param.type === 'timestamp') {
    return `${value.slice(0, 10)} ${value.slice(11, 23)}`;
  }
  return value;
}

/** The positional values of a compiled query, in placeholder order. */
export function toWorkerParams(params: readonly BoundParam[]): WorkerParam[] {
  return params.map(toWorkerParam);
}
