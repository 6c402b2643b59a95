// Webhook endpoints, the event outbox and its deliveries (migration 025, docs/webhooks.md).
// `emit` writes an event and one delivery per subscribed endpoint in ONE statement on whatever
// executor it is given, so a caller inside a transaction gets the event committed with its cause
// or not at all. `claim` hands due deliveries to one instance (FOR UPDATE SKIP LOCKED, a lease):
// two instances never hold the same delivery, and a stopped instance's claims return once its
// lease runs out. Endpoint secrets are sealed with the secret box and opened only to sign.
import { randomBytes } from 'node:crypto';
import { encodeBase62 } from '../security/base62.js';
import type { SecretBox } from '../security/secret-box.js';
import type { SqlExecutor } from './sql-client.js';

/** An event as the outbox takes it. */
export interface OutboxEvent {
  readonly accountId: string;
  readonly type: string;
  /** The `data` of the delivered body. */
  readonly data: Readonly<Record<string, unknown>>;
  /** An event that must happen once (a month's threshold): a second emit with it writes nothing. */
  readonly dedupeKey?: string;
  /** Deliver to this endpoint only (a test event). */
  readonly endpointId?: string;
}

/** An endpoint as its account sees it (never a secret). */
export interface WebhookEndpoint {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  readonly description: string;
  /** Empty: every event type. */
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly failingSince: Date | null;
  readonly previousSecretUntil: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The signing secrets of an endpoint: the current one, and during a rotation's overlap the previous. */
export interface EndpointSecrets {
  readonly current: string;
  readonly previous?: string;
}

/** A delivery claimed for sending, with what it needs. */
export interface ClaimedDelivery {
  readonly id: string;
  readonly eventId: string;
  readonly endpointId: string;
  readonly accountId: string;
  readonly url: string;
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly eventCreatedAt: Date;
  /** This attempt's number (1 for the first). */
  readonly attempt: number;
  readonly secrets: EndpointSecrets;
}

/** One row of an endpoint's delivery log. */
export interface DeliveryRecord {
  readonly id: string;
  readonly eventId: string;
  readonly type: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly lastLatencyMs: number | null;
  readonly nextAttemptAt: Date | null;
  readonly deliveredAt: Date | null;
  readonly createdAt: Date;
}

/** What one attempt came to. */
export interface AttemptOutcome {
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly latencyMs: number;
  /** The delivery is done (2xx). */
  readonly delivered: boolean;
  /** Not delivered: when to try again; null: give up. */
  readonly retryAt: Date | null;
}

/** An account's alert settings. */
export interface AlertSettings {
  /** Percent of the month's credits (Pay as you Go: of the budget), ascending. */
  readonly usageThresholds: readonly number[];
  /** An analytic whose error rate over 5 minutes passes this percent is failing. */
  readonly errorRatePercent: number;
}

export const DEFAULT_ALERTS: AlertSettings = Object.freeze({
  usageThresholds: Object.freeze([50, 80, 100]),
  errorRatePercent: 50,
});

/** Changes to an endpoint; absent fields stay. */
export interface EndpointChange {
  readonly url?: string;
  readonly description?: string;
  readonly eventTypes?: readonly string[];
  readonly enabled?: boolean;
}

export interface WebhookRepository {
  create(input: {
    accountId: string;
    url: string;
    description: string;
    eventTypes: readonly string[];
    secret: string;
  }): Promise<WebhookEndpoint>;
  list(accountId: string): Promise<readonly WebhookEndpoint[]>;
  count(accountId: string): Promise<number>;
  get(accountId: string, id: string): Promise<WebhookEndpoint | undefined>;
  update(accountId: string, id: string, change: EndpointChange): Promise<WebhookEndpoint | undefined>;
  /** Deletes an endpoint; its pending deliveries fail. */
  remove(accountId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** A new current secret; the old one keeps signing until `overlapUntil`. */
  rotate(
    accountId: string,
    id: string,
    secret: string,
    overlapUntil: Date,
  ): Promise<WebhookEndpoint | undefined>;
  /** Writes an event and its deliveries on `on` (a transaction, or the client); its id, or undefined when deduplicated. */
  emit(event: OutboxEvent, on?: SqlExecutor): Promise<string | undefined>;
  /** Claims up to `limit` due deliveries for `instance` until now + `leaseMs`. */
  claim(instance: string, limit: number, leaseMs: number): Promise<readonly ClaimedDelivery[]>;
  /** Records an attempt of a claimed delivery (only while `instance` still holds it). */
  record(delivery: ClaimedDelivery, instance: string, outcome: AttemptOutcome): Promise<void>;
  /** Writes `key.expiring` for every live key that expires within `withinMs` (once per key); how many. */
  announceExpiringKeys(withinMs: number): Promise<number>;
  /** Disables the endpoints whose every delivery failed since before `before`; returns them. */
  disableFailing(before: Date): Promise<readonly WebhookEndpoint[]>;
  /** An endpoint's delivery log, newest first. */
  deliveries(accountId: string, endpointId: string, limit: number): Promise<readonly DeliveryRecord[]>;
  /** Sends a delivery again (same `webhook-id`), now. */
  replay(accountId: string, endpointId: string, deliveryId: string): Promise<DeliveryRecord | undefined>;
  alerts(accountId: string): Promise<AlertSettings>;
  /**
   * The health of the owner's analytics among `analyticIds` that ever turned failing (the others
   * are healthy): whether each is failing now, since when, and its error rate at that change.
   */
  analyticHealth(
    ownerId: string,
    analyticIds: readonly string[],
  ): Promise<ReadonlyMap<string, AnalyticHealthState>>;
  setAlerts(accountId: string, settings: AlertSettings): Promise<AlertSettings>;
}

/** Whether an owner's analytic is failing, as `analytic_health` records it. */
export interface AnalyticHealthState {
  readonly failing: boolean;
  /** When it turned failing, or recovered. */
  readonly since: Date;
  /** Its error rate over the 5 minutes when it changed state (null when that event is gone). */
  readonly errorRatePercent: number | null;
}

function newWebhookId(prefix: 'whe' | 'msg' | 'dlv'): string {
  return `${prefix}_${encodeBase62(randomBytes(16), 22)}`;
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  previous_secret_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT_COLUMNS = `id, account_id, url, description, event_types, enabled, disabled_reason, failing_since,
  previous_secret_until, created_at, updated_at`;

function endpointOf(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since,
    previousSecretUntil: row.previous_secret_until,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  status: DeliveryRecord['status'];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  next_attempt_at: Date;
  delivered_at: Date | null;
  created_at: Date;
}

function deliveryOf(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    eventId: row.event_id,
    type: row.type,
    status: row.status,
    attempts: Number(row.attempts),
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastLatencyMs: row.last_latency_ms,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    deliveredAt: row.delivered_at,
    createdAt: row.created_at,
  };
}

/** The SQL of {@link WebhookRepository.emit}: one statement, so it joins the caller's transaction. */
const EMIT = `WITH e AS (
    INSERT INTO webhook_events (id, account_id, type, payload, dedupe_key)
    VALUES ($1, $2, $3, $4::jsonb, $5) ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id, account_id, type
  ), d AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id)
    SELECT 'dlv_' || md5(e.id || w.id), e.id, w.id
      FROM e JOIN webhook_endpoints w ON w.account_id = e.account_id
     WHERE w.deleted_at IS NULL AND w.enabled
       AND (cardinality(w.event_types) = 0 OR e.type = ANY (w.event_types))
       AND ($6::text IS NULL OR w.id = $6)
     ORDER BY w.id
       FOR SHARE OF w
    RETURNING 1
  )
  SELECT e.id, (SELECT count(*) FROM d)::integer AS deliveries FROM e`;

/**
 * Writes an event and a delivery for each of its account's endpoints subscribed to its type, in
 * one statement on `on`: inside a transaction, the event commits with what caused it or not at
 * all. Undefined when `dedupeKey` was written before. The endpoints delivered to are locked (FOR
 * SHARE, in id order) until `on` commits: an endpoint's removal or its account's closure waits
 * for the delivery to be written and then fails it, and one that went first is seen as deleted
 * here (PostgreSQL reads the row again once the lock is had), so no delivery is left pending for
 * a deleted endpoint.
 */
export async function emitWebhookEvent(on: SqlExecutor, event: OutboxEvent): Promise<string | undefined> {
  const [row] = await on.query<{ id: string }>(EMIT, [
    newWebhookId('msg'),
    event.accountId,
    event.type,
    JSON.stringify(event.data),
    event.dedupeKey ?? null,
    event.endpointId ?? null,
  ]);
  return row?.id;
}

export function createWebhookRepository(sql: SqlExecutor, box: SecretBox): WebhookRepository {
  const seal = (secrets: EndpointSecrets) => box.seal(JSON.stringify(secrets));
  const open = (sealed: Buffer): EndpointSecrets => JSON.parse(box.open(sealed)) as EndpointSecrets;

  async function get(accountId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const [row] = await sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL`,
      [accountId, id],
    );
    return row === undefined ? undefined : endpointOf(row);
  }

  return {
    async create(input) {
      const [row] = await sql.query<EndpointRow>(
        `INSERT INTO webhook_endpoints (id, account_id, url, description, event_types, secrets, secrets_key_id)
         VALUES ($1, $2, $3, $4, $5::text[], $6, $7) RETURNING ${ENDPOINT_COLUMNS}`,
        [
          newWebhookId('whe'),
          input.accountId,
          input.url,
          input.description,
          [...input.eventTypes],
          seal({ current: input.secret }),
          box.currentKeyId,
        ],
      );
      return endpointOf(row as EndpointRow);
    },

    async list(accountId) {
      const rows = await sql.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL
          ORDER BY created_at, id`,
        [accountId],
      );
      return rows.map(endpointOf);
    },

