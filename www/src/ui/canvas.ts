// Canvas sizing shared by the charts: CSS size × device pixel ratio, drawing in CSS pixels.

/** Fit the backing store to the element and return its CSS size. Assigning the size clears the
 * canvas, so it is done only when the size changed. */
export function fitCanvas(canvas: HTMLCanvasElement, ctx: CanvasRenderingContext2D, fallbackHeight: number) {
  const w = canvas.clientWidth || 900;
  const h = canvas.clientHeight || fallbackHeight;
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { w, h };
}
