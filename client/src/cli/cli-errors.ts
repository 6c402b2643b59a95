// How the CLI fails: the exit code of each kind of error, and the one-paragraph message it
// prints (the envelope's code and message, the request id, what to do), never a stack trace.
import {
  ForbiddenError,
  OAuthError,
  PriceAboveLimitError,
  QuarryError,
  QuotaExceededError,
  RateLimitError,
  UnauthenticatedError,
} from '../errors.js';

/** The CLI's exit codes. */
export const EXIT = {
  ok: 0,
  /** An API or runtime error. */
  error: 1,
  /** Bad flags or arguments. */
  usage: 2,
  /** No credential, or one the gateway refused. */
  auth: 3,
  /** Rate limit or monthly quota. */
  limit: 4,
} as const;

/** Bad flags or arguments; `command` names the command whose `--help` explains them ('' for quarry itself). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly command: string;
  constructor(message: string, command = '') {
    super(message);
    this.command = command;
  }
}

/** No API key anywhere (flags, environment, stored login). */
export class NotLoggedInError extends Error {
  override readonly name = 'NotLoggedInError';
}

/**
 * A 403 about the credential itself (a key lacking a scope, or asked to grant one it lacks), as
 * opposed to every other FORBIDDEN (a connection the network policy refuses, previews turned
 * off, sign-up closed): those are not the key's fault, and a new key would not help. The
 * gateway answers both with FORBIDDEN; only scope refusals carry a detail whose field is
 * `scope` (the error's structure, not its English, decides).
 */
function isScopeRefusal(error: unknown): boolean {
  return error instanceof ForbiddenError && error.details.some((detail) => detail.field === 'scope');
}

/** The exit code for an error. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (
    error instanceof NotLoggedInError ||
    error instanceof UnauthenticatedError ||
    isScopeRefusal(error) ||
    error instanceof OAuthError
  )
    return EXIT.auth;
  if (error instanceof RateLimitError || error instanceof QuotaExceededError) return EXIT.limit;
  return EXIT.error;
}

/** What to do next, for the errors where the CLI knows. */
function hintFor(error: unknown): string | undefined {
  if (error instanceof UnauthenticatedError)
    return 'Check the key: run `quarry login`, set QUARRY_API_KEY, or pass --key.';
  if (isScopeRefusal(error)) return 'The key lacks a scope this command needs; create one that has it.';
  if (error instanceof RateLimitError && error.retryAfter !== undefined)
    return `Try again in ${Math.ceil(error.retryAfter)} s.`;
  if (error instanceof PriceAboveLimitError)
    return 'Nothing was run or charged. The listing shows the price and any scheduled rise: `quarry marketplace search`.';
  if (error instanceof QuotaExceededError)
    return "The plan's monthly credits are used up; they reset next month, or upgrade: `quarry billing status`.";
  return undefined;
}

/** The lines printed for an error (no trailing newline). */
export function formatError(error: unknown): string {
  if (error instanceof UsageError) {
    return `quarry: ${error.message}\nRun \`quarry ${error.command ? `${error.command} ` : ''}--help\` for usage.`;
  }
  if (error instanceof QuarryError) {
    const lines = [
      `quarry: ${error.code}: ${error.reason}${error.requestId ? ` (request ${error.requestId})` : ''}`,
    ];
    for (const d of error.details)
      lines.push(`  - ${d.param ?? d.field ?? ''}${d.param || d.field ? ': ' : ''}${d.message}`);
    const hint = hintFor(error);
    if (hint) lines.push(hint);
    return lines.join('\n');
  }
  return `quarry: ${error instanceof Error ? error.message : String(error)}`;
}
