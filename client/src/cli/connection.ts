// Which gateway and key a command uses: flags first, then QUARRY_URL / QUARRY_API_KEY, then the
// stored login. The stored key is only ever sent to the URL it was stored for, so
// `--url https://elsewhere` never leaks it to another server.
import { createQuarryClient, type QuarryClient } from '../quarry-client.js';
import { NotLoggedInError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { type FlagValues, stringFlag } from './command.js';
import { credentialsPath, readLogin } from './credentials.js';

/** Where `npm start` serves the gateway. */
export const DEFAULT_URL = 'http://127.0.0.1:8787';

/** Longer than the longest analytic time limit (600 s), so the gateway's own limit decides. */
const CLI_TIMEOUT_MS = 630_000;
const CLI_VERSION = '0.1.0';

/** The same URL written two ways (`http://h:80/` and `http://h`) compares equal. */
export function normalizeUrl(url: string): string {
  try {
    return new URL(url).toString().replace(/\/+$/, '');
  } catch {
    return url.replace(/\/+$/, '');
  }
}

interface ResolvedConnection {
  readonly url: string;
  readonly key: string | undefined;
}

async function resolveConnection(flags: FlagValues, io: CliIo): Promise<ResolvedConnection> {
  const stored = await readLogin(credentialsPath(io.env));
  const url = normalizeUrl(stringFlag(flags, 'url') ?? io.env.QUARRY_URL ?? stored?.url ?? DEFAULT_URL);
  const storedKey = stored !== undefined && normalizeUrl(stored.url) === url ? stored.key : undefined;
  return { url, key: stringFlag(flags, 'key') ?? io.env.QUARRY_API_KEY ?? storedKey };
}

/** A client for `url` with `key`. */
export function clientWith(url: string, key: string, io: CliIo): QuarryClient {
  return createQuarryClient(
    { baseUrl: url, apiKey: key },
    {
      timeoutMs: CLI_TIMEOUT_MS,
      userAgent: `quarry-cli/${CLI_VERSION}`,
      ...(io.fetch ? { fetch: io.fetch } : {}),
    },
  );
}

/** The client a command uses; NotLoggedInError when no key is configured anywhere. */
export async function connect(flags: FlagValues, io: CliIo): Promise<QuarryClient> {
  const { url, key } = await resolveConnection(flags, io);
  if (key === undefined || key === '') {
    throw new NotLoggedInError(
      `No API key for ${url}: run \`quarry login\`, set QUARRY_API_KEY, or pass --key.`,
    );
  }
  return clientWith(url, key, io);
}
