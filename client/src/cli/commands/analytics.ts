// `quarry analytics deploy <dir>`, `quarry analytics list` and `quarry analytics purge-cache
// <name>…`. Deploy reads every *.yaml/*.yml
// of a directory and PUTs each definition (idempotent: an unchanged one makes no new version),
// reporting per analytic `created`, `updated (vN)` or `unchanged`; a file that is not valid YAML
// or that the gateway rejects is reported by name and the others still deploy.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  ForbiddenError,
  NetworkError,
  OAuthError,
  QuarryError,
  QuotaExceededError,
  RateLimitError,
  TimeoutError,
  UnauthenticatedError,
} from '../../errors.js';
import type { AnalyticDefinition, DeployOutcome } from '../../types.js';
import { EXIT, formatError, UsageError } from '../cli-errors.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command } from '../command.js';
import { connect } from '../connection.js';
import { createProgress } from '../progress.js';
import { formatTable } from '../table.js';

/** What happened to one file. */
interface DeployReport {
  readonly file: string;
  readonly name?: string;
  readonly outcome?: DeployOutcome;
  readonly version?: number;
  readonly error?: string;
}

/** Errors no other file would escape either: stop the run instead of failing every file. */
function stopsTheRun(error: unknown): boolean {
  return (
    error instanceof UnauthenticatedError ||
    error instanceof ForbiddenError ||
    error instanceof OAuthError ||
    error instanceof RateLimitError ||
    error instanceof QuotaExceededError ||
    error instanceof NetworkError ||
    error instanceof TimeoutError
  );
}

