// Allocations geometry (pure: no DOM; tests/unit): one pixel column per engine column, each
// column's blocks stacked bottom up in the engine's order with the summed rest on top, hit-testing.
import type { Bands } from '../generated/answers';

/**
 * The engine's Bands with its long arrays as the worker hands them over: typed arrays (the
 * worker parses the engine's JSON and transfers them, so the page parses nothing), or plain
 * arrays (tests, the JSON itself).
 */
export type BandsData = Omit<
  Bands,
  'column_event' | 'column_start' | 'entry_block' | 'entry_bottom' | 'other_bytes' | 'active'
> & {
  column_event: ArrayLike<number>;
  column_start: ArrayLike<number>;
  entry_block: ArrayLike<number>;
  entry_bottom: ArrayLike<number>;
  other_bytes: ArrayLike<number>;
  active: ArrayLike<number>;
  /** The plot's pixels, painted by the worker with the answer or by the last draw (`paintedFor`). */
  painted?: PaintedBands;
};

/** What `paintBands` made, and for which frame (CSS pixels) and device pixel ratio. */
export interface PaintedBands {
  width: number;
  height: number;
  pixels: Uint32Array;
  frame: Frame;
  ratio: number;
}
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

export function bandScale(b: BandsData, f: Frame): BandScale {
  const cols = b.column_event.length;
  let most = 0;
  for (let i = 0; i < b.active.length; i++) most = Math.max(most, b.active[i]);
  const ticks = byteTicks(most);
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
export function columnRects(b: BandsData, col: number, s: BandScale, f: Frame): BandRect[] {
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
export function bandAt(b: BandsData, s: BandScale, f: Frame, x: number, y: number): BandRect | null {
  const col = columnAt(x, s, f);
  if (col < 0) return null;
  return columnRects(b, col, s, f).find((r) => y >= r.top && y <= r.bottom) ?? null;
}

/** The event of the column nearest to x (for zooming around the cursor). */
export function eventNear(b: BandsData, s: BandScale, f: Frame, x: number): number | null {
  if (!s.cols) return null;
  return b.column_event[Math.max(0, Math.min(s.cols - 1, Math.floor((x - f.pad.l) / s.colW)))];
}

/**
 * About `n` event labels at round values (steps of 1, 2 or 5 × 10^k, the Timeline's `niceStep`)
 * along the x axis. A value between two columns' events stands between their columns (linearly);
 * a one-event window has one label.
 */
export function xTicks(b: BandsData, s: BandScale, f: Frame, n = 5) {
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

const sameFrame = (a: Frame, b: Frame) =>
  a.w === b.w &&
  a.h === b.h &&
  a.pad.l === b.pad.l &&
  a.pad.r === b.pad.r &&
  a.pad.t === b.pad.t &&
  a.pad.b === b.pad.b;

/**
 * The plot's pixels for frame `f` at `ratio`: those painted already when they fit it (the worker's,
 * or the last draw's), else painted now and kept for the next draw (a selection redrawn).
 */
export function paintedFor(b: BandsData, s: BandScale, f: Frame, ratio: number): PaintedBands {
  const p = b.painted;
  if (p && p.ratio === ratio && sameFrame(p.frame, f)) return p;
  return (b.painted = { ...paintBands(b, s, f, ratio), frame: { ...f, pad: { ...f.pad } }, ratio });
}

/** A distinct hue per stack id (golden angle). */
export const stackHue = (n: number) => (n * 137.508) % 360;

/** hsl(h s% l%) as 0xAABBGGRR, the byte order of an ImageData's pixels on little-endian machines. */
export function hslPixel(h: number, s: number, l: number): number {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return rgbPixel(f(0), f(8), f(4));
}

export const rgbPixel = (r: number, g: number, b: number) => ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;

/** The summed smaller blocks, a block without a stack. */
export const REST_PIXEL = rgbPixel(0xcb, 0xd5, 0xe1);
export const NO_STACK_PIXEL = rgbPixel(0x94, 0xa3, 0xb8);

/** A block's colour: its stack's hue, grey without a stack. */
export function blockPixel(stack: number | null, cache: Map<number, number>): number {
  if (stack === null) return NO_STACK_PIXEL;
  let p = cache.get(stack);
  if (p === undefined) cache.set(stack, (p = hslPixel(stackHue(stack), 0.65, 0.58)));
  return p;
}

/**
 * The plot's pixels (device pixels: `ratio` per CSS pixel), row by row from the top, 0 where
 * nothing is drawn: every column's blocks bottom up, each at least one pixel tall, the summed
 * rest on top. One pass over the entries, each filling only its own pixels: a window of a
 * million entries paints in milliseconds, where a fillRect per entry took seconds.
 */
export function paintBands(
  b: BandsData,
  s: BandScale,
  f: Frame,
  ratio: number,
): { width: number; height: number; pixels: Uint32Array } {
  const width = Math.max(1, Math.round(plotWidth(f) * ratio));
  const height = Math.max(1, Math.round((f.h - f.pad.t - f.pad.b) * ratio));
  const pixels = new Uint32Array(width * height);
  const colours = new Map<number, number>();
  const blockColour = b.blocks.map((x) => blockPixel(x.stack, colours));
  // Device rows from the top: bytes v at (plot height − v / top × plot height) × ratio.
  const full = (f.h - f.pad.t - f.pad.b) * ratio;
  const perByte = full / s.y.top;
  const fill = (x0: number, x1: number, top: number, bottom: number, p: number) => {
    const r0 = Math.min(height - 1, Math.max(0, Math.floor(full - top * perByte)));
    const r1 = Math.min(height, Math.max(Math.ceil(full - bottom * perByte), r0 + 1));
    if (x1 - x0 === 1) for (let o = r0 * width + x0, r = r0; r < r1; r++, o += width) pixels[o] = p;
    else for (let r = r0; r < r1; r++) pixels.fill(p, r * width + x0, r * width + x1);
  };
  for (let col = 0; col < s.cols; col++) {
    const x0 = Math.min(width - 1, Math.floor(col * s.colW * ratio));
    const x1 = Math.min(width, Math.max(x0 + 1, Math.floor((col + 1) * s.colW * ratio)));
    let top = 0;
    for (let e = b.column_start[col], end = b.column_start[col + 1]; e < end; e++) {
      const block = b.entry_block[e];
      const bottom = b.entry_bottom[e];
      top = bottom + b.blocks[block].size;
      fill(x0, x1, top, bottom, blockColour[block]);
    }
    const rest = b.other_bytes[col];
    if (rest > 0) fill(x0, x1, top + rest, top, REST_PIXEL);
  }
  return { width, height, pixels };
}
