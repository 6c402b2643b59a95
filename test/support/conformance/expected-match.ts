// How a conformance case's expected value is compared with what a client returned
// (clients/conformance/README.md, "Matching"): objects by the keys the case names, lists whole and
// in order, numbers by value, everything else by value and type; `<nonempty>` and `<number>` match
// any non-empty string and any number; `$saved.field` is a value saved by an earlier step.
// Every language's runner implements these same rules.

/** Replaces `$name.field` strings with what earlier steps saved. */
export function resolveSaved(value: unknown, saved: Readonly<Record<string, unknown>>): unknown {
  if (typeof value === 'string' && value.startsWith('$')) {
    const [name, ...fields] = value.slice(1).split('.');
    let current: unknown = saved[name ?? ''];
    for (const field of fields) current = (current as Record<string, unknown> | undefined)?.[field];
    return current;
  }
  if (Array.isArray(value)) return value.map((v) => resolveSaved(v, saved));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveSaved(v, saved)]));
  }
  return value;
}

/** Every difference between `expected` and `actual`, each with its path; empty when they match. */
export function matchExpected(expected: unknown, actual: unknown, path = '$'): string[] {
  if (expected === '<nonempty>') {
    return typeof actual === 'string' && actual !== ''
      ? []
      : [`${path}: expected a non-empty string, got ${JSON.stringify(actual)}`];
  }
  if (expected === '<number>') {
    return typeof actual === 'number' ? [] : [`${path}: expected a number, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return [`${path}: expected a list of ${expected.length}, got ${JSON.stringify(actual)}`];
    }
    return expected.flatMap((e, i) => matchExpected(e, actual[i], `${path}[${i}]`));
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
      return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    }
    const record = actual as Record<string, unknown>;
    return Object.entries(expected).flatMap(([key, value]) =>
      key in record ? matchExpected(value, record[key], `${path}.${key}`) : [`${path}.${key}: missing`],
    );
  }
  return expected === actual
    ? []
    : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}
