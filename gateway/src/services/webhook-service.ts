// An account's webhook endpoints (docs/webhooks.md): created with a URL the destination guard
// accepts (public addresses only unless the operator allows private networks), a signing secret
// shown once and rotatable with an overlap, a test event on request, the delivery log and replay.
import { randomBytes } from 'node:crypto';
import {
  createDestinationGuard,
  type DestinationPolicy,
  type HostResolver,
  isConnectorError,
} from '@quarry/sdk-connector';
import { ApiError } from '../errors/api-error.js';
import type {
  AlertSettings,
  AnalyticHealthState,
  DeliveryRecord,
  EndpointChange,
  WebhookEndpoint,
  WebhookRepository,
} from '../store/webhook-repository.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-events.js';

/** Endpoints one account may have. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;
/** How long the previous secret keeps signing after a rotation, by default. */
export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookServiceOptions {
  readonly repository: WebhookRepository;
  readonly destinations: DestinationPolicy;
  readonly resolve?: HostResolver;
  /** Called after an event is written, so this instance sends it without waiting for its poll. */
  readonly onEmitted?: () => void;
}

export interface WebhookService {
  create(
    accountId: string,
    input: { url: string; description?: string; eventTypes?: readonly string[] },
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }>;
  list(accountId: string): Promise<readonly WebhookEndpoint[]>;
  get(accountId: string, id: string): Promise<WebhookEndpoint>;
  update(accountId: string, id: string, change: EndpointChange): Promise<WebhookEndpoint>;
  remove(accountId: string, id: string): Promise<WebhookEndpoint>;
  rotate(
    accountId: string,
    id: string,
    overlapMs?: number,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }>;
  /** Sends a `webhook.test` event to one endpoint; the event's id. */
  test(accountId: string, id: string): Promise<string>;
  deliveries(accountId: string, id: string, limit: number): Promise<readonly DeliveryRecord[]>;
  replay(accountId: string, id: string, deliveryId: string): Promise<DeliveryRecord>;
  alerts(accountId: string): Promise<AlertSettings>;
  /** The health of the owner's analytics `analyticIds`: healthy unless recorded failing. */
  analyticHealth(
    ownerId: string,
    analyticIds: readonly string[],
  ): Promise<ReadonlyMap<string, AnalyticHealthState>>;
  setAlerts(accountId: string, settings: AlertSettings): Promise<AlertSettings>;
}

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function notFound(id: string): ApiError {
  return new ApiError('NOT_FOUND', `No webhook endpoint "${id}".`);
}

export function createWebhookService(options: WebhookServiceOptions): WebhookService {
  const { repository } = options;
  const guard = createDestinationGuard(
    options.destinations,
    options.resolve === undefined ? {} : { resolve: options.resolve },
  );

  async function checkUrl(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ApiError('INVALID_REQUEST', 'The webhook URL is not a URL.', {
        details: [{ field: 'url', message: 'an absolute http(s) URL' }],
      });
    }
    if (parsed.username !== '' || parsed.password !== '') {
      throw new ApiError('INVALID_REQUEST', 'The webhook URL may not carry a user name or password.', {
        details: [{ field: 'url', message: 'no credentials in the URL' }],
      });
    }
    try {
      await guard.checkUrl(parsed);
    } catch (error) {
      if (!isConnectorError(error)) throw error;
      throw new ApiError('INVALID_REQUEST', `The webhook URL is refused: ${error.message}.`, {
        details: [{ field: 'url', message: error.message }],
      });
    }
  }

  function checkTypes(types: readonly string[] | undefined): void {
    const unknown = (types ?? []).filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
    if (unknown.length > 0) {
      throw new ApiError('INVALID_REQUEST', `Unknown event type(s): ${unknown.join(', ')}.`, {
        details: unknown.map((t) => ({ field: 'event_types', message: `"${t}" is not an event type` })),
      });
    }
  }

  async function found(accountId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = await repository.get(accountId, id);
    if (endpoint === undefined) throw notFound(id);
    return endpoint;
  }

  return {
    async create(accountId, input) {
      checkTypes(input.eventTypes);
      await checkUrl(input.url);
      if ((await repository.count(accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw new ApiError(
          'CONFLICT',
          `An account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints.`,
        );
      }
      const secret = newSigningSecret();
      const endpoint = await repository.create({
        accountId,
        url: input.url,
        description: input.description ?? '',
        eventTypes: input.eventTypes ?? [],
        secret,
      });
      return { endpoint, secret };
    },
    list: (accountId) => repository.list(accountId),
    get: found,
    async update(accountId, id, change) {
      checkTypes(change.eventTypes);
      if (change.url !== undefined) await checkUrl(change.url);
      const endpoint = await repository.update(accountId, id, change);
      if (endpoint === undefined) throw notFound(id);
      return endpoint;
    },
    async remove(accountId, id) {
      const endpoint = await repository.remove(accountId, id);
      if (endpoint === undefined) throw notFound(id);
      return endpoint;
    },
    async rotate(accountId, id, overlapMs = DEFAULT_ROTATION_OVERLAP_MS) {
      const secret = newSigningSecret();
      const endpoint = await repository.rotate(accountId, id, secret, new Date(Date.now() + overlapMs));
      if (endpoint === undefined) throw notFound(id);
      return { endpoint, secret };
    },
    async test(accountId, id) {
      const endpoint = await found(accountId, id);
      if (!endpoint.enabled) throw new ApiError('CONFLICT', `The webhook endpoint "${id}" is disabled.`);
      const eventId = await repository.emit({
        accountId,
        type: 'webhook.test',
        data: { message: 'A test event from Quarry.', endpoint_id: id },
        endpointId: id,
      });
      options.onEmitted?.();
      return eventId as string;
    },
    async deliveries(accountId, id, limit) {
      await found(accountId, id);
      return repository.deliveries(accountId, id, limit);
    },
    async replay(accountId, id, deliveryId) {
      await found(accountId, id);
      const delivery = await repository.replay(accountId, id, deliveryId);
      if (delivery === undefined) {
        throw new ApiError('NOT_FOUND', `No finished delivery "${deliveryId}" of this endpoint.`);
      }
      options.onEmitted?.();
      return delivery;
    },
    alerts: (accountId) => repository.alerts(accountId),
    analyticHealth: (ownerId, analyticIds) => repository.analyticHealth(ownerId, analyticIds),
    setAlerts: (accountId, settings) => repository.setAlerts(accountId, settings),
  };
}
