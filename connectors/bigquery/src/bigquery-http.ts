// The HTTP of one BigQuery connection, for the API and the token endpoint alike: a gaxios client
// of its own over the SDK's guarded agents, so every socket goes only to the configured hosts, at
// an address the destination guard checked (TLS still verifies the name), and no answer is larger
// than a bound. The driver's own stack (teeny-request on node-fetch, through @google-cloud/common)
// takes no agent and resolves the endpoint's name again for every request (no per-client agent
// or proxy option: googleapis/nodejs-bigquery#1021), so bigquery-transport.ts sends the driver's
// requests through here instead. No environment proxy applies: an explicit agent overrides it.
import { ConnectorError, createGuardedAgents, type DestinationGuard } from '@quarry/sdk-connector';
import { gaxios } from 'google-auth-library';

/**
 * The largest answer read, compressed or not: a results page is at most about 10 MB of rows
 * (BigQuery's own cap) plus JSON overhead; a hostile endpoint cannot fill the heap with one.
 */
export const BIGQUERY_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Sends requests of one connection through its guarded agents. */
export interface BigqueryHttp {
  /**
   * Sends one request: no retries, no redirects followed. A destination the guard refuses (a
   * host outside the connection's, or a name resolving to a forbidden address) rejects with the
   * guard's ConnectorError (`DESTINATION_NOT_ALLOWED`), which node-fetch would otherwise reduce
   * to a message; a request past its `timeout` with CONNECT_FAILED (`REQUEST_TIMEOUT`).
   */
  send<T = unknown>(options: gaxios.GaxiosOptions): Promise<gaxios.GaxiosResponse<T>>;
  /** Closes every socket. */
  destroy(): void;
}

function isAbort(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error && cause.name === 'AbortError';
}

/** The HTTP of a connection whose requests go to `hosts` (host names as in its URLs) only. */
export function createBigqueryHttp(guard: DestinationGuard, hosts: readonly string[]): BigqueryHttp {
  let refusals = 0;
  let lastRefusal: Error | undefined;
  const agents = createGuardedAgents(guard, {
    hosts,
    maxResponseBytes: BIGQUERY_MAX_RESPONSE_BYTES,
    onRefused: (error) => {
      refusals++;
      lastRefusal = error;
    },
  });
  const client = new gaxios.Gaxios();
  return {
    async send<T>(options: gaxios.GaxiosOptions): Promise<gaxios.GaxiosResponse<T>> {
      const seen = refusals;
      try {
        return await client.request<T>({
          ...options,
          agent: (url: URL) => (url.protocol === 'http:' ? agents.http : agents.https),
          retry: false,
          maxRedirects: 0,
          // node-fetch's `size`: bounds the body after decompression too.
          maxContentLength: BIGQUERY_MAX_RESPONSE_BYTES,
        });
      } catch (error) {
        // A refusal while this request was placed is why it failed (every request of the
        // connection goes to the same hosts, so any of them is refused alike).
        if (refusals > seen && lastRefusal !== undefined) throw lastRefusal;
        // gaxios's time limit aborts node-fetch, whose AbortError carries no code.
        if (isAbort(error)) {
          throw new ConnectorError('CONNECT_FAILED', `BigQuery did not answer within ${options.timeout} ms`, {
            cause: error,
            driverCode: 'REQUEST_TIMEOUT',
          });
        }
        throw error;
      }
    },
    destroy() {
      agents.destroy();
    },
  };
}
