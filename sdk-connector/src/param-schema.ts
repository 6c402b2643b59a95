// Parameter typing: checks an owner's param declarations once (checkParamSchema), turns query-string
// values into JSON-typed input (coerceQueryParams), and validates a caller's input into TypedValues
// (validateParams). Every problem is reported at once, in short human messages, because callers fix
// their request from these messages alone.
import { ConnectorError, type ConnectorErrorDetail } from './connector-error.js';
import {
  cachedOwnerPattern,
  compileOwnerPattern,
  MAX_PATTERN_WORK,
  MAX_SCHEMA_PATTERN_SIZE,
  MAX_STRING_LENGTH,
} from './owner-pattern.js';
import type {
  ArrayParamSpec,
  ParamIssue,
  ParamSchema,
  ParamSpec,
  ParamType,
  ParamValidation,
  ParamValues,
  ScalarParamSpec,
  ScalarParamType,
  ScalarValue,
  TypedValue,
} from './param-types.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DEFAULT_MAX_LENGTH = 1000;
const DEFAULT_MAX_ITEMS = 1000;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INTEGER_TEXT = /^-?\d{1,19}$/;
const NUMBER_TEXT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP_TEXT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const COMMON_KEYS = ['type', 'required', 'default', 'description'] as const;
const KEYS_BY_TYPE: Readonly<Record<ParamType, readonly string[]>> = {
  integer: [...COMMON_KEYS, 'min', 'max'],
  number: [...COMMON_KEYS, 'min', 'max'],
  string: [...COMMON_KEYS, 'pattern', 'minLength', 'maxLength'],
  boolean: COMMON_KEYS,
  date: [...COMMON_KEYS, 'min', 'max'],
  timestamp: [...COMMON_KEYS, 'min', 'max'],
  enum: [...COMMON_KEYS, 'values'],
  array: [...COMMON_KEYS, 'items', 'minItems', 'maxItems'],
};
const KNOWN_KEYS = new Set(Object.values(KEYS_BY_TYPE).flat());

type Check = { readonly value: ScalarValue } | { readonly error: string };

/** What is left of one validation's pattern-matching budget (program size × characters). */
interface PatternWork {
  left: number;
}

/** The program size of the patterns one schema has declared so far. */
interface SchemaPatterns {
  size: number;
}

/**
 * Validates an owner's parameter declarations (parsed YAML or JSON) and returns them as a frozen
 * {@link ParamSchema}; `undefined`/`null` mean "no params". YAML dates (`Date` objects) in `min`,
 * `max` and `default` are normalized to ISO strings.
 *
 * @throws ConnectorError `PARAM_INVALID` whose `details` list every problem found (bad names,
 * unknown types or keys, min > max, a pattern that is not RE2 syntax (backreferences, lookaround)
 * or is too long or complex, a `maxLength` above {@link MAX_STRING_LENGTH}, enum without values,
 * arrays of arrays, a default that fails its own spec, …).
 */
export function checkParamSchema(schema: unknown): ParamSchema {
  if (schema === undefined || schema === null) return Object.freeze({});
  if (!isPlainObject(schema)) {
    const message = 'params must be a map of parameter name to spec';
    throw new ConnectorError('PARAM_INVALID', message, { details: [{ message }] });
  }
  const problems: ConnectorErrorDetail[] = [];
  const out: Record<string, ParamSpec> = {};
  const patterns: SchemaPatterns = { size: 0 };
  for (const [name, raw] of Object.entries(schema)) {
    const report = (message: string): void => void problems.push({ param: name, message });
    if (!NAME.test(name)) report('name must start with a letter or _ and hold only letters, digits and _');
    const spec = checkSpec(raw, false, report, patterns);
    if (spec !== undefined) setOwn(out, name, spec);
  }
  if (problems.length > 0) {
    const summary = problems.map((p) => `${p.param}: ${p.message}`).join('; ');
    throw new ConnectorError('PARAM_INVALID', `invalid param schema: ${summary}`, { details: problems });
  }
  return Object.freeze(out);
}

