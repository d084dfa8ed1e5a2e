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
