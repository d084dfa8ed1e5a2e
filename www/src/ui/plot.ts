// Plot geometry shared by the charts (pure: no DOM). A frame is a canvas's CSS size with the
// padding that holds the axes; values map to y with 5 % headroom.

export interface Pad {
  l: number;
  r: number;
  t: number;
  b: number;
}
export interface Frame {
  w: number;
  h: number;
  pad: Pad;
}

export const plotWidth = (f: Frame) => Math.max(1, f.w - f.pad.l - f.pad.r);

export interface YScale {
  /** The value at the top of the plot. */
  top: number;
  y(v: number): number;
}

/** 0 at the bottom of the plot, `max` plus 5 % at the top. */
export function yScale(max: number, f: Frame): YScale {
  const top = Math.max(1, max) * 1.05;
  const height = f.h - f.pad.t - f.pad.b;
  return { top, y: (v) => f.h - f.pad.b - (v / top) * height };
}

/** `n + 1` evenly spaced axis values from 0 to `top`, whole numbers (bytes). */
export function ticks(top: number, n: number): number[] {
  return Array.from({ length: n + 1 }, (_, k) => Math.round((top / n) * k));
}

/** The m × 10^k (m in `mantissas`) nearest to `raw` on a log scale: about as many ticks as asked. */
export function niceStep(raw: number, mantissas: number[]): number {
  if (!(raw > 0)) return 1;
  const base = 10 ** Math.floor(Math.log10(raw));
  let best = base;
  for (const k of [base, base * 10])
    for (const m of mantissas)
      if (Math.abs(Math.log(m * k) - Math.log(raw)) < Math.abs(Math.log(best) - Math.log(raw))) best = m * k;
  return best;
}

/** The steps an axis may take: 1, 2, 2.5 and 5 × 10^k. */
const MANTISSAS = [1, 2, 2.5, 5];

/**
 * Round axis values 0, s, 2s… for values up to `max` (in the unit of `max`): s is 1, 2, 2.5 or 5 ×
 * 10^k, chosen so that about `target` intervals cover `max` with the least headroom. The last
 * value is ≥ max (it is the top of the plot).
 */
export function niceTicks(max: number, target = 4): number[] {
  const m = max > 0 && Number.isFinite(max) ? max : 1;
  const base = 10 ** Math.floor(Math.log10(m / target));
  let best = { n: 0, step: 0, score: Infinity };
  for (const k of [base / 10, base, base * 10])
    for (const c of MANTISSAS) {
      const step = c * k;
      const n = Math.ceil(m / step - 1e-9);
      if (n < 2 || n > target * 2) continue;
      // Closest to the target count first, then the least headroom.
      const score = Math.abs(n - target) * 10 + (n * step - m) / m;
      if (score < best.score) best = { n, step, score };
    }
  if (!best.step) best = { n: target, step: m / target, score: 0 };
  // Multiply (not add) so that 0.1 + 0.2 errors do not pile up; round away binary noise.
  return Array.from({ length: best.n + 1 }, (_, i) => Number((i * best.step).toPrecision(12)));
}

const BYTE_UNITS: [number, string][] = [
  [2 ** 30, 'GiB'],
  [2 ** 20, 'MiB'],
  [2 ** 10, 'KiB'],
  [1, 'B'],
];

/** The unit a byte axis up to `max` is labelled in: GiB, MiB, KiB or B. */
export function byteUnit(max: number): [number, string] {
  return BYTE_UNITS.find(([u]) => max >= u) ?? BYTE_UNITS[3];
}

/**
 * Byte axis values: round numbers in the unit of `max` (0, 5, 10, 15, 20 GiB), as bytes, with
 * their labels ("0", "5 GiB", "2.5 GiB").
 */
export function byteTicks(max: number, target = 4): { value: number; label: string }[] {
  const [u, name] = byteUnit(max);
  // Whole bytes: at least 1 B a step.
  return niceTicks(name === 'B' ? Math.max(max, target) : max / u, target).map((v) => ({
    value: name === 'B' ? Math.round(v) : v * u,
    label: v === 0 ? '0' : `${trimNumber(v)} ${name}`,
  }));
}

/** A number without trailing zeros, at most 3 decimals: 2.5, 10, 0.125. */
export function trimNumber(v: number): string {
  return String(Number(v.toFixed(3)));
}

/** A y scale whose top is exactly `top` (the last axis value). */
export function yScaleTo(top: number, f: Frame): YScale {
  const t = Math.max(1e-9, top);
  const height = f.h - f.pad.t - f.pad.b;
  return { top: t, y: (v) => f.h - f.pad.b - (v / t) * height };
}

/**
 * `text` cut with an ellipsis to at most `maxWidth` (as measured by `measure`); the empty string
 * when not even one character and the ellipsis fit. The cost is bounded by the width, not by the
 * text (frame names reach 1M characters): no glyph is narrower than a pixel, so only the first
 * `maxWidth` characters can be shown and only they are measured, about log2(maxWidth) times.
 */
export function fitLabel(text: string, maxWidth: number, measure: (s: string) => number): string {
  const cap = Math.max(0, Math.ceil(maxWidth));
  if (text.length <= cap && measure(text) <= maxWidth) return text;
  let lo = 0;
  let hi = Math.min(text.length, cap);
  // The longest prefix that fits with the ellipsis (binary search).
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (measure(text.slice(0, mid) + '…') <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  // Never end on half of a surrogate pair (an emoji would draw as a box).
  if (lo > 0 && /[\uD800-\uDBFF]/.test(text[lo - 1])) lo--;
  return lo === 0 ? '' : text.slice(0, lo) + '…';
}
