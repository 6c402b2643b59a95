// The types of analytic parameters: how an owner declares them (ParamSpec), and the validated,
// typed values (TypedValue) that reach a connector. Connectors only ever see TypedValues, so
// every value they bind or render has already passed its spec.

/** The scalar parameter types an analytic can declare. */
export type ScalarParamType = 'integer' | 'number' | 'string' | 'boolean' | 'date' | 'timestamp' | 'enum';

/** Every parameter type: a scalar, or `array` of a scalar. */
export type ParamType = ScalarParamType | 'array';

/** Declaration of one scalar parameter, as written in an analytic's YAML `params:` map. */
export interface ScalarParamSpec {
  readonly type: ScalarParamType;
  /** A required param must be given (a default makes this moot). */
  readonly required?: boolean;
  /** Used when the caller omits the param; must itself satisfy the spec. */
  readonly default?: unknown;
  /** Lower bound: a number for integer/number, an ISO string for date/timestamp. */
  readonly min?: number | string;
  /** Upper bound: a number for integer/number, an ISO string for date/timestamp. */
  readonly max?: number | string;
  /**
   * For strings: a regular expression the whole value must match, in RE2 syntax (no backreferences,
   * no lookahead or lookbehind), at most 512 characters: owners' patterns run on a linear-time
   * engine. See `compileOwnerPattern`.
   */
  readonly pattern?: string;
  /** For strings: minimum length in characters. */
  readonly minLength?: number;
  /** For strings: maximum length in characters (default 1,000; at most 4,096, `MAX_STRING_LENGTH`). */
  readonly maxLength?: number;
  /** For enums: the allowed values. */
  readonly values?: readonly string[];
  /** Shown in the marketplace and in OpenAPI. */
  readonly description?: string;
}

/** Declaration of an array parameter, e.g. `{type: array, items: {type: string}, maxItems: 50}`. */
export interface ArrayParamSpec {
  readonly type: 'array';
  readonly items: ScalarParamSpec;
  readonly required?: boolean;
  readonly default?: readonly unknown[];
  readonly minItems?: number;
  /** Maximum number of elements (default 1,000). */
  readonly maxItems?: number;
  readonly description?: string;
}

/** Declaration of one parameter. */
export type ParamSpec = ScalarParamSpec | ArrayParamSpec;

/** An analytic's parameter schema: param name → spec. */
export type ParamSchema = Readonly<Record<string, ParamSpec>>;

/**
 * A validated scalar: integers are `number` when safe and `bigint` beyond 2^53; dates are
 * `YYYY-MM-DD`; timestamps are ISO-8601 in UTC (`2024-01-31T12:00:00.000Z`); enums are strings.
 */
export type ScalarValue = string | number | bigint | boolean;

/** A validated value with the type it was validated as; `value: null` is a typed NULL. */
export interface TypedValue {
  /** The scalar type (for arrays, the element type). */
  readonly type: ScalarParamType;
  /** True when the value is an array of `type`. */
  readonly array: boolean;
  readonly value: ScalarValue | readonly ScalarValue[] | null;
}

/** Validated parameters by name, ready to compile into a query. */
export type ParamValues = Readonly<Record<string, TypedValue>>;

/** Why one parameter was refused; `param` names it. */
export interface ParamIssue {
  readonly param: string;
  readonly message: string;
}

/** Outcome of validating caller input against a {@link ParamSchema}. */
export type ParamValidation =
  | { readonly ok: true; readonly values: ParamValues }
  | { readonly ok: false; readonly issues: readonly ParamIssue[] };
