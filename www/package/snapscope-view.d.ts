// Types of the <snapscope-view> element (snapscope-view.js defines it on import).

/** One device (or pinned host entry) of a snapshot, as `snapscope overview --json` gives it. */
export interface DeviceOverview {
  device: number;
  events: number;
  pinned_host?: boolean;
  peaks: {
    allocated: { bytes: number; event: number | null };
    reserved: { bytes: number; event: number | null };
    active: { bytes: number; event: number | null };
  };
  [field: string]: unknown;
}

/** The JSON of `snapscope overview FILE --json`. */
export interface Overview {
  devices: DeviceOverview[];
  [field: string]: unknown;
}

/** Rows of a query or of SQL: column names and rows of values. */
export interface Rows {
  columns: string[];
  rows: unknown[][];
  [field: string]: unknown;
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
 * and `snapscope-error` (detail: a SnapscopeError).
 */
export declare class SnapscopeView extends HTMLElement {
  /** The release this module belongs to. */
  static readonly version: string;
  /** A snapshot as a Blob or File: loads it. */
  set file(f: Blob | null);
  /** A snapshot's bytes: loads them. */
  set data(d: ArrayBuffer | ArrayBufferView | null);
  /** Open a snapshot (same-origin URL, Blob or bytes); resolves with its overview. */
  load(src: string | Blob | ArrayBuffer | ArrayBufferView, name?: string): Promise<Overview>;
  /** The open snapshot's overview, or null before one is open. */
  overview(): Overview | null;
  /** A template query (`snapscope query FILE NAME --json`). */
  query(name: string, params?: Record<string, unknown>): Promise<Rows>;
  /** Read-only SQL on the SnapshotDB. */
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
