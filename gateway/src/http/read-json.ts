// Reads a Hono request's JSON body and validates it (validation/json-body.ts).
import type { Context } from 'hono';
import type { z } from 'zod';
import { parseJsonBody, validateBody } from '../validation/json-body.js';

/** Parses the body as JSON (checking type, syntax and depth) without schema validation. */
export async function readJsonValue(c: Context): Promise<unknown> {
  return parseJsonBody(c.req.header('content-type'), await c.req.text());
}

/**
 * Reads an optional body: an empty one is `{}` validated by `schema`; anything else must be JSON
 * like every other body (routes whose every field is optional, e.g. a return URL).
 */
export async function readOptionalJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  return validateBody(schema, text.trim() === '' ? {} : parseJsonBody(c.req.header('content-type'), text));
}

/** Reads the body and validates it with `schema`; throws ApiError on any problem. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  return validateBody(schema, await readJsonValue(c));
}
