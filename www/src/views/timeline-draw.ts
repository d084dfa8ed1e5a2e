// Drawing the timeline: reserved as an area, active and requested as steps, allocated as its
// min..max band per column with the max as a step line, then markers, selection and cursor.
import type { Timeline } from '../generated/answers';
import { byteAxis, vline } from '../ui/canvas';
import { byteTicks, yScaleTo, type Frame, type YScale } from '../ui/plot';
import { categoryColor } from '../ui/categories-palette';
import {
  columnEdges,
  groupLabels,
  labelLeft,
  stepPoints,
  xTicks,
  type StackColumn,
  type XScale,
} from './timeline-layout';
import { ROW_H, rowTop, type Band, type BandLayout } from './phases-layout';

export const COLORS = {
  reserved: '#cbd5e1',
  active: '#f59e0b',
  allocated: '#2563eb',
  requested: '#16a34a',
  select: '#dc2626',
  oom: '#dc2626',
  snapshot: '#7c3aed',
  annotation: '#0d9488',
  peak: '#1d4ed8',
  reservedPeak: '#64748b',
};

export interface Marker {
  index: number;
  kind: 'oom' | 'snapshot' | 'annotation' | 'peak' | 'reservedPeak';
  label?: string;
  /** Annotations summarised into this marker (1 when absent). */
  count?: number;
}

export interface TimelineScene {
  data: Timeline;
  frame: Frame;
  x: XScale;
  from: number;
  to: number;
  byTime: boolean;
  /** The trace's first timestamp (µs): times on the axis count from it. */
  origin: number | null;
  markers: Marker[];
  selected: number | null;
  hover: number | null;
  /** Events where a step starts (thin lines across the plot). */
  steps: number[];
  /** Active memory by category as stacked areas, instead of the allocated and requested lines. */
  stack: { columns: StackColumn[]; names: string[] } | null;
  /** Reserved and allocated only, the peaks marked without labels (the Overview's small chart). */
  compact?: boolean;
}

export function drawTimeline(g: CanvasRenderingContext2D, s: TimelineScene) {
  const { data, frame: f, x } = s;
  g.clearRect(0, 0, f.w, f.h);
  if (!data.index.length) return;
  const yt = byteTicks(Math.max(...data.reserved_max, ...data.active_max));
  const y = yScaleTo(yt[yt.length - 1].value, f);
  byteAxis(g, f, y, yt, '#e2e8f0');
  g.fillStyle = '#64748b';
  for (const t of xTicks(data, s.from, s.to, f, s.byTime, s.origin)) {
    const w = g.measureText(t.label).width;
    g.fillText(t.label, labelLeft(t.x, w, f.pad.l - 8, f.w - 2), f.h - 8);
  }
  // Each bucket stands from its first event to the next bucket's (columnEdges): the lines are
  // steps over these columns on either axis, in event order.
  const edges = columnEdges(data, x, s.from, s.to, f);
  const { x0, x1 } = edges;
  // Reserved as a filled area.
  g.fillStyle = COLORS.reserved;
  g.beginPath();
  g.moveTo(x0[0], y.y(0));
  for (const [px, v] of stepPoints(data.reserved_max, edges)) g.lineTo(px, y.y(v));
  g.lineTo(x1[x1.length - 1], y.y(0));
  g.fill();
  const steps = (vals: number[], color: string, width: number) => {
    g.strokeStyle = color;
    g.lineWidth = width;
    g.beginPath();
    stepPoints(vals, edges).forEach(([px, v], k) => (k ? g.lineTo(px, y.y(v)) : g.moveTo(px, y.y(v))));
    g.stroke();
  };
  if (s.stack) {
    // By category: the stack's top is the active counter at each column's sampled event.
    drawStack(g, s.stack.columns, s.stack.names, y);
    // Dark, so that it stands out against the activation area (the same hue as the active line).
    steps(data.active_max, '#0f172a', 1);
  } else {
    if (!s.compact) steps(data.active_max, COLORS.active, 1.5);
    // Allocated: the min..max band of each column, so no spike is lost.
    g.fillStyle = COLORS.allocated + '55';
    data.allocated_max.forEach((v, k) =>
      g.fillRect(x0[k], y.y(v), Math.max(1, x1[k] - x0[k]), Math.max(1, y.y(data.allocated_min[k]) - y.y(v))),
    );
    if (!s.compact) steps(data.requested_max, COLORS.requested, 1);
    steps(data.allocated_max, COLORS.allocated, 1.8);
  }
  g.lineWidth = 1;
  const [top, bottom] = [f.pad.t, f.h - f.pad.b];
  const right = f.w - f.pad.r;
  g.font = '11px system-ui, sans-serif';
  g.setLineDash([2, 3]);
  for (const e of s.steps) vline(g, x.xOf(e), top, bottom, STEP_LINE + '99', 1);
  g.setLineDash([]);
  const visible = s.markers.filter((m) => m.index >= s.from && m.index <= s.to);
  // Lines first, then the labels: annotations grouped so that no two labels overlap.
  for (const m of visible) {
    g.setLineDash(m.kind === 'oom' || m.kind === 'peak' ? [] : m.kind === 'reservedPeak' ? [6, 3] : [3, 3]);
    vline(g, x.xOf(m.index), top, bottom, COLORS[m.kind], m.kind === 'peak' ? 1.5 : 1);
    g.setLineDash([]);
  }
  const label = (kind: Marker['kind'], row: number) =>
    groupLabels(
      visible.filter((m) => m.kind === kind).map((m) => ({ x: x.xOf(m.index), label: m.label ?? kind })),
      (t) => g.measureText(t).width,
      right,
    ).forEach((grp) => {
      g.fillStyle = '#ffffffcc';
      g.fillRect(grp.left - 1, top + row - 10, grp.width + 2, 13);
      g.fillStyle = COLORS[kind];
      g.fillText(grp.text, grp.left, top + row);
    });
  if (!s.compact) {
    label('oom', 10);
    label('peak', 22);
    label('reservedPeak', 34);
    label('annotation', 46);
  }
  for (const m of visible.filter((m) => m.kind === 'peak')) {
    // A triangle on the allocated peak, at the top of the plot.
    const mx = x.xOf(m.index);
    g.fillStyle = COLORS.peak;
    g.beginPath();
    g.moveTo(mx - 5, top);
    g.lineTo(mx + 5, top);
    g.lineTo(mx, top + 7);
    g.fill();
  }
  if (s.selected !== null && s.selected >= s.from && s.selected <= s.to)
    vline(g, x.xOf(s.selected), top, bottom, COLORS.select, 2);
  if (s.hover !== null) vline(g, x.xOf(s.hover), top, bottom, '#0f172a55');
}

