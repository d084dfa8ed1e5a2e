// Types shared by the app (main.ts) and the views. Both import this module and it imports neither,
// so imports flow one way: main → views → ui.
import type { EngineClient } from './client';
import type { DeviceOverview, Overview } from './types';

/** The tabs, in the order they appear. */
export type ViewName =
  | 'overview'
  | 'timeline'
  | 'allocations'
  | 'peak'
  | 'categories'
  | 'steps'
  | 'tree'
  | 'state'
  | 'leaks'
  | 'oom'
  | 'whatif'
  | 'queries'
  | 'compare';

export interface OpenFile {
  name: string;
  size: number;
  client: EngineClient;
  overview: Overview;
  overviewJson: string;
}

/** What the URL hash holds: the view, file, device, selected event and query template. */
export interface Route {
  view: ViewName;
  file: number;
  device: number;
  event: number | null;
  template: string | null;
  /** An event window for the timeline to show (a step or a range picked elsewhere); not in the hash. */
  range: [number, number] | null;
}

/** What a view may ask of the app. */
export interface AppHandle {
  files: OpenFile[];
  select(event: number | null, view?: ViewName): void;
  show(view: ViewName): void;
  /** Switch to another device of the same file. */
  setDevice(device: number, view?: ViewName): void;
  setEvent(event: number | null): void;
  setTemplate(name: string | null): void;
  /** Show events from..to in the timeline (a step, a phase or a named range). */
  showRange(from: number, to: number): void;
}

export interface ViewContext {
  app: AppHandle;
  file: OpenFile;
  device: number;
  deviceOverview: DeviceOverview | undefined;
  /** Selected event; null = the view's default (the peak for tree and state). */
  event: number | null;
  template: string | null;
  /** The event window the timeline opens on (null: the whole trace or around the selection). */
  range: [number, number] | null;
  root: HTMLElement;
}

export interface View {
  title: string;
  render(c: ViewContext): Promise<void>;
}
