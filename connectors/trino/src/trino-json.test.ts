import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTrinoJson } from './trino-json.js';

describe('parseTrinoJson', () => {
  it('keeps integers beyond 2^53 as exact digit strings, and everything else as JSON.parse does', () => {
    const text =
      '{"data":[[9007199254740993,-9223372036854775808,9007199254740991,1.0E20,12345678901234567.5,' +
      '"9007199254740993 in a string \\" 12345678901234567890",1e300]],"n":9223372036854775807}';
    expect(parseTrinoJson(text)).toEqual({
      data: [
        [
          '9007199254740993',
          '-9223372036854775808',
          9007199254740991,
          1e20,
          Number('12345678901234567.5'),
          '9007199254740993 in a string " 12345678901234567890',
          1e300,
        ],
      ],
      n: '9223372036854775807',
    });
  });

  it('agrees with JSON.parse on any JSON without unsafe integers', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const unsafe = /(?<![\w.+-])-?\d{16,}(?![\w.])/.test(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'));
        if (!unsafe) expect(parseTrinoJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('round-trips every 64-bit integer exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
        const parsed = parseTrinoJson(`[${n}]`) as [number | string];
        expect(BigInt(parsed[0])).toBe(n);
        expect(typeof parsed[0]).toBe(Number.isSafeInteger(Number(n)) ? 'number' : 'string');
      }),
    );
  });
});
