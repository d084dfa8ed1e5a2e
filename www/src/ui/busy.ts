// "computing…" over a view or a chart while the engine answers (shown after a short delay, so
// quick answers do not flicker).
import { el } from './format';

/** Cover `box` (a positioned element) with a spinner until `work` settles; its answer. */
export async function computing<T>(box: HTMLElement, work: Promise<T>, text = 'computing…'): Promise<T> {
  // One cover at a time: inside a view that is still computing, its cover says it already.
  if (box.closest('.computing') || box.hasAttribute('data-revealed')) return work;
  const cover = el('div', { class: 'computing-overlay', role: 'status' }, el('div', { class: 'spinner' }), text);
  box.classList.add('computing');
  box.append(cover);
  try {
    return await work;
  } finally {
    cover.remove();
    if (!box.querySelector(':scope > .computing-overlay')) box.classList.remove('computing');
  }
}

/**
 * Take the cover off `box` now, though its work goes on: a view that shows its first figures
 * before the rest of its answers (the Overview) says so, and fills in the rest under them.
 */
export function reveal(box: HTMLElement) {
  box.setAttribute('data-revealed', '');
  for (const cover of box.querySelectorAll(':scope > .computing-overlay')) cover.remove();
  box.classList.remove('computing');
}
