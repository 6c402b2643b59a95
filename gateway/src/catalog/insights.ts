// Owner-defined output shapes (docs/design.md §2 `insights`): single row → object, keyed by a column,
// chart-ready series, totals. Computed from the JSON-safe rows the connector returned.
import type { JsonValue } from '@quarry/sdk-connector';
import type { InsightsSpec } from './analytic-definition.js';

type Row = Readonly<Record<string, JsonValue>>;

export type Insights = JsonValue;

function numeric(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return undefined;
}

function keyOf(value: JsonValue | undefined): string {
  return value === null || value === undefined
    ? 'null'
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);
}

function single(rows: readonly Row[]): Insights {
  return rows[0] ?? null;
}

function keyed(rows: readonly Row[], key: string): Insights {
  const out: Record<string, JsonValue> = {};
  for (const row of rows) {
    const { [key]: k, ...rest } = row;
    out[keyOf(k)] = rest;
  }
  return out;
}

function series(rows: readonly Row[], x: string, ys: readonly string[], by: string | undefined): Insights {
  if (by === undefined) {
    return {
      x: rows.map((r) => r[x] ?? null),
      series: ys.map((y) => ({ name: y, data: rows.map((r) => r[y] ?? null) })),
    };
  }
  // Pivot: one series per distinct value of `by` (and per y when several), aligned on x.
  const xs: JsonValue[] = [];
  const xIndex = new Map<string, number>();
  for (const r of rows) {
    const k = keyOf(r[x]);
    if (!xIndex.has(k)) {
      xIndex.set(k, xs.length);
      xs.push(r[x] ?? null);
    }
  }
  const groups = new Map<string, JsonValue[]>();
  for (const r of rows) {
    for (const y of ys) {
      const name = ys.length === 1 ? keyOf(r[by]) : `${keyOf(r[by])}.${y}`;
      let data = groups.get(name);
      if (data === undefined) {
        data = new Array<JsonValue>(xs.length).fill(null);
        groups.set(name, data);
      }
      data[xIndex.get(keyOf(r[x])) ?? 0] = r[y] ?? null;
    }
  }
  return { x: xs, series: [...groups].map(([name, data]) => ({ name, data })) };
}

function totals(rows: readonly Row[], columns: readonly string[]): Insights {
  const out: Record<string, JsonValue> = {};
  for (const c of columns) {
    let sum = 0;
    let seen = false;
    for (const r of rows) {
      const n = numeric(r[c]);
      if (n !== undefined) {
        sum += n;
        seen = true;
      }
    }
    // Round away binary noise from summing decimals (e.g. 0.1 + 0.2).
    out[c] = seen ? Math.round(sum * 1e6) / 1e6 : null;
  }
  return { ...out, rows: rows.length };
}

/** Shapes rows per the analytic's spec; undefined when the analytic declares no shape. */
export function shapeInsights(spec: InsightsSpec | undefined, rows: readonly Row[]): Insights | undefined {
  if (spec === undefined) return undefined;
  switch (spec.shape) {
    case 'single':
      return single(rows);
    case 'keyed':
      return keyed(rows, spec.key);
    case 'series':
      return series(rows, spec.x, spec.y, spec.series);
    case 'totals':
      return totals(rows, spec.columns);
  }
}
