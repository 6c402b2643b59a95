// `quarry connections add|list|update|test|rm`: an owner's warehouse connections. `add` and
// `update` take the connector's config as `--set field=value` pairs (numbers and booleans typed)
// or one `--config` JSON object; the gateway tests the config before saving it unless
// `--no-test`. `rm` is refused while analytics use the connection, unless `--force`. A
// connection is named by its name or its id.

import { ConflictError, NotFoundError } from '../../errors.js';
import type { QuarryClient } from '../../quarry-client.js';
import type { Connection } from '../../types.js';
import { EXIT, UsageError } from '../cli-errors.js';
import {
  booleanFlag,
  CONNECTION_HELP,
  CONNECTION_OPTIONS,
  type Command,
  listFlag,
  stringFlag,
} from '../command.js';
import { connect } from '../connection.js';
import { createProgress } from '../progress.js';
import { formatTable } from '../table.js';

/** `field=value` pairs as a config object: integers, numbers and true/false typed, the rest text. */
function configOf(
  pairs: readonly string[],
  json: string | undefined,
  command = 'connections add',
): Record<string, unknown> {
  let config: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      const parsed: unknown = JSON.parse(json);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new Error('not an object');
      config = parsed as Record<string, unknown>;
    } catch (error) {
      throw new UsageError(`--config must be a JSON object: ${(error as Error).message}`, command);
    }
  }
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--set takes field=value, got "${pair}".`, command);
    const raw = pair.slice(at + 1);
    config[pair.slice(0, at)] =
      raw === 'true' ? true : raw === 'false' ? false : /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  }
  return config;
}

/** The connection a name or an id refers to. */
async function find(client: QuarryClient, ref: string): Promise<Connection> {
  const found = (await client.connections.list()).find((c) => c.name === ref || c.id === ref);
  if (!found) {
    throw new NotFoundError({ code: 'NOT_FOUND', status: 404, message: `You have no connection "${ref}".` });
  }
  return found;
}

const print = (io: { stdout: { write(s: string): unknown } }, value: unknown) =>
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export const connectionsAddCommand: Command = {
  name: 'connections add',
  summary: 'connect a warehouse (tested before it is saved)',
  help: `Usage: quarry connections add <name> --type TYPE (--set field=value … | --config JSON) [--no-test] [--json]

Saves a connection to a warehouse under <name>. The fields are the connector type's config
(\`GET /v1/connectors\` lists each type's fields; secrets such as password are stored encrypted
and never shown again). The gateway opens a session with it first: a warehouse it cannot reach,
or that refuses the credentials, is refused with the warehouse's own message.

  quarry connections add shop --type postgres --set host=db.example.com --set database=shop \\
    --set user=reader --set password=…
  quarry connections add local --type duckdb --set path=/data/shop.duckdb

Options:
  --type TYPE        postgres, mysql, duckdb, bigquery, snowflake, trino, …
  --set field=value  one config field (repeat); numbers and true/false are typed
  --config JSON      the whole config as a JSON object (--set fields are added over it)
  --no-test          save it without opening a session first
  --json             print the saved connection as JSON
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: {
    type: { type: 'string' },
    set: { type: 'string', multiple: true },
    config: { type: 'string' },
    'no-test': { type: 'boolean' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const type = stringFlag(flags, 'type');
    if (!type) throw new UsageError('Give the connector type with --type.', 'connections add');
    const config = configOf(listFlag(flags, 'set'), stringFlag(flags, 'config'));
    const client = await connect(flags, io);
    const test = !booleanFlag(flags, 'no-test');
    const progress = createProgress(io.stderr);
    let connection: Connection;
    try {
      if (test) progress.update(`testing the ${type} connection`);
      connection = await client.connections.create(
        { name: positionals[0] as string, type, config },
        { test },
      );
    } finally {
      progress.stop();
    }
    if (booleanFlag(flags, 'json')) print(io, connection);
    else
      io.stdout.write(
        `Connection ${connection.name} (${connection.type}) saved${test ? ', tested' : ''}: ${connection.id}\n`,
      );
    return EXIT.ok;
  },
};

export const connectionsListCommand: Command = {
  name: 'connections list',
  summary: 'list your warehouse connections (never a secret)',
  help: `Usage: quarry connections list [--json]

Options:
  --json        print them as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const connections = await (await connect(flags, io)).connections.list();
    if (booleanFlag(flags, 'json')) print(io, connections);
    else
      io.stdout.write(
        formatTable(
          [
            { header: 'name' },
            { header: 'type' },
            { header: 'id' },
            { header: 'secrets' },
            { header: 'created' },
          ],
          connections.map((c) => [c.name, c.type, c.id, c.secret_fields.join(','), c.created_at]),
        ),
      );
    return EXIT.ok;
  },
};

