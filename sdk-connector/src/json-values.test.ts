import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ColumnType } from './connector-plugin.js';
import { toJsonValue } from './json-values.js';

const MAX = Number.MAX_SAFE_INTEGER;

describe('toJsonValue', () => {
  const cases: readonly [ColumnType, unknown, unknown][] = [
    // integers: exact numbers inside ±(2^53 − 1), decimal strings beyond
    ['integer', 42, 42],
    ['integer', '42', 42],
    ['integer', '-007', -7],
    ['integer', 42n, 42],
    ['integer', BigInt(MAX), MAX],
    ['integer', BigInt(MAX) + 1n, '9007199254740992'],
    ['integer', -(BigInt(MAX) + 2n), '-9007199254740993'],
    ['integer', '9007199254740991', MAX],
    ['integer', '9007199254740993', '9007199254740993'],
    ['integer', '-9223372036854775808', '-9223372036854775808'],
    ['integer', 2 ** 60, '1152921504606846976'],
    // decimals: a number only when its text round-trips exactly
    ['decimal', '1234.50', 1234.5],
    ['decimal', '0.10', 0.1],
    ['decimal', '-0012.000', -12],
    ['decimal', '100', 100],
    ['decimal', '12345678901234567.1', '12345678901234567.1'],
    ['decimal', '0.1000000000000000055511151231257827', '0.1000000000000000055511151231257827'],
    ['decimal', '99999999999999999999', '99999999999999999999'],
    ['decimal', 'NaN', null],
    ['decimal', 12.5, 12.5],
    ['decimal', 123n, 123],
    ['decimal', { toString: () => '3.25' }, 3.25],
    // numbers
    ['number', 1.5, 1.5],
    ['number', Number.NaN, null],
    ['number', Number.POSITIVE_INFINITY, null],
    ['number', Number.NEGATIVE_INFINITY, null],
    ['number', '2.5', 2.5],
    // booleans
    ['boolean', true, true],
    ['boolean', 0, false],
    ['boolean', 't', true],
    // dates: YYYY-MM-DD; a Date is read in UTC
    ['date', '2024-01-31', '2024-01-31'],
    ['date', new Date(Date.UTC(2024, 0, 31)), '2024-01-31'],
    ['date', '2024-01-31T00:00:00.000Z', '2024-01-31'],
    // timestamps: ISO-8601 UTC with Z
    ['timestamp', new Date(Date.UTC(2024, 0, 31, 12, 0, 0, 5)), '2024-01-31T12:00:00.005Z'],
    ['timestamp', '2024-01-31 12:00:00', '2024-01-31T12:00:00.000Z'],
    ['timestamp', '2024-01-31 12:00:00+02', '2024-01-31T10:00:00.000Z'],
    ['timestamp', '2024-01-31T23:30:00.123456-01:30', '2024-02-01T01:00:00.123456Z'],
    ['timestamp', '2024-01-31T12:00:00.000Z', '2024-01-31T12:00:00.000Z'],
    ['timestamp', 1_706_702_400_000_001n, '2024-01-31T12:00:00.000001Z'],
    ['timestamp', 'infinity', 'infinity'],
    ['timestamp', new Date(Number.NaN), null],
    // the rest
    ['time', '12:34:56.789', '12:34:56.789'],
    ['bytes', Buffer.from('hi'), 'aGk='],
    ['bytes', new Uint8Array([1, 2, 3]).subarray(1), 'AgM='],
    ['json', '{"a":[1,2]}', { a: [1, 2] }],
    [
      'json',
      { big: 2n ** 64n, small: 3n, when: new Date(0), gone: undefined },
      {
        big: '18446744073709551616',
        small: 3,
        when: '1970-01-01T00:00:00.000Z',
      },
    ],
    ['array', [1n, 2n ** 64n, null, 'x', [Number.NaN]], [1, '18446744073709551616', null, 'x', [null]]],
    ['string', 'text', 'text'],
    ['unknown', 12, '12'],
    ['unknown', { a: 1 }, '{"a":1}'],
  ];

  it.each(cases)('%s %o → %o', (type, raw, expected) => {
    expect(toJsonValue(type, raw)).toEqual(expected);
  });

  it('turns null and undefined into null for every type', () => {
    const types: ColumnType[] = [
      'string',
      'integer',
      'number',
      'decimal',
      'boolean',
      'date',
      'timestamp',
      'time',
      'bytes',
      'json',
      'array',
      'unknown',
    ];
    for (const type of types) {
      expect(toJsonValue(type, null)).toBeNull();
      expect(toJsonValue(type, undefined)).toBeNull();
    }
  });

  it('every result survives JSON.stringify (no bigint, no undefined)', () => {
    const value = toJsonValue('json', { a: [1n, { b: 2n ** 70n }], c: Buffer.from('x') });
    expect(JSON.parse(JSON.stringify(value))).toEqual(value);
  });

  it('integers: a number exactly when within ±(2^53 − 1), and always the exact value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }), fc.boolean(), (b, asText) => {
        const out = toJsonValue('integer', asText ? b.toString() : b);
        const safe = b >= -BigInt(MAX) && b <= BigInt(MAX);
        expect(typeof out).toBe(safe ? 'number' : 'string');
        expect(typeof out === 'number' ? BigInt(out).toString() : out).toBe(b.toString());
      }),
    );
  });

  it('decimals: the text of a double comes back as that number', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const text = String(d);
        fc.pre(!text.includes('e') && !Object.is(d, -0));
        expect(toJsonValue('decimal', text)).toBe(d);
        expect(toJsonValue('decimal', `${text}${text.includes('.') ? '' : '.'}000`)).toBe(d);
      }),
    );
  });

  it('decimals: never a number that differs from the exact decimal text', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.stringMatching(/^[0-9]{0,20}$/),
        (whole, fraction) => {
          const text = fraction === '' ? whole.toString() : `${whole}.${fraction}`;
          const out = toJsonValue('decimal', text);
          if (typeof out === 'string') {
            expect(out).toBe(text);
          } else {
            // Same value: compare the exact decimal strings without trailing fraction zeros.
            const norm = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
            const expected = norm(text).replace(/^(-?)0+(?=\d)/, '$1');
            expect(String(out)).toBe(expected === '-0' ? '0' : expected);
          }
        },
      ),
    );
  });
});
