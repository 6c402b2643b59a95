// Sends the outbox's deliveries (docs/webhooks.md). Every instance runs one deliverer: it claims
// due deliveries (store/webhook-repository.ts: FOR UPDATE SKIP LOCKED and a lease), signs each
// with the endpoint's secrets (Standard Webhooks, the `standardwebhooks` package; during a
// rotation's overlap with both secrets), posts it with a 5 s time limit, no redirect followed and
// at most 64 KiB of the answer read, and records the attempt. A failure is retried with
// exponential back-off and jitter until the retry window (3 days) has passed; an endpoint failing
// for that long is disabled and the account's other endpoints are told.
//
// Webhook URLs are attacker input: every request goes through the SDK's destination guard with
// the operator's policy (public addresses only unless QUARRY_ALLOW_PRIVATE_NETWORKS), resolved
// once and connected to the checked address, so a name that rebinds to loopback or a private
// address after the endpoint was created is refused at delivery.
import http from 'node:http';
import https from 'node:https';
import {
  createDestinationGuard,
  createGuardedAgents,
  type DestinationPolicy,
  type HostResolver,
} from '@quarry/sdk-connector';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '../observability/logger.js';
import type { AttemptOutcome, ClaimedDelivery, WebhookRepository } from '../store/webhook-repository.js';

/** A delivery's time limit, from connecting to the answer's status line. */
export const DELIVERY_TIMEOUT_MS = 5_000;
/** The most of an answer's body read; the rest is ignored. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** How long before a key expires its account hears of it (`key.expiring`). */
export const KEY_EXPIRY_NOTICE_MS = 7 * 86_400_000;
/** The longest wait between two attempts. */
const MAX_RETRY_DELAY_MS = 12 * 3_600_000;

export interface WebhookDelivererOptions {
  readonly repository: WebhookRepository;
  readonly destinations: DestinationPolicy;
  /** Replaces the system resolver (tests). */
  readonly resolve?: HostResolver;
  /** This instance's name on claims and attempts. */
  readonly instance: string;
  readonly logger: Logger;
  /** How often due deliveries are looked for (default 1,000 ms). */
  readonly pollMs?: number;
  /** How long a claim holds a delivery (longer than the time limit). */
  readonly leaseMs: number;
  /** The wait after a first failed attempt; doubled after each (with jitter). */
  readonly retryBaseMs: number;
  /** After this long since the event, a failing delivery gives up, and an endpoint failing that long is disabled. */
  readonly retryWindowMs: number;
  /** Deliveries claimed at once (default 32). */
  readonly batch?: number;
}

export interface WebhookDeliverer {
  /** Looks for due deliveries now (after a local emit). */
  kick(): void;
  /** Stops polling and waits for the attempts in flight. */
  close(): Promise<void>;
}

/** The wait before attempt `attempt + 1`, or null past the window: base × 2^(attempt−1), ×[0.75, 1.25). */
export function nextAttemptAt(
  attempt: number,
  eventCreatedAt: Date,
  now: number,
  options: { readonly retryBaseMs: number; readonly retryWindowMs: number },
  random: () => number = Math.random,
): Date | null {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, options.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  const delay = exponential * (0.75 + random() * 0.5);
  const at = now + delay;
  return at > eventCreatedAt.getTime() + options.retryWindowMs ? null : new Date(at);
}

/** The body every endpoint gets: `{type, timestamp, data}` (the Standard Webhooks shape). */
export function deliveryBody(delivery: Pick<ClaimedDelivery, 'type' | 'eventCreatedAt' | 'payload'>): string {
  return JSON.stringify({
    type: delivery.type,
    timestamp: delivery.eventCreatedAt.toISOString(),
    data: delivery.payload,
  });
}

