// Reads a Hono request's JSON body and validates it (validation/json-body.ts).
import type { Context } from 'hono';
import type { z } from 'zod';
import { parseJsonBody, validateBody } from '../validation/json-body.js';

/** Parses the body as JSON (checking type, syntax and depth) without schema validation. */
export async function readJsonValue(c: Context): Promise<unknown> {
  return parseJsonBody(c.req.header('content-type'), await c.req.text());
}

/** Reads the body and validates it with `schema`; throws ApiError on any problem. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  return validateBody(schema, await readJsonValue(c));
}
