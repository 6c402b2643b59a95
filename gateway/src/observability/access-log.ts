// One finished request, as the metrics and the access log see it: counted and timed by route and
// status, error answers by code, 429s by reason, and one access line (never the Authorization
// header). The access log has its own setting (QUARRY_ACCESS_LOG), apart from QUARRY_LOG_LEVEL:
// an operator who keeps the gateway's own log at `warn` still gets every request's line. Health
// probes and scrapes (/healthz, /readyz, /metrics) are written at debug, so they are left out
// unless QUARRY_ACCESS_LOG=debug. A caller who hung up before its answer was written is status
// 499 in both (its reply's own status, often a 504 for a cancelled query, is `reply_status`).
import type { Logger } from 'pino';
import type { BuildInfo } from './build-info.js';
import type { GatewayMetrics } from './metrics.js';

/** `info`: every request but health probes; `debug`: those too; `off`: no access lines. */
export type AccessLogSetting = 'info' | 'debug' | 'off';

/** The status logged and counted for a request whose caller went away unanswered (nginx's). */
export const CLIENT_CLOSED_STATUS = 499;

export interface RequestRecord {
  readonly method: string;
  /** The route template, or `unmatched`. */
  readonly route: string;
  /** The status of the answer (what it would have been, when `aborted`). */
  readonly status: number;
  readonly seconds: number;
  readonly requestId: string | undefined;
  readonly accountId: string | undefined;
  /** The client address per-address limits count against (http/request-address.ts). */
  readonly address?: string | undefined;
  /** The envelope's error code of an error answer. */
  readonly errorCode?: string | undefined;
  /** Why a 429 was refused: `quota`, `rate_limit`, or undefined (another allowance). */
  readonly limitReason?: string | undefined;
  readonly userAgent?: string | undefined;
  /** Bytes of the answer's body, when known. */
  readonly bytes?: number | undefined;
  /** The result cache's `X-Cache` (HIT, STALE, MISS) of a query answer. */
  readonly cache?: string | undefined;
  /** The trace this request was recorded under (only while tracing is on). */
  readonly traceId?: string | undefined;
  /** The caller hung up before the answer was written. */
  readonly aborted?: boolean;
}

export interface RequestRecorder {
  record(r: RequestRecord): void;
  /** Whether `route`'s access line is written: when not, its fields need not be gathered. */
  logs(route: string): boolean;
}

/** Probes and scrapes: their access lines are debug lines. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The recorder of a gateway: metrics always, access lines per `setting` on a child of `logger`
 * that has its own level (so QUARRY_LOG_LEVEL=warn does not silence it), tagged with the build.
 */
export function createRequestRecorder(
  metrics: GatewayMetrics,
  logger: Logger,
  options: { readonly setting: AccessLogSetting; readonly build: BuildInfo },
): RequestRecorder {
  const access = logger.child(
    { log: 'access', build: `${options.build.version}+${options.build.commit}` },
    { level: options.setting === 'off' ? 'silent' : options.setting },
  );
  // Decided once: the hot path asks a boolean, not pino.
  const infoOn = options.setting !== 'off';
  const debugOn = options.setting === 'debug';
  const logs = (route: string) => (PROBES.has(route) ? debugOn : infoOn);
  return {
    logs,
    record(r) {
      const status = r.aborted === true ? CLIENT_CLOSED_STATUS : r.status;
      const code = r.aborted === true ? 'CLIENT_CLOSED' : r.errorCode;
      metrics.httpRequests.series(r.method, r.route, String(status)).observe(r.seconds);
      if (code !== undefined) metrics.httpErrors.inc({ route: r.route, code });
      if (r.aborted === true) metrics.clientAborts.inc({ route: r.route });
      else if (status === 429) {
        const reason =
          code === 'QUOTA_EXCEEDED' ? 'quota' : r.limitReason === 'rate_limit' ? 'rate_limit' : 'other';
        metrics.rateLimited.inc({ reason });
      }
      if (!logs(r.route)) return;
      const line = {
        request_id: r.requestId,
        method: r.method,
        route: r.route,
        status,
        reply_status: r.aborted === true ? r.status : undefined,
        duration_ms: Math.round(r.seconds * 10_000) / 10,
        account_id: r.accountId,
        client: r.address,
        error_code: code,
        user_agent: r.userAgent,
        bytes: r.bytes,
        cache: r.cache,
        trace_id: r.traceId,
      };
      if (PROBES.has(r.route)) access.debug(line, 'request');
      else access.info(line, 'request');
    },
  };
}
