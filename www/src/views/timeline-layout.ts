// Timeline geometry (pure: no DOM; tests/unit): which bucket holds an event, the x scale by event
// index or by wall-clock time, and the axis ticks. The engine sends one bucket per pixel column.
import type { Timeline } from '../types';
import { int } from '../ui/format';
import { plotWidth, type Frame, type Pad } from '../ui/plot';

export const PAD: Pad = { l: 72, r: 12, t: 10, b: 26 };

/** The bucket holding event i: the last one starting at or before i (0 before the first; -1 if none). */
export function bucketAt(index: number[], i: number): number {
  if (!index.length) return -1;
  let lo = 0;
  let hi = index.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first and last event of bucket k. */
export function bucketEvents(t: Timeline, k: number): [number, number] {
  return [t.index[k], k + 1 < t.index.length ? t.index[k + 1] - 1 : t.to];
}

/** The time of event i, interpolated between bucket starts; null without timestamps. */
export function timeOf(t: Timeline, i: number): number | null {
  const k = bucketAt(t.index, i);
  if (k < 0 || !t.time_us.length) return null;
  const next = k + 1 < t.index.length;
  const t0 = t.time_us[k];
  const t1 = next ? t.time_us[k + 1] : t0;
  if (t0 === null || t1 === null) return null;
  const span = (next ? t.index[k + 1] : t.index[k] + 1) - t.index[k];
  return t0 + ((t1 - t0) * (i - t.index[k])) / Math.max(1, span);
}

export interface XScale {
  xOf(i: number): number;
  /** The event at x (by time: the last bucket start left of x). */
  iOf(x: number): number;
}

/**
 * The x scale of the window from..to: by event index, or by wall-clock time when `byTime` and the
 * buckets carry increasing timestamps.
 */
export function xScale(t: Timeline | null, from: number, to: number, f: Frame, byTime: boolean): XScale {
  const w = plotWidth(f);
  const byIndex: XScale = {
    xOf: (i) => f.pad.l + ((i - from) / Math.max(1, to - from)) * w,
    iOf: (x) => Math.round(from + ((x - f.pad.l) / w) * (to - from)),
  };
  const [a, b] = [t?.time_us[0] ?? null, t?.time_us.at(-1) ?? null];
  if (!byTime || !t || !t.index.length || a === null || b === null || b <= a) return byIndex;
  const xOf = (i: number) => {
    const ti = timeOf(t, i);
    return ti === null ? byIndex.xOf(i) : f.pad.l + ((ti - a) / (b - a)) * w;
  };
  const iOf = (x: number) => {
    let best = t.index[0];
    for (const i of t.index) {
      if (xOf(i) > x) break;
      best = i;
    }
    return best;
  };
  return { xOf, iOf };
}

/**
 * `n + 1` labels evenly along the x axis: event indices, or milliseconds since the first bucket
 * when `byTime` (their x keeps the text inside the plot).
 */
export function xTicks(t: Timeline | null, from: number, to: number, f: Frame, byTime: boolean, n = 5) {
  const [a, b] = [t?.time_us[0] ?? null, t?.time_us.at(-1) ?? null];
  return Array.from({ length: n + 1 }, (_, k) => {
    const x = f.pad.l + (plotWidth(f) / n) * k;
    const label =
      byTime && a !== null && b !== null
        ? `+${((((b - a) / n) * k) / 1e3).toFixed(1)} ms`
        : int(Math.round(from + ((to - from) / n) * k));
    return { x: Math.min(f.w - 60, Math.max(f.pad.l, x - 10)), label };
  });
}

/** The window of `span` events centred on `event`, inside 0..total-1. */
export function centredWindow(event: number, total: number, span: number): [number, number] {
  const from = Math.max(0, Math.round(event - span / 2));
  return [from, Math.min(total - 1, from + span)];
}
