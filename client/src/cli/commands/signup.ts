// `quarry signup`: creates an account on the gateway (no key needed) and prints its first key,
// shown this once; `--save` stores it as the login the other commands use.
import { signUp } from '../../quarry-client.js';
import { EXIT, UsageError } from '../cli-errors.js';
import { booleanFlag, type Command, stringFlag } from '../command.js';
import { DEFAULT_URL, normalizeUrl } from '../connection.js';
import { credentialsPath, readLogin, saveLogin } from '../credentials.js';

export const signupCommand: Command = {
  name: 'signup',
  summary: 'create an account and print its first API key',
  help: `Usage: quarry signup --email EMAIL --name NAME [--save] [--json] [--url URL]

Creates a Free account (POST /v1/accounts) and prints its first API key, which the gateway shows
this once: keep it. With --save the URL and key are stored as your login (as \`quarry login\`
does), so the other commands use them.

Options:
  --email EMAIL   the account's email
  --name NAME     the account's display name
  --save          store the new key as your login
  --json          print the gateway's answer (account and key) as JSON
  --url URL       the gateway (default: $QUARRY_URL, the stored login, ${DEFAULT_URL})
  -h, --help      this help
`,
  options: {
    email: { type: 'string' },
    name: { type: 'string' },
    save: { type: 'boolean' },
    json: { type: 'boolean' },
    url: { type: 'string' },
  },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    const email = stringFlag(flags, 'email');
    const name = stringFlag(flags, 'name');
    if (!email || !name) throw new UsageError('Give both --email and --name.', 'signup');
    const path = credentialsPath(io.env);
    const stored = await readLogin(path).catch(() => undefined);
    const url = normalizeUrl(stringFlag(flags, 'url') ?? io.env.QUARRY_URL ?? stored?.url ?? DEFAULT_URL);
    const result = await signUp(url, { email, name }, io.fetch ? { fetch: io.fetch } : {});
    if (booleanFlag(flags, 'save')) await saveLogin(path, { url, key: result.key.secret });
    if (booleanFlag(flags, 'json')) {
      io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout.write(
      [
        `Signed up ${result.account.email} (account ${result.account.id}, ${result.account.plan} plan).`,
        `API key (shown this once): ${result.key.secret}`,
        booleanFlag(flags, 'save')
          ? `Saved as your login for ${url} in ${path}`
          : 'Store it with `quarry login`, or pass it as QUARRY_API_KEY.',
        '',
      ].join('\n'),
    );
    return EXIT.ok;
  },
};
