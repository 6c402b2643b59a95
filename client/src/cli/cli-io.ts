// What the CLI touches of its process: output streams (and whether they are terminals), stdin,
// the environment and the working directory. `nodeIo()` is the only place that reads `process`,
// so tests run the whole CLI in-process with their own streams and environment.

/** A stream the CLI writes to. */
export interface CliOutput {
  /** Text, or bytes (an export's); false: wait for `drain` where the stream has one. */
  write(chunk: string | Uint8Array): unknown;
  once?(event: 'drain', listener: () => void): unknown;
  /** True on a terminal: tables and progress there, plain data otherwise. */
  readonly isTTY?: boolean;
}

/** A stream the CLI reads from (an API key piped to `quarry login`). */
export interface CliInput extends AsyncIterable<string | Uint8Array> {
  readonly isTTY?: boolean;
  /** On a terminal: keys arrive one by one and are not echoed (a password prompt). */
  setRawMode?(mode: boolean): unknown;
}

export interface CliIo {
  readonly stdout: CliOutput;
  readonly stderr: CliOutput;
  readonly stdin: CliInput;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** The fetch the client uses (default: the global one). */
  readonly fetch?: typeof fetch;
}

/** The real process's streams, environment and directory. */
export function nodeIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
  };
}
