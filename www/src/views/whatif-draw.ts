// Drawing the What if chart: the recorded reserved bytes as a grey area (as in the Timeline), the
// simulated ones as a blue step line, the device memory when known, and markers at both reserved
// peaks and at the simulated OOM.
import type { LinePoint } from '../generated/answers';
import { byteAxis, vline } from '../ui/canvas';
import { byteTicks, yScaleTo, type Frame } from '../ui/plot';
import { groupLabels, labelLeft, xScale, xTicks } from './timeline-layout';
import { chartMax, columnSpans } from './whatif-layout';

export const WHATIF_COLORS = {
  recorded: '#cbd5e1',
  recordedLine: '#64748b',
  simulated: '#2563eb',
  oom: '#dc2626',
  capacity: '#b45309',
  simPeak: '#1d4ed8',
  recPeak: '#475569',
};

export interface WhatIfMarker {
  index: number;
  kind: 'oom' | 'simPeak' | 'recPeak';
  label: string;
}

export interface WhatIfScene {
  points: LinePoint[];
  /** Events of the device (the x axis is 0..total-1). */
  total: number;
  frame: Frame;
  markers: WhatIfMarker[];
  capacity: number | null;
  hover: number | null;
}

/** The x scale of the chart (by event index, over every event). */
export const whatIfX = (total: number, f: Frame) => xScale(null, 0, Math.max(0, total - 1), f, false);

export function drawWhatIf(g: CanvasRenderingContext2D, s: WhatIfScene) {
  const f = s.frame;
  g.clearRect(0, 0, f.w, f.h);
  if (!s.points.length) return;
  const { max, capacityShown } = chartMax(s.points, s.capacity);
  const yt = byteTicks(max);
  const y = yScaleTo(yt[yt.length - 1].value, f);
  byteAxis(g, f, y, yt, '#e2e8f0');
  const x = whatIfX(s.total, f);
  const right = f.w - f.pad.r;
  g.fillStyle = '#64748b';
  for (const t of xTicks(null, 0, Math.max(0, s.total - 1), f, false)) {
    const w = g.measureText(t.label).width;
    g.fillText(t.label, labelLeft(t.x, w, f.pad.l - 8, f.w - 2), f.h - 8);
  }
  const cols = columnSpans(s.points, x.xOf, s.total, right);
  // Recorded: a filled area with its outline.
  g.fillStyle = WHATIF_COLORS.recorded;
  g.beginPath();
  g.moveTo(cols[0].x0, y.y(0));
  for (const c of cols) {
    g.lineTo(c.x0, y.y(c.p.recorded_max));
    g.lineTo(c.x1, y.y(c.p.recorded_max));
  }
  g.lineTo(cols[cols.length - 1].x1, y.y(0));
  g.fill();
  const steps = (value: (p: LinePoint) => number, color: string, width: number) => {
    g.strokeStyle = color;
    g.lineWidth = width;
    g.beginPath();
    cols.forEach((c, k) => {
      if (k === 0) g.moveTo(c.x0, y.y(value(c.p)));
      else g.lineTo(c.x0, y.y(value(c.p)));
      g.lineTo(c.x1, y.y(value(c.p)));
    });
    g.stroke();
    g.lineWidth = 1;
  };
  steps((p) => p.recorded_max, WHATIF_COLORS.recordedLine, 1);
  steps((p) => p.simulated_max, WHATIF_COLORS.simulated, 2);
  const [top, bottom] = [f.pad.t, f.h - f.pad.b];
  g.font = '11px system-ui, sans-serif';
  if (capacityShown && s.capacity !== null) {
    const cy = y.y(s.capacity);
    g.setLineDash([6, 4]);
    g.strokeStyle = WHATIF_COLORS.capacity;
    g.beginPath();
    g.moveTo(f.pad.l, cy);
    g.lineTo(right, cy);
    g.stroke();
    g.setLineDash([]);
  }
  for (const m of s.markers) {
    g.setLineDash(m.kind === 'recPeak' ? [6, 3] : []);
    vline(g, x.xOf(m.index), top, bottom, WHATIF_COLORS[m.kind], m.kind === 'oom' ? 2 : 1.5);
    g.setLineDash([]);
  }
  // Labels in rows by kind, grouped so that none overlaps another.
  const label = (kind: WhatIfMarker['kind'], row: number) =>
    groupLabels(
      s.markers.filter((m) => m.kind === kind).map((m) => ({ x: x.xOf(m.index), label: m.label })),
      (t) => g.measureText(t).width,
      right,
      320,
    ).forEach((grp) => {
      g.fillStyle = '#ffffffdd';
      g.fillRect(grp.left - 2, top + row - 10, grp.width + 4, 13);
      g.fillStyle = WHATIF_COLORS[kind];
      g.fillText(grp.text, grp.left, top + row);
    });
  label('oom', 12);
  label('simPeak', 26);
  label('recPeak', 40);
  if (s.hover !== null) vline(g, x.xOf(s.hover), top, bottom, '#0f172a55');
}