function checkSpec(
  raw: unknown,
  isItem: boolean,
  report: (m: string) => void,
  patterns: SchemaPatterns,
): ParamSpec | undefined {
  if (!isPlainObject(raw)) return void report('spec must be an object with a type');
  const type = raw.type;
  if (typeof type !== 'string' || !Object.hasOwn(KEYS_BY_TYPE, type)) {
    return void report(type === undefined ? 'type is missing' : `unknown type ${JSON.stringify(type)}`);
  }
  const paramType = type as ParamType;
  if (isItem && paramType === 'array') return void report('arrays of arrays are not supported');
  const allowed = KEYS_BY_TYPE[paramType].filter((k) => !isItem || (k !== 'required' && k !== 'default'));
  let ok = true;
  const fail = (message: string): void => {
    ok = false;
    report(message);
  };
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key))
      fail(KNOWN_KEYS.has(key) ? `${key} does not apply here` : `unknown key ${key}`);
  }
  const spec: Record<string, unknown> = { type: paramType };
  if (raw.required !== undefined) {
    if (typeof raw.required !== 'boolean') fail('required must be true or false');
    spec.required = raw.required;
  }
  if (raw.description !== undefined) {
    if (typeof raw.description !== 'string') fail('description must be a string');
    spec.description = raw.description;
  }
  if (paramType === 'array') {
    const items = checkSpec(raw.items, true, (m) => fail(`items: ${m}`), patterns);
    if (raw.items === undefined) fail('items is missing');
    spec.items = items;
    checkCount(raw, 'minItems', 'maxItems', DEFAULT_MAX_ITEMS, spec, fail);
  } else if (paramType === 'string') {
    let programSize: number | undefined;
    if (raw.pattern !== undefined) {
      if (typeof raw.pattern !== 'string') fail('pattern must be a string');
      else programSize = checkPattern(raw.pattern, patterns, fail);
      spec.pattern = raw.pattern;
    }
    checkCount(raw, 'minLength', 'maxLength', DEFAULT_MAX_LENGTH, spec, fail);
    const maxLength = typeof raw.maxLength === 'number' ? raw.maxLength : DEFAULT_MAX_LENGTH;
    if (maxLength > MAX_STRING_LENGTH) fail(`maxLength must be at most ${MAX_STRING_LENGTH}`);
    else if (programSize !== undefined && programSize * maxLength > MAX_PATTERN_WORK) {
      // Checked here so that every value the spec admits can be matched within one call's budget.
      fail(
        `pattern compiles to ${programSize} instructions, and matching a value of maxLength ${maxLength} ` +
          `could take ${programSize * maxLength} steps, more than ${MAX_PATTERN_WORK}: lower maxLength to ` +
          `${Math.floor(MAX_PATTERN_WORK / programSize)} or simplify the pattern`,
      );
    }
  } else if (paramType === 'enum') {
    const values = raw.values;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
      fail('values must list at least one string');
    } else if (new Set(values).size !== values.length) fail('values must not repeat');
    spec.values = Array.isArray(values) ? Object.freeze([...values]) : values;
  } else if (paramType !== 'boolean') {
    for (const key of ['min', 'max'] as const) {
      if (raw[key] === undefined) continue;
      const bound = checkBound(paramType, raw[key]);
      if (bound === undefined) fail(`${key} must be ${describeType(paramType)}`);
      spec[key] = bound ?? raw[key];
    }
    if (ok && spec.min !== undefined && spec.max !== undefined && compareBound(spec.min, spec.max) > 0) {
      fail('min must not be greater than max');
    }
  }
  if (raw.default !== undefined && ok) {
    const frozen = Object.freeze(spec) as unknown as ParamSpec;
    const def = normalizeDateLike(paramType, raw.default);
    const problem = checkValue(frozen, def, 'default');
    if (problem !== undefined) fail(problem);
    const withDefault = { ...frozen, default: Array.isArray(def) ? Object.freeze([...def]) : def };
    return Object.freeze(withDefault) as ParamSpec;
  }
  return ok ? (Object.freeze(spec) as unknown as ParamSpec) : undefined;
}

