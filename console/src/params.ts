// An analytic's param schema as the marketplace shows it (docs/design.md §3, docs/analytic-params.md):
// a one-line description of each param's type and bounds, and the typed value of a form field.

export interface ParamSpec {
  readonly type: string;
  readonly required?: boolean;
  readonly default?: unknown;
  readonly description?: string;
  readonly min?: number | string;
  readonly max?: number | string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly values?: readonly string[];
  readonly items?: ParamSpec;
  readonly minItems?: number;
  readonly maxItems?: number;
}

export type ParamSchema = Readonly<Record<string, ParamSpec>>;

export function paramSchemaOf(value: unknown): ParamSchema {
  if (value === null || typeof value !== 'object') return {};
  const out: Record<string, ParamSpec> = {};
  for (const [name, spec] of Object.entries(value as Record<string, unknown>)) {
    if (spec !== null && typeof spec === 'object' && typeof (spec as { type?: unknown }).type === 'string') {
      out[name] = spec as ParamSpec;
    }
  }
  return out;
}

export function typeText(spec: ParamSpec): string {
  if (spec.type === 'array') return `array of ${spec.items ? typeText(spec.items) : 'values'}`;
  if (spec.type === 'enum') return `one of ${(spec.values ?? []).join(', ')}`;
  return spec.type;
}

/**
 * What a param accepts, in words. A pattern is a regular expression, which buyers should not have
 * to read: the listing's example value shows the format instead (the pattern itself stays in the
 * API's schema, for programs).
 */
export function boundsText(spec: ParamSpec, example?: unknown): string {
  const parts: string[] = [];
  if (spec.min !== undefined) parts.push(`≥ ${spec.min}`);
  if (spec.max !== undefined) parts.push(`≤ ${spec.max}`);
  if (spec.minLength !== undefined) parts.push(`at least ${spec.minLength} characters`);
  if (spec.maxLength !== undefined) parts.push(`at most ${spec.maxLength} characters`);
  if (spec.pattern !== undefined) {
    const sample = Array.isArray(example) ? example[0] : example;
    parts.push(
      sample === undefined || sample === null || typeof sample === 'object'
        ? 'in the format the description gives'
        : `formatted like ${String(sample)}`,
    );
  }
  if (spec.minItems !== undefined) parts.push(`at least ${spec.minItems} items`);
  if (spec.maxItems !== undefined) parts.push(`at most ${spec.maxItems} items`);
  if (spec.items) {
    const inner = boundsText(spec.items, Array.isArray(example) ? example[0] : undefined);
    if (inner !== '') parts.push(`each ${inner}`);
  }
  return parts.join(', ');
}

function scalar(spec: ParamSpec, text: string): unknown {
  switch (spec.type) {
    case 'integer':
    case 'number':
      return text.trim() === '' ? undefined : Number(text);
    case 'boolean':
      return text === 'true';
    default:
      return text;
  }
}

/** The JSON value of a form field's text (undefined: leave the param out). */
export function paramValue(spec: ParamSpec, text: string): unknown {
  if (spec.type === 'boolean') return text === 'true';
  if (text.trim() === '') return undefined;
  if (spec.type === 'array') {
    const items = spec.items ?? { type: 'string' };
    return text
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '')
      .map((part) => scalar(items, part));
  }
  return scalar(spec, text);
}

/** A form field's initial text for a value. */
export function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.join(', ');
  return String(value);
}
