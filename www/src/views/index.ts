// The view registry: one entry per tab.
import type { OpenFile } from '../main';
import type { DeviceOverview } from '../types';
import { renderOverview } from './overview';
import { renderTimeline } from './timeline';
import { renderTree } from './tree';
import { renderState } from './state';
import { renderQueries } from './queries';
import { renderCompare } from './compare';
import { renderPeak } from './peak';
import { renderLeaks } from './leaks';
import { renderOom } from './oom';
import { renderAllocations } from './allocations';

export interface AppHandle {
  files: OpenFile[];
  select(event: number | null, view?: ViewName): void;
  show(view: ViewName): void;
  setEvent(event: number | null): void;
  setTemplate(name: string | null): void;
}

export interface ViewContext {
  app: AppHandle;
  file: OpenFile;
  device: number;
  deviceOverview: DeviceOverview | undefined;
  /** Selected event; null = the view's default (the peak for tree and state). */
  event: number | null;
  template: string | null;
  root: HTMLElement;
}

export const VIEWS = {
  overview: { title: 'Overview', render: renderOverview },
  timeline: { title: 'Timeline', render: renderTimeline },
  allocations: { title: 'Allocations', render: renderAllocations },
  peak: { title: 'Peak', render: renderPeak },
  tree: { title: 'Memory tree', render: renderTree },
  state: { title: 'Allocator state', render: renderState },
  leaks: { title: 'Leaks', render: renderLeaks },
  oom: { title: 'OOM', render: renderOom },
  queries: { title: 'Queries', render: renderQueries },
  compare: { title: 'Compare', render: renderCompare },
} satisfies Record<string, { title: string; render: (c: ViewContext) => Promise<void> }>;

export type ViewName = keyof typeof VIEWS;

/** The event a tree/state view shows: the selection, or the allocated peak. */
export function focusEvent(c: ViewContext): number | null {
  if (c.event !== null) return c.event;
  return c.deviceOverview?.peaks.allocated.event ?? null;
}
