// Drawing the allocations chart: each block in its stack's colour (grey without a stack), the
// summed smaller blocks pale on top of each column.
import type { Bands } from '../types';
import { byteAxis, vline } from '../ui/canvas';
import { type Frame } from '../ui/plot';
import { columnRects, xTicks, type BandScale } from './allocations-layout';
import { labelLeft } from './timeline-layout';

/** A distinct hue per stack id (golden angle). */
const hue = (n: number) => (n * 137.508) % 360;

/** The chart, with a line at the selected event when it lies in the window. */
export function drawBands(
  g: CanvasRenderingContext2D,
  b: Bands,
  s: BandScale,
  f: Frame,
  selected: number | null = null,
) {
  g.clearRect(0, 0, f.w, f.h);
  byteAxis(g, f, s.y, s.ticks);
  g.fillStyle = '#64748b';
  for (const t of xTicks(b, s, f)) {
    const w = g.measureText(t.label).width;
    g.fillText(t.label, labelLeft(t.x, w, f.pad.l - 8, f.w - 2), f.h - 6);
  }
  for (let col = 0; col < s.cols; col++) {
    for (const r of columnRects(b, col, s, f)) {
      const stack = r.block === null ? null : b.blocks[r.block].stack;
      g.fillStyle = r.block === null ? '#cbd5e1' : stack === null ? '#94a3b8' : `hsl(${hue(stack)} 65% 58%)`;
      g.fillRect(r.x, r.top, Math.max(1, r.w), Math.max(0.5, r.bottom - r.top));
    }
  }
  if (selected !== null && s.cols && selected >= b.column_event[0] && selected <= b.column_event[s.cols - 1]) {
    // The last column at or before the event.
    let col = 0;
    while (col + 1 < s.cols && b.column_event[col + 1] <= selected) col++;
    vline(g, f.pad.l + (col + 0.5) * s.colW, f.pad.t, f.h - f.pad.b, '#dc2626', 2);
  }
}
