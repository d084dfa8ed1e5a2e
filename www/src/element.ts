// <snapscope-view>: the page's views inside a shadow root, for docs portals. One ES module defines
// the element; each element starts its own engine worker (from worker.js and snapscope_bg.wasm
// beside this module) and shares nothing with the others but the compiled engine.
//
//   <script type="module" src="snapscope-view.js"></script>
//   <snapscope-view src="run.pickle" view="peak" device="0" height="600"></snapscope-view>
//
// `data-state` is `loading`, `ready` or `error`, like the page's `data-snapscope`.
import { EngineClient, EngineFailure, boot } from './client';
import type { EngineError, Progress } from './protocol';
import type { EngineAnswers, Overview } from './generated/answers';
import type { AppHandle, OpenFile, ViewName } from './app-types';
import { VIEWS, isView } from './views';
import { bytes, el, int } from './ui/format';
import { fetchSnapshot } from './fetch-snapshot';
import { type Selection, changeSelection, deviceShown, errorInfo, renderView, viewContext } from './shell';

// Filled in by the build: the page's style sheet for a shadow root, and the release's version.
declare const __SNAPSCOPE_ELEMENT_CSS__: string;
declare const __SNAPSCOPE_VERSION__: string;

/** Where worker.js and snapscope_bg.wasm are: beside this module, wherever it is served from. */
const MODULE_BASE = new URL('.', import.meta.url);

/** Views of one file: every tab of the page but Compare (which needs a second file). */
const ELEMENT_VIEWS = (Object.keys(VIEWS) as ViewName[]).filter((v) => v !== 'compare');

type State = 'loading' | 'ready' | 'error';

/** How a load ends that a newer load (or the element's removal) replaced: silently. */
const REPLACED = new EngineFailure({ code: 'CANCELLED', message: 'replaced by a newer load', hint: '' });

export class SnapscopeView extends HTMLElement implements AppHandle {
  static readonly observedAttributes = ['src', 'view', 'device', 'height', 'event'];
  static readonly version = __SNAPSCOPE_VERSION__;

  files: OpenFile[] = [];
  /** What the views show (the device: the attribute's, else the file's first). */
  private readonly sel: Selection = {
    view: 'overview',
    device: 0,
    event: null,
    atPeak: false,
    template: null,
    range: null,
  };
  private readonly change = changeSelection(this.sel, (v): v is ViewName => isView(v) && v !== 'compare');
  private client: EngineClient | null = null;
  /** What the element shows (a URL or a Blob) and its name: loaded again when put back. */
  private source: string | Blob | null = null;
  private sourceName: string | undefined;
  /** Counts loads: an older load that ends late must not replace a newer one. */
  private generation = 0;
  private readonly tabs: HTMLElement;
  private readonly status: HTMLElement;
  private readonly main: HTMLElement;

  constructor() {
    super();
    const shadow = this.attachShadow({ mode: 'open' });
    // A constructed sheet, not a <style>: a host page's CSP need not allow inline styles.
    shadow.adoptedStyleSheets = [elementSheet()];
    this.tabs = el('nav', { class: 'tabs', part: 'tabs' });
    this.status = el('div', { class: 'status', role: 'status' });
    this.main = el('main', { part: 'view' });
    shadow.append(this.tabs, this.status, this.main);
    this.tabs.addEventListener('click', (e) => {
      const a = (e.target as HTMLElement).closest<HTMLElement>('a[data-view]');
      if (!a) return;
      e.preventDefault();
      this.show(a.dataset.view as ViewName);
    });
  }

  connectedCallback() {
    this.applyHeight();
    // `file` or `data` set on the element before this module defined it: an own property that
    // hides the setter. Take it and give it to the setter.
    for (const key of ['file', 'data'] as const) {
      if (!Object.hasOwn(this, key)) continue;
      const value = (this as unknown as Record<string, unknown>)[key];
      delete (this as unknown as Record<string, unknown>)[key];
      (this as unknown as Record<string, unknown>)[key] = value;
    }
    if (this.dataset.state) return;
    // Back in the document after a removal (which ended its engine): load what it showed again.
    const again = this.source ?? this.getAttribute('src');
    if (again) this.load(again, this.sourceName).catch(() => {});
    else this.showMessage('No snapshot given: set src, file or data.');
  }

  disconnectedCallback() {
    // Out of the document: its engine's memory goes back to the system (an unfinished load is
    // abandoned); back in, it loads the same snapshot again.
    this.generation++;
    this.client?.terminate();
    this.client = null;
    this.files = [];
    delete this.dataset.state;
  }

