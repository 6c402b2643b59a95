// `quarry jobs list|get|cancel`: the account's asynchronous queries (docs/large-results.md).
// `quarry query <source> --async` submits one.
import type { Job, JobState } from '../../types.js';
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command, stringFlag } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';

const STATES: readonly JobState[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** One line about a job, for a terminal. */
export function jobLine(job: Job): string {
  const parts = [`${job.id} ${job.state}`, job.source];
  if (job.state === 'succeeded') parts.push(`${job.row_count ?? 0} rows`, `${job.credits} credits`);
  if (job.error !== null) parts.push(`${job.error.code}: ${job.error.message}`);
  return `${parts.join(' · ')}\n`;
}

function printJob(job: Job, asJson: boolean, io: CliIo): void {
  io.stdout.write(asJson ? json(job) : jobLine(job));
}

export const jobsListCommand: Command = {
  name: 'jobs list',
  summary: 'list your recent asynchronous queries',
  help: `Usage: quarry jobs list [--state STATE] [--limit N] [--json]

Lists your account's recent asynchronous queries, newest first.

Options:
  --state STATE   queued, running, succeeded, failed or cancelled
  --limit N       at most N jobs (1–100, default 20)
  --json          print the jobs as JSON
${CONNECTION_HELP}
  -h, --help      this help
`,
  options: {
    state: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const state = stringFlag(flags, 'state');
    if (state !== undefined && !STATES.includes(state as JobState)) {
      throw new UsageError(`--state takes one of ${STATES.join(', ')}, got "${state}".`, 'jobs list');
    }
    const limitText = stringFlag(flags, 'limit');
    if (limitText !== undefined && !/^[1-9]\d{0,2}$/.test(limitText)) {
      throw new UsageError(`--limit takes a whole number from 1 to 100, got "${limitText}".`, 'jobs list');
    }
    const client = await connect(flags, io);
    const jobs = await client.jobs.list({
      ...(state === undefined ? {} : { state: state as JobState }),
      ...(limitText === undefined ? {} : { limit: Number(limitText) }),
    });
    if (booleanFlag(flags, 'json') || !io.stdout.isTTY) {
      io.stdout.write(json(jobs));
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        ['id', 'state', 'source', 'rows', 'credits', 'created'].map((header) => ({ header })),
        jobs.map((j) => [j.id, j.state, j.source, j.row_count ?? '', j.credits, j.created_at]),
      ),
    );
    return EXIT.ok;
  },
};

export const jobsGetCommand: Command = {
  name: 'jobs get',
  summary: "show a job's state (and its first rows once it succeeded)",
  help: `Usage: quarry jobs get <id> [--wait] [--json]

Shows an asynchronous query: its state, and once it succeeded the first page of its result.

Options:
  --wait        poll until the job succeeded, failed or was cancelled
  --json        print the job as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { wait: { type: 'boolean' }, json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const id = positionals[0] as string;
    const job = booleanFlag(flags, 'wait') ? await client.jobs.wait(id) : await client.jobs.get(id);
    printJob(job, booleanFlag(flags, 'json') || !io.stdout.isTTY, io);
    return job.state === 'failed' ? EXIT.error : EXIT.ok;
  },
};

export const jobsCancelCommand: Command = {
  name: 'jobs cancel',
  summary: 'cancel a job (its warehouse query stops; not charged)',
  help: `Usage: quarry jobs cancel <id> [--json]

Cancels an asynchronous query: its warehouse query stops, and it is not charged.

Options:
  --json        print the cancelled job as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const job = await client.jobs.cancel(positionals[0] as string);
    printJob(job, booleanFlag(flags, 'json') || !io.stdout.isTTY, io);
    return EXIT.ok;
  },
};
