// Owner connections: create (secrets encrypted at rest), list, show, change in place (credentials
// rotated without an outage), delete (refused while analytics use it, unless forced), and test.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import {
  AUTHED_ERRORS,
  BEARER,
  BODY_ERRORS,
  CONFLICT_ERROR,
  NOT_FOUND_ERROR,
  QUERY_ERRORS,
} from '../http/common-schemas.js';
import { requireScope } from '../http/middleware/require-scope.js';
import { readJson } from '../http/read-json.js';
import { ConnectionSchema, connectionJson } from '../http/resources.js';
import { pathParam, route } from '../http/route.js';
import { removeConnection } from '../services/connection-removal.js';

export const NewConnectionSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, - and _, up to 64'),
    type: z.string().min(1).openapi({ example: 'postgres' }),
    config: z.record(z.string(), z.unknown()).openapi({
      description: "Fields per the type's config schema (GET /v1/connectors); secrets are encrypted at rest",
    }),
  })
  .strict()
  .openapi('NewConnection');

const IdParam = z.object({ id: z.string() });

const CircuitSchema = z
  .object({
    state: z.enum(['closed', 'open', 'half_open']).openapi({
      description:
        'closed: calls reach the warehouse; open: after repeated warehouse faults (unreachable, lost sessions, time limits) calls fail fast with 503 SOURCE_UNAVAILABLE until the probe; half_open: one call is probing',
    }),
    consecutive_failures: z.number().int(),
    retry_after: z.number().optional().openapi({ description: 'Seconds until the probe (open only)' }),
  })
  .openapi('Circuit');
const CreateQuery = z.object({
  test: z.enum(['true', 'false']).optional().openapi({
    description:
      'Open a session with the config before saving it (default `true`); `false` saves it untested',
  }),
});
const DeleteQuery = z.object({
  force: z.enum(['true', 'false']).optional().openapi({
    description:
      'Delete it even though analytics use it: their listings are taken off the marketplace, and calls to them answer 404 naming the connection until they are deployed on another one',
  }),
});
export const ConnectionPatchSchema = z
  .object({
    config: z.record(z.string(), z.unknown()).openapi({
      description:
        'The fields to change (secrets too); the others are kept. `null` removes a field. The merged config is validated like a new one',
    }),
  })
  .strict()
  .openapi('ConnectionPatch');
const RemovalSchema = z
  .object({
    deleted: z.string().openapi({ description: "The connection's id" }),
    analytics: z.array(z.string()).openapi({
      description: 'Your analytics that were on it: they answer 404 until deployed on another connection',
    }),
    unlisted: z.array(z.string()).openapi({ description: 'Those of them taken off the marketplace' }),
  })
  .openapi('ConnectionRemoval');
const one = { 'application/json': { schema: z.object({ connection: ConnectionSchema }) } };

