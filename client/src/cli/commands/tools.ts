// `quarry tools list|add|remove|limit`: the account's agent tools (what its agents see and may
// call on /mcp) and the default price limit of a tool call (docs/mcp.md). Needs a key with the
// `account` scope: an agent's query-only key cannot change them.
import { EXIT, UsageError } from '../cli-errors.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command } from '../command.js';
import { connect } from '../connection.js';
import { formatTable } from '../table.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const toolsListCommand: Command = {
  name: 'tools list',
  summary: "list your agent's tools (what it may call on /mcp)",
  help: `Usage: quarry tools list [--json]

Lists your agent's tools: your own analytics and those you added from the marketplace.

Options:
  --json        print the tools as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const tools = await (await connect(flags, io)).tools.list();
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(json(tools));
      return EXIT.ok;
    }
    io.stdout.write(
      formatTable(
        [{ header: 'name' }, { header: 'title' }, { header: 'price' }, { header: 'yours' }],
        tools.map((t) => [t.name, t.title, String(t.price), t.owned ? 'yes' : 'no']),
      ),
    );
    return EXIT.ok;
  },
};

export const toolsAddCommand: Command = {
  name: 'tools add',
  summary: "add an analytic to your agent's tools",
  help: `Usage: quarry tools add <analytic> [--json]

Adds an analytic you may call (public, or shared with you) to your agent's tools.

Options:
  --json        print the tool as JSON
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { json: { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const tool = await (await connect(flags, io)).tools.add(positionals[0] as string);
    io.stdout.write(
      booleanFlag(flags, 'json')
        ? json(tool)
        : `${tool.name} is one of your agent's tools (${tool.price} credit${tool.price === 1 ? '' : 's'} a call).\n`,
    );
    return EXIT.ok;
  },
};

export const toolsRemoveCommand: Command = {
  name: 'tools remove',
  summary: "remove an analytic from your agent's tools",
  help: `Usage: quarry tools remove <analytic>

Removes an analytic you added from your agent's tools.

Options:
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { ...CONNECTION_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run({ flags, positionals }, io) {
    const name = positionals[0] as string;
    await (await connect(flags, io)).tools.remove(name);
    io.stdout.write(`${name} is no longer one of your agent's tools.\n`);
    return EXIT.ok;
  },
};

export const toolsLimitCommand: Command = {
  name: 'tools limit',
  summary: 'show or set the most credits an agent’s tool call may cost',
  help: `Usage: quarry tools limit [<credits>|none]

Without an argument, shows the default price limit of your agent's tool calls; with a whole
number, sets it (a tool call without its own max_credits that would cost more is refused);
"none" removes it.

Options:
${CONNECTION_HELP}
  -h, --help    this help
`,
  options: { ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 1 },
  async run({ flags, positionals }, io) {
    const arg = positionals[0];
    let maxCredits: number | null | undefined;
    if (arg === 'none') maxCredits = null;
    else if (arg !== undefined) {
      if (!/^[1-9]\d{0,14}$/.test(arg))
        throw new UsageError('The limit is a whole number of credits (1 or more), or "none".', 'tools limit');
      maxCredits = Number(arg);
    }
    const client = await connect(flags, io);
    const settings = maxCredits === undefined ? await client.mcp.get() : await client.mcp.set({ maxCredits });
    io.stdout.write(
      settings.max_credits === null
        ? 'No default price limit: tool calls cost what their analytic costs.\n'
        : `A tool call without its own max_credits may cost at most ${settings.max_credits} credits.\n`,
    );
    return EXIT.ok;
  },
};
