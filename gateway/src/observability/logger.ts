// Structured JSON logs (pino). Every secret-bearing field is redacted by path, and request logs
// carry the request id; API keys and warehouse passwords never reach a log line.
import { createRequire } from 'node:module';
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
  /**
   * Lines for a person at a terminal (pino-pretty: one coloured line each, time and message
   * first) instead of JSON. server.ts asks for it when stdout is a TTY and QUARRY_LOG_FORMAT is not
   * `json`; a log shipper or a pipe always gets JSON.
   */
  readonly pretty?: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'quarry-gateway' },
      redact: { paths: REDACT, censor: '***' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.pretty === true
      ? prettyStream(options.destination ?? process.stdout)
      : (options.destination ?? process.stdout),
  );
}

/**
 * pino-pretty, in this thread (no worker): the gateway's own lines stay in order with its banner.
 * Loaded only then: a deployment logging JSON never loads it.
 */
function prettyStream(destination: NodeJS.WritableStream): NodeJS.WritableStream {
  const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return pinoPretty({
    sync: true,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
    messageFormat: '{msg}',
    destination,
  });
}
