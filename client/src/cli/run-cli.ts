// The `quarry` CLI: finds the command (`quarry keys create …`), parses its flags, runs it, and
// turns any failure into its message on stderr and an exit code (0 ok, 1 API or runtime error,
// 2 usage, 3 auth, 4 rate limit or quota). `bin/quarry.mjs` calls runCli with the real process.
import { EXIT, exitCodeFor, formatError, UsageError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { type Command, parseCommandArgs } from './command.js';
import { accountPasswordCommand } from './commands/account.js';
import {
  analyticsDeployCommand,
  analyticsDryRunCommand,
  analyticsListCommand,
  analyticsPurgeCacheCommand,
  analyticsRmCommand,
  analyticsVersionsCommand,
} from './commands/analytics.js';
import { billingPortalCommand, billingStatusCommand, billingUpgradeCommand } from './commands/billing.js';
import {
  connectionsAddCommand,
  connectionsListCommand,
  connectionsRmCommand,
  connectionsTestCommand,
  connectionsUpdateCommand,
} from './commands/connections.js';
import { jobsCancelCommand, jobsGetCommand, jobsListCommand } from './commands/jobs.js';
import { keysCreateCommand, keysListCommand, keysRevokeCommand } from './commands/keys.js';
import {
  listingsPublishCommand,
  listingsUnpublishCommand,
  marketplaceSearchCommand,
  marketplaceShowCommand,
} from './commands/listings.js';
import { loginCommand, logoutCommand } from './commands/login.js';
import { payoutsCommand, payoutsOnboardCommand } from './commands/payouts.js';
import { queryCommand } from './commands/query.js';
import { statementsCommand, usageCommand } from './commands/reports.js';
import { signupCommand } from './commands/signup.js';
import {
  toolsAddCommand,
  toolsLimitCommand,
  toolsListCommand,
  toolsRemoveCommand,
} from './commands/tools.js';
import {
  webhooksAddCommand,
  webhooksDeliveriesCommand,
  webhooksListCommand,
  webhooksTestCommand,
} from './commands/webhooks.js';

export { type CliInput, type CliIo, type CliOutput, nodeIo } from './cli-io.js';

const COMMANDS: readonly Command[] = [
  signupCommand,
  loginCommand,
  logoutCommand,
  queryCommand,
  jobsListCommand,
  jobsGetCommand,
  jobsCancelCommand,
  keysCreateCommand,
  keysListCommand,
  keysRevokeCommand,
  toolsListCommand,
  toolsAddCommand,
  toolsRemoveCommand,
  toolsLimitCommand,
  webhooksAddCommand,
  webhooksListCommand,
  webhooksTestCommand,
  webhooksDeliveriesCommand,
  connectionsAddCommand,
  connectionsListCommand,
  connectionsUpdateCommand,
  connectionsTestCommand,
  connectionsRmCommand,
  analyticsDeployCommand,
  analyticsDryRunCommand,
  analyticsListCommand,
  analyticsVersionsCommand,
  analyticsRmCommand,
  analyticsPurgeCacheCommand,
  listingsPublishCommand,
  listingsUnpublishCommand,
  marketplaceSearchCommand,
  marketplaceShowCommand,
  usageCommand,
  statementsCommand,
  billingStatusCommand,
  billingUpgradeCommand,
  billingPortalCommand,
  payoutsCommand,
  payoutsOnboardCommand,
  accountPasswordCommand,
];

/** Commands with subcommands, and what they are for. */
const GROUPS: Readonly<Record<string, string>> = {
  jobs: 'your asynchronous queries',
  keys: 'manage API keys',
  tools: "choose your agent's tools on /mcp",
  webhooks: 'send signed events to your endpoints',
  connections: "manage your warehouses' connections",
  analytics: 'deploy, check and list your analytics',
  listings: 'list your analytics on the marketplace',
  marketplace: 'browse the marketplace',
  billing: 'see your plan and buy another',
  payouts: 'see and set up the payouts of your earnings as an owner',
  account: 'your account: the web console password',
};

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h';

function commandList(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n');
}

const MAIN_HELP = `Usage: quarry <command> [options]

The command line for a Quarry gateway: sign up, log in, manage keys, run analytics, connect
warehouses, deploy and list analytics, browse the marketplace, read usage and statements, buy
a plan, and set up the payouts of your earnings.

Commands:
${commandList(COMMANDS)}

Every command takes --help. The gateway and key come from --url/--key, then QUARRY_URL and
QUARRY_API_KEY, then the stored login (\`quarry login\`). --url, --key and --json may also come
before the command (\`quarry --url URL usage\`).

Exit codes: 0 ok, 1 API or runtime error, 2 usage error, 3 authentication, 4 rate limit or quota.
`;

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  return `Usage: quarry ${group} <command> [options]

${GROUPS[group]}:
${commandList(commands)}

Run \`quarry ${group} <command> --help\` for a command's options.
`;
}

