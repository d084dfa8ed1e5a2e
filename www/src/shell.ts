// What the page (main.ts) and <snapscope-view> (element.ts) share as hosts of the views: the
// selection and how each request of a view changes it (AppHandle), the context a view renders
// with, and rendering one view into its container. Each host adds only its own chrome (the page:
// files, URL hash, runs; the element: attributes, a shadow root).
import { EngineFailure } from './client';
import type { EngineError } from './protocol';
import type { AppHandle, OpenFile, ViewContext, ViewName } from './app-types';
import { VIEWS } from './views';
import { el } from './ui/format';
import { computing } from './ui/busy';

/** What the views show: the view, device, selected event, peak or selection, template, range. */
export interface Selection<V extends string = ViewName> {
  view: V;
  device: number;
  event: number | null;
  /** Peak, Memory tree, Categories, Allocator state show the allocated peak, not the selection. */
  atPeak: boolean;
  template: string | null;
  /** An event window for the timeline to show (a step or a range picked elsewhere). */
  range: [number, number] | null;
}

/**
 * The views' requests (AppHandle) as changes of a selection; `accepts` says which views the host
 * has. Each returns whether the current view must render again.
 */
export function changeSelection<V extends string>(s: Selection<V>, accepts: (v: unknown) => v is V) {
  const open = (view?: unknown) => {
    if (accepts(view)) s.view = view;
  };
  return {
    /** Select an event everywhere (details, tree, state follow it). */
    select(event: number | null, view?: unknown) {
      s.event = event;
      s.atPeak = false;
      s.range = null;
      open(view);
      return true;
    },
    show(view: unknown) {
      open(view);
      return true;
    },
    /** Another device of the same file: its selection starts afresh. */
    setDevice(device: number, view?: unknown) {
      s.device = device;
      s.event = null;
      s.atPeak = false;
      s.range = null;
      open(view);
      return true;
    },
    /** An event selected in a chart that shows it already: no render. */
    setEvent(event: number | null) {
      s.event = event;
      s.atPeak = false;
      return false;
    },
    showAt(peak: boolean, view: unknown) {
      s.atPeak = peak;
      open(view);
      return true;
    },
    setTemplate(name: string | null) {
      s.template = name;
      return false;
    },
    /** Events from..to in the timeline (the selection is kept). */
    showRange(from: number, to: number) {
      s.range = [Math.min(from, to), Math.max(from, to)];
      open('timeline');
      return true;
    },
  };
}

/** The device shown: the selected one if the file has it, else its first. */
export function deviceShown(file: OpenFile, device: number): number {
  const devices = file.overview.devices;
  return devices.some((d) => d.device === device) ? device : (devices[0]?.device ?? 0);
}

/** A view's context for `file` under `s` (a fresh container: an older, slower render writes into a detached node). */
export function viewContext(app: AppHandle, file: OpenFile, s: Selection<string>, other: number | null): ViewContext {
  return {
    app,
    file,
    device: s.device,
    deviceOverview: file.overview.devices.find((d) => d.device === s.device),
    event: s.event,
    atPeak: s.atPeak,
    template: s.template,
    range: s.range,
    other,
    root: el('div', { class: `view view-${s.view}` }),
  };
}

/**
 * Render `view` with `ctx` into `main`; `mark.dataset.view` says `computing`, then `done` (what
 * tests and benchmarks wait for). Through an async function: a view that throws at once fails
 * like one that rejects later.
 */
export function renderView(
  view: ViewName,
  ctx: ViewContext,
  main: HTMLElement,
  mark: HTMLElement,
  onError: (e: EngineError) => void,
) {
  main.replaceChildren(ctx.root);
  mark.dataset.view = 'computing';
  computing(ctx.root, (async () => VIEWS[view].render(ctx))())
    .then(() => {
      if (ctx.root.isConnected) mark.dataset.view = 'done';
    })
    .catch((e) => onError(errorInfo(e)));
}

/** An engine failure's own code, message and hint; anything else as ERROR. */
export function errorInfo(e: unknown): EngineError {
  return e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' };
}
