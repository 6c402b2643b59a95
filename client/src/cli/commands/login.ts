// `quarry login` and `quarry logout`: store (after checking it with GET /v1/account) or forget
// the gateway URL and API key the other commands use.
import { ForbiddenError } from '../../errors.js';
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliInput, CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { stringFlag } from '../command.js';
import { clientWith, DEFAULT_URL, normalizeUrl } from '../connection.js';
import { credentialsPath, readLogin, removeLogin, saveLogin } from '../credentials.js';

/** The first line of stdin (the key piped in, or typed at the prompt). */
async function readFirstLine(stdin: CliInput): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0]?.trim() ?? '';
}

export const loginCommand: Command = {
  name: 'login',
  summary: 'check an API key and store it for the other commands',
  help: `Usage: quarry login [--url URL] [--key KEY]

Checks the key with the gateway (GET /v1/account) and stores the URL and key in
$XDG_CONFIG_HOME/quarry/credentials.json (~/.config/quarry/… without it), readable by you only.
Without --key the key is read from stdin: pipe it in (\`quarry login < key.txt\`) or paste it.

Options:
  --url URL     the gateway (default: $QUARRY_URL, the stored login, ${DEFAULT_URL})
  --key KEY     the API key (qry_live_…); prefer stdin, a flag shows in the process list
  -h, --help    this help
`,
  options: { url: { type: 'string' }, key: { type: 'string' } },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const path = credentialsPath(io.env);
    const stored = await readLogin(path).catch(() => undefined);
    const url = normalizeUrl(stringFlag(flags, 'url') ?? io.env.QUARRY_URL ?? stored?.url ?? DEFAULT_URL);
    let key = stringFlag(flags, 'key');
    if (key === undefined) {
      if (io.stdin.isTTY) io.stderr.write(`API key for ${url}: `);
      key = await readFirstLine(io.stdin);
    }
    if (key === '') throw new UsageError('No API key given: pass --key or pipe the key on stdin.', 'login');
    const client = clientWith(url, key, io);
    let who: string;
    try {
      const account = await client.account.get();
      who = `${account.email} (${account.name}, ${account.plan} plan)`;
    } catch (error) {
      // The key was recognised; it only lacks the `account` scope.
      if (!(error instanceof ForbiddenError)) throw error;
      who = 'a key without the account scope';
    }
    await saveLogin(path, { url, key });
    io.stdout.write(`Logged in to ${url} as ${who}.\nCredentials saved to ${path}\n`);
    return EXIT.ok;
  },
};

export const logoutCommand: Command = {
  name: 'logout',
  summary: 'forget the stored login',
  help: `Usage: quarry logout

Removes the stored login ($XDG_CONFIG_HOME/quarry/credentials.json). The key itself stays valid:
revoke it with \`quarry keys revoke <id>\` if it should stop working.

Options:
  -h, --help    this help
`,
  options: {},
  positionals: { min: 0, max: 0 },
  async run(_args, io: CliIo) {
    const path = credentialsPath(io.env);
    io.stdout.write((await removeLogin(path)) ? `Logged out: removed ${path}\n` : 'Not logged in.\n');
    return EXIT.ok;
  },
};
