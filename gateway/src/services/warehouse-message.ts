// What the warehouse (or its driver) said when a connection failed, for the connection's owner
// only: the ConnectorError's own warehouse message when it has one, else the driver error behind
// it (`connect ECONNREFUSED 127.0.0.1:5499`, `password authentication failed for user "x"`),
// with credentials removed: URL user-info, `password=…` pairs and every secret of the connection.
import { isConnectorError, redactSecrets } from '@quarry/sdk-connector';

/** Longest warehouse text passed on. */
const MAX_LENGTH = 2_000;

/** Every string inside a connection's secret values (a key file is an object of strings). */
export function secretStrings(values: readonly unknown[]): string[] {
  const out: string[] = [];
  const walk = (value: unknown, depth: number) => {
    if (typeof value === 'string') out.push(value);
    else if (depth < 4 && value !== null && typeof value === 'object')
      for (const v of Object.values(value)) walk(v, depth + 1);
  };
  for (const value of values) walk(value, 0);
  return out;
}

/** The text of one driver error: its message, or its code and its inner errors' (AggregateError). */
function textOf(error: Error): string {
  if (error.message !== '') return error.message;
  const inner = error instanceof AggregateError ? error.errors.filter((e) => e instanceof Error) : [];
  const code = (error as { code?: unknown }).code;
  return [typeof code === 'string' ? code : '', ...inner.map((e: Error) => e.message)]
    .filter(Boolean)
    .join(': ');
}

/**
 * The warehouse's words for `error`, secrets removed; undefined when there are none (an error
 * the gateway made itself).
 */
export function warehouseMessageOf(error: unknown, secrets: readonly string[]): string | undefined {
  if (isConnectorError(error) && error.warehouseMessage !== undefined) {
    return redactSecrets(error.warehouseMessage, secrets).slice(0, MAX_LENGTH);
  }
  let cause: unknown = isConnectorError(error) ? error.cause : undefined;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    if (!isConnectorError(cause)) {
      const text = textOf(cause);
      if (text !== '') return redactSecrets(text, secrets).slice(0, MAX_LENGTH);
    }
    cause = cause.cause;
  }
  return undefined;
}
