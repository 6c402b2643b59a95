// Work a gateway does after it starts listening (today: preparing the demo warehouse). While any
// of it is pending, /readyz fails with status `starting`, and a call that needs it waits for it
// (bounded) instead of failing: a connection whose warehouse is still being prepared is opened
// only once the work is done, so no call made in that window is refused and none counts against
// the connection's circuit breaker.

/** One piece of start-up work, as /readyz reports it. */
export interface StartupTask {
  readonly name: string;
  readonly state: 'pending' | 'done' | 'failed';
  /** Why it failed (logged too); absent otherwise. */
  readonly error?: string;
}

export interface StartupWork {
  /**
   * Runs `work` as the start-up task `name`. A failure is logged by the caller's `onError` and
   * recorded, never thrown: the gateway serves everything else, and calls that waited for the
   * task go on (and fail as they would have without it).
   */
  add(name: string, work: () => Promise<void>, onError?: (error: unknown) => void): void;
  /**
   * Resolves once task `name` has settled, or after `timeoutMs`, whichever is first; at once
   * when there is no such task or it is settled. Never rejects.
   */
  settled(name: string, timeoutMs: number): Promise<void>;
  /** Every task and its state. */
  tasks(): readonly StartupTask[];
  /** True while any task is pending. */
  pending(): boolean;
  /** Resolves once every task added so far has settled (tests, shutdown). */
  idle(): Promise<void>;
}

export function createStartupWork(): StartupWork {
  const tasks = new Map<string, { state: StartupTask['state']; error?: string; done: Promise<void> }>();
  return {
    add(name, work, onError) {
      if (tasks.get(name)?.state === 'pending') throw new Error(`start-up task ${name} is already running`);
      const entry: { state: StartupTask['state']; error?: string; done: Promise<void> } = {
        state: 'pending',
        done: Promise.resolve(),
      };
      entry.done = (async () => {
        try {
          await work();
          entry.state = 'done';
        } catch (error) {
          entry.state = 'failed';
          entry.error = error instanceof Error ? error.message : String(error);
          onError?.(error);
        }
      })();
      tasks.set(name, entry);
    },
    async settled(name, timeoutMs) {
      const entry = tasks.get(name);
      if (entry === undefined || entry.state !== 'pending') return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        entry.done,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    },
    tasks: () =>
      [...tasks].map(([name, t]) => ({
        name,
        state: t.state,
        ...(t.error === undefined ? {} : { error: t.error }),
      })),
    pending: () => [...tasks.values()].some((t) => t.state === 'pending'),
    async idle() {
      await Promise.all([...tasks.values()].map((t) => t.done));
    },
  };
}
