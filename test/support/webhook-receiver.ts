// Starts test/support/webhook-receiver.mjs as a process of its own on loopback and talks to it.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ReceivedDelivery {
  readonly name: string;
  readonly at: number;
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly child: ChildProcess;
  /** The URL of the hook named `name`. */
  hook(name: string): string;
  /** What the next deliveries to `name` get: statuses in order (then 200), requests held open. */
  plan(
    name: string,
    plan: { statuses?: number[]; hang?: number; redirect?: string; bigBody?: boolean },
  ): Promise<void>;
  /** Every delivery received so far (optionally only to `name`). */
  received(name?: string): Promise<ReceivedDelivery[]>;
  /** Waits until `predicate` holds of the deliveries (up to `timeoutMs`). */
  waitFor(
    predicate: (all: ReceivedDelivery[]) => boolean,
    timeoutMs?: number,
    name?: string,
  ): Promise<ReceivedDelivery[]>;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./webhook-receiver.mjs', import.meta.url));

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const child = spawn(process.execPath, [SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
    child.stdout?.setEncoding('utf8').once('data', (line: string) => resolve(JSON.parse(line).port));
  });
  const url = `http://127.0.0.1:${port}`;
  const received = async (name?: string) => {
    const all = (await (await fetch(`${url}/log`)).json()) as ReceivedDelivery[];
    return name === undefined ? all : all.filter((d) => d.name === name);
  };
  return {
    url,
    child,
    hook: (name) => `${url}/hook/${name}`,
    async plan(name, plan) {
      await fetch(`${url}/control/${name}`, { method: 'POST', body: JSON.stringify(plan) });
    },
    received,
    async waitFor(predicate, timeoutMs = 20_000, name) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const all = await received(name);
        if (predicate(all)) return all;
        if (Date.now() > deadline) {
          throw new Error(
            `the receiver did not get what was expected in ${timeoutMs} ms: ${JSON.stringify(all).slice(0, 2000)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