  attributeChangedCallback(name: string, old: string | null, value: string | null) {
    if (old === value) return;
    if (name === 'src' && value) this.load(value).catch(() => {});
    else if (name === 'view' && isView(value)) this.show(value);
    else if (name === 'device' && value !== null) this.setDevice(Number(value));
    else if (name === 'event') this.select(eventNumber(value));
    else if (name === 'height') this.applyHeight();
  }

  // ---- properties and methods (types in snapscope-view.d.ts) ---------------------------------

  /** A snapshot as a Blob or File (e.g. from an <input type=file>): loads it. */
  set file(f: Blob | null) {
    if (f) this.load(f).catch(() => {});
  }
  /** The Blob or File given last (`file`, `data` or `load()`), or null (a `src` or nothing). */
  get file(): Blob | null {
    return this.source instanceof Blob ? this.source : null;
  }

  /** A snapshot's bytes: loads them. Reading it gives the Blob made of them (as `file`). */
  set data(d: ArrayBuffer | ArrayBufferView | Blob | null) {
    if (d) this.load(d).catch(() => {});
  }
  get data(): Blob | null {
    return this.file;
  }

  /** Open a snapshot (a same-origin URL, a Blob or bytes); resolves with its overview. */
  async load(src: string | Blob | ArrayBuffer | ArrayBufferView, name?: string): Promise<Overview> {
    const generation = ++this.generation;
    this.client?.terminate();
    this.client = null;
    this.files = [];
    const source = typeof src === 'string' || src instanceof Blob ? src : new Blob([src as BlobPart]);
    this.source = source;
    this.sourceName = name;
    this.setState('loading');
    this.main.replaceChildren();
    this.renderTabs();
    const label = name ?? (typeof src === 'string' ? fileName(src) : ((src as File).name ?? 'snapshot'));
    const booted = await boot(MODULE_BASE).catch((e) => this.fail(e, generation));
    // Replaced or removed while the engine compiled: start no worker for it.
    if (generation !== this.generation) throw REPLACED;
    const client = new EngineClient(booted);
    this.client = client;
    try {
      this.showProgress({ stage: 'reading', bytesRead: 0, totalBytes: 0 }, label);
      const blob = typeof source === 'string' ? await fetchSnapshot(source, 'src=') : source;
      const json = await client.load(blob, label, (p) => generation === this.generation && this.showProgress(p, label));
      if (generation !== this.generation) throw REPLACED;
      const overview = JSON.parse(json) as Overview;
      this.files = [{ name: label, size: blob.size, client, overview, overviewJson: json }];
      this.sel.event = eventNumber(this.getAttribute('event'));
      this.change.show(this.getAttribute('view'));
      const dev = this.getAttribute('device');
      this.sel.device = deviceShown(this.files[0], dev !== null ? Number(dev) : NaN);
      this.setState('ready');
      this.render();
      this.dispatchEvent(new CustomEvent('snapscope-ready', { detail: JSON.parse(json) }));
      return overview;
    } catch (e) {
      if (generation === this.generation) this.fail(e, generation);
      throw e;
    }
  }

  /** The open snapshot's overview (the JSON of `snapscope overview --json`), or null. */
  overview(): Overview | null {
    return this.files[0] ? JSON.parse(this.files[0].overviewJson) : null;
  }

  /**
   * A template query: what `snapscope query FILE -t NAME --rows arrays --json` answers (the
   * device is `params.device`, else the first). Rejects before a snapshot is open.
   */
  async query(name: string, params: Record<string, unknown> = {}): Promise<EngineAnswers['query']> {
    return this.requireFile().client.call('query', name, JSON.stringify(params));
  }

  /** Read-only SQL on the SnapshotDB (rows as arrays). Rejects before a snapshot is open. */
  async sql(text: string, maxRows = 10000): Promise<EngineAnswers['sql']> {
    return this.requireFile().client.call('sql', text, maxRows, 30000);
  }

  // ---- AppHandle: what the views ask of their host ---------------------------------------------

  select(event: number | null, view?: ViewName) {
    if (this.change.select(event, view)) this.render();
  }

  show(view: ViewName) {
    if (this.change.show(view)) this.render();
  }

  setDevice(device: number, view?: ViewName) {
    if (this.change.setDevice(device, view)) this.render();
  }

  setEvent(event: number | null) {
    if (this.change.setEvent(event)) this.render();
  }

  showAt(peak: boolean, view: ViewName) {
    if (this.change.showAt(peak, view)) this.render();
  }

  setTemplate(name: string | null) {
    if (this.change.setTemplate(name)) this.render();
  }

  showRange(from: number, to: number) {
    if (this.change.showRange(from, to)) this.render();
  }

