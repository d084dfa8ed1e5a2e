// Drawing the timeline: reserved as an area, active and requested as steps, allocated as its
// min..max band per column with the max as a step line, then markers, selection and cursor.
import type { Timeline } from '../types';
import { byteAxis, vline } from '../ui/canvas';
import { byteTicks, yScaleTo, type Frame } from '../ui/plot';
import { groupLabels, labelLeft, xTicks, type XScale } from './timeline-layout';

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
  const xs = data.index.map((i) => x.xOf(i));
  // One event: a column of some width rather than a line of none.
  const step = xs.length > 1 ? xs[1] - xs[0] : Math.max(4, (f.w - f.pad.l - f.pad.r) / Math.max(1, s.to - s.from + 1));
  // Reserved as a filled area.
  g.fillStyle = COLORS.reserved;
  g.beginPath();
  g.moveTo(xs[0], y.y(0));
  data.reserved_max.forEach((v, k) => {
    g.lineTo(xs[k], y.y(v));
    g.lineTo(xs[k] + step, y.y(v));
  });
  g.lineTo(xs[xs.length - 1] + step, y.y(0));
  g.fill();
  const steps = (vals: number[], color: string, width: number) => {
    g.strokeStyle = color;
    g.lineWidth = width;
    g.beginPath();
    vals.forEach((v, k) => {
      if (k === 0) g.moveTo(xs[k], y.y(v));
      else g.lineTo(xs[k], y.y(v));
      g.lineTo(xs[k] + step, y.y(v));
    });
    g.stroke();
  };
  steps(data.active_max, COLORS.active, 1.5);
  // Allocated: the min..max band of each column, so no spike is lost.
  g.fillStyle = COLORS.allocated + '55';
  data.allocated_max.forEach((v, k) =>
    g.fillRect(xs[k], y.y(v), Math.max(1, step), Math.max(1, y.y(data.allocated_min[k]) - y.y(v))),
  );
  steps(data.requested_max, COLORS.requested, 1);
  steps(data.allocated_max, COLORS.allocated, 1.8);
  g.lineWidth = 1;
  const [top, bottom] = [f.pad.t, f.h - f.pad.b];
  const right = f.w - f.pad.r;
  g.font = '11px system-ui, sans-serif';
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
  label('oom', 10);
  label('peak', 22);
  label('reservedPeak', 34);
  label('annotation', 46);
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
