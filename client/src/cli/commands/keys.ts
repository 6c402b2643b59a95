// `quarry keys create|list|revoke`: the account's API keys.
import type { ApiKey, Scope } from '../../types.js';
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
import { formatTable } from '../table.js';

const SCOPES: readonly Scope[] = ['query', 'keys', 'owner', 'account'];

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function status(key: ApiKey): string {
  if (key.revoked_at !== null) return 'revoked';
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) return 'expired';
  return 'active';
}

export const keysCreateCommand: Command = {
  name: 'keys create',
  summary: 'create an API key (its secret is shown once)',
  help: `Usage: quarry keys create <name> [--scope SCOPE]... [--expires-at DATE] [--json]

Creates an API key for your account and prints its secret: it is shown this once.

Options:
  --scope SCOPE       query, keys, owner or account; repeat for several (default: all)
  --expires-at DATE   ISO-8601 date-time with offset, e.g. 2027-01-01T00:00:00Z
  --json              print the key as JSON (with its secret)
${CONNECTION_HELP}
  -h, --help          this help
`,
  options: {
    scope: { type: 'string', multiple: true },
    'expires-at': { type: 'string' },
    json: { type: 'boolean' },
    ...CONNECTION_OPTIONS,
  },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const scopes = listFlag(flags, 'scope');
    const unknown = scopes.filter((s) => !SCOPES.includes(s as Scope));
    if (unknown.length > 0) {
      throw new UsageError(
        `Unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}.`,
        'keys create',
      );
    }
    const expiresAt = stringFlag(flags, 'expires-at');
    const client = await connect(flags, io);
    const key = await client.keys.create({
      name: positionals[0] as string,
      ...(scopes.length > 0 ? { scopes: scopes as Scope[] } : {}),
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    });
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(json(key));
    } else {
      io.stdout.write(
        `Created key ${key.id} "${key.name}" (scopes: ${key.scopes.join(', ')}). Its secret, shown this once:\n${key.secret}\n`,
      );
    }
    return EXIT.ok;
  },
};

export const keysListCommand: Command = {
  name: 'keys list',
  summary: "list the account's keys (never a secret)",
  help: `Usage: quarry keys list [--json]

Lists your account's API keys: id, name, visible prefix, scopes, status and dates.

Options:
  --json        print the keys as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const keys = await (await connect(flags, io)).keys.list();
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(json(keys));
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        [
          { header: 'id' },
          { header: 'name' },
          { header: 'prefix' },
          { header: 'scopes' },
          { header: 'status' },
          { header: 'created' },
          { header: 'last used' },
        ],
        keys.map((k) => [
          k.id,
          k.name,
          k.prefix,
          k.scopes.join(','),
          status(k),
          k.created_at,
          k.last_used_at,
        ]),
      ),
    );
    return EXIT.ok;
  },
};

export const keysRevokeCommand: Command = {
  name: 'keys revoke',
  summary: 'revoke a key (every gateway refuses it within seconds)',
  help: `Usage: quarry keys revoke <id> [--json]

Revokes one of your keys by id (see \`quarry keys list\`).

Options:
  --json        print the revoked key as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const key = await (await connect(flags, io)).keys.revoke(positionals[0] as string);
    io.stdout.write(booleanFlag(flags, 'json') ? json(key) : `Revoked key ${key.id} "${key.name}".\n`);
    return EXIT.ok;
  },
};
