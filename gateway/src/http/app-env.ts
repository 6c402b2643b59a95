// Typed context for every route and middleware: the request id, the authenticated principal and
// the injected services (services reach handlers through typed context, not globals: docs/architecture.md).
import type { Principal } from '../auth/principal.js';
import type { GatewayServices } from '../services/gateway-services.js';

export interface AppEnv {
  Variables: {
    requestId: string;
    principal: Principal;
    services: GatewayServices;
    /** Rate-limit headers of this request, added to every response (errors included). */
    rateLimitHeaders: Readonly<Record<string, string>> | undefined;
  };
}
