// The `traffic` half of a conformance case: what a client must have sent, checked against the
// scenario proxy's log of one case (clients/conformance/README.md). Returns every problem found,
// empty when the client behaved.
import type { TrafficExpectation } from './conformance-cases.js';

/** One request as the scenario proxy saw it. */
export interface LoggedRequest {
  readonly runner: string;
  readonly case: string;
  readonly method: string;
  /** Path and query string as the gateway received them. */
  readonly path: string;
  /** The HTTP status passed back, or `lost` when the proxy dropped the connection instead. */
  status: number | 'lost';
  /** `METHOD path status`, what `traffic.requests` lists. */
  line: string;
  readonly idempotency_key: string | null;
  /** The end of the bearer credential sent (to tell tokens apart), or null. */
  readonly bearer: string | null;
  /** The error envelope's retry_after, seconds. */
  retry_after: number | null;
  /** performance.now() when the request arrived. */
  readonly received_ms: number;
  /** performance.now() when its answer had been sent (or the connection dropped). */
  answered_ms: number;
}

/** A timer may fire a hair early against another clock: 2 ms of slack, far below any retry_after. */
const CLOCK_SLACK_MS = 2;

/** `{runner}` in an expected request line stands for the runner's name (its own analytics' names). */
export function checkTraffic(
  expect: TrafficExpectation,
  log: readonly LoggedRequest[],
  runner = '',
): string[] {
  const problems: string[] = [];
  const at = (i: number, what: string): LoggedRequest | undefined => {
    const entry = log[i];
    if (!entry) problems.push(`${what}: there is no request #${i} (only ${log.length})`);
    return entry;
  };
  const pairs = (
    list: readonly (readonly [number, number])[] | undefined,
    what: string,
    check: (a: LoggedRequest, b: LoggedRequest) => string | undefined,
  ) => {
    for (const [i, j] of list ?? []) {
      const a = at(i, what);
      const b = at(j, what);
      if (!a || !b) continue;
      const problem = check(a, b);
      if (problem) problems.push(`${what} #${i} #${j}: ${problem}`);
    }
  };

  if (expect.requests) {
    const lines = log.map((e) => e.line);
    const expected = expect.requests.map((line) => line.replaceAll('{runner}', runner));
    if (
      lines.length !== expected.length ||
      expected.some((line, i) => !sameRequestLine(line, lines[i] ?? ''))
    ) {
      problems.push(`requests: expected ${JSON.stringify(expected)}, got ${JSON.stringify(lines)}`);
    }
  }
  for (const i of expect.idempotency_key ?? []) {
    const entry = at(i, 'idempotency_key');
    if (entry && !entry.idempotency_key) problems.push(`idempotency_key: request #${i} carried none`);
  }
  pairs(expect.same_idempotency_key, 'same_idempotency_key', (a, b) =>
    a.idempotency_key && a.idempotency_key === b.idempotency_key
      ? undefined
      : `${JSON.stringify(a.idempotency_key)} vs ${JSON.stringify(b.idempotency_key)}`,
  );
  pairs(expect.waited_retry_after, 'waited_retry_after', (a, b) => {
    if (a.retry_after === null || a.retry_after <= 0) return 'the first was answered without a retry_after';
    const waited = b.received_ms - a.answered_ms;
    return waited + CLOCK_SLACK_MS >= a.retry_after * 1000
      ? undefined
      : `retried after ${waited.toFixed(1)} ms, retry_after was ${(a.retry_after * 1000).toFixed(1)} ms`;
  });
  pairs(expect.same_bearer, 'same_bearer', (a, b) =>
    a.bearer && a.bearer === b.bearer ? undefined : 'different credentials',
  );
  pairs(expect.different_bearer, 'different_bearer', (a, b) =>
    a.bearer && b.bearer && a.bearer !== b.bearer ? undefined : 'the same credential',
  );
  return problems;
}

/**
 * A request line as a case lists it against one the proxy logged: the same method, path and
 * status, and the same query-string pairs with the keys in sorted order (Go sends its keys
 * sorted, the others in the order given; a repeated key keeps its values' order). An expected
 * value `<nonempty>` matches any non-empty value (an opaque cursor).
 */
export function sameRequestLine(expected: string, actual: string): boolean {
  const e = splitRequestLine(expected);
  const a = splitRequestLine(actual);
  if (e.head !== a.head || e.pairs.length !== a.pairs.length) return false;
  return e.pairs.every(([key, value], i) => {
    const [actualKey, actualValue] = a.pairs[i] ?? ['', ''];
    return key === actualKey && (value === actualValue || (value === '<nonempty>' && actualValue !== ''));
  });
}

function splitRequestLine(line: string): { head: string; pairs: (readonly [string, string])[] } {
  const [method = '', target = '', ...rest] = line.split(' ');
  const mark = target.indexOf('?');
  const path = mark === -1 ? target : target.slice(0, mark);
  const pairs =
    mark === -1
      ? []
      : target
          .slice(mark + 1)
          .split('&')
          .map((pair): readonly [string, string] => {
            const eq = pair.indexOf('=');
            return eq === -1 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
          });
  // A stable sort: a repeated key's values stay in the order sent.
  pairs.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  return { head: [method, path, ...rest].join(' '), pairs };
}