/** The command `argv` names, and the arguments left for it. */
function findCommand(argv: readonly string[]): { command: Command; args: readonly string[] } {
  const [first = '', second, ...rest] = argv;
  if (first in GROUPS) {
    // A group that is a command too (`quarry payouts`): without a subcommand, that command.
    const own = COMMANDS.find((c) => c.name === first);
    if (own !== undefined && (second === undefined || second.startsWith('-'))) {
      return { command: own, args: argv.slice(1) };
    }
    if (second === undefined || second.startsWith('-')) {
      throw new UsageError(
        `\`quarry ${first}\` needs a command: ${COMMANDS.filter((c) => c.name.startsWith(`${first} `))
          .map((c) => c.name.split(' ')[1])
          .join(', ')}.`,
        first,
      );
    }
    const command = COMMANDS.find((c) => c.name === `${first} ${second}`);
    if (!command) throw new UsageError(`Unknown command \`quarry ${first} ${second}\`.`, first);
    return { command, args: rest };
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (!command) throw new UsageError(`Unknown command \`${first}\`.`);
  return { command, args: argv.slice(1) };
}

/** Flags every command that calls the gateway takes, so they may come before the command too. */
const GLOBAL_VALUE_FLAGS = ['--url', '--key'];
const GLOBAL_BOOLEAN_FLAGS = ['--json'];

/**
 * Splits the global flags written before the command (`quarry --url U --json keys list`) from
 * the rest; they are handed to the command with its own flags. Anything else there is refused.
 */
function leadingGlobalFlags(argv: readonly string[]): { globals: string[]; rest: readonly string[] } {
  const globals: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('-') || isHelp(arg)) break;
    const name = arg.split('=', 1)[0] ?? '';
    if (GLOBAL_BOOLEAN_FLAGS.includes(arg)) {
      globals.push(arg);
    } else if (GLOBAL_VALUE_FLAGS.includes(name) && arg.includes('=')) {
      globals.push(arg);
    } else if (GLOBAL_VALUE_FLAGS.includes(arg)) {
      const value = argv[i + 1];
      if (value === undefined) throw new UsageError(`${arg} needs a value.`);
      globals.push(arg, value);
      i++;
    } else {
      throw new UsageError(
        `Unknown option ${name} before the command; the options that may come first are ${[...GLOBAL_VALUE_FLAGS, ...GLOBAL_BOOLEAN_FLAGS].join(', ')}.`,
      );
    }
  }
  return { globals, rest: argv.slice(i) };
}

async function dispatch(fullArgv: readonly string[], io: CliIo): Promise<number> {
  const { globals, rest: argv } = leadingGlobalFlags(fullArgv);
  const [first, second] = argv;
  if (first === undefined) {
    io.stderr.write(MAIN_HELP);
    return EXIT.usage;
  }
  if (isHelp(first) || first === 'help') {
    io.stdout.write(MAIN_HELP);
    return EXIT.ok;
  }
  if (first in GROUPS && isHelp(second) && !COMMANDS.some((c) => c.name === first)) {
    io.stdout.write(groupHelp(first));
    return EXIT.ok;
  }
  const { command, args } = findCommand(argv);
  const parsed = parseCommandArgs(command, [...globals, ...args]);
  if (parsed.help) {
    io.stdout.write(command.help);
    return EXIT.ok;
  }
  return command.run(parsed, io);
}

/** Runs the CLI with `argv` (without `node` and the script); resolves with the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    io.stderr.write(`${formatError(error)}\n`);
    return exitCodeFor(error);
  }
}
