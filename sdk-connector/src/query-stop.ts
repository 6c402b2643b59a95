// When a running query must stop: its time limit or the caller's AbortSignal, whichever comes
// first. Used by createConnector once per query, so everything here is about cost: in the common
// case (no caller signal, no session reading the signal, no timeout) a query costs a link in a
// list and no timer, no AbortController and no listener.
//
// - Time limits: one Timeout per connector (a QueryDeadlines) sweeps the running queries. It is
//   armed for the earliest deadline and left alone when a later one starts (the usual case, since
//   queries of one analytic share a limit), so a query neither creates nor clears a timer.
// - The AbortSignal sessions see is created on first read (creating one costs microseconds, more
//   than a loopback round trip's share of the budget), and a controller that settled unaborted
//   and without listeners is reused by a later query.
// - No named closures per query: under tsx/esbuild `keepNames` each costs a defineProperty.
import { getEventListeners } from 'node:events';
import { ConnectorError } from './connector-error.js';
import type { RawResult } from './connector-plugin.js';

/** Most unaborted AbortControllers a connector keeps for reuse. */
const MAX_SPARE_CONTROLLERS = 16;

/** What a stopped query's race rejects with; callers test `stop.reason`, never this value. */
export const STOPPED: unique symbol = Symbol('stopped');

/** The running queries of one connector and the one timer that enforces their time limits. */
export class QueryDeadlines {
  /** Running queries, newest first: an intrusive list, because a Set's add/delete showed in profiles. */
  private head: QueryStop | undefined;
  /** Unaborted controllers from finished queries. */
  readonly spares: AbortController[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now() time); Infinity when none is armed. */
  private dueAt = Number.POSITIVE_INFINITY;

  /** Starts watching a query's deadline. */
  add(stop: QueryStop): void {
    stop.next = this.head;
    if (this.head !== undefined) this.head.prev = stop;
    this.head = stop;
    stop.watched = true;
    if (stop.deadline < this.dueAt) this.arm(stop.deadline);
  }

  /** Stops watching a query; the timer stays armed and finds nothing to do, which is cheaper than clearing it. */
  delete(stop: QueryStop): void {
    if (!stop.watched) return;
    stop.watched = false;
    if (stop.prev === undefined) this.head = stop.next;
    else stop.prev.next = stop.next;
    if (stop.next !== undefined) stop.next.prev = stop.prev;
    stop.prev = undefined;
    stop.next = undefined;
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(sweepDeadlines, Math.max(1, Math.ceil(at - performance.now())), this);
    // A running query keeps the process alive through its own I/O; an idle connector must not.
    this.timer.unref();
  }

  /** Stops every query past its deadline and re-arms for the earliest remaining one. */
  sweep(): void {
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (let stop = this.head; stop !== undefined; ) {
      const after = stop.next; // fire() unlinks stop
      // Timers may fire up to a millisecond early relative to performance.now().
      if (stop.deadline <= now + 1) stop.fire('timeout');
      else if (stop.deadline < next) next = stop.deadline;
      stop = after;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

function sweepDeadlines(deadlines: QueryDeadlines): void {
  deadlines.sweep();
}

/** One query's stop state; create it when the query starts and call `finish()` when it ends. */
export class QueryStop {
  /** Why the query stopped; undefined while it may run. */
  reason: 'timeout' | 'abort' | undefined;
  /** Called once when the query must stop (set by {@link raceStop} while a session executes it). */
  onStop: ((reason: typeof STOPPED) => void) | undefined;
  readonly timeoutMs: number;
  /** performance.now() time past which the query times out. */
  readonly deadline: number;
  /** Links of QueryDeadlines' list; `watched` while on it. */
  prev: QueryStop | undefined;
  next: QueryStop | undefined;
  watched = false;
  private controller: AbortController | undefined;
  private readonly callerSignal: AbortSignal | undefined;
  private readonly deadlines: QueryDeadlines;

  constructor(
    timeoutMs: number,
    started: number,
    callerSignal: AbortSignal | undefined,
    deadlines: QueryDeadlines,
  ) {
    this.timeoutMs = timeoutMs;
    this.deadline = started + timeoutMs;
    this.callerSignal = callerSignal;
    this.deadlines = deadlines;
    if (callerSignal?.aborted) {
      this.reason = 'abort';
      return;
    }
    callerSignal?.addEventListener('abort', this, { once: true });
    deadlines.add(this);
  }

  /** The signal handed to sessions (and to an acquire that has to wait), created on first read. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = this.deadlines.spares.pop() ?? new AbortController();
      if (this.reason !== undefined) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The caller's signal fired (a QueryStop is its own listener object, see EventTarget). */
  handleEvent(): void {
    this.fire('abort');
  }

  /** Stops the query: aborts the signal (if a session read it) and rejects the running race. */
  fire(reason: 'timeout' | 'abort'): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    this.deadlines.delete(this);
    this.controller?.abort();
    const onStop = this.onStop;
    this.onStop = undefined;
    onStop?.(STOPPED);
  }

  /** The error a stopped query fails with. */
  error(): ConnectorError {
    return this.reason === 'timeout'
      ? new ConnectorError(
          'QUERY_TIMEOUT',
          `the query ran past its ${this.timeoutMs} ms limit and was cancelled`,
        )
      : new ConnectorError('QUERY_ABORTED', 'the query was aborted by the caller and cancelled');
  }

  /** Stops watching the deadline and the caller, and keeps a clean controller for a later query. */
  finish(): void {
    this.deadlines.delete(this);
    this.onStop = undefined;
    this.callerSignal?.removeEventListener('abort', this);
    const controller = this.controller;
    if (
      controller !== undefined &&
      !controller.signal.aborted &&
      this.deadlines.spares.length < MAX_SPARE_CONTROLLERS &&
      getEventListeners(controller.signal, 'abort').length === 0
    ) {
      this.deadlines.spares.push(controller);
    }
  }
}

/** Settles with the session's answer, or rejects with STOPPED as soon as the query must stop. */
export function raceStop<T = RawResult>(pending: Promise<T>, stop: QueryStop): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    stop.onStop = reject;
    pending.then(resolve, reject);
  });
}
