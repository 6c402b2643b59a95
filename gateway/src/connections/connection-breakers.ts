// A circuit breaker per owner connection (cockatiel): after `failures` consecutive warehouse
// faults (the warehouse unreachable, a session lost, a query past its time limit) the circuit
// opens and calls fail fast with 503 SOURCE_UNAVAILABLE, `retry_after` = the time until the
// half-open probe, instead of each holding a session, a socket and a caller for the whole time
// limit. After `halfOpenAfterMs` one call goes through as the probe (the others keep failing
// fast); its success closes the circuit, its failure opens it for another period. What the caller
// did wrong (bad params, an owner's SQL error, a result too large, a caller hanging up) neither
// counts nor resets the count. A cache hit never reaches the breaker.

import { isConnectorError } from '@quarry/sdk-connector';
import {
  BrokenCircuitError,
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
} from 'cockatiel';
import { ApiError } from '../errors/api-error.js';

export type CircuitStateName = 'closed' | 'open' | 'half_open';

/** One connection's circuit as operators and the owner see it. */
export interface CircuitStatus {
  readonly state: CircuitStateName;
  /** Warehouse faults in a row so far (while closed). */
  readonly consecutive_failures: number;
  /** Seconds until the half-open probe may run (open only). */
  readonly retry_after?: number;
}

export interface ConnectionBreakersOptions {
  /** Consecutive warehouse faults that open the circuit (QUARRY_BREAKER_FAILURES). */
  readonly failures: number;
  /** How long the circuit stays open before one probe is let through (QUARRY_BREAKER_OPEN_MS). */
  readonly halfOpenAfterMs: number;
  /** Told when a circuit opens or closes (logging). */
  readonly onChange?: (connectionId: string, state: CircuitStateName) => void;
}

export interface ConnectionBreakers {
  /** Runs `fn` (a warehouse call of `connectionId`) through its circuit. */
  run<T>(connectionId: string, fn: () => Promise<T>): Promise<T>;
  /** The circuit of a connection (closed when it has none yet). */
  status(connectionId: string): CircuitStatus;
  /** Every connection with a circuit, for /metrics and /readyz. */
  all(): { readonly connection: string; readonly status: CircuitStatus }[];
  /** Forgets a connection's circuit (deleted connection). */
  forget(connectionId: string): void;
}

/** A warehouse fault: what says the warehouse (not the caller or the owner's SQL) is in trouble. */
export function isWarehouseFault(error: unknown): boolean {
  return isConnectorError(error) && (error.code === 'CONNECT_FAILED' || error.code === 'QUERY_TIMEOUT');
}

interface Circuit {
  readonly policy: CircuitBreakerPolicy;
  readonly counter: ConsecutiveBreaker;
  /** Date.now() when it last opened (cockatiel's own clock). */
  openedAt: number;
}

const CLOSED: CircuitStatus = { state: 'closed', consecutive_failures: 0 };

/** Tenths of a second, never below 0.1: a retry_after the client can act on. */
const seconds = (ms: number) => Math.max(0.1, Math.ceil(ms / 100) / 10);

export function createConnectionBreakers(options: ConnectionBreakersOptions): ConnectionBreakers {
  const circuits = new Map<string, Circuit>();
  const failures = Math.max(1, options.failures);
  const halfOpenAfterMs = Math.max(1, options.halfOpenAfterMs);

  function circuitOf(connectionId: string): Circuit {
    let circuit = circuits.get(connectionId);
    if (circuit !== undefined) return circuit;
    const counter = new ConsecutiveBreaker(failures);
    const policy = circuitBreaker(handleWhen(isWarehouseFault), {
      halfOpenAfter: halfOpenAfterMs,
      breaker: counter,
    });
    const created: Circuit = { policy, counter, openedAt: 0 };
    policy.onBreak(() => {
      created.openedAt = Date.now();
      options.onChange?.(connectionId, 'open');
    });
    policy.onReset(() => options.onChange?.(connectionId, 'closed'));
    circuits.set(connectionId, created);
    circuit = created;
    return circuit;
  }

  function statusOf(circuit: Circuit): CircuitStatus {
    switch (circuit.policy.state) {
      case CircuitState.Open: {
        const left = circuit.openedAt + halfOpenAfterMs - Date.now();
        // Past its period an open circuit lets the next call through as the probe.
        return left > 0
          ? { state: 'open', consecutive_failures: failures, retry_after: seconds(left) }
          : { state: 'half_open', consecutive_failures: failures };
      }
      case CircuitState.HalfOpen:
        return { state: 'half_open', consecutive_failures: failures };
      default:
        return { state: 'closed', consecutive_failures: consecutiveOf(circuit.counter) };
    }
  }

  function unavailable(retryAfter: number, cause?: unknown): ApiError {
    return new ApiError(
      'SOURCE_UNAVAILABLE',
      "The analytic's data source is failing; calls to it are paused for a moment.",
      { retryAfter, cause },
    );
  }

  return {
    async run(connectionId, fn) {
      const circuit = circuitOf(connectionId);
      // cockatiel queues callers behind a half-open probe for as long as the probe runs (up to a
      // query's time limit); they fail fast here instead, like an open circuit.
      if (circuit.policy.state === CircuitState.HalfOpen) throw unavailable(1);
      try {
        return await circuit.policy.execute(fn);
      } catch (error) {
        if (error instanceof BrokenCircuitError) {
          throw unavailable(statusOf(circuit).retry_after ?? 0.1, error);
        }
        throw error;
      }
    },
    status(connectionId) {
      const circuit = circuits.get(connectionId);
      return circuit === undefined ? CLOSED : statusOf(circuit);
    },
    all() {
      return [...circuits].map(([connection, circuit]) => ({ connection, status: statusOf(circuit) }));
    },
    forget(connectionId) {
      circuits.delete(connectionId);
    },
  };
}

/** ConsecutiveBreaker keeps its count in `state` (cockatiel 3.2; 0 when that changes). */
function consecutiveOf(counter: ConsecutiveBreaker): number {
  const state: unknown = counter.state;
  return typeof state === 'number' ? state : 0;
}
