// Types of the <snapscope-view> element (snapscope-view.js defines it on import).

/** One device (or pinned host entry) of a snapshot, as `snapscope overview --json` gives it. */
export interface DeviceOverview {
  device: number;
  events: number;
  pinned_host?: boolean;
  /** Exact peaks and the event reaching each (`requested` too; more figures may come). */
  peaks: {
    allocated: Peak;
    reserved: Peak;
    active: Peak;
    requested: Peak;
    [figure: string]: Peak;
  };
  [field: string]: unknown;
}

export interface Peak {
  bytes: number;
  event: number | null;
}

/** The JSON of `snapscope overview FILE --json`. */
export interface Overview {
  devices: DeviceOverview[];
  [field: string]: unknown;
}

/** Rows of read-only SQL: column names and rows of values (arrays in column order). */
export interface Rows {
  columns: string[];
  rows: (number | string | null)[][];
  returned: number;
  has_more: boolean;
  truncated: boolean;
}

/** A template's answer: `snapscope query FILE -t NAME --rows arrays --json`. */
export interface TemplateRows {
  template: string;
  device: number;
  effective_params: Record<string, number | string | boolean | null>;
  columns: { name: string; unit: string | null }[];
  rows: (number | string | null)[][];
  returned: number;
  has_more: boolean;
  truncated: boolean;
  total: number;
  total_is_exact: boolean;
}

/** What went wrong, where, and what to do: `detail` of `snapscope-error`. */
export interface SnapscopeError {
  code: string;
  message: string;
  hint: string;
}

export type ViewName =
  | "overview"
  | "timeline"
  | "allocations"
  | "peak"
  | "categories"
  | "steps"
  | "tree"
  | "state"
  | "leaks"
  | "oom"
  | "whatif"
  | "queries";

/**
 * `<snapscope-view src="run.pickle" view="peak" device="0" event="120" height="600">`.
 * Attributes: `src` (a same-origin URL), `view`, `device`, `event`, `height` (CSS pixels).
 * `data-state` is `loading`, `ready` or `error`; events `snapscope-ready` (detail: the overview)
 * and `snapscope-error` (detail: a SnapscopeError) fire on the element itself (they do not
 * bubble). Taken out of the page the element ends its engine; put back, it loads the same
 * snapshot again.
 */
export declare class SnapscopeView extends HTMLElement {
  /** The release this module belongs to. */
  static readonly version: string;
  /** A snapshot as a Blob or File: loads it. Reads as the Blob given last, or null. */
  get file(): Blob | null;
  set file(f: Blob | null);
  /** A snapshot's bytes: loads them. Reads as the Blob made of them (as `file`). */
  get data(): Blob | null;
  set data(d: ArrayBuffer | ArrayBufferView | Blob | null);
  /** Open a snapshot (same-origin URL, Blob or bytes); resolves with its overview. */
  load(src: string | Blob | ArrayBuffer | ArrayBufferView, name?: string): Promise<Overview>;
  /** The open snapshot's overview, or null before one is open. */
  overview(): Overview | null;
  /** A template query: `snapscope query FILE -t NAME --rows arrays --json`; the device is
   * `params.device`, else the first. Rejects before a snapshot is open. */
  query(name: string, params?: Record<string, unknown>): Promise<TemplateRows>;
  /** Read-only SQL on the SnapshotDB. Rejects before a snapshot is open. */
  sql(text: string, maxRows?: number): Promise<Rows>;
  /** Show a view. */
  show(view: ViewName): void;
  /** Select an event (the views follow it), optionally in `view`. */
  select(event: number | null, view?: ViewName): void;
  /** Show another device of the same snapshot. */
  setDevice(device: number, view?: ViewName): void;
}

declare global {
  interface HTMLElementTagNameMap {
    "snapscope-view": SnapscopeView;
  }
  interface HTMLElementEventMap {
    "snapscope-ready": CustomEvent<Overview>;
    "snapscope-error": CustomEvent<SnapscopeError>;
  }
}
