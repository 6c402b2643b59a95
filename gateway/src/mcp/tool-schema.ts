// An analytic as an MCP tool: its param schema (the SDK's ParamSchema) as the tool's JSON Schema
// (types, bounds, enums, patterns, defaults, required), and its description with the price. The
// JSON Schema describes what validateParams accepts; the gateway still validates every call
// itself, so a client that ignores the schema is refused with INVALID_PARAMS naming the param.
import type { ParamSchema, ParamSpec, ScalarParamSpec } from '@quarry/sdk-connector';

/** A JSON Schema node (2020-12), as MCP tools carry them. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** The input schema of a tool: an object at the root, as MCP requires. */
export interface ToolInputSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties: false;
  readonly [keyword: string]: unknown;
}

/** validateParams' defaults (sdk-connector param-schema.ts). */
const DEFAULT_MAX_LENGTH = 1000;
const DEFAULT_MAX_ITEMS = 1000;

/**
 * An owner's pattern (RE2 syntax, whole-value) as a JSON Schema `pattern` (ECMA-262, unanchored):
 * anchored, and only when JavaScript reads the same text as a valid regular expression. RE2-only
 * syntax (`(?P<name>…)`, `(?i)`, `\C`) has no ECMA-262 equivalent a client could compile; those
 * are named in the description instead. Compiling runs nothing against input, so an owner's
 * pattern cannot stall the gateway here.
 */
function ecmaPattern(pattern: string): string | undefined {
  const anchored = `^(?:${pattern})$`;
  if (/\(\?[A-Za-z]|\(\?P<|\\[CzAQE]|\\p\{[A-Z][a-z]?\}|\[\[:/.test(pattern)) return undefined;
  try {
    new RegExp(anchored, 'u');
    return anchored;
  } catch {
    return undefined;
  }
}

/** A sentence of what JSON Schema cannot say about a spec (date bounds, RE2 patterns). */
function notes(spec: ScalarParamSpec, pattern: string | undefined): string[] {
  const out: string[] = [];
  if (
    (spec.type === 'date' || spec.type === 'timestamp') &&
    (spec.min !== undefined || spec.max !== undefined)
  ) {
    if (spec.min !== undefined && spec.max !== undefined) out.push(`From ${spec.min} to ${spec.max}.`);
    else if (spec.min !== undefined) out.push(`From ${spec.min}.`);
    else out.push(`Up to ${spec.max}.`);
  }
  if (spec.type === 'string' && spec.pattern !== undefined && pattern === undefined) {
    out.push(`Must match the RE2 pattern ${spec.pattern} (whole value).`);
  }
  return out;
}

function scalarSchema(spec: ScalarParamSpec): { schema: Record<string, unknown>; notes: string[] } {
  const schema: Record<string, unknown> = {};
  let pattern: string | undefined;
  switch (spec.type) {
    case 'integer':
    case 'number':
      schema.type = spec.type;
      if (typeof spec.min === 'number') schema.minimum = spec.min;
      if (typeof spec.max === 'number') schema.maximum = spec.max;
      break;
    case 'string':
      schema.type = 'string';
      if (spec.minLength !== undefined) schema.minLength = spec.minLength;
      schema.maxLength = spec.maxLength ?? DEFAULT_MAX_LENGTH;
      if (spec.pattern !== undefined) {
        pattern = ecmaPattern(spec.pattern);
        if (pattern !== undefined) schema.pattern = pattern;
      }
      break;
    case 'boolean':
      schema.type = 'boolean';
      break;
    case 'date':
      schema.type = 'string';
      schema.format = 'date';
      break;
    case 'timestamp':
      schema.type = 'string';
      schema.format = 'date-time';
      break;
    case 'enum':
      schema.type = 'string';
      schema.enum = [...(spec.values ?? [])];
      break;
  }
  return { schema, notes: notes(spec, pattern) };
}

/** One param's JSON Schema. */
export function paramJsonSchema(spec: ParamSpec): JsonSchema {
  let schema: Record<string, unknown>;
  let extra: string[];
  if (spec.type === 'array') {
    const items = scalarSchema(spec.items);
    schema = { type: 'array', items: items.schema, maxItems: spec.maxItems ?? DEFAULT_MAX_ITEMS };
    if (spec.minItems !== undefined) schema.minItems = spec.minItems;
    extra = items.notes.map((n) => `Each item: ${n.charAt(0).toLowerCase()}${n.slice(1)}`);
  } else {
    const scalar = scalarSchema(spec);
    schema = scalar.schema;
    extra = scalar.notes;
  }
  if (spec.default !== undefined) schema.default = spec.default;
  const description = [spec.description, ...extra].filter((s) => s !== undefined && s !== '').join(' ');
  if (description !== '') schema.description = description;
  return schema;
}

/** The caller's price limit, beside the params (a param of that name cannot be deployed). */
const MAX_CREDITS_SCHEMA: JsonSchema = {
  type: 'integer',
  minimum: 1,
  description:
    'Optional: the most credits this call may cost. A call whose price is above it is refused (PRICE_ABOVE_LIMIT), nothing run or charged.',
};

/** An analytic's params as a tool's input schema: unknown params are refused, as by the API. */
export function toolInputSchema(params: ParamSchema): ToolInputSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, spec] of Object.entries(params)) {
    properties[name] = paramJsonSchema(spec);
    if (spec.required === true && spec.default === undefined) required.push(name);
  }
  // An analytic deployed before the name was reserved keeps its own param (query/price-limit.ts).
  if (!Object.hasOwn(properties, 'max_credits')) properties.max_credits = MAX_CREDITS_SCHEMA;
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** `1 credit` / `2 credits`. */
export const credits = (n: number) => `${n} credit${n === 1 ? '' : 's'}`;

/**
 * What a tool's description says a call costs: the price in force, as the API charges it, and a
 * scheduled rise with its date (so an agent can see it coming and set `max_credits`).
 */
export function priceSentence(price: number, rise?: { readonly price: number; readonly at: number }): string {
  const now =
    price === 0
      ? 'Price: free (0 credits a call).'
      : `Price: ${credits(price)} a call, charged like POST /v1/query when the call succeeds (failed calls are free).`;
  return rise === undefined
    ? now
    : `${now} From ${new Date(rise.at).toISOString()} it will be ${credits(rise.price)} a call.`;
}
