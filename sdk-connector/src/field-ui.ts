// UI hints for a connector's config fields: how a form should present each one (a human label,
// help text, a placeholder, whether it is a secret to mask, whether it belongs under "Advanced",
// its place in the form, and the kind of input). They ride in the zod schema's metadata, so they
// reach JSON Schema as a `ui` keyword beside the field's type, and any client that reads a
// connector's config schema (the web console, a third-party form) can build a good form from it
// for every connector, plugins included.
import { z } from 'zod';
import type { JsonValue } from './connector.js';

/** The kinds of input a form can offer for a config field. */
export type FieldInput =
  /** One line of text (the default for strings). */
  | 'text'
  /** Several lines of text: a PEM certificate, a key file. */
  | 'textarea'
  /** A number (the default for numbers and integers). */
  | 'number'
  /** A checkbox (the default for booleans). */
  | 'checkbox'
  /** One of `options` (the default when `options` are given). */
  | 'select'
  /** A list of strings, one per line (arrays of strings). */
  | 'list'
  /** Name → value pairs, one `name = value` per line (records of strings). */
  | 'map'
  /** A URL. */
  | 'url'
  /** Any JSON value, written as JSON (the fallback for shapes no other input fits). */
  | 'json';

/** One choice of a `select` input: the config value it stands for, and what the form shows. */
export interface FieldOption {
  readonly value: JsonValue;
  readonly label: string;
}

/** How a form presents one config field (or, on an object schema, one way of configuring). */
export interface FieldUi {
  /** What the field is called in a form, in words: "Host", "Service-account key". */
  readonly label: string;
  /** One or two sentences under the field: what it is, where to find it, what the default is. */
  readonly help?: string;
  /** An example value shown in the empty input, e.g. `db.example.com`. */
  readonly placeholder?: string;
  /**
   * A secret (password, private key, token): masked in the form and never shown back. Setting it
   * marks the field as {@link secretField} does, so it is also redacted and stored encrypted.
   */
  readonly secret?: boolean;
  /** Tucked under "Advanced settings": most connections leave it as it is. */
  readonly advanced?: boolean;
  /** Its place in the form: lower first; fields without one follow in the schema's order. */
  readonly order?: number;
  /** The kind of input; when absent, a form picks one from the field's type. */
  readonly input?: FieldInput;
  /** The choices of a `select` input. */
  readonly options?: readonly FieldOption[];
}

const INPUTS: ReadonlySet<string> = new Set([
  'text',
  'textarea',
  'number',
  'checkbox',
  'select',
  'list',
  'map',
  'url',
  'json',
]);

/** What is wrong with a set of hints, or undefined (thrown early, when the plugin is written). */
function problemOf(ui: FieldUi): string | undefined {
  if (typeof ui.label !== 'string' || ui.label.trim() === '') return 'a label is required';
  if (ui.input !== undefined && !INPUTS.has(ui.input)) return `unknown input kind "${String(ui.input)}"`;
  if (ui.input === 'select' && (ui.options === undefined || ui.options.length === 0)) {
    return 'a select input needs options';
  }
  if (ui.order !== undefined && !Number.isFinite(ui.order)) return 'order must be a finite number';
  return undefined;
}

/**
 * Attaches form hints to a config field (or to an object schema: one way of configuring a
 * connection, e.g. "Connection URL" against "Host and port"). The hints appear in the config's
 * JSON Schema as `ui`; `secret: true` also marks the field as {@link secretField} does.
 *
 * @example
 * const configSchema = z.object({
 *   host: fieldUi(z.string().min(1), { label: 'Host', placeholder: 'db.example.com', order: 1 }),
 *   password: fieldUi(z.string(), { label: 'Password', secret: true, order: 4 }).optional(),
 *   poolSize: fieldUi(z.number().int().optional(), { label: 'Pool size', advanced: true }),
 * });
 * @throws Error when the hints are malformed (no label, an unknown input kind, a select without options).
 */
export function fieldUi<T extends z.ZodType>(schema: T, ui: FieldUi): T {
  const problem = problemOf(ui);
  if (problem !== undefined) throw new Error(`fieldUi "${String(ui.label)}": ${problem}`);
  const existing = (schema.meta() ?? {}) as Record<string, unknown>;
  const secret = ui.secret === true ? { secret: true, writeOnly: true } : {};
  return schema.meta({ ...existing, ...secret, ui: { ...ui } }) as T;
}

/** The hints a schema's own metadata carries, or undefined. */
export function fieldUiOf(schema: z.ZodType): FieldUi | undefined {
  const meta = schema.meta() as { ui?: FieldUi } | undefined;
  return meta?.ui;
}

type JsonNode = {
  readonly ui?: FieldUi;
  readonly properties?: Readonly<Record<string, JsonNode>>;
  readonly anyOf?: readonly JsonNode[];
  readonly oneOf?: readonly JsonNode[];
};

/**
 * The top-level fields of a config schema (of each variant, for a union) that declare no label:
 * what a form would have to show as a raw name. A connector's own tests assert it is empty.
 */
export function fieldsWithoutUi(schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonNode;
  const missing = new Set<string>();
  const visit = (node: JsonNode) => {
    for (const branch of [node.anyOf, node.oneOf]) if (branch) for (const sub of branch) visit(sub);
    for (const [name, field] of Object.entries(node.properties ?? {})) {
      const labelled = (f: JsonNode): boolean =>
        typeof f.ui?.label === 'string' || (f.anyOf ?? []).some((b) => typeof b.ui?.label === 'string');
      if (!labelled(field)) missing.add(name);
    }
  };
  visit(json);
  return [...missing].sort();
}
