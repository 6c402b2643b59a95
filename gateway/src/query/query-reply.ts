// What the query module answers, as plain data: a status, lower-case headers and the body text.
// The adapters (adapters/) write it to node:http or wrap it in a fetch Response; nothing else.
import type { Principal } from '../auth/principal.js';

export interface QueryReply {
  readonly status: number;
  /** Lower-case names; `content-length` is set whenever there is a body. */
  readonly headers: Record<string, string>;
  /** undefined for a 304. */
  readonly body: string | undefined;
  /** Who called, once known (for the access line and metrics). */
  readonly principal: Principal | undefined;
  /** The envelope's code of an error answer (for the access line and metrics). */
  readonly errorCode?: string;
  /** Why a 429 was refused (ApiError.reason), for the metrics. */
  readonly limitReason?: string | undefined;
}