    async count(accountId) {
      const [row] = await sql.query<{ n: number }>(
        'SELECT count(*)::integer AS n FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL',
        [accountId],
      );
      return Number(row?.n ?? 0);
    },

    get,

    async update(accountId, id, change) {
      const [row] = await sql.query<EndpointRow>(
        `UPDATE webhook_endpoints SET
           url = coalesce($3, url), description = coalesce($4, description),
           event_types = coalesce($5::text[], event_types), enabled = coalesce($6, enabled),
           -- Enabled again by its owner: the failing streak starts over.
           disabled_reason = CASE WHEN $6 IS TRUE THEN NULL ELSE disabled_reason END,
           failing_since = CASE WHEN $6 IS TRUE THEN NULL ELSE failing_since END,
           updated_at = now()
         WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${ENDPOINT_COLUMNS}`,
        [
          accountId,
          id,
          change.url ?? null,
          change.description ?? null,
          change.eventTypes === undefined ? null : [...change.eventTypes],
          change.enabled ?? null,
        ],
      );
      return row === undefined ? undefined : endpointOf(row);
    },

    remove(accountId, id) {
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<EndpointRow>(
          `UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
            WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING ${ENDPOINT_COLUMNS}`,
          [accountId, id],
        );
        if (row === undefined) return undefined;
        await tx.query(
          `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint deleted'
            WHERE endpoint_id = $1 AND status = 'pending'`,
          [id],
        );
        return endpointOf(row);
      });
    },

    rotate(accountId, id, secret, overlapUntil) {
      return sql.transaction(async (tx) => {
        const [row] = await tx.query<{ secrets: Buffer }>(
          `SELECT secrets FROM webhook_endpoints WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
          [accountId, id],
        );
        if (row === undefined) return undefined;
        const old = open(row.secrets);
        const [updated] = await tx.query<EndpointRow>(
          `UPDATE webhook_endpoints SET secrets = $3, secrets_key_id = $4, previous_secret_until = $5, updated_at = now()
            WHERE id = $2 AND account_id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
          [accountId, id, seal({ current: secret, previous: old.current }), box.currentKeyId, overlapUntil],
        );
        return updated === undefined ? undefined : endpointOf(updated);
      });
    },

    emit: (event, on = sql) => emitWebhookEvent(on, event),

    async claim(instance, limit, leaseMs) {
      const rows = await sql.query<{
        id: string;
        event_id: string;
        endpoint_id: string;
        account_id: string;
        url: string;
        type: string;
        payload: Record<string, unknown>;
        event_created_at: Date;
        attempts: number;
        secrets: Buffer;
        previous_secret_until: Date | null;
      }>(
        `WITH due AS (
           SELECT d.id FROM webhook_deliveries d
            WHERE d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.lease_until IS NULL OR d.lease_until < now())
              -- Never sent for a deleted endpoint, whatever left it pending.
              AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.deleted_at IS NULL)
            ORDER BY d.next_attempt_at LIMIT $2
            FOR UPDATE OF d SKIP LOCKED
         ), claimed AS (
           UPDATE webhook_deliveries d SET leased_by = $1,
                  lease_until = now() + $3::double precision * interval '1 millisecond',
                  attempts = d.attempts + 1
             FROM due WHERE d.id = due.id
           RETURNING d.id, d.event_id, d.endpoint_id, d.attempts
         )
         SELECT c.id, c.event_id, c.endpoint_id, c.attempts, e.account_id, e.type, e.payload,
                e.created_at AS event_created_at, w.url, w.secrets, w.previous_secret_until
           FROM claimed c JOIN webhook_events e ON e.id = c.event_id
           JOIN webhook_endpoints w ON w.id = c.endpoint_id`,
        [instance, limit, leaseMs],
      );
      const now = Date.now();
      return rows.map((r) => {
        const secrets = open(r.secrets);
        const overlap = r.previous_secret_until !== null && r.previous_secret_until.getTime() > now;
        return {
          id: r.id,
          eventId: r.event_id,
          endpointId: r.endpoint_id,
          accountId: r.account_id,
          url: r.url,
          type: r.type,
          payload: r.payload,
          eventCreatedAt: r.event_created_at,
          attempt: Number(r.attempts),
          secrets:
            overlap && secrets.previous !== undefined
              ? { current: secrets.current, previous: secrets.previous }
              : { current: secrets.current },
        };
      });
    },

    async record(delivery, instance, outcome) {
      await sql.transaction(async (tx) => {
        const updated = await tx.query(
          `UPDATE webhook_deliveries SET
             status = CASE WHEN $3 THEN 'delivered' WHEN $7::timestamptz IS NULL THEN 'failed' ELSE 'pending' END,
             last_status = $4, last_error = $5, last_latency_ms = $6,
             next_attempt_at = coalesce($7::timestamptz, next_attempt_at),
             delivered_at = CASE WHEN $3 THEN now() ELSE delivered_at END,
             leased_by = NULL, lease_until = NULL
           WHERE id = $1 AND leased_by = $2 AND attempts = $8 RETURNING 1`,
          [
            delivery.id,
            instance,
            outcome.delivered,
            outcome.statusCode,
            outcome.error,
            outcome.latencyMs,
            outcome.retryAt,
            delivery.attempt,
          ],
        );
        await tx.query(
          `INSERT INTO webhook_attempts (delivery_id, attempt, instance, status_code, error, latency_ms)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (delivery_id, attempt) DO NOTHING`,
          [delivery.id, delivery.attempt, instance, outcome.statusCode, outcome.error, outcome.latencyMs],
        );
        if (updated.length === 0) return;
        await tx.query(
          outcome.delivered
            ? 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL'
            : 'UPDATE webhook_endpoints SET failing_since = now() WHERE id = $1 AND failing_since IS NULL',
          [delivery.endpointId],
        );
      });
    },

    async announceExpiringKeys(withinMs) {
      const keys = await sql.query<{
        id: string;
        account_id: string;
        name: string;
        prefix: string;
        expires_at: Date;
      }>(
        `SELECT k.id, k.account_id, k.name, k.prefix, k.expires_at FROM api_keys k
          WHERE k.revoked_at IS NULL AND k.expires_at > now()
            AND k.expires_at <= now() + $1::double precision * interval '1 millisecond'
            AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.dedupe_key = 'key.expiring:' || k.id)
          LIMIT 1000`,
        [withinMs],
      );
      let written = 0;
      for (const k of keys) {
        const id = await emitWebhookEvent(sql, {
          accountId: k.account_id,
          type: 'key.expiring',
          dedupeKey: `key.expiring:${k.id}`,
          data: { key_id: k.id, name: k.name, prefix: k.prefix, expires_at: k.expires_at.toISOString() },
        });
        if (id !== undefined) written += 1;
      }
      return written;
    },

    async disableFailing(before) {
      const rows = await sql.query<EndpointRow>(
        `UPDATE webhook_endpoints w SET enabled = false, updated_at = now(),
                disabled_reason = 'every delivery failed since ' || to_char(w.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
          WHERE w.enabled AND w.deleted_at IS NULL AND w.failing_since < $1
         RETURNING w.id, w.account_id, w.url, w.description, w.event_types, w.enabled, w.disabled_reason,
                   w.failing_since, w.previous_secret_until, w.created_at, w.updated_at`,
        [before],
      );
      return rows.map(endpointOf);
    },

    async deliveries(accountId, endpointId, limit) {
      const rows = await sql.query<DeliveryRow>(
        `SELECT d.id, d.event_id, e.type, d.status, d.attempts, d.last_status, d.last_error, d.last_latency_ms,
                d.next_attempt_at, d.delivered_at, d.created_at
           FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
           JOIN webhook_endpoints w ON w.id = d.endpoint_id
          WHERE w.account_id = $1 AND d.endpoint_id = $2
          ORDER BY d.created_at DESC, d.id LIMIT $3`,
        [accountId, endpointId, limit],
      );
      return rows.map(deliveryOf);
    },

    async replay(accountId, endpointId, deliveryId) {
      const [row] = await sql.query<DeliveryRow>(
        `WITH r AS (
           UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = now(), lease_until = NULL, leased_by = NULL
             FROM webhook_endpoints w
            WHERE d.id = $3 AND d.endpoint_id = $2 AND w.id = d.endpoint_id AND w.account_id = $1
              AND w.deleted_at IS NULL AND d.status <> 'pending'
           RETURNING d.*
         )
         SELECT r.id, r.event_id, e.type, r.status, r.attempts, r.last_status, r.last_error, r.last_latency_ms,
                r.next_attempt_at, r.delivered_at, r.created_at
           FROM r JOIN webhook_events e ON e.id = r.event_id`,
        [accountId, endpointId, deliveryId],
      );
      return row === undefined ? undefined : deliveryOf(row);
    },

    async analyticHealth(ownerId, analyticIds) {
      if (analyticIds.length === 0) return new Map();
      // The error rate is the one its analytic.failing / analytic.recovered event reported: the
      // event is written in the transaction that changed the row.
      const rows = await sql.query<{
        analytic_id: string;
        failing: boolean;
        changed_at: Date;
        error_rate: string | number | null;
      }>(
        `SELECT h.analytic_id, h.failing, h.changed_at,
                (SELECT e.payload ->> 'error_rate_percent' FROM webhook_events e
                  WHERE e.account_id = $1 AND e.payload ->> 'analytic' = a.name
                    AND e.type = CASE WHEN h.failing THEN 'analytic.failing' ELSE 'analytic.recovered' END
                  ORDER BY e.created_at DESC LIMIT 1) AS error_rate
           FROM analytic_health h JOIN analytics a ON a.id = h.analytic_id
          WHERE a.account_id = $1 AND h.analytic_id = ANY ($2::text[])`,
        [ownerId, analyticIds],
      );
      return new Map(
        rows.map((r) => [
          r.analytic_id,
          {
            failing: r.failing,
            since: new Date(r.changed_at),
            errorRatePercent: r.error_rate === null ? null : Number(r.error_rate),
          },
        ]),
      );
    },
    async alerts(accountId) {
      const [row] = await sql.query<{ usage_thresholds: number[]; error_rate_percent: number }>(
        'SELECT usage_thresholds, error_rate_percent FROM account_alerts WHERE account_id = $1',
        [accountId],
      );
      return row === undefined
        ? DEFAULT_ALERTS
        : {
            usageThresholds: row.usage_thresholds.map(Number),
            errorRatePercent: Number(row.error_rate_percent),
          };
    },

    async setAlerts(accountId, settings) {
      const thresholds = [...new Set(settings.usageThresholds)].sort((a, b) => a - b);
      await sql.query(
        `INSERT INTO account_alerts (account_id, usage_thresholds, error_rate_percent) VALUES ($1, $2::integer[], $3)
         ON CONFLICT (account_id) DO UPDATE SET usage_thresholds = EXCLUDED.usage_thresholds,
           error_rate_percent = EXCLUDED.error_rate_percent, updated_at = now()`,
        [accountId, thresholds, settings.errorRatePercent],
      );
      return { usageThresholds: thresholds, errorRatePercent: settings.errorRatePercent };
    },
  };
}