  // ---- rendering ---------------------------------------------------------------------------

  private render() {
    const f = this.files[0];
    this.renderTabs();
    if (!f) return;
    const devices = f.overview.devices;
    this.sel.device = deviceShown(f, this.sel.device);
    const device = this.sel.device;
    const events = devices.find((d) => d.device === device)?.events ?? 0;
    if (this.sel.event !== null && this.sel.event >= events) {
      // An event the file does not have (the attribute is the host page's text): say so, and
      // show the next valid one as usual.
      this.main.replaceChildren();
      this.showError(
        {
          code: 'EVENT_OUT_OF_RANGE',
          message: `event ${this.sel.event} is not in this snapshot: device ${device} has ${int(events)} events`,
          hint: events
            ? `give an event from 0 to ${events - 1}`
            : 'this device recorded no events; choose another device',
        },
        'Cannot show this event: ',
      );
      return;
    }
    // A view shown again after an error: the element is usable again.
    this.setState('ready');
    this.status.replaceChildren(
      el('span', { class: 'muted', text: `${f.name} · ${bytes(f.size)}` }),
      devices.length > 1 ? this.deviceSelect(devices.map((d) => d.device)) : '',
    );
    renderView(this.sel.view, viewContext(this, f, this.sel, null), this.main, this, (e) => this.showError(e));
  }

  private renderTabs() {
    this.tabs.replaceChildren(
      ...(this.files.length ? ELEMENT_VIEWS : []).map((name) =>
        el('a', {
          href: '#',
          class: name === this.sel.view ? 'active' : '',
          'data-view': name,
          text: VIEWS[name].title,
        }),
      ),
    );
  }

  private deviceSelect(devices: number[]): HTMLElement {
    const sel = el(
      'select',
      { 'aria-label': 'device' },
      ...devices.map((d) => el('option', { value: d, text: `device ${d}`, selected: d === this.sel.device })),
    );
    sel.addEventListener('change', () => this.setDevice(Number(sel.value)));
    return sel;
  }

  private showProgress(p: Progress, name: string) {
    const stage = {
      reading: p.totalBytes ? `reading ${bytes(p.bytesRead)} of ${bytes(p.totalBytes)}` : 'reading',
      parsing: `parsing ${bytes(p.totalBytes)}`,
      replaying: `replaying ${int(p.events ?? 0)} allocator events`,
      storing: `building the SnapshotDB (${int(p.events ?? 0)} events)`,
    }[p.stage];
    this.showMessage(`${name}: ${stage}…`);
  }

  private showMessage(text: string) {
    this.status.replaceChildren(el('span', { class: 'muted', text }));
  }

  private showError(e: EngineError, title = 'Could not open the snapshot: ') {
    this.setState('error');
    this.status.replaceChildren(
      el(
        'div',
        { class: 'error', role: 'alert' },
        el('strong', { text: title }),
        el('span', { class: 'msg', text: e.message }),
        e.hint ? el('div', { class: 'hint', text: e.hint }) : '',
        el('code', { text: e.code }),
      ),
    );
    this.dispatchEvent(new CustomEvent('snapscope-error', { detail: e }));
  }

  /** A failed load (of generation `generation`): the error shown, the engine ended. */
  private fail(e: unknown, generation: number): never {
    if (generation === this.generation) {
      this.client?.terminate();
      this.client = null;
      this.showError(errorInfo(e));
    }
    throw e;
  }

  private setState(s: State) {
    this.dataset.state = s;
  }

  private applyHeight() {
    const h = Number(this.getAttribute('height'));
    this.style.height = Number.isFinite(h) && h > 0 ? `${h}px` : '';
  }

  private requireFile(): OpenFile {
    if (!this.files[0]) throw new Error('no snapshot is loaded');
    return this.files[0];
  }
}

let sheet: CSSStyleSheet | null = null;
/** The style sheet every element's shadow root adopts (made once). */
function elementSheet(): CSSStyleSheet {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(__SNAPSCOPE_ELEMENT_CSS__);
  }
  return sheet;
}

/** The event in an attribute: a whole number ≥ 0, or null. */
function eventNumber(v: string | null): number | null {
  const e = v === null ? NaN : Number(v);
  return Number.isSafeInteger(e) && e >= 0 ? e : null;
}

function fileName(url: string): string {
  const last = url.split(/[?#]/)[0].split('/').pop() || 'snapshot';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

if (!customElements.get('snapscope-view')) customElements.define('snapscope-view', SnapscopeView);

declare global {
  interface HTMLElementTagNameMap {
    'snapscope-view': SnapscopeView;
  }
}