/**
 * Compiles an owner's pattern now, so one the engine cannot run is refused at deploy, not per
 * call; returns its compiled size.
 */
function checkPattern(
  pattern: string,
  patterns: SchemaPatterns,
  fail: (m: string) => void,
): number | undefined {
  const compiled = compileOwnerPattern(pattern);
  if (!compiled.ok) {
    fail(compiled.problem);
    return undefined;
  }
  patterns.size += compiled.pattern.programSize;
  if (patterns.size > MAX_SCHEMA_PATTERN_SIZE) {
    // Reported once, on the param that crossed the line.
    const before = patterns.size - compiled.pattern.programSize;
    if (before <= MAX_SCHEMA_PATTERN_SIZE)
      fail(
        `the patterns of this analytic's params compile to more than ${MAX_SCHEMA_PATTERN_SIZE} instructions together`,
      );
  }
  return compiled.pattern.programSize;
}

function checkCount(
  raw: Readonly<Record<string, unknown>>,
  minKey: string,
  maxKey: string,
  defaultMax: number,
  spec: Record<string, unknown>,
  fail: (m: string) => void,
): void {
  for (const key of [minKey, maxKey]) {
    const v = raw[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`${key} must be a whole number ≥ 0`);
    spec[key] = v;
  }
  const min = raw[minKey];
  const max = raw[maxKey] ?? defaultMax;
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    fail(`${minKey} must not be greater than ${maxKey} (${max})`);
  }
}

function checkBound(type: ScalarParamType, raw: unknown): number | string | undefined {
  const v = normalizeDateLike(type, raw);
  if (type === 'integer') return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
  if (type === 'number') return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  return type === 'date' ? parseDate(v) : parseTimestamp(v);
}

function compareBound(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** YAML loaders turn unquoted dates into `Date`s; owners mean the ISO text. */
function normalizeDateLike(type: ParamType, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((e) => normalizeDateLike(type, e));
  if (!(v instanceof Date) || Number.isNaN(v.getTime())) return v;
  return type === 'date' ? v.toISOString().slice(0, 10) : v.toISOString();
}

/** Validates one declared value (a default), returning a message or undefined. */
function checkValue(spec: ParamSpec, value: unknown, label: string): string | undefined {
  const issues: ParamIssue[] = [];
  validateOne(label, spec, value, issues, { left: MAX_PATTERN_WORK });
  return issues.length === 0 ? undefined : issues.map((i) => `${i.param} ${i.message}`).join('; ');
}

/**
 * Validates a caller's JSON params against a schema. Returns every issue at once (unknown
 * params, missing required ones, wrong types, bounds, patterns, lengths, enum values, array
 * sizes, NUL characters). Strings are at most {@link MAX_STRING_LENGTH} characters whatever their
 * `maxLength`, and patterns run in linear time within a per-call budget ({@link MAX_PATTERN_WORK}).
 * Defaults are applied; an omitted optional param without default, or an
 * explicit `null`, becomes a typed NULL (`{type, array, value: null}`). Integers beyond 2^53 are
 * `bigint`; dates are `YYYY-MM-DD`; timestamps are UTC `YYYY-MM-DDTHH:MM:SS.sssZ`.
 */
export function validateParams(
  schema: ParamSchema,
  input: Readonly<Record<string, unknown>>,
): ParamValidation {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ param: '', message: 'params must be an object' }] };
  }
  const issues: ParamIssue[] = [];
  const values: Record<string, TypedValue> = {};
  const work: PatternWork = { left: MAX_PATTERN_WORK };
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(schema, key)) {
      issues.push({ param: key.length > 64 ? `${key.slice(0, 64)}…` : key, message: 'is not a parameter' });
    }
  }
  for (const [name, spec] of Object.entries(schema)) {
    const given = Object.hasOwn(input, name) ? input[name] : undefined;
    const typed = validateOne(name, spec, given, issues, work);
    if (typed !== undefined) setOwn(values, name, typed);
  }
  return issues.length > 0
    ? { ok: false, issues }
    : { ok: true, values: Object.freeze(values) as ParamValues };
}

