// Types for the parts of autocannon 9's programmatic API the benches use (the package ships none).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface RequestSpec {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** The port of the URL the request goes to (set by autocannon from the URL). */
      port?: number | string;
      /** Mutates the request before it is sent; called once per request. */
      setupRequest?: (request: RequestSpec, context: Record<string, unknown>) => RequestSpec;
    }

    interface Options {
      /** Several URLs: connection i goes to url[i % url.length]. */
      url: string | string[];
      connections?: number;
      /** Seconds; ignored when `amount` is set. */
      duration?: number;
      amount?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      requests?: RequestSpec[];
      overallRate?: number;
      timeout?: number;
      pipelining?: number;
    }

    interface Histogram {
      readonly average: number;
      readonly p50: number;
      readonly p99: number;
      readonly total: number;
    }

    interface Result {
      readonly duration: number;
      readonly errors: number;
      readonly timeouts: number;
      readonly non2xx: number;
      readonly '2xx': number;
      readonly requests: Histogram;
      readonly latency: Histogram;
      readonly statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
