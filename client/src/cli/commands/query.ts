// `quarry query <source> --param k=v …`: runs an analytic through GET /v1/analytics/:name, so
// the gateway coerces each value by the analytic's param schema exactly as for any URL
// (`year=2024` is the integer 2024; a repeated param is a list). A table on a terminal, JSON
// otherwise.
import type { ExportedResult, ExportFormat, QueryResult, QueryStringParams } from '../../types.js';
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, listFlag } from '../command.js';
import { connect } from '../connection.js';
import { createProgress } from '../progress.js';
import { formatTable, isNumericType } from '../table.js';
import { jobLine } from './jobs.js';

/** `k=v` pairs as query-string params; a repeated name makes a list. */
function parseParams(pairs: readonly string[]): QueryStringParams {
  const params: Record<string, string | string[]> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param takes name=value, got "${pair}".`, 'query');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    const previous = params[name];
    params[name] =
      previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return params;
}

/** `--max-credits N`: a positive whole number, checked before anything is sent. */
function maxCreditsFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(
      `--max-credits takes a positive whole number of credits, got "${String(value)}".`,
      'query',
    );
  return Number(value);
}

const FORMATS: readonly ExportFormat[] = ['csv', 'ndjson', 'arrow', 'parquet'];

/** `--format F`: one of the export formats, checked before anything is sent. */
function formatFlag(value: unknown): ExportFormat | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !FORMATS.includes(value as ExportFormat))
    throw new UsageError(`--format takes one of ${FORMATS.join(', ')}, got "${String(value)}".`, 'query');
  return value as ExportFormat;
}

/** 1536 → `1.5 KB`. */
function sizeOf(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} KB`;
  return `${bytes} B`;
}

/**
 * Streams an export to stdout, with a progress line on stderr (redrawn on a terminal) and a
 * summary line at the end. A cut transfer fails the command (the gateway did not charge it).
 */
async function streamExport(result: ExportedResult, source: string, io: CliIo): Promise<void> {
  const progress = createProgress(io.stderr);
  const rows = `${result.rowCount.toLocaleString('en-US')} rows${result.truncated ? ' (truncated)' : ''}`;
  let bytes = 0;
  const reader = result.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      const once = io.stdout.once?.bind(io.stdout);
      if (io.stdout.write(value) === false && once !== undefined)
        await new Promise<void>((resolve) => once('drain', resolve));
      progress.update(`exporting ${source}: ${sizeOf(bytes)} of ${rows}`);
    }
  } finally {
    progress.stop();
  }
  io.stderr.write(
    `${source}: ${rows} · ${sizeOf(bytes)} · ${result.credits} credit${result.credits === 1 ? '' : 's'}${result.requestId === undefined ? '' : ` · ${result.requestId}`}\n`,
  );
}

/** The answer as an aligned table plus a one-line summary. */
function formatResult(result: QueryResult): string {
  const columns =
    result.columns.length > 0
      ? result.columns
      : Object.keys(result.results[0] ?? {}).map((name) => ({ name, type: '' }));
  const table = formatTable(
    columns.map((c) => ({
      header: c.name,
      right: isNumericType(c.type) || typeof result.results[0]?.[c.name] === 'number',
    })),
    result.results.map((row) => columns.map((c) => row[c.name])),
  );
  const m = result.meta;
  const summary = [
    `${m.row_count} row${m.row_count === 1 ? '' : 's'}${m.truncated ? ' (truncated)' : ''}`,
    `${m.duration_ms.toFixed(1)} ms`,
    m.cached ? 'cached' : 'not cached',
    `${m.credits} credit${m.credits === 1 ? '' : 's'}`,
    `v${m.version}`,
    ...(m.next_price === undefined ? [] : [`${m.next_price} credits from ${m.next_price_at}`]),
    m.request_id,
  ].join(' · ');
  return `${table}${summary}\n`;
}

export const queryCommand: Command = {
  name: 'query',
  summary: 'run an analytic and print its rows',
  help: `Usage: quarry query <source> [--param NAME=VALUE]... [--json] [--no-cache] [--max-credits N]
       quarry query <source> [--param NAME=VALUE]... --format csv|ndjson|arrow|parquet > FILE
       quarry query <source> [--param NAME=VALUE]... --async [--wait]

Runs an analytic. Values are coerced by the analytic's param schema (year=2024 is an integer);
repeat a param for a list (--param regions=EU --param regions=NA). Prints an aligned table on a
terminal and the whole answer as JSON otherwise (or with --json).

Options:
  -p, --param NAME=VALUE   a param; repeatable
  --json                   print the answer as JSON
  --no-cache               bypass the gateway's result cache (still charged)
  --max-credits N          refuse the call if it would cost more than N credits (exit 1,
                           PRICE_ABOVE_LIMIT, nothing charged)
  --format F               stream the whole result to stdout as csv, ndjson, arrow or
                           parquet, with progress on stderr (charged once it is all sent)
  --async                  run it as an asynchronous job and print the job (see quarry jobs);
                           charged once, when it succeeds
  --wait                   with --async: wait for the job and print it with its first rows
${CONNECTION_HELP}
  -h, --help               this help

Example:
  quarry query sales-by-region --param year=2024 --param region=EU
  quarry query sales-by-region --param year=2024 --format csv > sales.csv
`,
  options: {
    param: { type: 'string', multiple: true, short: 'p' },
    json: { type: 'boolean' },
    'no-cache': { type: 'boolean' },
    'max-credits': { type: 'string' },
    format: { type: 'string' },
    async: { type: 'boolean' },
    wait: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const params = parseParams(listFlag(flags, 'param'));
    const maxCredits = maxCreditsFlag(flags['max-credits']);
    const format = formatFlag(flags.format);
    const client = await connect(flags, io);
    const source = positionals[0] as string;
    if (booleanFlag(flags, 'async')) {
      if (format !== undefined) {
        throw new UsageError('--async prints the job; read its result with quarry jobs get.', 'query');
      }
      let job = await client.jobs.submit(source, params, {
        queryString: true,
        noCache: booleanFlag(flags, 'no-cache'),
        ...(maxCredits === undefined ? {} : { maxCredits }),
      });
      if (booleanFlag(flags, 'wait')) {
        const progress = createProgress(io.stderr);
        progress.update(`job ${job.id} of ${source} ${job.state}`);
        try {
          job = await client.jobs.wait(job.id);
        } finally {
          progress.stop();
        }
      }
      const asJson = booleanFlag(flags, 'json') || !io.stdout.isTTY;
      io.stdout.write(asJson ? `${JSON.stringify(job, null, 2)}\n` : jobLine(job));
      return job.state === 'failed' ? EXIT.error : EXIT.ok;
    }
    if (format !== undefined) {
      const result = await client.analytics.export(source, params, format, {
        noCache: booleanFlag(flags, 'no-cache'),
        ...(maxCredits === undefined ? {} : { maxCredits }),
      });
      await streamExport(result, source, io);
      return EXIT.ok;
    }
    const progress = createProgress(io.stderr);
    progress.update(`running ${source}`);
    let result: QueryResult;
    try {
      result = await client.analytics.get(source, params, {
        noCache: booleanFlag(flags, 'no-cache'),
        ...(maxCredits === undefined ? {} : { maxCredits }),
      });
    } finally {
      progress.stop();
    }
    const asJson = booleanFlag(flags, 'json') || !io.stdout.isTTY;
    io.stdout.write(asJson ? `${JSON.stringify(result, null, 2)}\n` : formatResult(result));
    return EXIT.ok;
  },
};
