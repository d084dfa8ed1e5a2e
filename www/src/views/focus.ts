// The event the tree, state, peak and categories views show, and the two states they switch
// between: at the allocated peak, or at the selected event (the selection is kept either way).
import type { ViewContext, ViewName } from '../app-types';
import type { At } from '../generated/answers';
import { el, eventLabel } from '../ui/format';

/** The allocated peak's event (null: no peak, e.g. a dump-only device). */
export function peakEvent(c: ViewContext): number | null {
  return c.deviceOverview?.events ? (c.deviceOverview.peaks.allocated.event ?? null) : null;
}

/** The selection, or the allocated peak when nothing is selected or the peak is asked for. */
export function focusEvent(c: ViewContext): number | null {
  if (c.event !== null && !c.atPeak) return c.event;
  return c.deviceOverview?.peaks.allocated.event ?? null;
}

/** The focus event as the engine takes it: right after it, or the window start without one. */
export function focusAt(c: ViewContext): At {
  const e = focusEvent(c);
  return e === null ? 'window_start' : { event: e };
}

/** Which of the two states the view is in: "peak" also when the selection is the peak itself. */
export function focusState(c: ViewContext): 'peak' | 'selected' {
  const e = focusEvent(c);
  return e !== null && e === peakEvent(c) ? 'peak' : c.event !== null && !c.atPeak ? 'selected' : 'peak';
}

/**
 * Two buttons, the view's state pressed: "At the allocated peak (event P)" and "At the selected
 * event N" (without a selection: disabled, saying where to select one). Each is one click from
 * the other; switching keeps the selection. Nothing for a device without trace events.
 */
export function focusSwitch(c: ViewContext, view: ViewName): HTMLElement | null {
  const peak = peakEvent(c);
  if (peak === null) return null;
  const state = focusState(c);
  const sel = c.event !== null && c.event !== peak ? c.event : null;
  const peakBtn = el('button', {
    class: 'focus-peak',
    text: `At the allocated peak (${eventLabel(peak)})`,
    'aria-pressed': String(state === 'peak'),
  });
  const selBtn = el('button', {
    class: 'focus-selected',
    text: sel !== null ? `At the selected ${eventLabel(sel)}` : 'At a selected event',
    title:
      sel !== null
        ? 'the event selected in the Timeline, Allocations or another view'
        : 'no other event is selected: click one in the Timeline or Allocations',
    disabled: sel === null,
    'aria-pressed': String(state === 'selected'),
  });
  peakBtn.addEventListener('click', () => state !== 'peak' && c.app.showAt(true, view));
  selBtn.addEventListener('click', () => state !== 'selected' && c.app.showAt(false, view));
  return el(
    'div',
    { class: 'focus-switch', role: 'group', 'aria-label': 'which event the view shows' },
    peakBtn,
    selBtn,
  );
}
