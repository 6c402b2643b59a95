// GET /v1/connectors: the registered warehouse types and their config schemas (secrets marked),
// so owners know what a connection of each type needs, with the form hints (`ui`) connectors
// declare for each field.
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { route } from '../http/route.js';

const ConnectorTypesSchema = z
  .object({
    connectors: z.array(
      z.object({
        type: z.string(),
        display_name: z.string(),
        config_schema: z.unknown().openapi({
          description:
            "The connection config's JSON Schema (input side). Each field may carry `ui`, form hints its connector declares: `label`, `help`, `placeholder`, `secret` (mask it), `advanced`, `order`, `input` (text, textarea, number, checkbox, select, list, map, url, json) and `options` ({value, label}) for a select; on a union, each variant's `ui.label` names that way of configuring.",
        }),
        secret_fields: z.array(z.string()),
      }),
    ),
  })
  .openapi('ConnectorTypes');

export function registerConnectorRoutes(app: OpenAPIHono<AppEnv>): void {
  route(
    app,
    createRoute({
      method: 'get',
      path: '/v1/connectors',
      tags: ['Owner'],
      summary: 'List the registered connector types',
      responses: {
        200: {
          description: 'Connector types',
          content: { 'application/json': { schema: ConnectorTypesSchema } },
        },
      },
    }),
    (c) => c.json({ connectors: c.var.services.plugins.describe() }),
  );
}
