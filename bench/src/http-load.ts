// HTTP load through autocannon (programmatic, in this process): a closed loop of `connections`
// keep-alive connections, or a fixed overall rate. Latency comes from autocannon's per-response
// event (hrtime-based, fractional ms), not from its whole-millisecond histogram.
import autocannon from 'autocannon';
import { type MeasuredLoad, startWindow } from './load-window.js';

/** One request, repeated. */
export interface HttpTarget {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** How hard and how long. */
export interface HttpLoadOptions {
  readonly connections: number;
  readonly seconds: number;
  /** Requests per second over all connections; unset: as fast as the server answers. */
  readonly overallRate?: number;
  /** Stop after this many requests instead of after `seconds`. */
  readonly amount?: number;
  /**
   * Rewrites the body of request number `i` (0-based); for distinct params per request. `port`
   * is the port of the URL it goes to (with `urls`: which instance).
   */
  readonly bodyFor?: (i: number, port: number) => string;
  /** Headers of request number `i` over the target's (e.g. another caller's key); `port` as for `bodyFor`. */
  readonly headersFor?: (i: number, port: number) => Record<string, string>;
  /**
   * The same request to several instances instead of `target.url` (full URLs): connection `c`
   * goes to `urls[c % urls.length]`, so the connections are spread round-robin over them.
   */
  readonly urls?: readonly string[];
  /** The server under test (or all its instances): its CPU over the window is reported (LoadWindow.serverCpu). */
  readonly serverPid?: number | readonly number[];
}

/** Runs one window of load against `target`. */
export async function runHttpWindow(target: HttpTarget, options: HttpLoadOptions): Promise<MeasuredLoad> {
  const recorder = startWindow(options.serverPid);
  const { bodyFor, headersFor } = options;
  let sent = 0;
  const instance = autocannon({
    url: options.urls === undefined ? target.url : [...options.urls],
    connections: options.connections,
    duration: options.seconds,
    method: target.method,
    headers: { ...target.headers },
    ...(target.body === undefined ? {} : { body: target.body }),
    ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate }),
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    ...(bodyFor === undefined && headersFor === undefined
      ? {}
      : {
          requests: [
            {
              setupRequest: (request) => {
                const i = sent++;
                const port = Number(request.port);
                if (bodyFor !== undefined) request.body = bodyFor(i, port);
                if (headersFor !== undefined)
                  request.headers = { ...request.headers, ...headersFor(i, port) };
                return request;
              },
            },
          ],
        }),
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) recorder.record(ms);
    else recorder.fail();
  });
  instance.on('reqError', () => recorder.fail());
  await instance;
  return recorder.finish();
}
