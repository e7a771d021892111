/** Small line charts as standalone SVG (no dependencies): axes, ticks, one polyline per series, a legend. */

export interface Series {
  name: string;
  points: [number, number][];
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  /** Log-scale x axis (base 2), e.g. batch sizes. */
  logX?: boolean;
  /** Label for an x tick value (default: the number). */
  xTick?: (x: number) => string;
  /** x values to tick (default: five even steps, or the powers of 2 in range with logX). */
  xTicks?: number[];
  width?: number;
  height?: number;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2'];
const MARGIN = { left: 72, right: 40, top: 36, bottom: 52 };
const LEGEND_ROW = 18;

const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A "nice" step (1, 2 or 5 × 10^k) giving about `count` ticks over `span`. */
export const niceStep = (span: number, count = 5): number => {
  if (!(span > 0)) return 1;
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / magnitude;
  return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * magnitude;
};

const format = (v: number): string => {
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (abs >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  if (abs < 0.01) return v.toExponential(1);
  return `${+v.toPrecision(3)}`;
};

export const lineChart = (o: ChartOptions): string => {
  const width = o.width ?? 720;
  const plotHeight = o.height ?? 360;
  const height = plotHeight + 8 + o.series.length * LEGEND_ROW;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = plotHeight - MARGIN.top - MARGIN.bottom;
  const plotBottom = MARGIN.top + plotH;
  const all = o.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const tx = (x: number) => (o.logX ? Math.log2(x) : x);
  const xs = all.map(([x]) => tx(x));
  const xMin = xs.length ? Math.min(...xs) : 0;
  const xMax = xs.length ? Math.max(...xs) : 1;
  const yMaxRaw = all.length ? Math.max(...all.map(([, y]) => y)) : 1;
  const yStep = niceStep(yMaxRaw || 1);
  const yMax = Math.ceil((yMaxRaw || 1) / yStep) * yStep;
  const px = (x: number) => MARGIN.left + ((tx(x) - xMin) / (xMax - xMin || 1)) * plotW;
  const py = (y: number) => MARGIN.top + plotH - (y / yMax) * plotH;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escape(o.title)}</text>`,
  );
  for (let y = 0; y <= yMax + yStep / 2; y += yStep) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${MARGIN.left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${format(y)}</text>`,
    );
  }
  const xTicks =
    o.xTicks ??
    (o.logX
      ? Array.from({ length: Math.floor(xMax) - Math.ceil(xMin) + 1 }, (_, i) => 2 ** (Math.ceil(xMin) + i))
      : Array.from({ length: 6 }, (_, i) => xMin + ((xMax - xMin) * i) / 5));
  for (const x of xTicks) {
    parts.push(
      `<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 4}" stroke="#333"/>`,
      `<text x="${px(x).toFixed(1)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${escape(o.xTick ? o.xTick(x) : format(x))}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${plotHeight - 10}" text-anchor="middle">${escape(o.xLabel)}</text>`,
    `<text transform="translate(16 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(o.yLabel)}</text>`,
  );
  o.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
      ...pts.map(
        ([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${color}"/>`,
      ),
    );
  });
  // The legend goes under the chart, one series per row, so it never hides a line.
  o.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const y = plotBottom + MARGIN.bottom + 4 + i * LEGEND_ROW;
    parts.push(
      `<rect x="${MARGIN.left}" y="${y - 5}" width="14" height="3" fill="${color}"/>`,
      `<text x="${MARGIN.left + 20}" y="${y}">${escape(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
};
