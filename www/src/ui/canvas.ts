// Canvas helpers shared by the chart views: sizing (CSS size × device pixel ratio, drawing in CSS
// pixels), text that fits, lines across the plot, and the byte axis.
import { fitLabel, type Frame, type YScale } from './plot';

/**
 * Fit the backing store to the element and return its CSS size. `cssHeight` sets the element's
 * height first (views whose height follows their content). Assigning the size clears the canvas,
 * so it is done only when the size changed (views clear before drawing).
 */
export function fitCanvas(
  canvas: HTMLCanvasElement,
  ctx: CanvasRenderingContext2D,
  fallbackHeight: number,
  cssHeight?: number,
) {
  if (cssHeight !== undefined) canvas.style.height = `${cssHeight}px`;
  const w = canvas.clientWidth || 900;
  const h = canvas.clientHeight || cssHeight || fallbackHeight;
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { w, h };
}

/**
 * Call `f` when `box`'s size changes while it is on the page. A ResizeObserver also reports the
 * size it first sees: a view that has drawn already would draw (or ask the engine) twice.
 */
export function onResize(box: HTMLElement, f: () => void) {
  const sizeOf = () => `${box.clientWidth}x${box.clientHeight}`;
  let size = sizeOf();
  new ResizeObserver(() => {
    if (!box.isConnected || sizeOf() === size) return;
    size = sizeOf();
    f();
  }).observe(box);
}

/** `text`, cut with an ellipsis to at most `maxWidth` pixels in the current font. */
export function fitText(g: CanvasRenderingContext2D, text: string, maxWidth: number): string {
  return fitLabel(text, maxWidth, (s) => g.measureText(s).width);
}

/** A vertical line from `top` to `bottom` (markers, the selection, the cursor). */
export function vline(g: CanvasRenderingContext2D, x: number, top: number, bottom: number, color: string, width = 1) {
  g.strokeStyle = color;
  g.lineWidth = width;
  g.beginPath();
  g.moveTo(x, top);
  g.lineTo(x, bottom);
  g.stroke();
  g.lineWidth = 1;
}

/** Axis labels at the left of the plot (right-aligned), with grid lines when `grid` is given. */
export function byteAxis(
  g: CanvasRenderingContext2D,
  f: Frame,
  scale: YScale,
  ticks: { value: number; label: string }[],
  grid?: string,
) {
  g.font = '11px system-ui, sans-serif';
  for (const { value, label } of ticks) {
    const y = scale.y(value);
    if (grid) {
      g.strokeStyle = grid;
      g.beginPath();
      g.moveTo(f.pad.l, y);
      g.lineTo(f.w - f.pad.r, y);
      g.stroke();
    }
    g.fillStyle = '#64748b';
    g.textAlign = 'right';
    g.fillText(label, f.pad.l - 6, Math.max(10, y + 4));
    g.textAlign = 'left';
  }
}