/** The `webhook-signature` header: a `v1,…` signature per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
}

interface Answer {
  readonly statusCode: number;
}

export function createWebhookDeliverer(options: WebhookDelivererOptions): WebhookDeliverer {
  const { repository, logger, instance } = options;
  const guard = createDestinationGuard(
    options.destinations,
    options.resolve === undefined ? {} : { resolve: options.resolve },
  );
  // No keep-alive: each delivery checks its destination afresh when it connects.
  const agents = createGuardedAgents(guard, { keepAlive: false });
  const batch = options.batch ?? 32;
  const inFlight = new Set<Promise<void>>();
  let ticking = false;
  let again = false;
  let closed = false;

  function post(delivery: ClaimedDelivery, body: string, headers: Record<string, string>): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const url = new URL(delivery.url);
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(
        url,
        {
          method: 'POST',
          agent: url.protocol === 'https:' ? agents.https : agents.http,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          clearTimeout(timer);
          const statusCode = response.statusCode ?? 0;
          let read = 0;
          // The body is not used: read at most 64 KiB of it, then hang up.
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) response.destroy();
          });
          response.on('error', () => {});
          response.on('close', () => resolve({ statusCode }));
        },
      );
      const timer = setTimeout(
        () => request.destroy(new Error(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`)),
        DELIVERY_TIMEOUT_MS,
      );
      request.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      request.end(body);
    });
  }

  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const body = deliveryBody(delivery);
    const at = new Date();
    const secrets = [
      delivery.secrets.current,
      ...(delivery.secrets.previous ? [delivery.secrets.previous] : []),
    ];
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // Refused here with a clear message; the agents check again at connect (rebinding).
      await guard.checkUrl(delivery.url);
      const answer = await post(delivery, body, {
        'content-type': 'application/json',
        'user-agent': 'Quarry-Webhooks/1',
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signatureHeader(secrets, delivery.eventId, at, body),
      });
      statusCode = answer.statusCode;
      if (statusCode >= 300 && statusCode < 400) error = `redirect (${statusCode}) not followed`;
      else if (statusCode < 200 || statusCode >= 300) error = `answered ${statusCode}`;
    } catch (failure) {
      error = failure instanceof Error ? failure.message : String(failure);
    }
    const latencyMs = Math.round((performance.now() - started) * 10) / 10;
    const delivered = error === null;
    const outcome: AttemptOutcome = {
      statusCode,
      error,
      latencyMs,
      delivered,
      retryAt: delivered
        ? null
        : nextAttemptAt(delivery.attempt, delivery.eventCreatedAt, Date.now(), options),
    };
    if (!delivered) {
      logger.info(
        { delivery: delivery.id, endpoint: delivery.endpointId, attempt: delivery.attempt, error },
        outcome.retryAt === null
          ? 'webhook delivery failed: giving up'
          : 'webhook delivery failed: retried later',
      );
    }
    await repository.record(delivery, instance, outcome);
  }

  async function disableFailing(): Promise<void> {
    const disabled = await repository.disableFailing(new Date(Date.now() - options.retryWindowMs));
    for (const endpoint of disabled) {
      logger.warn(
        { endpoint: endpoint.id, account: endpoint.accountId },
        'webhook endpoint disabled: failing',
      );
      // To the account's other endpoints (this one is disabled now, so it gets no delivery).
      await repository.emit({
        accountId: endpoint.accountId,
        type: 'webhook.endpoint_disabled',
        data: {
          endpoint_id: endpoint.id,
          url: endpoint.url,
          reason: endpoint.disabledReason,
          failing_since: endpoint.failingSince?.toISOString() ?? null,
        },
      });
    }
  }

  /** Keys expiring within 7 days: looked for once a minute by every instance (each key once). */
  let keysCheckedAt = 0;
  async function announceKeys(): Promise<void> {
    if (Date.now() - keysCheckedAt < 60_000) return;
    keysCheckedAt = Date.now();
    await repository.announceExpiringKeys(KEY_EXPIRY_NOTICE_MS);
  }

  async function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return;
    }
    ticking = true;
    try {
      await announceKeys();
      do {
        again = false;
        const claimed = await repository.claim(instance, batch, options.leaseMs);
        const sending = Promise.all(claimed.map((d) => attempt(d).catch((e) => logFailure(d, e))));
        inFlight.add(sending.then(() => {}));
        await sending;
        if (claimed.length === batch) again = true;
      } while (again && !closed);
      await disableFailing();
    } catch (error) {
      logger.warn({ err: error }, 'webhook delivery round failed; retried next poll');
    } finally {
      ticking = false;
      for (const p of inFlight) void p.then(() => inFlight.delete(p));
    }
  }

  function logFailure(delivery: ClaimedDelivery, error: unknown): void {
    // Recording failed (the store): the lease runs out and another round sends it again.
    logger.warn({ err: error, delivery: delivery.id }, 'recording a webhook attempt failed');
  }

  const timer = setInterval(() => void tick(), options.pollMs ?? 1_000);
  timer.unref();
  return {
    kick() {
      if (!closed) void tick();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
      agents.destroy();
    },
  };
}
