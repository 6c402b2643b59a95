// Group commit: many callers' writes share one store round trip. A caller submits its item and
// waits; items that arrive while a batch is being written wait for the next batch, which starts
// the moment the store is free again. Nobody's item waits on a timer: an idle queue is flushed
// on the next turn of the event loop (so requests parsed in the same I/O phase share a batch),
// and under load a batch is as large as what arrived during the previous write. Each caller's
// promise settles only once its own item's outcome is durable (or refused).
//
// A batch that fails as a whole (a constraint one item broke, a lost connection) is retried item
// by item, so one bad item fails alone and never takes its batch-mates down with it.

/** What a batch writer returns per item: its result, or the Error that refused it. */
export type BatchOutcome<O> = O | Error;

export interface GroupCommitOptions<I, O> {
  /** Writes the items in one round trip; returns one outcome per item, in order. */
  readonly write: (items: readonly I[]) => Promise<readonly BatchOutcome<O>[]>;
  /** Most items per write (default 512). */
  readonly maxBatch?: number;
  /** Writes in flight at once (default 1: batches of one kind queue behind each other). */
  readonly maxInFlight?: number;
  /**
   * Items that must be waiting before a write starts beside one already in flight (default 1:
   * as soon as anything waits). A store write has a large fixed cost per batch, so a second
   * write started for a few items costs more than it saves: below this, they wait for the
   * write in flight to finish and go in the next, larger batch.
   */
  readonly overlapAt?: number;
  /**
   * Milliseconds after which a write in flight no longer holds back the items waiting behind it,
   * however few (default: never). A slow store (a saturated machine, a lock) would otherwise
   * make those calls wait for two writes instead of one; a fast store never reaches it.
   */
  readonly overlapAfterMs?: number;
  /**
   * Whether a batch that failed with `error` is retried item by item (default: always). Say no
   * for failures that are not any one item's fault (the store unreachable): retrying each item
   * alone would only fail each again, one store timeout after another.
   */
  readonly splitOnFailure?: (error: unknown) => boolean;
}

export interface GroupCommitStats {
  /** Items submitted so far. */
  readonly items: number;
  /** Writes so far (batches, including item-by-item retries). */
  readonly writes: number;
  /** Items waiting for a batch right now. */
  readonly queued: number;
  /** The largest batch written. */
  readonly maxBatch: number;
  /** Milliseconds spent in writes, summed (mean write time = writeMs / writes). */
  readonly writeMs: number;
}

export interface GroupCommit<I, O> {
  /** Queues `item` for the next batch; resolves with its outcome once written. */
  submit(item: I): Promise<O>;
  /** Resolves once every item submitted so far has settled. */
  drain(): Promise<void>;
  stats(): GroupCommitStats;
}

interface Waiter<I, O> {
  readonly item: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

export function createGroupCommit<I, O>(options: GroupCommitOptions<I, O>): GroupCommit<I, O> {
  const maxBatch = Math.max(1, options.maxBatch ?? 512);
  const maxInFlight = Math.max(1, options.maxInFlight ?? 1);
  const overlapAt = Math.max(1, options.overlapAt ?? 1);
  const overlapAfterMs = options.overlapAfterMs ?? Number.POSITIVE_INFINITY;
  /** When each write in flight started (performance.now()), oldest first. */
  const started: number[] = [];
  /** Whether a write may start now for the items waiting. */
  const mayStart = () =>
    inFlight === 0 || (inFlight < maxInFlight && (queue.length >= overlapAt || overdueNow()));
  /** Whether the oldest write in flight has run `overlapAfterMs` or longer. */
  const overdueNow = () =>
    overlapAfterMs !== Number.POSITIVE_INFINITY &&
    performance.now() - (started[0] as number) >= overlapAfterMs;
  let queue: Waiter<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;
  /** The timer that starts an overlapping write once the oldest in flight is `overlapAfterMs` old. */
  let overdue: ReturnType<typeof setTimeout> | undefined;
  let items = 0;
  let writes = 0;
  let largest = 0;
  let writeMs = 0;
  let idle: (() => void)[] = [];

  const settle = (waiter: Waiter<I, O>, outcome: BatchOutcome<O> | undefined) => {
    if (outcome instanceof Error) waiter.reject(outcome);
    else if (outcome === undefined)
      waiter.reject(new Error('the batch writer returned no outcome for an item'));
    else waiter.resolve(outcome);
  };

  async function writeBatch(batch: Waiter<I, O>[]): Promise<void> {
    writes++;
    largest = Math.max(largest, batch.length);
    let outcomes: readonly BatchOutcome<O>[];
    const began = performance.now();
    try {
      outcomes = await options.write(batch.map((w) => w.item));
      writeMs += performance.now() - began;
    } catch (error) {
      writeMs += performance.now() - began;
      if (batch.length === 1 || options.splitOnFailure?.(error) === false) {
        for (const waiter of batch) waiter.reject(error);
        return;
      }
      // One item may have broken the whole batch: each goes alone, so only it fails.
      for (const waiter of batch) await writeBatch([waiter]);
      return;
    }
    for (const [i, waiter] of batch.entries()) settle(waiter, outcomes[i]);
  }

  /** Items wait behind a write in flight: arms the timer that lets them go once it is overdue. */
  function armOverdue(): void {
    if (overdue !== undefined || overlapAfterMs === Number.POSITIVE_INFINITY) return;
    if (queue.length === 0 || inFlight === 0 || inFlight >= maxInFlight) return;
    const wait = Math.max(0, (started[0] as number) + overlapAfterMs - performance.now());
    overdue = setTimeout(() => {
      overdue = undefined;
      pump();
    }, wait);
    overdue.unref?.();
  }

  function pump(): void {
    scheduled = false;
    while (queue.length > 0 && mayStart()) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      inFlight++;
      const began = performance.now();
      started.push(began);
      void writeBatch(batch).finally(() => {
        inFlight--;
        started.splice(started.indexOf(began), 1);
        if (overdue !== undefined) {
          clearTimeout(overdue);
          overdue = undefined;
        }
        if (queue.length > 0) pump();
        else if (inFlight === 0) {
          const done = idle;
          idle = [];
          for (const resolve of done) resolve();
        }
      });
    }
    armOverdue();
  }

  return {
    submit(item) {
      items++;
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        // Busy: the running write's completion picks this item up. Idle (or enough waiting for
        // another write beside it): flush on the next turn, after every request of this I/O
        // phase has queued its item.
        if (!scheduled && mayStart()) {
          scheduled = true;
          setImmediate(pump);
        } else armOverdue();
      });
    },
    drain() {
      if (queue.length === 0 && inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
    stats: () => ({ items, writes, queued: queue.length, maxBatch: largest, writeMs }),
  };
}
