// Checks that every parameter type reaches the engine intact: scalar round trips through `echo`,
// typed NULLs through the `(:x IS NULL OR col = :x)` idiom, and arrays through `inList`.
import { expect } from 'vitest';
import type { JsonValue } from '../connector.js';
import type { ColumnType } from '../connector-plugin.js';
import type { ScalarParamType } from '../param-types.js';
import { CONFORMANCE_ROWS, type ConformanceColumnName } from './conformance-fixture.js';
import { type ConformanceHarness, idsOf, typed } from './conformance-harness.js';
import { expectJsonValue, type SourceValue } from './expected-json.js';

const TEST_TIMEOUT_MS = 30_000;

/** Param specs the kit validates its inputs against (via checkParamSchema and validateParams). */
const SPECS: Readonly<Record<ScalarParamType, Record<string, unknown>>> = {
  integer: { type: 'integer' },
  number: { type: 'number' },
  string: { type: 'string', maxLength: 1000 },
  boolean: { type: 'boolean' },
  date: { type: 'date' },
  timestamp: { type: 'timestamp' },
  enum: { type: 'enum', values: ['north', 'south side', "o'brien", 'émoji 🚀', 'alpha', 'beta'] },
};

const DEFAULT_ECHO_TYPES: Readonly<Record<ScalarParamType, ColumnType>> = {
  integer: 'integer',
  number: 'number',
  string: 'string',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  enum: 'string',
};

/** One round trip: JSON `input` as a caller sends it, and the value it denotes. */
interface EchoCase {
  readonly input: unknown;
  readonly expected: SourceValue;
}

const big = (text: string): EchoCase => ({ input: text, expected: BigInt(text) });
const same = (value: string | number | boolean): EchoCase => ({ input: value, expected: value });

const SCALAR_CASES: Readonly<Record<ScalarParamType, readonly EchoCase[]>> = {
  integer: [
    same(0),
    same(1),
    same(-1),
    same(42),
    same(2147483647),
    same(-2147483648),
    same(2147483648),
    same(Number.MAX_SAFE_INTEGER - 1),
    same(Number.MAX_SAFE_INTEGER),
    same(-Number.MAX_SAFE_INTEGER),
    big('9007199254740992'),
    big('9007199254740993'),
    big('-9007199254740992'),
    big('-9007199254740993'),
    big('9223372036854775807'),
    big('-9223372036854775808'),
  ],
  number: [
    same(0),
    same(3),
    same(1.5),
    same(-2.25),
    same(0.1),
    same(1e-10),
    same(123456789.123),
    same(-2.5e100),
  ],
  string: [
    same(''),
    same('hello'),
    same("O'Brien"),
    same("''"),
    same('"double"'),
    same('back\\slash'),
    same('Zoë'),
    same('日本語'),
    same('🚀 emoji 👩‍👩‍👧'),
    same('tab\tnew\nline'),
    same('  spaced  '),
    same('ü'.repeat(300)),
  ],
  boolean: [same(true), same(false)],
  date: [same('2024-02-29'), same('1970-01-01'), same('1999-12-31'), same('2100-12-31')],
  timestamp: [
    same('2024-01-31T12:34:56.789Z'),
    same('1970-01-01T00:00:00.000Z'),
    same('1999-12-31T23:59:59.999Z'),
    same('2038-01-19T03:14:08.000Z'),
    { input: '2024-06-30T23:59:59.999+02:00', expected: '2024-06-30T21:59:59.999Z' },
  ],
  enum: [same('north'), same('south side'), same("o'brien"), same('émoji 🚀')],
};

const ARRAY_CASES: Readonly<Record<ScalarParamType, readonly (readonly unknown[])[]>> = {
  integer: [[1, -2, '9007199254740993', '-9223372036854775808'], [7], []],
  number: [[1.5, -0.25, 3]],
  string: [['a', "O'Brien", '🚀', '']],
  boolean: [[true, false]],
  date: [['2024-02-29', '1970-01-01']],
  timestamp: [['2024-01-31T12:34:56.789Z', '1970-01-01T00:00:00.000Z']],
  enum: [['north', "o'brien"]],
};

/** Values that match exactly one row of the fixture (row 2) for the typed-NULL idiom, or rows with flag = false. */
const NULL_FILTERS: readonly {
  readonly column: ConformanceColumnName;
  readonly type: ScalarParamType;
  readonly input: unknown;
  readonly ids: readonly number[];
}[] = [
  { column: 'id', type: 'integer', input: 2, ids: [2] },
  { column: 'big', type: 'integer', input: '9007199254740993', ids: [5] },
  { column: 'ratio', type: 'number', input: -1.25, ids: [2] },
  { column: 'name', type: 'string', input: 'beta', ids: [2] },
  { column: 'flag', type: 'boolean', input: false, ids: idsWhere((row) => row.flag === false) },
  { column: 'day', type: 'date', input: '1970-01-01', ids: [2] },
  { column: 'ts', type: 'timestamp', input: '1970-01-01T00:00:00.000Z', ids: [2] },
  { column: 'name', type: 'enum', input: 'beta', ids: [2] },
];