export function registerOwnerConnectionRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/owner/connections',
      tags: ['Owner'],
      summary: 'Connect a warehouse',
      description:
        "The connection is tested before it is saved: a warehouse that cannot be reached, or refuses the credentials, is a 400 whose `details` hold the warehouse's own message (secrets removed). `?test=false` saves it untested.",
      security: BEARER,
      request: {
        query: CreateQuery,
        body: { required: true, content: { 'application/json': { schema: NewConnectionSchema } } },
      },
      responses: {
        201: { description: 'Created', content: one },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...CONFLICT_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const body = await readJson(c, NewConnectionSchema);
      const connection = await c.var.services.connections.create(c.var.principal.accountId, body, {
        test: c.req.query('test') !== 'false',
      });
      return c.json({ connection: connectionJson(connection) }, 201);
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/connections',
      tags: ['Owner'],
      summary: 'List your connections (never a secret)',
      security: BEARER,
      responses: {
        200: {
          description: 'Connections',
          content: { 'application/json': { schema: z.object({ connections: z.array(ConnectionSchema) }) } },
        },
        ...AUTHED_ERRORS,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const list = await c.var.services.connections.list(c.var.principal.accountId);
      return c.json({ connections: list.map(connectionJson) });
    },
  );
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/owner/connections/{id}',
      tags: ['Owner'],
      summary: 'Show a connection',
      security: BEARER,
      request: { params: IdParam },
      responses: {
        200: {
          description: 'The connection, and its circuit on this gateway instance',
          content: {
            'application/json': {
              schema: z.object({ connection: ConnectionSchema, circuit: CircuitSchema }),
            },
          },
        },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const { connections, breakers } = c.var.services;
      const connection = await connections.get(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ connection: connectionJson(connection), circuit: breakers.status(connection.id) });
    },
  );
  route(
    app,
    createRoute({
      method: 'patch',
      path: '/v1/owner/connections/{id}',
      tags: ['Owner'],
      summary: 'Change a connection in place (rotate its credentials without an outage)',
      description:
        "The given config fields replace the saved ones. The merged config passes the same checks as a new connection and is tested before it is saved (`?test=false` saves it untested): a warehouse that cannot be reached, or refuses the credentials, is a 400 and nothing changes. Once saved, each instance's pool closes after its calls in flight finish, and the next call opens one on the new config.",
      security: BEARER,
      request: {
        params: IdParam,
        query: CreateQuery,
        body: { required: true, content: { 'application/json': { schema: ConnectionPatchSchema } } },
      },
      responses: {
        200: { description: 'Changed', content: one },
        ...AUTHED_ERRORS,
        ...BODY_ERRORS,
        ...NOT_FOUND_ERROR,
      },
    }),
    requireScope('owner'),
    async (c) => {
      const body = await readJson(c, ConnectionPatchSchema);
      const id = pathParam(c, 'id');
      const connection = await c.var.services.connections.update(c.var.principal.accountId, id, body, {
        test: c.req.query('test') !== 'false',
      });
      c.var.services.breakers.forget(id);
      return c.json({ connection: connectionJson(connection) });
    },
  );
  route(
    app,
    createRoute({
      method: 'delete',
      path: '/v1/owner/connections/{id}',
      tags: ['Owner'],
      summary: 'Delete a connection (its pool is closed on every instance)',
      description:
        'Refused with 409 `CONFLICT` while analytics of yours use it (`details` name each). `?force=true` deletes it anyway and takes their listings off the marketplace; calls to them then answer 404 `NOT_FOUND` naming the connection, with no `retry_after`.',
      security: BEARER,
      request: { params: IdParam, query: DeleteQuery },
      responses: {
        200: {
          description: 'Deleted',
          content: { 'application/json': { schema: RemovalSchema } },
        },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
        409: CONFLICT_ERROR[409],
      },
    }),
    requireScope('owner'),
    async (c) => {
      const id = pathParam(c, 'id');
      const { connections, analytics, marketplace, breakers, catalog } = c.var.services;
      const removal = await removeConnection(
        { connections, analytics, marketplace },
        c.var.principal.accountId,
        id,
        { force: c.req.query('force') === 'true' },
      );
      breakers.forget(id);
      catalog.invalidate();
      return c.json(removal);
    },
  );
  route(
    app,
    createRoute({
      method: 'post',
      path: '/v1/owner/connections/{id}/test',
      tags: ['Owner'],
      summary: 'Open a session to the warehouse and report the round trip',
      description:
        "A warehouse that cannot be reached is a 503 whose message and `details` hold the warehouse's own words (secrets removed).",
      security: BEARER,
      request: { params: IdParam },
      responses: {
        200: {
          description: 'Reachable',
          content: {
            'application/json': { schema: z.object({ ok: z.literal(true), latency_ms: z.number() }) },
          },
        },
        ...AUTHED_ERRORS,
        ...NOT_FOUND_ERROR,
        503: QUERY_ERRORS[503],
      },
    }),
    requireScope('owner'),
    async (c) => {
      const result = await c.var.services.connections.test(c.var.principal.accountId, pathParam(c, 'id'));
      return c.json({ ok: true as const, ...result });
    },
  );
}
