// Types of the <snapscope-view> element (snapscope-view.js defines it on import).

import type { EngineAnswers } from "./answers";

// The engine's answer types, generated from its Rust types (answers.d.ts; do not copy them).
export type * from "./answers";

/** `overview()` and `load()`: the JSON of `snapscope overview FILE --json`. */
export type OverviewAnswer = EngineAnswers["overview"];
/** Rows of read-only SQL: column names and rows of values (arrays in column order). */
export type Rows = EngineAnswers["sql"];
/** A template's answer: `snapscope query FILE -t NAME --rows arrays --json`. */
export type TemplateRows = EngineAnswers["query"];

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
  load(src: string | Blob | ArrayBuffer | ArrayBufferView, name?: string): Promise<OverviewAnswer>;
  /** The open snapshot's overview, or null before one is open. */
  overview(): OverviewAnswer | null;
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
    "snapscope-ready": CustomEvent<OverviewAnswer>;
    "snapscope-error": CustomEvent<SnapscopeError>;
  }
}