function validateOne(
  name: string,
  spec: ParamSpec,
  given: unknown,
  issues: ParamIssue[],
  work: PatternWork,
): TypedValue | undefined {
  const isArray = spec.type === 'array';
  const scalarType = isArray ? (spec as ArrayParamSpec).items.type : (spec.type as ScalarParamType);
  let value = given;
  if (value === undefined && spec.default !== undefined) value = spec.default;
  if (value === undefined || value === null) {
    if (spec.required === true) {
      issues.push({ param: name, message: value === null ? 'must not be null' : 'is required' });
      return undefined;
    }
    return Object.freeze({ type: scalarType, array: isArray, value: null });
  }
  if (!isArray) {
    const check = checkScalar(spec as ScalarParamSpec, value, work);
    if ('error' in check) return void issues.push({ param: name, message: check.error });
    return Object.freeze({ type: scalarType, array: false, value: check.value });
  }
  const arraySpec = spec as ArrayParamSpec;
  if (!Array.isArray(value)) {
    return void issues.push({ param: name, message: `must be an array of ${pluralNoun(arraySpec.items)}` });
  }
  const min = arraySpec.minItems ?? 0;
  const max = arraySpec.maxItems ?? DEFAULT_MAX_ITEMS;
  if (value.length < min || value.length > max) {
    const count = min > 0 ? `between ${min} and ${max} items` : `at most ${max} items`;
    return void issues.push({ param: name, message: `must have ${count}` });
  }
  const out: ScalarValue[] = [];
  const before = issues.length;
  value.forEach((element: unknown, i) => {
    const check =
      element === null || element === undefined
        ? { error: 'must not be null' }
        : checkScalar(arraySpec.items, element, work);
    if ('error' in check) issues.push({ param: `${name}[${i}]`, message: check.error });
    else out.push(check.value);
  });
  if (issues.length > before) return undefined;
  return Object.freeze({ type: scalarType, array: true, value: Object.freeze(out) });
}

function checkScalar(spec: ScalarParamSpec, v: unknown, work: PatternWork): Check {
  // Built only on failure: describing the spec allocates, and most values pass.
  const expected = (): Check => ({ error: `must be ${describe(spec)}` });
  switch (spec.type) {
    case 'integer': {
      const int = toInteger(v);
      if (int === undefined) return expected();
      return inRange(int, spec.min, spec.max) ? { value: int } : expected();
    }
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return expected();
      return inRange(v, spec.min, spec.max) ? { value: v } : expected();
    case 'boolean':
      return typeof v === 'boolean' ? { value: v } : expected();
    case 'date':
    case 'timestamp': {
      if (typeof v !== 'string') return expected();
      if (v.includes('\u0000')) return { error: 'must not contain NUL characters' };
      const text = spec.type === 'date' ? parseDate(v) : parseTimestamp(v);
      if (text === undefined) {
        const shaped = spec.type === 'date' ? DATE_TEXT.test(v) : TIMESTAMP_TEXT.test(v);
        return shaped ? { error: `must be a real calendar ${spec.type}` } : expected();
      }
      const low = spec.min === undefined ? undefined : checkBound(spec.type, spec.min);
      const high = spec.max === undefined ? undefined : checkBound(spec.type, spec.max);
      if ((low !== undefined && text < String(low)) || (high !== undefined && text > String(high)))
        return expected();
      return { value: text };
    }
    case 'enum':
      if (typeof v !== 'string') return expected();
      if (v.includes('\u0000')) return { error: 'must not contain NUL characters' };
      return spec.values?.includes(v) === true ? { value: v } : expected();
    case 'string': {
      if (typeof v !== 'string') return expected();
      if (v.includes('\u0000')) return { error: 'must not contain NUL characters' };
      const length = codePointLength(v);
      if (length > maxLengthOf(spec) || length < (spec.minLength ?? 0)) return expected();
      if (spec.pattern !== undefined) {
        // Unrunnable patterns (a schema that skipped checkParamSchema) match nothing: fail closed.
        const pattern = cachedOwnerPattern(spec.pattern);
        const cost = (pattern?.programSize ?? 0) * Math.max(length, 1);
        if (pattern !== undefined && cost > work.left)
          return {
            error: 'cannot be checked: this call sends more text to match against patterns than one call may',
          };
        work.left -= cost;
        if (pattern === undefined || !pattern.matches(v))
          return { error: `must match the pattern ${spec.pattern}` };
      }
      return { value: v };
    }
    default:
      return { error: `has an unknown type ${String((spec as { type: unknown }).type)}` };
  }
}

