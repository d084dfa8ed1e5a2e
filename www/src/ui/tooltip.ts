// The hover card of the canvas views (tree, allocations, allocator state): beside the cursor,
// kept inside the canvas's box, hidden when the pointer leaves.
import { el } from './format';

const TIP_WIDTH = 320;

/** Where the card goes for a pointer at (x, y) over a box `boxWidth` wide (CSS pixels). */
export function tipPosition(x: number, y: number, boxWidth: number) {
  return { left: Math.min(x + 14, boxWidth - TIP_WIDTH), top: y + 16 };
}

export interface Tooltip {
  /** The card's element: the view puts it beside the canvas, in a positioned box. */
  el: HTMLElement;
  show(e: MouseEvent, ...content: (Node | string)[]): void;
  hide(): void;
}

export function tooltip(canvas: HTMLCanvasElement): Tooltip {
  const tip = el('div', { class: 'tip', hidden: true });
  const hide = () => (tip.hidden = true);
  canvas.addEventListener('mouseleave', hide);
  return {
    el: tip,
    hide,
    show(e, ...content) {
      const { left, top } = tipPosition(e.offsetX, e.offsetY, canvas.clientWidth);
      tip.hidden = false;
      tip.style.left = `${left}px`;
      tip.style.top = `${top}px`;
      tip.replaceChildren(...content);
    },
  };
}
