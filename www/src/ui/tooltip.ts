// The hover card of the canvas views (tree, allocations, allocator state): beside the cursor,
// kept inside the canvas's box and the viewport, its text wrapped to the box, hidden when the
// pointer leaves.
import { el } from './format';

/**
 * Where a card `tipWidth` × `tipHeight` goes for a pointer at (x, y): below right of it, or left
 * of it when it would pass `maxRight`, above it when it would pass `maxBottom` (all in the box's
 * coordinates), never left of or above the box.
 */
export function tipPosition(
  x: number,
  y: number,
  maxRight: number,
  tipWidth = 320,
  tipHeight = 0,
  maxBottom = Infinity,
) {
  let left = x + 14;
  if (left + tipWidth > maxRight) left = x - 14 - tipWidth;
  left = Math.max(0, Math.min(left, maxRight - tipWidth));
  let top = y + 16;
  if (top + tipHeight > maxBottom) top = Math.max(0, y - 12 - tipHeight);
  return { left, top };
}

export interface Tooltip {
  /** The card's element: the view puts it beside the canvas, in a positioned box. */
  el: HTMLElement;
  show(e: MouseEvent, ...content: (Node | string)[]): void;
  /** Replace the content of the card shown now, keeping its place (answers that come later). */
  update(...content: (Node | string)[]): void;
  hide(): void;
}

export function tooltip(canvas: HTMLCanvasElement): Tooltip {
  const tip = el('div', { class: 'tip', hidden: true });
  const hide = () => (tip.hidden = true);
  canvas.addEventListener('mouseleave', hide);
  let last: { x: number; y: number; right: number; bottom: number } | null = null;
  const place = () => {
    if (!last) return;
    const { left, top } = tipPosition(last.x, last.y, last.right, tip.offsetWidth, tip.offsetHeight, last.bottom);
    tip.style.left = `${left}px`;
    tip.style.top = `${top}px`;
  };
  return {
    el: tip,
    hide,
    show(e, ...content) {
      tip.hidden = false;
      tip.replaceChildren(...content);
      // The canvas's box, cut by the viewport (in the canvas's coordinates).
      last = {
        x: e.offsetX,
        y: e.offsetY,
        right: Math.min(canvas.clientWidth, e.offsetX + (window.innerWidth - e.clientX) - 8),
        bottom: e.offsetY + (window.innerHeight - e.clientY) - 8,
      };
      place();
    },
    update(...content) {
      if (tip.hidden) return;
      tip.replaceChildren(...content);
      place();
    },
  };
}
