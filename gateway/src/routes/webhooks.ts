// /v1/webhooks: an account's webhook endpoints (the signing secret shown once, rotatable with an
// overlap), a test event, the delivery log and replay; /v1/account/alerts: the usage thresholds
// and error rate that trigger alerts. The event catalogue is the document's `webhooks`.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { AUTHED_ERRORS, BEARER, BODY_ERRORS, LIMIT_ERROR, NOT_FOUND_ERROR } from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { pathParam, route } from '../http/route.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS } from '../services/webhook-events.js';
import type { AlertSettings, DeliveryRecord, WebhookEndpoint } from '../store/webhook-repository.js';

const EventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES as [string, ...string[]]);

export const NewWebhookSchema = z
  .object({
    url: z.string().min(1).max(2048).openapi({ example: 'https://example.com/quarry-events' }),
    description: z.string().max(200).optional(),
    event_types: z
      .array(EventTypeSchema)
      .max(WEBHOOK_EVENT_TYPES.length)
      .optional()
      .openapi({ description: 'The event types to receive; empty or absent: all' }),
  })
  .strict()
  .openapi('NewWebhookEndpoint');

export const WebhookChangeSchema = z
  .object({
    url: z.string().min(1).max(2048).optional(),
    description: z.string().max(200).optional(),
    event_types: z.array(EventTypeSchema).max(WEBHOOK_EVENT_TYPES.length).optional(),
    enabled: z
      .boolean()
      .optional()
      .openapi({ description: 'true re-enables an endpoint the gateway disabled' }),
  })
  .strict()
  .openapi('WebhookEndpointChange');

const RotateSchema = z
  .object({
    overlap_hours: z
      .number()
      .min(0)
      .max(168)
      .optional()
      .openapi({ description: 'How long the previous secret keeps signing too (default 24)' }),
  })
  .strict()
  .openapi('WebhookSecretRotation');

export const AlertsSchema = z
  .object({
    usage_thresholds: z
      .array(z.number().int().min(1).max(100))
      .max(10)
      .openapi({
        description: "Percent of the month's credits (Pay as you Go: of the budget)",
        example: [50, 80, 100],
      }),
    error_rate_percent: z.number().int().min(1).max(100).openapi({
      description: 'An analytic failing more than this share of its calls over 5 minutes is failing',
    }),
  })
  .strict()
  .openapi('AlertSettings');

const EndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string(),
    event_types: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable(),
    failing_since: z.string().nullable(),
    previous_secret_until: z
      .string()
      .nullable()
      .openapi({ description: 'While set, deliveries carry both signatures' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('WebhookEndpoint');

const IssuedEndpointSchema = z
  .object({
    endpoint: EndpointSchema,
    secret: z.string().openapi({ description: 'The signing secret (`whsec_…`), shown this once' }),
  })
  .openapi('IssuedWebhookEndpoint');

const DeliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string().openapi({ description: 'The `webhook-id` header: the same on every attempt' }),
    type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number().int(),
    last_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_latency_ms: z.number().nullable(),
    next_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('WebhookDelivery');

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function endpointJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    event_types: [...e.eventTypes],
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    failing_since: iso(e.failingSince),
    previous_secret_until:
      e.previousSecretUntil !== null && e.previousSecretUntil > new Date()
        ? iso(e.previousSecretUntil)
        : null,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

function deliveryJson(d: DeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    last_latency_ms: d.lastLatencyMs,
    next_attempt_at: iso(d.nextAttemptAt),
    delivered_at: iso(d.deliveredAt),
    created_at: d.createdAt.toISOString(),
  };
}

const alertsJson = (a: AlertSettings) => ({
  alerts: { usage_thresholds: [...a.usageThresholds], error_rate_percent: a.errorRatePercent },
});

const idParam = z.object({ id: z.string() });
const json = <T extends z.ZodType>(description: string, schema: T) => ({
  description,
  content: { 'application/json': { schema } },
});

export function registerWebhookRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/webhooks',
      tags: ['Webhooks'],
      summary: 'Add a webhook endpoint (the signing secret is shown once)',
      description:
        'The URL must reach a public address (private networks only where the operator allows them); 400 otherwise. Deliveries follow Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).',
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: NewWebhookSchema } } } },
      responses: {
        201: json('Created', IssuedEndpointSchema),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, NewWebhookSchema);
      const { endpoint, secret } = await c.var.services.webhooks.create(c.var.principal.accountId, {
        url: body.url,
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.event_types === undefined ? {} : { eventTypes: body.event_types }),
      });
      return c.json({ endpoint: endpointJson(endpoint), secret }, 201);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/webhooks',
      tags: ['Webhooks'],
      summary: "List the account's webhook endpoints (never a secret)",
      security: BEARER,
      responses: {
        200: json('Endpoints', z.object({ endpoints: z.array(EndpointSchema) })),
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('account'),
    async (c) => {
      const endpoints = await c.var.services.webhooks.list(c.var.principal.accountId);
      return c.json({ endpoints: endpoints.map(endpointJson) });
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{id}',
      tags: ['Webhooks'],
      summary: 'One webhook endpoint',
      security: BEARER,
      request: { params: idParam },
      responses: {
        200: json('Endpoint', z.object({ endpoint: EndpointSchema })),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const endpoint = await c.var.services.webhooks.get(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ endpoint: endpointJson(endpoint) });
    },
  );

  route(
    app,
    createRoute({
      method: 'patch',
      path: '/v1/webhooks/{id}',
      tags: ['Webhooks'],
      summary: 'Change a webhook endpoint (URL, event types, description, enabled)',
      security: BEARER,
      request: {
        params: idParam,
        body: { required: true, content: { 'application/json': { schema: WebhookChangeSchema } } },
      },
      responses: {
        200: json('Endpoint', z.object({ endpoint: EndpointSchema })),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, WebhookChangeSchema);
      const endpoint = await c.var.services.webhooks.update(c.var.principal.accountId, pathParam(c, 'id'), {
        ...(body.url === undefined ? {} : { url: body.url }),
        ...(body.description === undefined ? {} : { description: body.description }),
        ...(body.event_types === undefined ? {} : { eventTypes: body.event_types }),
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      });
      return c.json({ endpoint: endpointJson(endpoint) });
    },
  );

  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/webhooks/{id}',
      tags: ['Webhooks'],
      summary: 'Delete a webhook endpoint (its pending deliveries are dropped)',
      security: BEARER,
      request: { params: idParam },
      responses: {
        200: json('Deleted', z.object({ endpoint: EndpointSchema })),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const endpoint = await c.var.services.webhooks.remove(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ endpoint: endpointJson(endpoint) });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/rotate-secret',
      tags: ['Webhooks'],
      summary:
        'Rotate the signing secret (the new one is shown once; the old one keeps signing during the overlap)',
      security: BEARER,
      request: {
        params: idParam,
        body: { required: false, content: { 'application/json': { schema: RotateSchema } } },
      },
      responses: {
        200: json('Rotated', IssuedEndpointSchema),
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const hasBody = (c.req.header('content-length') ?? '0') !== '0';
      const body = hasBody ? await readJson(c, RotateSchema) : {};
      const { endpoint, secret } = await c.var.services.webhooks.rotate(
        c.var.principal.accountId,
        pathParam(c, 'id'),
        body.overlap_hours === undefined ? undefined : body.overlap_hours * 3_600_000,
      );
      return c.json({ endpoint: endpointJson(endpoint), secret });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/test',
      tags: ['Webhooks'],
      summary: 'Send a `webhook.test` event to this endpoint',
      security: BEARER,
      request: { params: idParam },
      responses: {
        202: json('Queued', z.object({ event_id: z.string() })),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
        ...LIMIT_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const eventId = await c.var.services.webhooks.test(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ event_id: eventId }, 202);
    },
  );

  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/webhooks/{id}/deliveries',
      tags: ['Webhooks'],
      summary: "The endpoint's delivery log, newest first (status, attempts, latency)",
      security: BEARER,
      request: {
        params: idParam,
        query: z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }),
      },
      responses: {
        200: json('Deliveries', z.object({ deliveries: z.array(DeliverySchema) })),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const raw = Number(c.req.query('limit') ?? 50);
      const limit = Number.isInteger(raw) && raw >= 1 && raw <= 200 ? raw : 50;
      const deliveries = await c.var.services.webhooks.deliveries(
        c.var.principal.accountId,
        pathParam(c, 'id'),
        limit,
      );
      return c.json({ deliveries: deliveries.map(deliveryJson) });
    },
  );

  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/webhooks/{id}/deliveries/{delivery}/replay',
      tags: ['Webhooks'],
      summary: 'Send a delivered or failed delivery again (the same `webhook-id`)',
      security: BEARER,
      request: { params: z.object({ id: z.string(), delivery: z.string() }) },
      responses: {
        202: json('Queued', z.object({ delivery: DeliverySchema })),
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('account'),
    async (c) => {
      const delivery = await c.var.services.webhooks.replay(
        c.var.principal.accountId,
        pathParam(c, 'id'),
        pathParam(c, 'delivery'),
      );
      return c.json({ delivery: deliveryJson(delivery) }, 202);
    },
  );

  const alertsResponse = json('Alert settings', z.object({ alerts: AlertsSchema }));
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/account/alerts',
      tags: ['Webhooks'],
      summary: "The account's alert thresholds",
      security: BEARER,
      responses: { 200: alertsResponse, ...AUTHED_ERRORS },
    }),
    requireScope('account'),
    async (c) => c.json(alertsJson(await c.var.services.webhooks.alerts(c.var.principal.accountId))),
  );
  route(
    app,
    createRoute({
      method: 'put',
      path: '/v1/account/alerts',
      tags: ['Webhooks'],
      summary: "Set the account's alert thresholds (usage percentages, analytic error rate)",
      security: BEARER,
      request: { body: { required: true, content: { 'application/json': { schema: AlertsSchema } } } },
      responses: { 200: alertsResponse, ...AUTHED_ERRORS, ...BODY_ERRORS },
    }),
    requireScope('account'),
    async (c) => {
      const body = await readJson(c, AlertsSchema);
      const saved = await c.var.services.webhooks.setAlerts(c.var.principal.accountId, {
        usageThresholds: body.usage_thresholds,
        errorRatePercent: body.error_rate_percent,
      });
      return c.json(alertsJson(saved));
    },
  );

  // The event catalogue: each type and the body its deliveries carry.
  for (const [type, event] of Object.entries(WEBHOOK_EVENTS)) {
    app.openAPIRegistry.registerWebhook({
      method: 'post',
      path: type,
      tags: ['Webhooks'],
      summary: event.summary,
      operationId: `webhook_${type.replace(/[^a-z0-9]+/gi, '_')}`,
      // Sent by the gateway, signed (Standard Webhooks), not called with a credential.
      security: [],
      request: {
        body: {
          content: {
            'application/json': {
              schema: z.object({
                type: z.literal(type),
                timestamp: z.string().openapi({ format: 'date-time' }),
                data: event.data,
              }),
            },
          },
        },
      },
      responses: {
        200: { description: 'Any 2xx answer acknowledges the delivery; anything else is retried' },
      },
    });
  }
}