function toInteger(v: unknown): number | bigint | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  if (typeof v === 'bigint') return v >= INT64_MIN && v <= INT64_MAX ? narrow(v) : undefined;
  if (typeof v !== 'string' || !INTEGER_TEXT.test(v)) return undefined;
  const big = BigInt(v);
  return big >= INT64_MIN && big <= INT64_MAX ? narrow(big) : undefined;
}

function narrow(big: bigint): number | bigint {
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : big;
}

function inRange(v: number | bigint, min: unknown, max: unknown): boolean {
  const below = (bound: unknown): boolean =>
    typeof bound === 'number' &&
    (typeof v === 'bigint' && Number.isInteger(bound) ? v < BigInt(bound) : Number(v) < bound);
  const above = (bound: unknown): boolean =>
    typeof bound === 'number' &&
    (typeof v === 'bigint' && Number.isInteger(bound) ? v > BigInt(bound) : Number(v) > bound);
  return !below(min) && !above(max);
}

function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      const next = s.charCodeAt(i + 1);
      n++;
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return n;
}

/** A string's effective maximum length: its `maxLength` (default 1,000), never above the hard cap. */
function maxLengthOf(spec: ScalarParamSpec): number {
  return Math.min(spec.maxLength ?? DEFAULT_MAX_LENGTH, MAX_STRING_LENGTH);
}

/**
 * Parses `YYYY-MM-DD` and returns it when it names a real calendar date (years 0001–9999).
 * Shared with the literal renderer, which re-checks values before rendering them.
 */
export function parseDate(text: string): string | undefined {
  const m = DATE_TEXT.exec(text);
  if (m === null) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) ? text : undefined;
}

/**
 * Parses an ISO-8601 timestamp (date only, or with time, optional fraction and optional `Z` or
 * `±HH[:MM]` offset; no offset means UTC) and returns it normalized to `YYYY-MM-DDTHH:MM:SS.sssZ`.
 * Fractions beyond milliseconds are truncated. Undefined when it is not a real instant in 0001–9999.
 */
export function parseTimestamp(text: string): string | undefined {
  const m = TIMESTAMP_TEXT.exec(text);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, ...number[]];
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offH = Number(m[10] ?? 0);
  const offM = Number(m[11] ?? 0);
  if (y < 1 || mo! < 1 || mo! > 12 || d! < 1 || d! > daysInMonth(y, mo!)) return undefined;
  if (h! > 23 || mi! > 59 || s! > 59 || offH > 23 || offM > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo! - 1, d!);
  date.setUTCHours(h!, mi!, s!, ms);
  const sign = m[9] === '-' ? -1 : 1;
  const instant = new Date(date.getTime() - sign * (offH * 60 + offM) * 60_000);
  const year = instant.getUTCFullYear();
  return year >= 1 && year <= 9999 ? instant.toISOString() : undefined;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function describeType(type: ScalarParamType): string {
  switch (type) {
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'date':
      return 'a date (YYYY-MM-DD)';
    case 'timestamp':
      return 'an ISO-8601 timestamp';
    default:
      return 'a string';
  }
}

