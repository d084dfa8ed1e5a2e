// Drawing the timeline: reserved as an area, active and requested as steps, allocated as its
// min..max band per column with the max as a step line, then markers, selection and cursor.
import type { Timeline } from '../types';
import { byteAxis, vline } from '../ui/canvas';
import { ticks, yScale, type Frame } from '../ui/plot';
import { xTicks, type XScale } from './timeline-layout';

export const COLORS = {
  reserved: '#cbd5e1',
  active: '#f59e0b',
  allocated: '#2563eb',
  requested: '#16a34a',
  select: '#dc2626',
  oom: '#dc2626',
  snapshot: '#7c3aed',
  annotation: '#0d9488',
};

export interface Marker {
  index: number;
  kind: 'oom' | 'snapshot' | 'annotation';
  label?: string;
}

export interface TimelineScene {
  data: Timeline;
  frame: Frame;
  x: XScale;
  from: number;
  to: number;
  byTime: boolean;
  markers: Marker[];
  selected: number | null;
  hover: number | null;
}

export function drawTimeline(g: CanvasRenderingContext2D, s: TimelineScene) {
  const { data, frame: f, x } = s;
  g.clearRect(0, 0, f.w, f.h);
  if (!data.index.length) return;
  const y = yScale(Math.max(...data.reserved_max, ...data.active_max), f);
  byteAxis(g, f, y, ticks(y.top, 4), '#e2e8f0');
  for (const t of xTicks(data, s.from, s.to, f, s.byTime)) g.fillText(t.label, t.x, f.h - 8);
  const xs = data.index.map((i) => x.xOf(i));
  const step = xs.length > 1 ? xs[1] - xs[0] : f.w - f.pad.l - f.pad.r;
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
  for (const m of s.markers) {
    if (m.index < s.from || m.index > s.to) continue;
    const mx = x.xOf(m.index);
    g.setLineDash(m.kind === 'oom' ? [] : [3, 3]);
    vline(g, mx, top, bottom, COLORS[m.kind]);
    g.setLineDash([]);
    g.fillStyle = COLORS[m.kind];
    if (m.kind === 'oom') g.fillText('OOM', mx + 3, top + 10);
    else if (m.kind === 'annotation' && m.label) g.fillText(m.label, mx + 3, top + 22);
  }
  if (s.selected !== null && s.selected >= s.from && s.selected <= s.to)
    vline(g, x.xOf(s.selected), top, bottom, COLORS.select, 2);
  if (s.hover !== null) vline(g, x.xOf(s.hover), top, bottom, '#0f172a55');
}