/** Phase runs by name, ranges by group (light: their labels are dark). */
export const PHASE_COLORS: Record<string, string> = {
  forward: '#93c5fd',
  backward: '#fdba74',
  optimizer: '#f9a8d4',
  data: '#86efac',
  setup: '#c4b5fd',
  unknown: '#e2e8f0',
};
export const RANGE_COLORS: Record<string, string> = {
  step: '#cbd5e1',
  optimizer: '#fbcfe8',
  data: '#bbf7d0',
  framework: '#e5e7eb',
  compiled: '#ddd6fe',
  user: '#fde68a',
};
export const STEP_LINE = '#475569';

export const bandColor = (b: Band) =>
  (b.span.kind === 'run' ? PHASE_COLORS[b.span.name] : RANGE_COLORS[b.span.group]) ?? '#e2e8f0';

/** The phase bands (row 0: runs, then range lanes), step boundaries and the selection. */
export function drawBands(
  g: CanvasRenderingContext2D,
  f: Frame,
  layout: BandLayout,
  steps: number[],
  x: XScale,
  selected: number | null,
  hover: Band | null,
) {
  g.clearRect(0, 0, f.w, f.h);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  for (const b of layout.bands) {
    const y = rowTop(b.row);
    g.fillStyle = bandColor(b);
    g.fillRect(b.x0, y, b.x1 - b.x0, ROW_H - 2);
    if (b === hover) {
      g.strokeStyle = '#0f172a';
      g.strokeRect(b.x0 + 0.5, y + 0.5, b.x1 - b.x0 - 1, ROW_H - 3);
    }
    if (b.label) {
      g.fillStyle = '#0f172a';
      g.fillText(b.label, b.labelX, y + (ROW_H - 2) / 2 + 0.5);
    }
  }
  g.textBaseline = 'alphabetic';
  for (const e of steps) vline(g, x.xOf(e), 0, f.h, STEP_LINE, 1);
  if (selected !== null) vline(g, x.xOf(selected), 0, f.h, COLORS.select, 2);
}

/** Stacked areas of the active memory by category (colors from the shared palette). */
export function drawStack(g: CanvasRenderingContext2D, cols: StackColumn[], names: string[], y: YScale) {
  names.forEach((name, c) => {
    g.fillStyle = categoryColor(name);
    g.beginPath();
    cols.forEach((col, k) => {
      const top = y.y(col.upper[c]);
      if (k === 0) g.moveTo(col.x0, top);
      else g.lineTo(col.x0, top);
      g.lineTo(col.x1, top);
    });
    for (let k = cols.length - 1; k >= 0; k--) {
      const bottom = y.y(cols[k].lower[c]);
      g.lineTo(cols[k].x1, bottom);
      g.lineTo(cols[k].x0, bottom);
    }
    g.closePath();
    g.fill();
  });
}
