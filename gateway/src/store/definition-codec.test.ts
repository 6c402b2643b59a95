import { describe, expect, it } from 'vitest';
import { definitionOf, PARAM_ORDER, storedDefinition } from './definition-codec.js';

/** What jsonb does to an object's keys: shorter first, then bytewise. */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]));
}

describe('the stored definition', () => {
  const definition = {
    sql: 'select 1',
    params: { start_date: { type: 'date' }, end_date: { type: 'date' }, region: { type: 'string' } },
  };

  it('gives the params back in their declared order after jsonb reordered them', () => {
    const stored = jsonbOrder(JSON.parse(storedDefinition(definition))) as Record<string, unknown>;
    expect(Object.keys(stored.params as object)).toEqual(['region', 'end_date', 'start_date']);
    const read = definitionOf(stored);
    expect(Object.keys(read.params as object)).toEqual(['start_date', 'end_date', 'region']);
    expect(read).toEqual(definition);
    expect(PARAM_ORDER in read).toBe(false);
  });

  it('reads a definition stored before the order was kept as it is', () => {
    const old = jsonbOrder(definition) as Record<string, unknown>;
    expect(definitionOf(old)).toBe(old);
  });

  it('keeps params the order does not name, and ignores names that are not params', () => {
    const read = definitionOf({
      params: { b: { type: 'string' }, a: { type: 'string' } },
      [PARAM_ORDER]: ['a', 'zzz', 7],
    });
    expect(Object.keys(read.params as object)).toEqual(['a', 'b']);
  });

  it('stores a definition without params unchanged', () => {
    expect(JSON.parse(storedDefinition({ sql: 'select 1' }))).toEqual({ sql: 'select 1' });
  });
});