/** "an integer between 2000 and 2100", "a string of at most 64 characters", "one of: EU, US". */
function describe(spec: ScalarParamSpec): string {
  if (spec.type === 'enum') return `one of: ${(spec.values ?? []).join(', ')}`;
  const noun = describeType(spec.type);
  if (spec.type === 'string') {
    const max = maxLengthOf(spec);
    const min = spec.minLength ?? 0;
    return min > 0 ? `${noun} of ${min} to ${max} characters` : `${noun} of at most ${max} characters`;
  }
  const dated = spec.type === 'date' || spec.type === 'timestamp';
  if (spec.min !== undefined && spec.max !== undefined) return `${noun} between ${spec.min} and ${spec.max}`;
  if (spec.min !== undefined) return `${noun} ${dated ? 'on or after' : 'of at least'} ${spec.min}`;
  if (spec.max !== undefined) return `${noun} ${dated ? 'on or before' : 'of at most'} ${spec.max}`;
  return noun;
}

function pluralNoun(items: ScalarParamSpec): string {
  switch (items.type) {
    case 'enum':
      return `values from: ${(items.values ?? []).join(', ')}`;
    case 'boolean':
      return 'booleans';
    case 'date':
      return 'dates (YYYY-MM-DD)';
    case 'timestamp':
      return 'ISO-8601 timestamps';
    default:
      return `${items.type}s`;
  }
}

/**
 * Turns query-string values (`?year=2024&tags=a,b`) into JSON-typed input for
 * {@link validateParams}: numeric text becomes numbers for integer/number params (non-numeric
 * text is kept so validation reports it), `true/false/1/0` become booleans, repeated keys or
 * `a,b` lists become arrays for array params, and an empty value for an optional non-string param
 * is dropped. Unknown keys pass through unchanged so validation reports them.
 */
export function coerceQueryParams(
  schema: ParamSchema,
  query: Readonly<Record<string, string | readonly string[]>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    const spec = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (spec === undefined) {
      setOwn(out, key, raw);
      continue;
    }
    const optional = spec.required !== true;
    if (spec.type === 'array') {
      // One value (a string, or a list of one) is a comma list; repeated keys are taken as they are.
      const one = typeof raw === 'string' ? raw : raw.length === 1 ? raw[0]! : undefined;
      if (one === '' && optional) continue;
      const parts: readonly string[] =
        one === undefined ? (raw as readonly string[]) : one === '' ? [] : one.split(',');
      setOwn(
        out,
        key,
        parts.map((p) => coerceScalar(spec.items.type, p)),
      );
      continue;
    }
    const text = typeof raw === 'string' ? raw : raw.length === 1 ? raw[0]! : raw;
    if (typeof text !== 'string') {
      setOwn(out, key, text);
      continue;
    }
    if (text === '' && optional && spec.type !== 'string') continue;
    setOwn(out, key, coerceScalar(spec.type, text));
  }
  return out;
}

function coerceScalar(type: ScalarParamType, text: string): unknown {
  switch (type) {
    case 'integer': {
      if (!INTEGER_TEXT.test(text)) return text;
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : text;
    }
    case 'number': {
      if (!NUMBER_TEXT.test(text)) return text;
      const n = Number(text);
      return Number.isFinite(n) ? n : text;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      return text;
    }
    default:
      return text;
  }
}

function isPlainObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** Defines an own property, so a key like `__proto__` is data, never a prototype change. */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
