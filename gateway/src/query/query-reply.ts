// What the query module answers, as plain data: a status, lower-case headers and the body text.
// The adapters (adapters/) write it to node:http or wrap it in a fetch Response; nothing else.
import type { Writable } from 'node:stream';
import type { Principal } from '../auth/principal.js';

export interface QueryReply {
  readonly status: number;
  /** Lower-case names; `content-length` is set whenever there is a body. */
  readonly headers: Record<string, string>;
  /** undefined for a 304, and for a streamed export (`stream`). */
  readonly body: string | undefined;
  /**
   * An export's body (no `content-length`): the adapter writes the head, then awaits this with
   * the response, then ends it. A rejection means the answer was cut: the adapter destroys the
   * response (the call was not charged).
   */
  readonly stream?: (out: Writable) => Promise<void>;
  /** Who called, once known (for the access line and metrics). */
  readonly principal: Principal | undefined;
  /** The envelope's code of an error answer (for the access line and metrics). */
  readonly errorCode?: string;
  /** Why a 429 was refused (ApiError.reason), for the metrics. */
  readonly limitReason?: string | undefined;
}
