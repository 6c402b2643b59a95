// Events and their delivery as Stripe makes them: an `event` object holding a snapshot of the
// object it is about, POSTed as JSON to the endpoint with a `Stripe-Signature` header
// (`t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`).
import { createHmac } from 'node:crypto';
import { newId, type StripeObject } from './objects.js';

export const API_VERSION = '2026-10-28.endive';

export interface FakeEvent {
  id: string;
  object: 'event';
  /** The connected account a Connect event (`account.updated`) is about; absent on the platform's own. */
  account?: string;
  api_version: string;
  created: number;
  data: { object: StripeObject; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

/** What the webhook endpoint answered to one delivery. */
export interface Delivery {
  readonly eventId: string;
  readonly status: number;
  /** Unix seconds (real clock) the delivery was made. */
  readonly at: number;
}

export function makeEvent(
  type: string,
  object: StripeObject,
  created: number,
  request: FakeEvent['request'],
  previous?: StripeObject,
): FakeEvent {
  const snapshot = structuredClone(object);
  const event: FakeEvent = {
    id: newId('evt_'),
    object: 'event',
    ...(object.object === 'account' ? { account: object.id } : {}),
    api_version: API_VERSION,
    created,
    data: { object: snapshot },
    livemode: false,
    pending_webhooks: 0,
    request,
    type,
  };
  if (previous && type.endsWith('.updated'))
    event.data.previous_attributes = previousAttributes(previous, snapshot);
  return event;
}

/** The top-level fields that changed, with their old values (Stripe's `previous_attributes`). */
function previousAttributes(before: StripeObject, after: StripeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(before)) {
    if (JSON.stringify(value) !== JSON.stringify(after[key])) out[key] = value;
  }
  return out;
}

/** The `Stripe-Signature` header value for `payload`, signed at `timestamp` (Unix seconds). */
export function signPayload(
  payload: string,
  secret: string,
  timestamp = Math.floor(Date.now() / 1000),
): string {
  const v1 = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${v1}`;
}

/** POSTs one event to `url`, signed with `secret` at the real current time. */
export async function postEvent(url: string, event: FakeEvent, secret: string): Promise<Response> {
  const body = JSON.stringify(event, null, 2);
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      'Cache-Control': 'no-cache',
      Accept: '*/*; q=0.5, application/xml',
      'Stripe-Signature': signPayload(body, secret),
    },
    body,
  });
}
