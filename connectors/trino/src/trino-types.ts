// Reads the type names Trino reports for result columns (`bigint`, `decimal(18,2)`,
// `timestamp(6) with time zone`, `array(row(a bigint, "b c" varchar))`, `map(varchar, double)`)
// into a small tree, and maps each onto the SDK's logical column types.
import type { ColumnType } from '@quarry/sdk-connector';

/** A parsed Trino type: its base name (`timestamp with time zone`), parameters and children. */
export interface TrinoType {
  /** Lower-case base name with any suffix, e.g. `decimal`, `timestamp with time zone`, `row`. */
  readonly base: string;
  /** Numeric parameters, e.g. `[18, 2]` for `decimal(18,2)`, `[6]` for `timestamp(6)`. */
  readonly params: readonly number[];
  /** Element, key/value or field types for `array`, `map` and `row`. */
  readonly children: readonly TrinoType[];
  /** Field names of a `row` (undefined for unnamed fields). */
  readonly fields: readonly (string | undefined)[];
}

const UNKNOWN: TrinoType = { base: 'unknown', params: [], children: [], fields: [] };

/** Type names that continue with words after their first one (so a row field is not mistaken for them). */
const MULTI_WORD = /^(interval\s+(day|year)|double\s+precision|(timestamp|time)(\(\d+\))?\s+with)/i;

class TypeReader {
  private i = 0;
  constructor(private readonly text: string) {}

  private skipSpace(): void {
    while (this.i < this.text.length && this.text[this.i]! <= ' ') this.i++;
  }

  private word(): string {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.i));
    if (m === null) return '';
    this.i += m[0].length;
    return m[0];
  }

  /** Reads one type starting at the cursor. */
  type(): TrinoType {
    this.skipSpace();
    const name = this.word().toLowerCase();
    if (name === '') return UNKNOWN;
    const params: number[] = [];
    const children: TrinoType[] = [];
    const fields: (string | undefined)[] = [];
    this.skipSpace();
    if (this.text[this.i] === '(') {
      this.i++;
      for (;;) {
        this.skipSpace();
        if (this.text[this.i] === ')') break;
        const numeric = /^\d+/.exec(this.text.slice(this.i));
        if (numeric !== null) {
          params.push(Number(numeric[0]));
          this.i += numeric[0].length;
        } else if (name === 'row') {
          const [field, child] = this.field();
          fields.push(field);
          children.push(child);
        } else {
          children.push(this.type());
        }
        this.skipSpace();
        if (this.text[this.i] === ',') this.i++;
        else break;
      }
      if (this.text[this.i] === ')') this.i++;
    }
    // Suffix words: `with time zone`, `day to second`, `precision`.
    let base = name;
    for (;;) {
      const save = this.i;
      this.skipSpace();
      const next = this.word();
      if (next === '' || !/^(with|without|time|zone|to|day|second|year|month|precision)$/i.test(next)) {
        this.i = save;
        break;
      }
      base += ` ${next.toLowerCase()}`;
    }
    return { base, params, children, fields };
  }

  /** One `row` field: `name type`, `"quoted name" type`, or an unnamed `type`. */
  private field(): [string | undefined, TrinoType] {
    this.skipSpace();
    if (this.text[this.i] === '"') {
      let name = '';
      this.i++;
      while (this.i < this.text.length) {
        const c = this.text[this.i]!;
        if (c === '"' && this.text[this.i + 1] === '"') {
          name += '"';
          this.i += 2;
        } else if (c === '"') {
          this.i++;
          break;
        } else {
          name += c;
          this.i++;
        }
      }
      return [name, this.type()];
    }
    const rest = this.text.slice(this.i);
    const named = /^([A-Za-z_][A-Za-z0-9_]*)\s+[A-Za-z_"]/.exec(rest);
    if (named !== null && !MULTI_WORD.test(rest)) {
      this.i += named[1]!.length;
      return [named[1], this.type()];
    }
    return [undefined, this.type()];
  }
}

/** Parses a Trino type name; anything unreadable becomes `unknown`. */
export function parseTrinoType(text: string): TrinoType {
  return new TypeReader(text).type();
}

const COLUMN_TYPES: Readonly<Record<string, ColumnType>> = {
  boolean: 'boolean',
  tinyint: 'integer',
  smallint: 'integer',
  integer: 'integer',
  bigint: 'integer',
  real: 'number',
  double: 'number',
  decimal: 'decimal',
  varchar: 'string',
  char: 'string',
  uuid: 'string',
  ipaddress: 'string',
  varbinary: 'bytes',
  date: 'date',
  time: 'time',
  'time with time zone': 'time',
  timestamp: 'timestamp',
  'timestamp with time zone': 'timestamp',
  array: 'array',
  map: 'json',
  row: 'json',
  json: 'json',
};

/** The logical column type of a Trino type (INTERVAL, geometry, sketches, … are `unknown`: text). */
export function columnTypeOf(type: TrinoType): ColumnType {
  return COLUMN_TYPES[type.base] ?? 'unknown';
}
