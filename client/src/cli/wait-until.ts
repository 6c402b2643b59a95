// Waiting for something the gateway will say once a person acts in a browser (a payment, an
// onboarding): asks every 2 s with a progress line on stderr, until `done`, or fails after the
// timeout with the caller's message.
import type { CliIo } from './cli-io.js';
import { createProgress } from './progress.js';

const POLL_MS = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface WaitOptions<T> {
  readonly read: () => Promise<T>;
  readonly done: (value: T) => boolean;
  readonly timeoutS: number;
  /** The progress label, given the last value and the seconds waited. */
  readonly label: (value: T, waitedS: number) => string;
  /** The error's message once the timeout has passed. */
  readonly timedOut: (value: T) => string;
}

/** The first value `done` holds of, or throws with `timedOut`'s message. */
export async function waitUntil<T>(io: CliIo, options: WaitOptions<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + options.timeoutS * 1_000;
  const progress = createProgress(io.stderr);
  try {
    for (;;) {
      const value = await options.read();
      if (options.done(value)) return value;
      const now = Date.now();
      if (now >= deadline) throw new Error(options.timedOut(value));
      progress.update(options.label(value, Math.round((now - started) / 1_000)));
      await sleep(Math.min(POLL_MS, deadline - now));
    }
  } finally {
    progress.stop();
  }
}