/** One file's definition, or why it has none. */
async function readDefinition(path: string): Promise<AnalyticDefinition | string> {
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(path, 'utf8'));
  } catch (error) {
    return `not valid YAML: ${(error as Error).message.split('\n')[0]}`;
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return 'not an analytic definition (a YAML mapping)';
  const name = (doc as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') return 'has no `name`';
  return doc as AnalyticDefinition;
}

/** The lines of a rejected definition: the envelope's code and message, and every problem. */
function rejection(error: unknown): string {
  return formatError(error).replace(/^quarry: /, '');
}

const outcomeText = (r: DeployReport) =>
  r.outcome === 'updated' ? `updated (v${r.version})` : (r.outcome ?? '');

export const analyticsDeployCommand: Command = {
  name: 'analytics deploy',
  summary: 'deploy an analytic definition (a YAML file), or every one of a directory',
  help: `Usage: quarry analytics deploy <dir|file.yaml> [--json]

Deploys one YAML file, or each *.yaml / *.yml file of <dir>, with PUT /v1/owner/analytics/<name>
(the format: docs/analytics.md). The gateway checks the SQL against the warehouse first: an
unknown table or column, or a statement that is not read-only, is refused. A new analytic
is created, a changed one gets a new version, an unchanged one is left alone, so running it
again changes nothing. Prints one line per file. A file that is not valid YAML, or that the
gateway rejects, is named with every problem; the other files still deploy, and the exit
code is 1.

Options:
  --json        print the per-file report as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const target = resolve(io.cwd, positionals[0] as string);
    let dir = target;
    let files: string[];
    try {
      if ((await stat(target)).isFile()) {
        dir = dirname(target);
        files = [basename(target)];
      } else {
        files = (await readdir(dir)).filter((f) => /\.ya?ml$/i.test(f)).sort();
      }
    } catch (error) {
      throw new UsageError(`Cannot read ${target}: ${(error as Error).message}`, 'analytics deploy');
    }
    if (files.length === 0) throw new UsageError(`No *.yaml or *.yml files in ${dir}.`, 'analytics deploy');
    const client = await connect(flags, io);
    const asJson = booleanFlag(flags, 'json');
    const progress = createProgress(io.stderr);
    const reports: DeployReport[] = [];
    const width = Math.max(...files.map((f) => f.length));
    const print = (r: DeployReport) => {
      if (asJson) return;
      progress.clear();
      if (r.error !== undefined) io.stderr.write(`${r.file.padEnd(width)}  failed: ${r.error}\n`);
      else io.stdout.write(`${(r.name ?? r.file).padEnd(width)}  ${outcomeText(r)}\n`);
    };
    try {
      for (const [i, file] of files.entries()) {
        progress.update(`deploying ${i + 1}/${files.length} ${file}`);
        const definition = await readDefinition(join(dir, file));
        let report: DeployReport;
        if (typeof definition === 'string') {
          report = { file, error: definition };
        } else {
          try {
            const { outcome, analytic } = await client.analytics.deploy(definition);
            report = { file, name: analytic.name, outcome, version: analytic.version };
          } catch (error) {
            if (stopsTheRun(error) || !(error instanceof QuarryError)) throw error;
            report = { file, name: definition.name, error: rejection(error) };
          }
        }
        reports.push(report);
        print(report);
      }
    } finally {
      progress.stop();
    }
    if (asJson) io.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
    const failed = reports.filter((r) => r.error !== undefined).length;
    if (failed > 0) {
      io.stderr.write(`${failed} of ${reports.length} definitions failed.\n`);
      return EXIT.error;
    }
    return EXIT.ok;
  },
};

export const analyticsListCommand: Command = {
  name: 'analytics list',
  summary: 'list your analytics at their current versions',
  help: `Usage: quarry analytics list [--json]

Lists the analytics your account owns: name, current version, visibility, connection and
last change.

Options:
  --json        print them as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const analytics = await (await connect(flags, io)).analytics.list();
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(`${JSON.stringify(analytics, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        [
          { header: 'name' },
          { header: 'version', right: true },
          { header: 'visibility' },
          { header: 'connection' },
          { header: 'updated' },
        ],
        analytics.map((a) => [
          a.name,
          a.current_version,
          a.visibility,
          a.definition.connection,
          a.updated_at,
        ]),
      ),
    );
    return EXIT.ok;
  },
};

export const analyticsPurgeCacheCommand: Command = {
  name: 'analytics purge-cache',
  summary: "drop your analytics' cached answers on every gateway instance",
  help: `Usage: quarry analytics purge-cache <name>...

Drops every cached answer of the named analytics (yours), for when the data behind them changed
before their cache TTL ran out: the next call runs the query. The gateway you reach drops them at
once, every other instance within about a second.

Options:
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 100 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    for (const name of positionals) {
      await client.analytics.purgeCache(name);
      io.stdout.write(`Dropped the cached answers of ${name}.\n`);
    }
    return EXIT.ok;
  },
};

const printJson = (io: { stdout: { write(s: string): unknown } }, value: unknown) =>
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export const analyticsDryRunCommand: Command = {
  name: 'analytics dry-run',
  summary: 'check a definition as a deploy would, saving nothing',
  help: `Usage: quarry analytics dry-run <file.yaml> [--json]

Runs every check of a deploy on one definition (fields, params, connection, price, and its SQL
against the warehouse, without running it) and prints what a deploy would do and the columns
the query will produce. Nothing is saved. A definition the gateway refuses exits 1 with every
problem.

Options:
  --json        print the gateway's answer as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const definition = await readDefinition(resolve(io.cwd, positionals[0] as string));
    if (typeof definition === 'string')
      throw new UsageError(`${positionals[0]}: ${definition}`, 'analytics dry-run');
    const client = await connect(flags, io);
    const progress = createProgress(io.stderr);
    let result: Awaited<ReturnType<typeof client.analytics.dryRun>>;
    try {
      progress.update(`checking ${definition.name}`);
      result = await client.analytics.dryRun(definition);
    } finally {
      progress.stop();
    }
    if (booleanFlag(flags, 'json')) {
      printJson(io, result);
      return EXIT.ok;
    }
    const columns = result.columns?.map((c) => `${c.name} (${c.type})`).join(', ');
    io.stdout.write(
      `${result.name}: ok, a deploy would be ${result.outcome === 'created' ? 'a new analytic' : result.outcome === 'updated' ? 'a new version' : 'no change'}\n${columns === undefined ? '' : `columns: ${columns}\n`}`,
    );
    return EXIT.ok;
  },
};

export const analyticsVersionsCommand: Command = {
  name: 'analytics versions',
  summary: 'every kept version of one of your analytics',
  help: `Usage: quarry analytics versions <name> [--json]

Lists the kept versions: each one's price (what a call pinning it, name@version, pays now) and
the sunset its deprecation set, if any.

Options:
  --json        print the versions (with their definitions) as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const versions = await (await connect(flags, io)).analytics.versions(positionals[0] as string);
    if (booleanFlag(flags, 'json')) printJson(io, versions);
    else
      io.stdout.write(
        formatTable(
          [
            { header: 'version', right: true },
            { header: 'price', right: true },
            { header: 'sunset' },
            { header: 'created' },
            { header: 'sql' },
          ],
          // `price`/`deprecation` are absent from a gateway older than version pinning.
          versions.map((v) => [
            v.version,
            v.price ?? '',
            v.deprecation?.sunset ?? '',
            v.created_at,
            v.definition.sql,
          ]),
        ),
      );
    return EXIT.ok;
  },
};

export const analyticsRmCommand: Command = {
  name: 'analytics rm',
  summary: 'delete one of your analytics',
  help: `Usage: quarry analytics rm <name> [--json]

Deletes the analytic; its name stays yours (no other account can take it).

Options:
  --json        print {"deleted": name} as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    await (await connect(flags, io)).analytics.delete(positionals[0] as string);
    if (booleanFlag(flags, 'json')) printJson(io, { deleted: positionals[0] });
    else io.stdout.write(`Deleted ${positionals[0]}.\n`);
    return EXIT.ok;
  },
};
