// `quarry account password`: sets the password the web console logs in with (PUT
// /v1/account/password), so an account made by `quarry signup` or the API, or the demo account,
// can sign in to the console. On a terminal the password is asked twice without echo; otherwise
// it is read from stdin with --password-stdin, never from a flag (flags show in the process list).
import { EXIT, UsageError } from '../cli-errors.js';
import type { CliInput, CliIo } from '../cli-io.js';
import { booleanFlag, CONNECTION_HELP, CONNECTION_OPTIONS, type Command } from '../command.js';
import { connect } from '../connection.js';

/** The first line of stdin as typed (only the line break removed: a password may have spaces). */
async function readLine(stdin: CliInput): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/**
 * Asks each of `prompts` on a terminal in raw mode (nothing echoed) and resolves with the
 * answers; Ctrl-C or Ctrl-D cancels. One iterator for all, so stdin is read as one stream.
 */
export async function promptHidden(io: CliIo, prompts: readonly string[]): Promise<string[]> {
  const stdin = io.stdin;
  const iterator = stdin[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  const answers: string[] = [];
  stdin.setRawMode?.(true);
  try {
    let pending = '';
    for (const prompt of prompts) {
      io.stderr.write(prompt);
      let answer = '';
      for (;;) {
        if (pending === '') {
          const next = await iterator.next();
          if (next.done) throw new UsageError('No password given (stdin closed).', 'account password');
          pending =
            typeof next.value === 'string' ? next.value : decoder.decode(next.value, { stream: true });
        }
        const char = pending[0] ?? '';
        pending = pending.slice(1);
        if (char === '\r' || char === '\n') break;
        if (char === '\u0003' || char === '\u0004') {
          io.stderr.write('\n');
          throw new UsageError('Cancelled: the password is unchanged.', 'account password');
        }
        if (char === '\u007f' || char === '\b') answer = answer.slice(0, -1);
        else answer += char;
      }
      io.stderr.write('\n');
      answers.push(answer);
    }
  } finally {
    stdin.setRawMode?.(false);
    await iterator.return?.();
  }
  return answers;
}

export const accountPasswordCommand: Command = {
  name: 'account password',
  summary: 'set the password the web console logs in with',
  help: `Usage: quarry account password [--password-stdin]

Sets the password of your account's web console sign-in (10 to 200 characters), so an account
made with \`quarry signup\` or the API can log in to the console with its email. Every other
console session of the account ends. Needs a key with the account scope.

On a terminal the password is asked twice and not shown. Otherwise pipe it in with
--password-stdin (\`quarry account password --password-stdin < password.txt\`); it is never a
flag, which would show in the process list.

Options:
  --password-stdin   read the password from the first line of stdin
${CONNECTION_HELP}
  -h, --help         this help
`,
  options: { 'password-stdin': { type: 'boolean' }, ...CONNECTION_OPTIONS },
  positionals: { min: 0, max: 0 },
  async run({ flags }, io) {
    let password: string;
    if (booleanFlag(flags, 'password-stdin')) {
      password = await readLine(io.stdin);
    } else if (io.stdin.isTTY && io.stdin.setRawMode) {
      const [first = '', again = ''] = await promptHidden(io, ['New console password: ', 'Again: ']);
      if (first !== again)
        throw new UsageError('The two passwords differ: nothing changed.', 'account password');
      password = first;
    } else {
      throw new UsageError(
        'stdin is not a terminal: pipe the password in with --password-stdin.',
        'account password',
      );
    }
    if (password === '') throw new UsageError('No password given.', 'account password');
    const client = await connect(flags, io);
    await client.account.setPassword(password);
    const account = await client.account.get().catch(() => undefined);
    io.stdout.write(
      `Console password set${account ? ` for ${account.email}` : ''}: log in to the console with it.\n`,
    );
    return EXIT.ok;
  },
};
