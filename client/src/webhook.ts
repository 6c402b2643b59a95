// Verifies a webhook delivery from Quarry (docs/webhooks.md): Standard Webhooks signatures, an
// HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` keyed with the endpoint's secret
// (`whsec_` + base64), sent as space-separated `v1,<base64>` entries (two during a secret
// rotation). Uses Web Crypto only, so it runs in Node 20, browsers, Deno and workers.

/** Deliveries older or newer than this many seconds are refused (a replayed capture). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** A delivery that is not Quarry's, or too old: do not act on it. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** An event as Quarry delivers it. */
export interface WebhookEvent<T = Record<string, unknown>> {
  readonly type: string;
  readonly timestamp: string;
  readonly data: T;
}

type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string {
  const value =
    typeof (headers as Headers).get === 'function'
      ? (headers as Headers).get(name)
      : (headers as Record<string, string | readonly string[] | undefined>)[name];
  const one = Array.isArray(value) ? value[0] : value;
  if (typeof one !== 'string' || one === '') throw new WebhookVerificationError(`missing ${name} header`);
  return one;
}

function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Compares without an early exit, so timing says nothing of where they differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Checks a delivery's signature and age and returns its event; throws
 * {@link WebhookVerificationError} otherwise. Pass the raw body exactly as received.
 *
 * @example
 * const event = await verifyWebhook(WEBHOOK_SECRET, rawBody, request.headers);
 */
export async function verifyWebhook<T = Record<string, unknown>>(
  secret: string,
  body: string,
  headers: HeaderSource,
  options: { readonly now?: Date; readonly toleranceSeconds?: number } = {},
): Promise<WebhookEvent<T>> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = Number(timestamp);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (!/^\d+$/.test(timestamp) || Math.abs(now - seconds) > tolerance) {
    throw new WebhookVerificationError('the webhook-timestamp is missing or too far from now');
  }
  const key = await crypto.subtle.importKey(
    'raw',
    base64ToBytes(secret.startsWith('whsec_') ? secret.slice(6) : secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  const expected = bytesToBase64(new Uint8Array(mac));
  const matches = signatures
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && sameText(entry.slice(3), expected));
  if (!matches) throw new WebhookVerificationError('no signature matches this secret');
  return JSON.parse(body) as WebhookEvent<T>;
}

/** `Webhook.verify(secret, body, headers)`: the same check, in the shape every Quarry client offers. */
export const Webhook = { verify: verifyWebhook } as const;
