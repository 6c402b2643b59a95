// An analytic's definition as the store keeps it. `analytic_versions.definition` is jsonb, which
// reorders object keys (shorter first, then bytewise), so a definition read back would list its
// params as `end_date, start_date`, not in the order the owner declared them, and the
// marketplace, the console's forms and agents' tool schemas would show them so. The declared
// order travels beside the params as `PARAM_ORDER` and is applied again on read. A definition
// stored before the order was kept reads back in jsonb's order until it is redeployed.

/** A definition as the store sees it: a JSON object. */
type AnalyticDefinition = Readonly<Record<string, unknown>>;

/** The key, beside the definition's own fields, that holds the params' declared order. */
export const PARAM_ORDER = '$param_order';

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The JSON text to store for `definition`, with its params' order. */
export function storedDefinition(definition: AnalyticDefinition): string {
  const params = definition.params;
  if (!isRecord(params)) return JSON.stringify(definition);
  return JSON.stringify({ ...definition, [PARAM_ORDER]: Object.keys(params) });
}

/** The definition a stored row holds, its params in their declared order. */
export function definitionOf(stored: AnalyticDefinition): AnalyticDefinition {
  const order = stored[PARAM_ORDER];
  if (order === undefined) return stored;
  const { [PARAM_ORDER]: _order, ...definition } = stored;
  const params = definition.params;
  if (!Array.isArray(order) || !isRecord(params)) return definition;
  const ordered: Record<string, unknown> = {};
  for (const name of order)
    if (typeof name === 'string' && Object.hasOwn(params, name)) ordered[name] = params[name];
  // Anything the order does not name (it should name every param) keeps jsonb's order after it.
  for (const [name, spec] of Object.entries(params)) if (!Object.hasOwn(ordered, name)) ordered[name] = spec;
  return { ...definition, params: ordered };
}
