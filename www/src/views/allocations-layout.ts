// Allocations geometry (pure: no DOM; tests/unit): one pixel column per engine column, each
// column's blocks stacked bottom up in the engine's order with the summed rest on top, hit-testing.
import type { Bands } from '../types';
import { int } from '../ui/format';
import { byteTicks, niceStep, plotWidth, yScaleTo, type Frame, type Pad, type YScale } from '../ui/plot';

export const PAD: Pad = { l: 72, r: 12, t: 8, b: 22 };

export interface BandScale {
  cols: number;
  colW: number;
  y: YScale;
  /** The byte axis: round values, the last one the top of the plot. */
  ticks: { value: number; label: string }[];
}

export function bandScale(b: Bands, f: Frame): BandScale {
  const cols = b.column_event.length;
  const ticks = byteTicks(Math.max(0, ...b.active));
  return { cols, colW: plotWidth(f) / Math.max(1, cols), y: yScaleTo(ticks[ticks.length - 1].value, f), ticks };
}

/** A block's rectangle in CSS pixels (`top` < `bottom`); `block` indexes `blocks`, null = the rest. */
export interface BandRect {
  x: number;
  w: number;
  top: number;
  bottom: number;
  block: number | null;
}

/** The rectangles of column `col`, bottom up. */
export function columnRects(b: Bands, col: number, s: BandScale, f: Frame): BandRect[] {
  const x = f.pad.l + col * s.colW;
  const rects: BandRect[] = [];
  let top = 0;
  for (let e = b.column_start[col]; e < b.column_start[col + 1]; e++) {
    const block = b.entry_block[e];
    const bottom = b.entry_bottom[e];
    top = bottom + b.blocks[block].size;
    rects.push({ x, w: s.colW, top: s.y.y(top), bottom: s.y.y(bottom), block });
  }
  const rest = b.other_bytes[col];
  if (rest > 0) rects.push({ x, w: s.colW, top: s.y.y(top + rest), bottom: s.y.y(top), block: null });
  return rects;
}

/** The column under x, or -1 outside the plot. */
export function columnAt(x: number, s: BandScale, f: Frame): number {
  const col = Math.floor((x - f.pad.l) / s.colW);
  return col >= 0 && col < s.cols ? col : -1;
}

/** The rectangle under (x, y), or null. */
export function bandAt(b: Bands, s: BandScale, f: Frame, x: number, y: number): BandRect | null {
  const col = columnAt(x, s, f);
  if (col < 0) return null;
  return columnRects(b, col, s, f).find((r) => y >= r.top && y <= r.bottom) ?? null;
}

/** The event of the column nearest to x (for zooming around the cursor). */
export function eventNear(b: Bands, s: BandScale, f: Frame, x: number): number | null {
  if (!s.cols) return null;
  return b.column_event[Math.max(0, Math.min(s.cols - 1, Math.floor((x - f.pad.l) / s.colW)))];
}

/**
 * About `n` event labels at round values (steps of 1, 2 or 5 × 10^k, the Timeline's `niceStep`)
 * along the x axis. A value between two columns' events stands between their columns (linearly);
 * a one-event window has one label.
 */
export function xTicks(b: Bands, s: BandScale, f: Frame, n = 5) {
  const out: { x: number; label: string }[] = [];
  if (!s.cols) return out;
  const ev = b.column_event;
  const [first, last] = [ev[0], ev[s.cols - 1]];
  if (last <= first) return [{ x: f.pad.l, label: int(first) }];
  const step = Math.max(1, niceStep((last - first) / n, [1, 2, 5]));
  let col = 0;
  for (let v = Math.ceil(first / step) * step; v <= last; v += step) {
    while (col + 1 < s.cols && ev[col + 1] <= v) col++;
    const next = col + 1 < s.cols ? ev[col + 1] : ev[col];
    const frac = next > ev[col] ? (v - ev[col]) / (next - ev[col]) : 0;
    out.push({ x: f.pad.l + (col + frac) * s.colW, label: int(v) });
  }
  return out;
}
