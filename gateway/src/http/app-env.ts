// Typed context for every route and middleware: the request id, the authenticated principal and
// the injected services (services reach handlers through typed context, not globals: docs/architecture.md).
import type { Principal } from '../auth/principal.js';
import type { TraceSpan } from '../observability/tracing.js';
import type { GatewayServices } from '../services/gateway-services.js';

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    services: GatewayServices;
    /** Rate-limit headers of this request, added to every response (errors included). */
    rateLimitHeaders: Readonly<Record<string, string>> | undefined;
    /** The envelope's code of an error answer, and a 429's reason (for the access line and metrics). */
    errorCode: string | undefined;
    limitReason: string | undefined;
    /** This request's span while tracing is on (observability/tracing.ts). */
    trace: TraceSpan | undefined;
  };
}
