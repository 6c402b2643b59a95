// Stripe's form encoding, read the way the API reads it: `application/x-www-form-urlencoded` pairs
// whose keys nest with brackets (`metadata[account_id]=x`, `line_items[0][price]=p`,
// `expand[]=a`). A bracket path whose keys are all indices (or empty) becomes an array.

/** A decoded parameter: a string, or a nested object / array of them. */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormParams = { [key: string]: FormValue };

interface Node {
  [key: string]: Node | string;
}

/** Parses a form body or a query string (without the `?`). */
export function parseForm(text: string): FormParams {
  const root: Node = {};
  let appended = 0;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    if (!match) continue;
    const path = [match[1]!, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!)];
    let node = root;
    for (let i = 0; i < path.length; i++) {
      let key = path[i]!;
      if (key === '') key = `\u0000${appended++}`; // `a[]=x`: a fresh index, kept in order
      if (i === path.length - 1) {
        node[key] = value;
      } else {
        const next = node[key];
        if (typeof next === 'object') node = next;
        else {
          const fresh: Node = {};
          node[key] = fresh;
          node = fresh;
        }
      }
    }
  }
  return finish(root) as FormParams;
}

function decode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, ' '));
}

function finish(node: Node | string): FormValue {
  if (typeof node === 'string') return node;
  const keys = Object.keys(node);
  const isIndex = (key: string) => /^\d+$/.test(key) || key.startsWith('\u0000');
  if (keys.length > 0 && keys.every(isIndex)) {
    const order = (key: string) => (key.startsWith('\u0000') ? 1e9 + Number(key.slice(1)) : Number(key));
    return keys.sort((a, b) => order(a) - order(b)).map((key) => finish(node[key]!));
  }
  const out: { [key: string]: FormValue } = {};
  for (const key of keys) out[key] = finish(node[key]!);
  return out;
}

/** A parameter error the API answers with 400 `invalid_request_error`. */
export class ParamError extends Error {
  constructor(
    message: string,
    readonly param: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export function optString(params: FormParams, key: string): string | undefined {
  const value = params[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(key);
  return value;
}

export function reqString(params: FormParams, key: string): string {
  const value = optString(params, key);
  if (value === undefined || value === '') {
    throw new ParamError(`Missing required param: ${key}.`, key, 'parameter_missing');
  }
  return value;
}

export function optInt(params: FormParams, key: string): number | undefined {
  const value = optString(params, key);
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value))
    throw new ParamError(`Invalid integer: ${value}`, key, 'parameter_invalid_integer');
  return Number(value);
}

export function optBool(params: FormParams, key: string): boolean | undefined {
  const value = optString(params, key);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') {
    throw new ParamError(`Invalid boolean: ${value}`, key, 'parameter_invalid_string_boolean');
  }
  return value === 'true';
}

export function optObject(params: FormParams, key: string): FormParams | undefined {
  const value = params[key];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(key);
  return value;
}

export function optList(params: FormParams, key: string): FormValue[] | undefined {
  const value = params[key];
  if (value === undefined || value === '') return undefined;
  if (!Array.isArray(value)) throw invalid(key);
  return value;
}

/** `expand[]` / `expand[0]`: the paths to expand. */
export function expandPaths(params: FormParams): string[] {
  return (optList(params, 'expand') ?? []).map((path) => {
    if (typeof path !== 'string') throw invalid('expand');
    return path;
  });
}

/** Metadata as Stripe merges it: keys set to '' are removed. */
export function mergeMetadata(
  current: Record<string, string>,
  params: FormParams,
  key = 'metadata',
): Record<string, string> {
  const update = params[key];
  if (update === undefined) return current;
  if (update === '') return {};
  if (typeof update !== 'object' || Array.isArray(update)) throw invalid(key);
  const next = { ...current };
  for (const [name, value] of Object.entries(update)) {
    if (typeof value !== 'string') throw invalid(`${key}[${name}]`);
    if (value === '') delete next[name];
    else next[name] = value;
  }
  return next;
}

/** Rejects parameters the endpoint does not take, as Stripe does. */
export function onlyParams(params: FormParams, allowed: readonly string[]): void {
  for (const key of Object.keys(params)) {
    if (key !== 'expand' && !allowed.includes(key)) {
      throw new ParamError(`Received unknown parameter: ${key}`, key, 'parameter_unknown');
    }
  }
}

function invalid(key: string): ParamError {
  return new ParamError(`Invalid value for ${key}.`, key, 'parameter_invalid');
}
