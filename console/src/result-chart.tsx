// A query result as a chart, when its analytic declares an insights shape: a `series` insight
// as lines (its x and series as the gateway shaped them), any other shape as bars of the rows'
// numeric columns against their label column (the `key` column of a keyed insight), optionally
// one chart per numeric column so each has an axis of its own.
import { useMemo } from 'react';
import { Chart, type ChartSeries } from './chart.js';

interface Column {
  readonly name: string;
  readonly type: string;
}

export interface ResultLike {
  readonly results: readonly Record<string, unknown>[];
  readonly columns: readonly Column[];
  readonly insights?: unknown;
}

const numeric = (v: unknown): number | null =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : null;

const NUMERIC_TYPES = new Set(['integer', 'number', 'decimal', 'bigint']);

export function ResultChart({
  spec,
  result,
  title,
  onePerMeasure = false,
}: {
  readonly spec: unknown;
  readonly result: ResultLike;
  readonly title: string;
  /**
   * Bars of several numeric columns as one chart each, every one on its own axis: orders (~2k)
   * beside revenue (~300k) on one axis would look flat.
   */
  readonly onePerMeasure?: boolean;
}) {
  const chart = useMemo(() => {
    const shape =
      spec !== null && typeof spec === 'object' ? (spec as { shape?: unknown; key?: unknown }) : undefined;
    if (shape === undefined) return undefined;
    const insights = result.insights as
      | { x?: unknown[]; series?: { name: string; data: unknown[] }[] }
      | undefined;
    if (shape.shape === 'series' && Array.isArray(insights?.x) && Array.isArray(insights?.series)) {
      return {
        kind: 'lines' as const,
        labels: insights.x.map((x) => String(x)),
        series: insights.series.map(
          (s): ChartSeries => ({ name: String(s.name), values: s.data.map(numeric) }),
        ),
      };
    }
    const labelColumn =
      (typeof shape.key === 'string' ? shape.key : undefined) ??
      result.columns.find((c) => !NUMERIC_TYPES.has(c.type))?.name;
    const valueColumns = result.columns
      .filter((c) => NUMERIC_TYPES.has(c.type) && c.name !== labelColumn)
      .slice(0, 3);
    if (valueColumns.length === 0) return undefined;
    return {
      kind: 'bars' as const,
      labels: result.results.map((row, i) =>
        labelColumn === undefined ? String(i + 1) : String(row[labelColumn] ?? ''),
      ),
      series: valueColumns.map(
        (c): ChartSeries => ({ name: c.name, values: result.results.map((row) => numeric(row[c.name])) }),
      ),
    };
  }, [spec, result]);
  if (chart === undefined) return null;
  if (onePerMeasure && chart.kind === 'bars' && chart.series.length > 1) {
    return (
      <div className="chart-grid" data-testid="charts-per-measure">
        {chart.series.map((s) => (
          <figure key={s.name}>
            <figcaption>{s.name}</figcaption>
            <Chart
              title={`${title}: ${s.name}`}
              kind="bars"
              labels={chart.labels}
              series={[s]}
              height={200}
            />
          </figure>
        ))}
      </div>
    );
  }
  return <Chart title={title} kind={chart.kind} labels={chart.labels} series={chart.series} />;
}
