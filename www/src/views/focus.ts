// The event the tree, state and peak views show when none is selected.
import type { ViewContext } from '../app-types';

/** The selection, or the allocated peak. */
export function focusEvent(c: ViewContext): number | null {
  if (c.event !== null) return c.event;
  return c.deviceOverview?.peaks.allocated.event ?? null;
}