/** Registers the parameter checks (1–3 of the kit). */
export function registerParamConformance(h: ConformanceHarness): void {
  const echoType = (type: ScalarParamType): ColumnType =>
    h.options.echoTypes?.[type] ?? DEFAULT_ECHO_TYPES[type];

  h.check(
    'echo',
    'round-trips every scalar param type through echo, with the reported column type',
    async () => {
      for (const [type, cases] of Object.entries(SCALAR_CASES) as [ScalarParamType, readonly EchoCase[]][]) {
        const sql = h.sql.echo(type, false);
        expect(sql, `sql.echo('${type}', false) must return a template`).toBeTypeOf('string');
        for (const c of cases) {
          const where = `echo ${type} ${JSON.stringify(c.input)}`;
          const result = await h.query(sql as string, h.validated({ v: SPECS[type] }, { v: c.input }));
          expect(result.rows, `${where}: one row`).toHaveLength(1);
          const column = result.columns.find((col) => col.name === 'v');
          expect(column?.type, `${where}: column v's reported type`).toBe(echoType(type));
          expectJsonValue(result.rows[0]?.v, c.expected, echoType(type), where);
        }
      }
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'typedNulls',
    'binds typed NULLs of every type: (:x IS NULL OR col = :x) returns the unfiltered rows',
    async () => {
      const allIds = CONFORMANCE_ROWS.map((row) => row.id);
      for (const f of NULL_FILTERS) {
        const sql = h.sql.nullFilter(h.table, f.column, f.type);
        const where = `${f.type} on ${f.column}`;
        const nulled = await h.query(sql, h.validated({ x: SPECS[f.type] }, {}));
        expect(idsOf(nulled).sort(byNumber), `${where}: a typed NULL must not filter`).toEqual(allIds);
        const explicitNull = await h.query(sql, h.validated({ x: SPECS[f.type] }, { x: null }));
        expect(idsOf(explicitNull).sort(byNumber), `${where}: JSON null is a typed NULL`).toEqual(allIds);
        const filtered = await h.query(sql, h.validated({ x: SPECS[f.type] }, { x: f.input }));
        expect(idsOf(filtered).sort(byNumber), `${where} = ${JSON.stringify(f.input)}: must filter`).toEqual(
          f.ids,
        );
      }
      for (const type of Object.keys(SPECS) as ScalarParamType[]) {
        const sql = h.sql.echo(type, false) as string;
        const result = await h.query(sql, { v: typed(type, null) });
        expect(result.rows[0]?.v, `echo of a NULL ${type}`).toBeNull();
      }
    },
    TEST_TIMEOUT_MS,
  );

  h.check(
    'arrays',
    'binds array params: inList with 0, 1 and many ids, and a NULL list',
    async () => {
      const sql = h.sql.inList(h.table);
      const run = async (ids: readonly unknown[]): Promise<number[]> => {
        const params = h.validated({ ids: { type: 'array', items: { type: 'integer' } } }, { ids });
        return idsOf(await h.query(sql, params)).sort(byNumber);
      };
      expect(await run([]), 'an empty list matches nothing').toEqual([]);
      expect(await run([3]), 'one id').toEqual([3]);
      expect(await run([7, 1, 5, 3, 999, -1]), 'several ids, some absent').toEqual([1, 3, 5, 7]);
      const many = Array.from({ length: 500 }, (_, i) => i - 200);
      expect(await run(many), '500 ids').toEqual(CONFORMANCE_ROWS.map((row) => row.id));
      const nulled = await h.query(sql, { ids: typed('integer', null, true) });
      expect(idsOf(nulled), 'a NULL list matches nothing').toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  const arrayEchoes = (Object.entries(ARRAY_CASES) as [ScalarParamType, readonly unknown[][]][]).flatMap(
    ([type, cases]) => {
      const echo = h.sql.echo(type, true);
      return echo === undefined ? [] : [{ type, cases, echo }];
    },
  );
  h.check(
    'arrayEcho',
    'round-trips array params through echo where the engine can select an array',
    arrayEchoes.length === 0
      ? 'sql.echo(type, true) returns undefined for every type (the engine or its driver cannot echo an array value)'
      : async () => {
          for (const { type, cases, echo } of arrayEchoes) {
            for (const input of cases) {
              const where = `echo ${type}[] ${JSON.stringify(input)}`;
              const spec = { type: 'array', items: SPECS[type] };
              const result = await h.query(echo, h.validated({ v: spec }, { v: input }));
              const column = result.columns.find((col) => col.name === 'v');
              expect(column?.type, `${where}: column v's reported type`).toBe('array');
              const value = result.rows[0]?.v;
              expect(Array.isArray(value), `${where}: an array must come back as a JSON array`).toBe(true);
              const values = value as readonly JsonValue[];
              expect(values, `${where}: length`).toHaveLength(input.length);
              input.forEach((element, i) => {
                const expected = SCALAR_EXPECTATION[type](element);
                expectJsonValue(values[i], expected, echoType(type), `${where}[${i}]`);
              });
            }
            const nulled = await h.query(echo, { v: typed(type, null, true) });
            const nullArray = h.options.nullArrays === 'empty' ? [] : null;
            expect(nulled.rows[0]?.v, `echo of a NULL ${type}[]`).toEqual(nullArray);
          }
        },
    TEST_TIMEOUT_MS,
  );
}

const SCALAR_EXPECTATION: Readonly<Record<ScalarParamType, (input: unknown) => SourceValue>> = {
  integer: (input) => BigInt(input as string | number),
  number: (input) => input as number,
  string: (input) => input as string,
  boolean: (input) => input as boolean,
  date: (input) => input as string,
  timestamp: (input) => input as string,
  enum: (input) => input as string,
};

function idsWhere(predicate: (row: (typeof CONFORMANCE_ROWS)[number]) => boolean): number[] {
  return CONFORMANCE_ROWS.filter(predicate).map((row) => row.id);
}

function byNumber(a: number, b: number): number {
  return a - b;
}
