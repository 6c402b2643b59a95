// Admission to the MCP endpoint, for both of its adapters (the Hono route and the node:http fast
// path of tool calls): the request's credential must hold the `query` scope, as on the API, and
// must not be a marketplace try-token; a refusal is the API's error envelope with the challenge
// the MCP authorization spec asks for (RFC 6750 §3 and the RFC 9728 `resource_metadata`).
import type { Principal } from '../auth/principal.js';
import { ApiError } from '../errors/api-error.js';
import { asApiError, type ErrorLogger, type ErrorPayload, errorPayload } from '../errors/error-payload.js';
import { type AdmissionDeps, authorize } from '../query/admission.js';

/** Where the gateway serves MCP. */
export const MCP_PATH = '/mcp';
/** RFC 9728 §3.1: the metadata of resource `<origin>/mcp` lives at this path on the origin. */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

function admitted(principal: Principal): Principal {
  if (principal.credential === 'try_token') {
    throw new ApiError(
      'FORBIDDEN',
      'A try-token previews one analytic over /v1/query; connect with an API key or an OAuth access token.',
    );
  }
  if (principal.credential === 'embed_token') {
    throw new ApiError(
      'FORBIDDEN',
      'An embed token calls POST /v1/query and GET /v1/analytics/{name} only; connect with an API key or an OAuth access token.',
    );
  }
  return principal;
}

/** The principal of `authorization` if it may use /mcp; throws the refusal. Synchronous when cached. */
export function admitMcp(
  deps: Pick<AdmissionDeps, 'auth' | 'credentialFailures'>,
  authorization: string | undefined,
  address: string,
): Principal | Promise<Principal> {
  const principal = authorize(deps, authorization, 'query', address);
  return principal instanceof Promise ? principal.then(admitted) : admitted(principal);
}

/** Any refusal of an MCP request as the envelope, with `WWW-Authenticate` on 401 and 403. */
export function mcpRefusal(
  error: unknown,
  requestId: string,
  publicUrl: string,
  logger: ErrorLogger,
): ErrorPayload {
  const apiError = asApiError(error, logger);
  const extra: Record<string, string> = {};
  if (apiError.code === 'UNAUTHENTICATED' || apiError.code === 'FORBIDDEN') {
    const base = `Bearer realm="quarry", resource_metadata="${publicUrl}${MCP_RESOURCE_METADATA_PATH}"`;
    extra['www-authenticate'] =
      apiError.code === 'FORBIDDEN' ? `${base}, error="insufficient_scope", scope="query"` : base;
  }
  return errorPayload(apiError, requestId, extra);
}
