// Timeline geometry (pure: no DOM; tests/unit): which bucket holds an event, the x scale by event
// index or by wall-clock time, and the axis ticks. The engine sends one bucket per pixel column.
import type { Timeline } from '../generated/answers';
import { bytes, int, plural } from '../ui/format';
import { fitLabel, niceStep, plotWidth, type Frame, type Pad } from '../ui/plot';

export { niceStep };

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

/**
 * The time of each bucket for placing it on an axis: a bucket without a timestamp takes the one
 * before it (the first known one at the start), and a time earlier than the one before it is
 * raised to it, so that by time x never runs backwards. Null when no bucket has a timestamp.
 */
export function bucketTimes(t: Timeline): number[] | null {
  const cached = TIMES.get(t);
  if (cached !== undefined) return cached;
  const first = t.time_us.find((v) => v !== null);
  let out: number[] | null = null;
  if (first !== undefined && first !== null && t.time_us.length === t.index.length) {
    out = [];
    let last = first;
    for (const v of t.time_us) {
      if (v !== null && v > last) last = v;
      out.push(last);
    }
  }
  TIMES.set(t, out);
  return out;
}
const TIMES = new WeakMap<Timeline, number[] | null>();

/** The time of event i, interpolated between bucket starts; null without timestamps. */
export function timeOf(t: Timeline, i: number): number | null {
  const k = bucketAt(t.index, i);
  const times = bucketTimes(t);
  if (k < 0 || !times) return null;
  const next = k + 1 < t.index.length;
  const t0 = times[k];
  const t1 = next ? times[k + 1] : t0;
  const span = (next ? t.index[k + 1] : t.index[k] + 1) - t.index[k];
  return t0 + ((t1 - t0) * Math.max(0, i - t.index[k])) / Math.max(1, span);
}

export interface XScale {
  xOf(i: number): number;
  /** The event at x (by time: the last bucket start left of x). */
  iOf(x: number): number;
  /** Whether x is wall-clock time (false: the event index). */
  byTime: boolean;
}

/** The first and last time of the buckets (monotone, see bucketTimes), when they span some time. */
function timeSpan(t: Timeline | null): [number, number] | null {
  const times = t && t.index.length ? bucketTimes(t) : null;
  if (!times) return null;
  const [a, b] = [times[0], times[times.length - 1]];
  return b > a ? [a, b] : null;
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
    byTime: false,
  };
  const span = timeSpan(t);
  if (!byTime || !t || !span) return byIndex;
  const [a, b] = span;
  const xOf = (i: number) => f.pad.l + ((timeOf(t, i)! - a) / (b - a)) * w;
  const iOf = (x: number) => {
    // The last bucket starting at or left of x (bucket x is monotone).
    let lo = 0;
    let hi = t.index.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (xOf(t.index[mid]) <= x) lo = mid;
      else hi = mid - 1;
    }
    return t.index[lo];
  };
  return { xOf, iOf, byTime: true };
}

/**
 * Where each bucket is drawn: from its first event's x to the next bucket's (the last one as
 * wide as its events by index, at least a pixel), so that the columns tile the plot left to
 * right in event order on either axis. Every line of the chart is a step over these columns: a
 * column's value stands over its whole width, and no line runs diagonally between two columns.
 */
export function columnEdges(
  t: Timeline,
  x: XScale,
  from: number,
  to: number,
  f: Frame,
): { x0: number[]; x1: number[] } {
  const n = t.index.length;
  const x0 = t.index.map((i) => x.xOf(i));
  const x1: number[] = [];
  for (let k = 0; k + 1 < n; k++) x1.push(Math.max(x0[k], x0[k + 1]));
  if (n) {
    const last = t.index[n - 1];
    const perEvent = to > from ? plotWidth(f) / (to - from) : Math.max(4, plotWidth(f));
    const width = x.byTime ? 1 : (to + 1 - last) * perEvent;
    x1.push(x0[n - 1] + Math.max(1, Math.min(width, plotWidth(f))));
  }
  return { x0, x1 };
}

/**
 * A counter's line over the columns: for column k the points (x0[k], v[k]) and (x1[k], v[k]).
 * Consecutive points share their x (a jump between columns) or their value (a column): there is
 * no diagonal, and at the x of any event the line holds its bucket's value.
 */
export function stepPoints(vals: number[], edges: { x0: number[]; x1: number[] }): [number, number][] {
  const out: [number, number][] = [];
  vals.forEach((v, k) => out.push([edges.x0[k], v], [edges.x1[k], v]));
  return out;
}

export interface Tick {
  /** Where the value lies on the plot (the drawing centres its label there, inside the plot). */
  x: number;
  label: string;
}

/**
 * About `n` labels at round values along the x axis: event indices (steps of 1, 2 or 5 × 10^k),
 * or when `byTime` the time since `origin` (the trace's first event; default the first bucket) in
 * µs, ms or s (steps of 1, 2, 2.5 or 5 × 10^k). A one-event window has one label.
 */
export function xTicks(
  t: Timeline | null,
  from: number,
  to: number,
  f: Frame,
  byTime: boolean,
  origin: number | null = null,
  n = 5,
): Tick[] {
  const x = xScale(t, from, to, f, byTime);
  const span = timeSpan(t);
  if (byTime && t && span) {
    const [a, b] = span;
    const o = origin ?? a;
    const step = niceStep((b - a) / n, [1, 2, 2.5, 5]);
    const w = plotWidth(f);
    const out: Tick[] = [];
    for (let k = Math.ceil((a - o) / step - 1e-9); k * step <= b - o + 1e-9; k++)
      out.push({ x: f.pad.l + ((o + k * step - a) / (b - a)) * w, label: timeLabel(k * step, step) });
    return out;
  }
  if (to <= from) return [{ x: x.xOf(from), label: int(from) }];
  const step = Math.max(1, niceStep((to - from) / n, [1, 2, 5]));
  const out: Tick[] = [];
  for (let i = Math.ceil(from / step) * step; i <= to; i += step) out.push({ x: x.xOf(i), label: int(i) });
  return out;
}

