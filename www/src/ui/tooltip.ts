// The hover card of the canvas views (tree, allocations, allocator state): beside the cursor,
// fixed to the viewport (so a scrolling box around the canvas never clips it), flipped left or
// above to stay fully in view, its text wrapped, hidden when the pointer leaves.
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
  /** The card's element: the view puts it beside the canvas; it is placed in viewport coordinates. */
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
      // Viewport coordinates: the card is position: fixed, outside any clipping box.
      last = {
        x: e.clientX,
        y: e.clientY,
        right: window.innerWidth - 8,
        bottom: window.innerHeight - 8,
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
