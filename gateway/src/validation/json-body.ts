// Parses and validates a JSON request body against a zod schema (the same schema OpenAPI is
// generated from), with the error codes of docs/design.md §2: 415 without a JSON content type,
// 400 for malformed or too deeply nested JSON, 400 INVALID_REQUEST listing every schema problem.
// Plain data in, so the query module and the HTTP layer (http/read-json.ts) share it.
import type { z } from 'zod';
import { ApiError } from '../errors/api-error.js';

/** Deeper nesting than any real request needs; refusing it keeps hostile bodies cheap. */
export const MAX_JSON_DEPTH = 32;

/** `depth`: containers enclosing `value`. Only containers count as levels (the body object is 1). */
function tooDeep(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_JSON_DEPTH) return true;
  if (Array.isArray(value)) return value.some((v) => tooDeep(v, depth + 1));
  for (const key in value) {
    if (tooDeep((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  // What nearly every client sends: no split, no allocation.
  if (header === 'application/json') return true;
  const type = header.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** UNSUPPORTED_MEDIA_TYPE unless the content type is JSON. */
export function requireJsonContentType(contentType: string | undefined): void {
  if (!isJsonContentType(contentType)) {
    throw new ApiError(
      'UNSUPPORTED_MEDIA_TYPE',
      'The body must be JSON, sent with Content-Type: application/json.',
    );
  }
}

/** Parses a body as JSON (checking its content type, syntax and depth) without schema validation. */
export function parseJsonBody(contentType: string | undefined, text: string): unknown {
  requireJsonContentType(contentType);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('INVALID_REQUEST', 'The body is not valid JSON.');
  }
  if (tooDeep(value, 0)) {
    throw new ApiError('INVALID_REQUEST', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  }
  return value;
}

/** Turns zod issues into envelope details. */
export function zodDetails(error: {
  readonly issues: readonly z.core.$ZodIssue[];
}): { field: string; message: string }[] {
  return error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
}

/** Validates a parsed body with `schema`; throws INVALID_REQUEST listing every problem. */
export function validateBody<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = zodDetails(parsed.error);
    const first = details[0];
    throw new ApiError(
      'INVALID_REQUEST',
      first ? `Invalid request body: ${first.field}: ${first.message}` : 'Invalid request body.',
      { details },
    );
  }
  return parsed.data;
}
