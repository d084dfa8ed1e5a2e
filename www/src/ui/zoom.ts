// Drag to pan, wheel to zoom, double-click to reset: the event window of the timeline and of the
// allocations chart. The view says how a pixel maps to an event; the window math is in ./window.
import { panBy, zoomAround } from './window';

export interface PanZoomTarget {
  /** Events in the trace (the window stays inside 0..total-1). */
  total: number;
  /** The window shown now. */
  window(): [number, number];
  /** Width of the plot in CSS pixels. */
  plotWidth(): number;
  /** The event under x, or null off the data. */
  eventAt(x: number): number | null;
  /** Show this window (fetch and redraw). */
  change(from: number, to: number): void;
}

export interface PanZoom {
  /**
   * True once a drag has moved the window, until just after its mouseup: hover effects wait, and
   * the click that ends the drag selects nothing.
   */
  moved(): boolean;
}

export function panZoom(canvas: HTMLCanvasElement, t: PanZoomTarget): PanZoom {
  let drag: { x: number; from: number; to: number; moved: boolean } | null = null;
  canvas.addEventListener('mousedown', (e) => {
    const [from, to] = t.window();
    drag = { x: e.offsetX, from, to, moved: false };
  });
  // After the click that follows this mouseup has seen the drag.
  window.addEventListener('mouseup', () => setTimeout(() => (drag = null)));
  canvas.addEventListener('mousemove', (e) => {
    if (!drag || Math.abs(e.offsetX - drag.x) <= 3) return;
    drag.moved = true;
    t.change(...panBy(drag.from, drag.to, t.total, drag.x - e.offsetX, t.plotWidth()));
  });
  canvas.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const at = t.eventAt(e.offsetX);
      if (at === null) return;
      const [from, to] = t.window();
      t.change(...zoomAround(from, to, t.total, at, !(e.deltaY > 0)));
    },
    { passive: false },
  );
  canvas.addEventListener('dblclick', () => t.change(0, t.total - 1));
  return { moved: () => !!drag?.moved };
}
