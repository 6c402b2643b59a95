// Structured JSON logs (pino). Every secret-bearing field is redacted by path, and request logs
// carry the request id; API keys and warehouse passwords never reach a log line.
import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.password',
  '*.secret',
  '*.secrets',
  '*.key',
  '*.token',
  'password',
  'secret',
  'config.password',
  'config.connectionString',
];

export interface LoggerOptions {
  readonly level: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to inspect output. */
  readonly destination?: NodeJS.WritableStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'quarry-gateway' },
      redact: { paths: REDACT, censor: '***' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? process.stdout,
  );
}
