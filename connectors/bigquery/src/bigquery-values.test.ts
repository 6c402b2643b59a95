// BigQuery's REST result encoding read into column types and values, and what the runtime makes of them.
import { toJsonValue } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { type BigqueryField, columnsOf, rowValues } from './bigquery-values.js';

const fields: BigqueryField[] = [
  { name: 'i', type: 'INTEGER', mode: 'NULLABLE' },
  { name: 'f', type: 'FLOAT' },
  { name: 'n', type: 'NUMERIC' },
  { name: 'bn', type: 'BIGNUMERIC' },
  { name: 'b', type: 'BOOLEAN' },
  { name: 's', type: 'STRING' },
  { name: 'by', type: 'BYTES' },
  { name: 'd', type: 'DATE' },
  { name: 't', type: 'TIME' },
  { name: 'dt', type: 'DATETIME' },
  { name: 'ts', type: 'TIMESTAMP' },
  { name: 'j', type: 'JSON' },
  { name: 'g', type: 'GEOGRAPHY' },
  { name: 'iv', type: 'INTERVAL' },
  { name: 'arr', type: 'INT64', mode: 'REPEATED' },
  {
    name: 'rec',
    type: 'RECORD',
    fields: [
      { name: 'big', type: 'INTEGER' },
      { name: 'when', type: 'TIMESTAMP' },
      { name: 'tags', type: 'STRING', mode: 'REPEATED' },
      { name: '__proto__', type: 'BOOL' },
    ],
  },
  { name: 'recs', type: 'STRUCT', mode: 'REPEATED', fields: [{ name: 'x', type: 'NUMERIC' }] },
];

describe('columnsOf', () => {
  it('reports logical types by BigQuery type, REPEATED as array', () => {
    expect(columnsOf(fields).map((c) => [c.name, c.type, c.nativeType])).toEqual([
      ['i', 'integer', 'INTEGER'],
      ['f', 'number', 'FLOAT'],
      ['n', 'decimal', 'NUMERIC'],
      ['bn', 'decimal', 'BIGNUMERIC'],
      ['b', 'boolean', 'BOOLEAN'],
      ['s', 'string', 'STRING'],
      ['by', 'bytes', 'BYTES'],
      ['d', 'date', 'DATE'],
      ['t', 'time', 'TIME'],
      ['dt', 'timestamp', 'DATETIME'],
      ['ts', 'timestamp', 'TIMESTAMP'],
      ['j', 'json', 'JSON'],
      ['g', 'string', 'GEOGRAPHY'],
      ['iv', 'unknown', 'INTERVAL'],
      ['arr', 'array', 'ARRAY<INT64>'],
      ['rec', 'json', 'RECORD'],
      ['recs', 'array', 'ARRAY<STRUCT>'],
    ]);
  });
});

describe('rowValues', () => {
  it('hands scalars to the runtime exact, and makes arrays and records JSON-safe', () => {
    const row = {
      f: [
        { v: '-9223372036854775808' },
        { v: 'NaN' },
        { v: '99999999999999999999999999999.999999999' },
        { v: '1.5' },
        { v: 'false' },
        { v: 'Zoë' },
        { v: 'AP8=' },
        { v: '2100-06-15' },
        { v: '12:00:00.5' },
        { v: '2024-01-31T12:34:56.789123' },
        { v: '-14182940000000' },
        { v: '{"a":1}' },
        { v: 'POINT(1 2)' },
        { v: '0-0 1 0:0:0' },
        { v: [{ v: '1' }, { v: '9007199254740993' }] },
        {
          v: {
            f: [{ v: '9007199254740993' }, { v: '1706704496789123' }, { v: [{ v: 'x' }] }, { v: 'true' }],
          },
        },
        { v: [{ v: { f: [{ v: '0.10' }] } }, { v: { f: [{ v: null }] } }] },
      ],
    };
    const values = rowValues(fields, row);
    expect(values.slice(0, 14)).toEqual([
      '-9223372036854775808',
      'NaN',
      '99999999999999999999999999999.999999999',
      '1.5',
      false,
      'Zoë',
      'AP8=',
      '2100-06-15',
      '12:00:00.5',
      '2024-01-31T12:34:56.789123',
      -14182940000000n,
      '{"a":1}',
      'POINT(1 2)',
      '0-0 1 0:0:0',
    ]);
    expect(values[14]).toEqual([1, '9007199254740993']);
    const record = values[15] as Record<string, unknown>;
    expect(Object.keys(record)).toEqual(['big', 'when', 'tags', '__proto__']);
    expect(record).toEqual({
      big: '9007199254740993',
      when: '2024-01-31T12:34:56.789123Z',
      tags: ['x'],
      ['__proto__']: true,
    });
    expect(values[16]).toEqual([{ x: 0.1 }, { x: null }]);
    // What the runtime then makes of the top-level scalars.
    const columns = columnsOf(fields);
    expect(values.slice(0, 14).map((value, i) => toJsonValue(columns[i]!.type, value))).toEqual([
      '-9223372036854775808',
      null,
      '99999999999999999999999999999.999999999',
      1.5,
      false,
      'Zoë',
      'AP8=',
      '2100-06-15',
      '12:00:00.5',
      '2024-01-31T12:34:56.789123Z',
      '1969-07-20T20:17:40.000Z',
      { a: 1 },
      'POINT(1 2)',
      '0-0 1 0:0:0',
    ]);
  });

  it('reads NULLs as null, and a NULL or missing array as []', () => {
    const row = { f: fields.map(() => ({ v: null })) };
    const values = rowValues(fields, row);
    expect(values).toEqual([...fields.slice(0, 14).map(() => null), [], null, []]);
  });
});