export const connectionsTestCommand: Command = {
  name: 'connections test',
  summary: 'open a session to a warehouse and report the round trip',
  help: `Usage: quarry connections test <name|id> [--json]

Opens a session to the warehouse of one of your connections. When it cannot, the gateway
answers with what the warehouse (or its driver) said, secrets removed, and the exit code is 1.

Options:
  --json        print the gateway's answer as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const connection = await find(client, positionals[0] as string);
    const progress = createProgress(io.stderr);
    let result: { ok: true; latency_ms: number };
    try {
      progress.update(`testing ${connection.name}`);
      result = await client.connections.test(connection.id);
    } finally {
      progress.stop();
    }
    if (booleanFlag(flags, 'json')) print(io, result);
    else io.stdout.write(`${connection.name}: reachable (${result.latency_ms} ms)\n`);
    return EXIT.ok;
  },
};

export const connectionsUpdateCommand: Command = {
  name: 'connections update',
  summary: 'change a connection in place, e.g. rotate its password (tested before it is saved)',
  help: `Usage: quarry connections update <name|id> (--set field=value … | --config JSON) [--no-test] [--json]

Changes the given fields of one of your connections (secrets too) and keeps the others; a field
set to null in --config is removed. The gateway opens a session with the new config first: if it
cannot, nothing changes. Analytics on the connection keep answering: calls already running finish
on the old config, the next ones use the new one.

  quarry connections update shop --set password=…

Options:
  --set field=value  one config field (repeat); numbers and true/false are typed
  --config JSON      fields as a JSON object (--set fields are added over it)
  --no-test          save it without opening a session first
  --json             print the saved connection as JSON
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: {
    set: { type: 'string', multiple: true },
    config: { type: 'string' },
    'no-test': { type: 'boolean' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const config = configOf(listFlag(flags, 'set'), stringFlag(flags, 'config'), 'connections update');
    if (Object.keys(config).length === 0)
      throw new UsageError('Give the fields to change with --set or --config.', 'connections update');
    const client = await connect(flags, io);
    const found = await find(client, positionals[0] as string);
    const test = !booleanFlag(flags, 'no-test');
    const progress = createProgress(io.stderr);
    let connection: Connection;
    try {
      if (test) progress.update(`testing the new ${found.type} config`);
      connection = await client.connections.update(found.id, { config }, { test });
    } finally {
      progress.stop();
    }
    if (booleanFlag(flags, 'json')) print(io, connection);
    else io.stdout.write(`Connection ${connection.name} updated${test ? ', tested' : ''}.\n`);
    return EXIT.ok;
  },
};

export const connectionsRmCommand: Command = {
  name: 'connections rm',
  summary: 'delete a connection (refused while analytics use it, unless --force)',
  help: `Usage: quarry connections rm <name|id> [--force] [--json]

Deletes one of your connections. While analytics of yours use it the gateway refuses, naming
them: deploy them on another connection first, or change the connection in place with
\`quarry connections update\`. With --force it is deleted anyway, their listings are taken off
the marketplace, and calls to them answer 404 until they are deployed on another connection.

Options:
  --force       delete it even though analytics use it (unlists them)
  --json        print {"deleted", "analytics", "unlisted"} as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { force: { type: 'boolean' }, json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const client = await connect(flags, io);
    const connection = await find(client, positionals[0] as string);
    const removal = await client.connections
      .delete(connection.id, { force: booleanFlag(flags, 'force') })
      .catch((error: unknown) => {
        // Analytics use it: say how to go on, in the CLI's own words.
        if (!(error instanceof ConflictError) || error.details.length === 0) throw error;
        throw new ConflictError({
          code: error.code,
          status: error.status,
          requestId: error.requestId,
          details: error.details,
          message: `The connection "${connection.name}" is used by ${error.details.map((d) => d.message).join(', ')}. Deploy them on another connection, change this one in place with \`quarry connections update ${connection.name} --set …\`, or delete it anyway with \`quarry connections rm ${connection.name} --force\` (their listings are taken off the marketplace).`,
        });
      });
    if (booleanFlag(flags, 'json')) print(io, removal);
    else {
      io.stdout.write(`Deleted connection ${connection.name} (${connection.id}).\n`);
      if (removal.unlisted.length > 0)
        io.stdout.write(`Taken off the marketplace: ${removal.unlisted.join(', ')}.\n`);
      if (removal.analytics.length > 0)
        io.stdout.write(
          `Answering 404 until deployed on another connection: ${removal.analytics.join(', ')}.\n`,
        );
    }
    return EXIT.ok;
  },
};
