// Drawing the allocations chart: each block in its stack's colour (grey without a stack), the
// summed smaller blocks pale on top of each column.
import type { Bands } from '../types';
import { byteAxis } from '../ui/canvas';
import { ticks, type Frame } from '../ui/plot';
import { columnRects, xTicks, type BandScale } from './allocations-layout';

/** A distinct hue per stack id (golden angle). */
const hue = (n: number) => (n * 137.508) % 360;

export function drawBands(g: CanvasRenderingContext2D, b: Bands, s: BandScale, f: Frame) {
  g.clearRect(0, 0, f.w, f.h);
  byteAxis(g, f, s.y, ticks(s.y.top, 4));
  for (const t of xTicks(b, s, f)) g.fillText(t.label, t.x, f.h - 6);
  for (let col = 0; col < s.cols; col++) {
    for (const r of columnRects(b, col, s, f)) {
      const stack = r.block === null ? null : b.blocks[r.block].stack;
      g.fillStyle = r.block === null ? '#cbd5e1' : stack === null ? '#94a3b8' : `hsl(${hue(stack)} 65% 58%)`;
      g.fillRect(r.x, r.top, Math.max(1, r.w), Math.max(0.5, r.bottom - r.top));
    }
  }
}
