// Charts, drawn by uPlot (a maintained, small canvas chart library): bars for values per label
// (credits per day, earnings per analytic, a keyed result) and lines for a series insight. Labels
// and names are drawn on a canvas or set as text, never parsed as HTML.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface ChartSeries {
  readonly name: string;
  readonly values: readonly (number | null)[];
}

export interface ChartProps {
  /** What the chart shows, for screen readers (the data is also in a table next to it). */
  readonly title: string;
  /** One label per point on the x axis. */
  readonly labels: readonly string[];
  readonly series: readonly ChartSeries[];
  readonly kind?: 'bars' | 'lines';
  readonly height?: number;
}

const COLOURS = ['#1f5fbf', '#c2410c', '#15803d', '#7e22ce', '#b91c1c', '#0e7490'];

export function Chart({ title, labels, series, kind = 'bars', height = 240 }: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = host.current;
    if (element === null || labels.length === 0 || series.length === 0) return;
    const xs = labels.map((_, i) => i);
    const bars =
      kind === 'bars' ? uPlot.paths.bars?.({ size: [0.7 / Math.max(1, series.length), 60] }) : undefined;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height,
        legend: { show: series.length > 1 },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, range: [-0.6, Math.max(0, labels.length - 1) + 0.6] } },
        axes: [
          {
            values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? (labels[v] ?? '') : '')),
            // Every label when there is room (uPlot's default space: 50 px a tick), else every
            // 2nd, 5th… (with only [1], uPlot draws none at all once the labels are too dense).
            incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000],
          },
          // Room for labels such as 120,000 (uPlot's default cuts them).
          { size: 80 },
        ],
        series: [
          { label: 'x', value: (_u, v) => (v === null ? '' : (labels[v] ?? '')) },
          ...series.map((s, i) => ({
            label: s.name,
            stroke: COLOURS[i % COLOURS.length] as string,
            fill: kind === 'bars' ? `${COLOURS[i % COLOURS.length]}cc` : undefined,
            width: kind === 'bars' ? 0 : 2,
            ...(bars === undefined ? {} : { paths: bars }),
            points: { show: kind === 'lines' },
          })),
        ],
      },
      [xs, ...series.map((s) => [...s.values])] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [labels, series, kind, height]);
  return <div className="chart" role="img" aria-label={title} ref={host} data-testid="chart" />;
}
