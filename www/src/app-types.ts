// Types shared by the app (main.ts) and the views. Both import this module and it imports neither,
// so imports flow one way: main → views → ui.
import type { EngineClient } from './client';
import type { DeviceOverview, Overview, RanksReport } from './generated/answers';

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

/**
 * What the page shows: a view of the current file, or `ranks`, the run of many files (which needs
 * no open file).
 */
export type PageName = ViewName | 'ranks';

export interface OpenFile {
  name: string;
  size: number;
  client: EngineClient;
  overview: Overview;
  overviewJson: string;
  /** The rank of a run this file was opened from (see RanksRun), if any. */
  source?: RankSource;
}

/** One file of a run: a picked or dropped file, or a same-origin URL (read again to open it). */
export interface RankSource {
  name: string;
  blob?: Blob;
  url?: string;
}

/** The last run opened: the engine's RanksReport and where each of its files came from. */
export interface RanksRun {
  report: RanksReport;
  /** Per `report.files[i]`: its source. */
  sources: RankSource[];
  /** Files given (the report's and the failed ones). */
  total: number;
  /** Engines that summarized at once: allowed, and the most that were live together. */
  width: number;
  peakEngines: number;
}

/** What the URL hash holds: the view, file, device, selected event and query template. */
export interface Route {
  view: PageName;
  file: number;
  device: number;
  event: number | null;
  /** Peak, Memory tree, Categories, Allocator state show the allocated peak, not the selection. */
  atPeak: boolean;
  template: string | null;
  /** An event window for the timeline to show (a step or a range picked elsewhere); not in the hash. */
  range: [number, number] | null;
  /** The file Compare shows against the current one (an index in the open files); not in the hash. */
  other: number | null;
}

/** What a view may ask of the app. */
export interface AppHandle {
  files: OpenFile[];
  select(event: number | null, view?: ViewName): void;
  show(view: ViewName): void;
  /** Switch to another device of the same file. */
  setDevice(device: number, view?: ViewName): void;
  setEvent(event: number | null): void;
  /**
   * Show `view` at the allocated peak (`true`) or at the selected event (`false`), the selection
   * kept either way: the views' two states, one click apart.
   */
  showAt(peak: boolean, view: ViewName): void;
  setTemplate(name: string | null): void;
  /** Show events from..to in the timeline (a step, a phase or a named range). */
  showRange(from: number, to: number): void;
}

/** What the Ranks view may ask of the app. */
export interface RanksHandle {
  /** Open `report.files[file]` as the current file (in the Overview, at `device`). */
  openRank(file: number, device?: number): Promise<void>;
  /** Open the worst rank and the median rank and show them in Compare. */
  compareWithMedian(): Promise<void>;
}

export interface RanksContext {
  app: RanksHandle;
  run: RanksRun;
  root: HTMLElement;
}

export interface ViewContext {
  app: AppHandle;
  file: OpenFile;
  device: number;
  deviceOverview: DeviceOverview | undefined;
  /** Selected event; null = the view's default (the peak for tree and state). */
  event: number | null;
  /** The view is asked for the allocated peak though an event is selected (see focusEvent). */
  atPeak: boolean;
  template: string | null;
  /** The event window the timeline opens on (null: the whole trace or around the selection). */
  range: [number, number] | null;
  /** The file Compare opens against this one (an index in `app.files`), if one was asked for. */
  other: number | null;
  root: HTMLElement;
}

export interface View {
  title: string;
  render(c: ViewContext): Promise<void>;
}