/**
 * A time offset (µs) as an axis label in the unit its `step` calls for: "0", "250 ms", "7.5 s",
 * "40 µs"; at most the decimals the step needs.
 */
export function timeLabel(us: number, step: number): string {
  if (us === 0) return '0';
  const [div, unit] = step >= 1e5 ? [1e6, 's'] : step >= 100 ? [1e3, 'ms'] : [1, 'µs'];
  // As many decimals as the step has in that unit (0.25 s → 2, 2.5 ms → 1, 25 ms → 0).
  const decimals = (String(Number((step / div).toPrecision(6))).split('.')[1] ?? '').length;
  return `${Number((us / div).toFixed(Math.min(6, decimals)))} ${unit}`;
}

/** A label `width` wide centred on x, moved inside left..right. */
export function labelLeft(x: number, width: number, left: number, right: number): number {
  return Math.max(left, Math.min(right - width, x - width / 2));
}

export interface LabelGroup {
  /** The marker x of the group's first member. */
  x: number;
  /** Where the text starts (inside the plot, after the previous group). */
  left: number;
  /** The text as drawn: the first label, with "+N" for the others. */
  text: string;
  width: number;
  /** The members' labels, in x order. */
  labels: string[];
}

/**
 * Marker labels (annotations) that never overlap: each label starts just right of its marker
 * (or ends at the right edge), cut to `maxWidth`; a label that would run into the previous one
 * joins its group, which then reads "first label +N".
 */
export function groupLabels(
  items: { x: number; label: string }[],
  measure: (s: string) => number,
  right: number,
  maxWidth = 180,
  gap = 8,
): LabelGroup[] {
  const groups: LabelGroup[] = [];
  const layout = (x: number, labels: string[]): LabelGroup => {
    const more = labels.length > 1 ? ` +${labels.length - 1}` : '';
    const text = fitLabel(labels[0], maxWidth - measure(more), measure) + more;
    const width = measure(text);
    return { x, left: Math.min(x + 6, right - width), text, width, labels };
  };
  for (const it of [...items].sort((p, q) => p.x - q.x)) {
    groups.push(layout(it.x, [it.label]));
    // Merge backwards while the newest group runs into the one before it.
    while (groups.length > 1) {
      const [prev, last] = groups.slice(-2);
      if (last.left >= prev.left + prev.width + gap) break;
      groups.splice(-2, 2, layout(prev.x, [...prev.labels, ...last.labels]));
    }
  }
  return groups;
}

/** The window of `span` events centred on `event`, inside 0..total-1. */
export function centredWindow(event: number, total: number, span: number): [number, number] {
  const from = Math.max(0, Math.round(event - span / 2));
  return [from, Math.min(total - 1, from + span)];
}

export interface StackColumn {
  /** Left and right x of the column. */
  x0: number;
  x1: number;
  /** Per category (the series' order): the bottom and top of its area, in bytes. */
  lower: number[];
  upper: number[];
}

/**
 * The stacked areas of a category series over from..to: column k covers the k-th of
 * `events.length` equal parts of the window (the engine's slices, each sampled at its event
 * with the most active memory), and its categories stack from 0 up in the series' order.
 */
export function stackColumns(
  s: { events: number[]; values: number[][] },
  from: number,
  to: number,
  xOf: (i: number) => number,
): StackColumn[] {
  const m = s.events.length;
  const n = to - from + 1;
  const start = (k: number) => from + Math.floor((n * k) / Math.max(1, m));
  return s.events.map((_, k) => {
    const lower: number[] = [];
    const upper: number[] = [];
    let sum = 0;
    for (const v of s.values[k] ?? []) {
      lower.push(sum);
      sum += v;
      upper.push(sum);
    }
    const x0 = xOf(start(k));
    const x1 = k + 1 < m ? xOf(start(k + 1)) : Math.max(x0 + 1, xOf(to));
    return { x0, x1: Math.max(x1, x0 + 0.5), lower, upper };
  });
}

/**
 * Why the chart of a whole trace looks flat, in words, or null when it does not: a trace of a
 * few events (the memory was there before recording began: `blocksBefore` blocks from before the
 * window), or an allocated line that moves by under 1 % of the top of the chart.
 */
export function flatNote(t: Timeline, events: number, blocksBefore: number): string | null {
  if (!t.index.length || events <= 0) return null;
  const top = Math.max(...t.reserved_max, ...t.active_max);
  const moved = Math.max(...t.allocated_max) - Math.min(...t.allocated_min);
  if (events <= 3)
    return (
      `The trace holds only ${plural(events, 'event')}: the memory on the chart was allocated before recording began ` +
      `(${plural(blocksBefore, 'block')} from before the window), so the chart is one level. Start ` +
      'torch.cuda.memory._record_memory_history() earlier (before the model is built) to see it grow.'
    );
  if (top > 0 && moved < top * 0.01)
    return `The chart looks flat: over these ${plural(events, 'event')} allocated memory moves by ${bytes(moved)} only, under 1 % of the ${bytes(top)} at the top of the chart.`;
  return null;
}
