// The shape of a CLI command and its argument parsing (node:util parseArgs, strict): every
// command declares its options and positionals and carries its own --help text, and bad flags
// become a UsageError naming the command.
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';

export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Parsed flags: strings, booleans, and lists for `multiple` options. */
export type FlagValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

export interface ParsedArgs {
  readonly flags: FlagValues;
  readonly positionals: readonly string[];
}

export interface Command {
  /** As typed after `quarry`, e.g. `keys create`. */
  readonly name: string;
  /** One line for the command lists. */
  readonly summary: string;
  /** The whole --help text. */
  readonly help: string;
  readonly options: CommandOptions;
  /** How many positionals it takes. */
  readonly positionals: { readonly min: number; readonly max: number };
  run(args: ParsedArgs, io: CliIo): Promise<number>;
}

/** `--url` and `--key`, which every command that calls the gateway takes. */
export const CONNECTION_OPTIONS: CommandOptions = {
  url: { type: 'string' },
  key: { type: 'string' },
};

export const CONNECTION_HELP = [
  '  --url URL     the gateway (default: $QUARRY_URL, the stored login, http://127.0.0.1:8787)',
  '  --key KEY     the API key (default: $QUARRY_API_KEY, then the stored login)',
].join('\n');

/** Parses `argv` for `command`; throws UsageError for unknown flags, bad values or positionals. */
export function parseCommandArgs(command: Command, argv: readonly string[]): ParsedArgs & { help: boolean } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message, command.name);
  }
  const help = parsed.values.help === true;
  const { min, max } = command.positionals;
  if (!help && (parsed.positionals.length < min || parsed.positionals.length > max)) {
    const expected = min === max ? `${min}` : `${min} to ${max}`;
    throw new UsageError(
      `\`quarry ${command.name}\` takes ${expected} argument${max === 1 ? '' : 's'}, got ${parsed.positionals.length}.`,
      command.name,
    );
  }
  return { flags: parsed.values, positionals: parsed.positionals, help };
}

/** A string flag's value. */
export function stringFlag(flags: FlagValues, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

/** A boolean flag's value. */
export function booleanFlag(flags: FlagValues, name: string): boolean {
  return flags[name] === true;
}

/** Every value of a `multiple` string flag. */
export function listFlag(flags: FlagValues, name: string): string[] {
  const value = flags[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `--period`, checked here so a typo is a usage error, not a round trip. */
export function periodFlag(flags: FlagValues, command: string): string | undefined {
  const period = stringFlag(flags, 'period');
  if (period !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(period)) {
    throw new UsageError(`--period must be a month as YYYY-MM, got "${period}".`, command);
  }
  return period;
}
