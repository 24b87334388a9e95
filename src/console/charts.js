/** Time-series line charts of the node stats, drawn by uPlot (served by the node from its npm package). */
import uPlot from './vendor/uplot.js';
import { el } from './elements.js';

const CHART_WIDTH = 480;
const CHART_HEIGHT = 200;

/** Colours of a chart's series, in order. */
const SERIES_COLOURS = ['#2b7bb9', '#d9822b', '#2e9e5b', '#b33f62'];

/**
 * A line chart over time in `container`: `title`, the `series` labels and the y-axis `unit`.
 * Returns `{update(times, ...values), destroy()}`; times are epoch ms.
 */
export function timeChart(container, { title, series, unit }) {
  const figure = el('figure', { class: 'chart', 'aria-label': title });
  container.append(figure);
  const chart = new uPlot(
    {
      title,
      width: CHART_WIDTH,
      height: CHART_HEIGHT,
      scales: { x: { time: true }, y: { range: (_chart, min, max) => [0, Math.max(max ?? 0, min ?? 0, 1) * 1.1] } },
      axes: [{}, { label: unit, size: 56 }],
      series: [{}, ...series.map((label, index) => ({ label, stroke: SERIES_COLOURS[index % SERIES_COLOURS.length], width: 2, points: { show: true, size: 4 } }))],
    },
    [[], ...series.map(() => [])],
    figure,
  );
  return {
    update(times, ...values) {
      chart.setData([times.map((time) => time / 1000), ...values]);
    },
    destroy() {
      chart.destroy();
      figure.remove();
    },
  };
}
