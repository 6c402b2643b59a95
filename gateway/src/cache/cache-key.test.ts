import { checkParamSchema, type ParamValues, validateParams } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { cacheKey, cacheKeyPrefix } from './cache-key.js';

const schema = checkParamSchema({
  category: { type: 'string', required: true, maxLength: 64 },
  limit: { type: 'integer', min: 1, max: 100, default: 10 },
  region: { type: 'string' },
  big: { type: 'integer' },
  day: { type: 'date' },
  at: { type: 'timestamp' },
  tags: { type: 'array', items: { type: 'string' } },
});

function params(input: Record<string, unknown>): ParamValues {
  const result = validateParams(schema, input);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.values;
}

const keyOf = (input: Record<string, unknown>, scope?: string) =>
  cacheKey({ analyticId: 'top-products', version: 3, params: params(input), scope });

describe('cacheKey', () => {
  it('gives a default spelled out the same key as the default left out', () => {
    expect(keyOf({ category: 'toys', limit: 10 })).toBe(keyOf({ category: 'toys' }));
    expect(keyOf({ category: 'toys', limit: 11 })).not.toBe(keyOf({ category: 'toys' }));
  });

  it('ignores the order the caller wrote the params in', () => {
    expect(keyOf({ limit: 5, category: 'toys', region: 'EU' })).toBe(
      keyOf({ region: 'EU', category: 'toys', limit: 5 }),
    );
  });

  it('gives a query-string integer the same key as a JSON integer', () => {
    expect(keyOf({ category: 'toys', limit: '5' })).toBe(keyOf({ category: 'toys', limit: 5 }));
  });

  it('keeps a 64-bit integer exact, whether it came as bigint or as text', () => {
    const a = keyOf({ category: 'toys', big: 9007199254740993n });
    expect(a).toBe(keyOf({ category: 'toys', big: '9007199254740993' }));
    expect(a).not.toBe(keyOf({ category: 'toys', big: '9007199254740992' }));
  });

  it('tells a typed NULL from the string "null" and from an absent param', () => {
    const nullRegion = keyOf({ category: 'toys' });
    expect(nullRegion).not.toBe(keyOf({ category: 'toys', region: 'null' }));
    const noRegionSchema = checkParamSchema({ category: { type: 'string' } });
    const without = validateParams(noRegionSchema, { category: 'toys' });
    const withNull = validateParams(
      checkParamSchema({ category: { type: 'string' }, region: { type: 'string' } }),
      {
        category: 'toys',
      },
    );
    if (!without.ok || !withNull.ok) throw new Error('invalid');
    expect(cacheKey({ analyticId: 'a', version: 1, params: without.values })).not.toBe(
      cacheKey({ analyticId: 'a', version: 1, params: withNull.values }),
    );
  });

  it('tells a number from a string that looks like it', () => {
    const s = checkParamSchema({ v: { type: 'string' } });
    const n = checkParamSchema({ v: { type: 'integer' } });
    const sv = validateParams(s, { v: '5' });
    const nv = validateParams(n, { v: 5 });
    if (!sv.ok || !nv.ok) throw new Error('invalid');
    expect(cacheKey({ analyticId: 'a', version: 1, params: sv.values })).not.toBe(
      cacheKey({ analyticId: 'a', version: 1, params: nv.values }),
    );
  });

  it('cannot be forged by a string value that spells out another param', () => {
    const one = validateParams(checkParamSchema({ a: { type: 'string' } }), { a: 'x",b:string="y' });
    const two = validateParams(checkParamSchema({ a: { type: 'string' }, b: { type: 'string' } }), {
      a: 'x',
      b: 'y',
    });
    if (!one.ok || !two.ok) throw new Error('invalid');
    expect(cacheKey({ analyticId: 'a', version: 1, params: one.values })).not.toBe(
      cacheKey({ analyticId: 'a', version: 1, params: two.values }),
    );
    expect(keyOf({ category: 'a\\"b' })).not.toBe(keyOf({ category: 'a\\\\"b' }));
    expect(keyOf({ category: 'say "hi"' })).not.toBe(keyOf({ category: 'say \\"hi\\"' }));
  });

  it('keeps array order and tells an array from a scalar', () => {
    expect(keyOf({ category: 'toys', tags: ['a', 'b'] })).not.toBe(
      keyOf({ category: 'toys', tags: ['b', 'a'] }),
    );
    expect(keyOf({ category: 'toys', tags: ['a,b'] })).not.toBe(
      keyOf({ category: 'toys', tags: ['a', 'b'] }),
    );
    expect(keyOf({ category: 'toys', tags: [] })).not.toBe(keyOf({ category: 'toys' }));
  });

  it('gives timestamps naming the same instant the same key', () => {
    expect(keyOf({ category: 'toys', at: '2024-01-31T13:00:00+01:00' })).toBe(
      keyOf({ category: 'toys', at: '2024-01-31T12:00:00Z' }),
    );
    expect(keyOf({ category: 'toys', day: '2024-01-31' })).not.toBe(
      keyOf({ category: 'toys', day: '2024-02-01' }),
    );
  });

  it('separates analytics, versions and scopes', () => {
    const p = params({ category: 'toys' });
    const keys = new Set([
      cacheKey({ analyticId: 'top-products', version: 3, params: p }),
      cacheKey({ analyticId: 'top-products', version: 4, params: p }),
      cacheKey({ analyticId: 'other', version: 3, params: p }),
      cacheKey({ analyticId: 'top-products', version: 3, params: p, scope: 'acct_1' }),
      cacheKey({ analyticId: 'top-products', version: 3, params: p, scope: 'acct_2' }),
    ]);
    expect(keys.size).toBe(5);
  });

  it('starts every key with its analytic and version prefix', () => {
    const key = keyOf({ category: 'toys' }, 'acct:1');
    expect(key.startsWith(cacheKeyPrefix('top-products', 3))).toBe(true);
    expect(key.startsWith(cacheKeyPrefix('top-products'))).toBe(true);
    expect(key.startsWith(cacheKeyPrefix('top-products', 4))).toBe(false);
  });

  it('does not let an id containing ":" fall under another analytic prefix', () => {
    const p = params({ category: 'toys' });
    const tricky = cacheKey({ analyticId: 'sales:1', version: 1, params: p });
    expect(tricky.startsWith(cacheKeyPrefix('sales'))).toBe(false);
    expect(tricky.startsWith(cacheKeyPrefix('sales', 1))).toBe(false);
  });

  it('keeps keys short by hashing long params, still telling them apart', () => {
    const long = 'x'.repeat(64);
    const a = keyOf({ category: long, tags: Array.from({ length: 50 }, (_, i) => `tag-${i}`) });
    const b = keyOf({ category: long, tags: Array.from({ length: 50 }, (_, i) => `tag-${i + 1}`) });
    expect(a.length).toBeLessThan(80);
    expect(a).not.toBe(b);
    expect(a).toBe(keyOf({ tags: Array.from({ length: 50 }, (_, i) => `tag-${i}`), category: long }));
  });
});
