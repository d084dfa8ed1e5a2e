// snapscope's page: open snapshots (drop, picker, ?src=), show them through the views, and expose
// `window.snapscope` for embedding. Every number comes from the engine worker.
import { EngineClient, EngineFailure, boot, prepareEngine, takeEngine } from './client';
import type { Progress } from './protocol';
import type { Overview, Rows } from './types';
import type { OpenFile, Route, ViewContext, ViewName } from './app-types';
import { bytes, download, el, int } from './ui/format';
import { VIEWS, isView } from './views';
import { computing } from './ui/busy';

class App {
  files: OpenFile[] = [];
  route: Route = { view: 'overview', file: 0, device: 0, event: null, template: null, range: null };
  private loading: EngineClient | null = null;
  private readonly main = document.getElementById('view') as HTMLElement;
  private readonly nav = document.getElementById('tabs') as HTMLElement;
  private readonly fileSel = document.getElementById('file-select') as HTMLSelectElement;
  private readonly devSel = document.getElementById('device-select') as HTMLSelectElement;
  private readonly progress = document.getElementById('progress') as HTMLElement;
  private readonly errorBox = document.getElementById('error') as HTMLElement;

  constructor() {
    this.readHash();
    this.wireChrome();
    this.render();
  }

  get current(): OpenFile | undefined {
    return this.files[this.route.file];
  }

  setStatus(s: 'loading' | 'ready' | 'error' | 'empty') {
    document.documentElement.dataset.snapscope = s;
  }

  // ---- files -------------------------------------------------------------------------------

  async openFiles(files: File[] | Blob[], names?: string[]): Promise<Overview | undefined> {
    let last: Overview | undefined;
    for (const [i, f] of files.entries()) {
      last = await this.openOne(f, names?.[i] ?? (f as File).name ?? 'snapshot');
    }
    return last;
  }

  /**
   * Open a same-origin http(s) URL (?src=, the embedding API). Every failure ends in
   * `data-snapscope="error"` with a message: a load that never settles would leave a docs portal's
   * page at "loading" for good.
   */
  async openUrl(url: string): Promise<Overview | undefined> {
    const fail = (code: string, message: string, hint: string) => {
      this.hideProgress();
      this.showError({ code, message, hint });
      return undefined;
    };
    let u: URL;
    try {
      u = new URL(url, document.baseURI);
    } catch {
      return fail('BAD_URL', `${url} is not a URL`, 'use ?src=/path/to/snapshot.pickle');
    }
    // file: (the single-file page opened from disk) has origin "null" like the page itself, and
    // blob: carries its creator's origin: neither can be fetched here, so only http(s) is tried.
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      return fail(
        'UNSUPPORTED_URL',
        `${u.protocol} URLs cannot be opened with ?src=`,
        location.protocol === 'file:'
          ? 'a page opened from a file cannot fetch other files: open the snapshot with "Open…" or drop it here'
          : 'snapscope fetches same-origin http(s) files (?src=/path/to/snapshot.pickle); open local files with "Open…"',
      );
    if (u.origin !== location.origin)
      return fail(
        'CROSS_ORIGIN',
        `${u.href} is not on this page's origin`,
        'snapscope only fetches same-origin files (?src=/path/to/snapshot.pickle)',
      );
    this.setStatus('loading');
    this.showProgress({ stage: 'reading', bytesRead: 0, totalBytes: 0 }, u.pathname);
    let blob: Blob;
    try {
      const res = await fetch(u.href);
      // A redirect to another origin is refused by the CSP (fetch rejects); this catches the rest.
      if (res.url && new URL(res.url).origin !== location.origin)
        return fail(
          'CROSS_ORIGIN',
          `${u.pathname} redirected to ${res.url}, not this page's origin`,
          'link the file itself',
        );
      if (!res.ok) return fail('FETCH_FAILED', `${u.pathname}: HTTP ${res.status}`, 'check the ?src= path');
      blob = await res.blob();
    } catch (e) {
      // A network error, a redirect the CSP blocked, a body cut short.
      return fail(
        'FETCH_FAILED',
        `${u.pathname} could not be fetched (${e instanceof Error ? e.message : String(e)})`,
        'check the ?src= path; redirects to another origin are refused',
      );
    }
    return this.openOne(blob, fileName(u.pathname));
  }

  private async openOne(file: Blob, name: string): Promise<Overview | undefined> {
    // Marks for benchmarks: choosing the file → the overview from the engine → the first view.
    performance.mark('snapscope:file-chosen');
    this.hideError();
    this.setStatus('loading');
    const client = takeEngine(await boot());
    delete document.documentElement.dataset.engine;
    this.loading = client;
    this.showProgress({ stage: 'reading', bytesRead: 0, totalBytes: file.size }, name);
    try {
      const json = await client.load(file, name, (p) => this.showProgress(p, name));
      performance.mark('snapscope:overview-received');
      const overview = JSON.parse(json) as Overview;
      this.files.push({ name, size: file.size, client, overview, overviewJson: json });
      this.route.file = this.files.length - 1;
      // The first file opens where the URL hash points (device and event), e.g. a shared link.
      const hash = this.files.length === 1 ? new URLSearchParams(location.hash.slice(1)) : null;
      const device = hash?.has('device') ? Number(hash.get('device')) : null;
      this.route.device = overview.devices.some((d) => d.device === device)
        ? (device as number)
        : (overview.devices[0]?.device ?? 0);
      this.route.event = hash ? eventOf(hash) : null;
      this.route.range = null;
      this.hideProgress();
      this.setStatus('ready');
      this.render();
      // After the frame that paints it (a task queued from the next animation frame).
      requestAnimationFrame(() => setTimeout(() => performance.mark('snapscope:first-view')));
      return overview;
    } catch (e) {
      client.terminate();
      this.hideProgress();
      this.showError(e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' });
      if (this.files.length) this.setStatus('ready');
      throw e;
    } finally {
      this.loading = null;
      // The next file gets a warm engine too, whether this one opened, failed or was cancelled.
      prepareNextEngine();
    }
  }

  cancelLoad() {
    this.loading?.terminate();
  }

  // ---- chrome ------------------------------------------------------------------------------

  private wireChrome() {
    const input = document.getElementById('file-input') as HTMLInputElement;
    input.addEventListener('change', () => {
      if (input.files?.length) this.openFiles([...input.files]).catch(() => {});
      input.value = '';
    });
    for (const b of document.querySelectorAll<HTMLElement>('[data-open]'))
      b.addEventListener('click', () => input.click());
    document.getElementById('cancel')!.addEventListener('click', () => this.cancelLoad());
    document.getElementById('export-db')!.addEventListener('click', () => this.exportDb());
    document.getElementById('export-report')!.addEventListener('click', () => this.exportReport());
    this.fileSel.addEventListener('change', () => {
      this.route.file = Number(this.fileSel.value);
      this.route.device = this.current?.overview.devices[0]?.device ?? 0;
      this.route.event = null;
      this.route.range = null;
      this.render();
    });
    this.devSel.addEventListener('change', () => {
      this.route.device = Number(this.devSel.value);
      this.route.event = null;
      this.route.range = null;
      this.render();
    });
    window.addEventListener('hashchange', () => {
      this.readHash();
      this.render();
    });
    // Drag and drop anywhere on the page.
    let depth = 0;
    const overlay = document.getElementById('drop-overlay')!;
    document.addEventListener('dragenter', (e) => {
      e.preventDefault();
      depth++;
      overlay.hidden = false;
    });
    document.addEventListener('dragleave', () => {
      if (--depth <= 0) overlay.hidden = true;
    });
    document.addEventListener('dragover', (e) => e.preventDefault());
    document.addEventListener('drop', (e) => {
      e.preventDefault();
      depth = 0;
      overlay.hidden = true;
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length) this.openFiles(files).catch(() => {});
    });
  }

  private readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const view = p.get('view');
    if (isView(view)) this.route.view = view;
    if (p.has('device')) this.route.device = Number(p.get('device'));
    this.route.event = eventOf(p);
    this.route.template = p.get('template');
    this.route.range = null;
  }

  private writeHash() {
    const p = new URLSearchParams();
    p.set('view', this.route.view);
    p.set('device', String(this.route.device));
    if (this.route.event !== null) p.set('event', String(this.route.event));
    if (this.route.template) p.set('template', this.route.template);
    const h = '#' + p.toString();
    if (location.hash !== h) history.replaceState(null, '', h);
  }

  /** Select an event everywhere (details, tree, state follow it). */
  select(event: number | null, view?: ViewName) {
    this.route.event = event;
    this.route.range = null;
    if (isView(view)) this.route.view = view;
    this.render();
  }

  show(view: ViewName) {
    if (isView(view)) this.route.view = view;
    this.render();
  }

  /** Switch to another device of the same file (its selection starts afresh), in `view`. */
  setDevice(device: number, view?: ViewName) {
    this.route.device = device;
    this.route.event = null;
    this.route.range = null;
    if (isView(view)) this.route.view = view;
    this.render();
  }

  /** Select an event without re-rendering the current view (the chart already shows it). */
  setEvent(event: number | null) {
    this.route.event = event;
    this.writeHash();
    this.renderTabs();
  }

  setTemplate(name: string | null) {
    this.route.template = name;
    this.writeHash();
  }

  /** Show events from..to in the timeline (the selection is kept). */
  showRange(from: number, to: number) {
    this.route.range = [Math.min(from, to), Math.max(from, to)];
    this.route.view = 'timeline';
    this.render();
  }

  render() {
    const f = this.current;
    document.body.classList.toggle('has-file', !!f);
    this.fileSel.replaceChildren(
      ...this.files.map((x, i) =>
        el('option', { value: i, text: `${x.name} (${bytes(x.size)})`, selected: i === this.route.file }),
      ),
    );
    this.fileSel.hidden = this.files.length === 0;
    const devices = f?.overview.devices ?? [];
    if (f && !devices.some((d) => d.device === this.route.device)) this.route.device = devices[0]?.device ?? 0;
    this.devSel.replaceChildren(
      ...devices.map((d) =>
        el('option', {
          value: d.device,
          text: `${d.pinned_host ? `pinned host memory (entry ${d.device})` : `device ${d.device}`} · ${int(d.events)} events`,
          selected: d.device === this.route.device,
        }),
      ),
    );
    this.devSel.hidden = devices.length < 2;
    (document.getElementById('export-db') as HTMLButtonElement).disabled = !f;
    (document.getElementById('export-report') as HTMLButtonElement).disabled = !f;
    this.renderTabs();
    this.writeHash();
    if (!f) {
      this.main.replaceChildren();
      if (
        document.documentElement.dataset.snapscope !== 'loading' &&
        document.documentElement.dataset.snapscope !== 'error'
      )
        this.setStatus('empty');
      return;
    }
    const ctx: ViewContext = {
      app: this,
      file: f,
      device: this.route.device,
      deviceOverview: devices.find((d) => d.device === this.route.device),
      event: this.route.event,
      template: this.route.template,
      range: this.route.range,
      // A fresh container per render: a slower, older render writes into a detached node.
      root: el('div', { class: `view view-${this.route.view}` }),
    };
    this.main.replaceChildren(ctx.root);
    document.documentElement.dataset.view = 'computing';
    // Through an async function: a view that throws at once fails like one that rejects later.
    const view = VIEWS[this.route.view];
    computing(ctx.root, (async () => view.render(ctx))())
      .then(() => {
        if (ctx.root.isConnected) document.documentElement.dataset.view = 'done';
      })
      .catch((e) =>
        this.showError(e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' }),
      );
  }

  private renderTabs() {
    const ev = this.route.event === null ? '' : `&event=${this.route.event}`;
    this.nav.replaceChildren(
      ...Object.entries(VIEWS).map(([name, v]) =>
        el('a', {
          href: `#view=${name}&device=${this.route.device}${ev}`,
          class: name === this.route.view ? 'active' : '',
          'data-view': name,
          text: v.title,
        }),
      ),
    );
  }

  // ---- progress & errors -------------------------------------------------------------------

  private showProgress(p: Progress, name: string) {
    this.progress.hidden = false;
    const frac = p.totalBytes ? p.bytesRead / p.totalBytes : 0;
    const stage = {
      reading: `Reading ${bytes(p.bytesRead)} of ${bytes(p.totalBytes)}`,
      parsing: `Parsing ${bytes(p.totalBytes)}`,
      replaying: `Replaying ${int(p.events ?? 0)} allocator events`,
      storing: `Building the SnapshotDB (${int(p.events ?? 0)} events)`,
    }[p.stage];
    this.progress.querySelector('.name')!.textContent = name;
    this.progress.querySelector('.stage')!.textContent = stage;
    (this.progress.querySelector('.bar > div') as HTMLElement).style.width =
      `${Math.round((p.stage === 'reading' ? frac * 0.4 : { parsing: 0.55, replaying: 0.75, storing: 0.9 }[p.stage]) * 100)}%`;
  }

  private hideProgress() {
    this.progress.hidden = true;
  }

  showError(e: { code: string; message: string; hint: string }) {
    if (e.code === 'CANCELLED') {
      this.errorBox.hidden = false;
      this.errorBox.replaceChildren(el('strong', { text: 'Loading cancelled.' }));
      if (!this.files.length) this.setStatus('empty');
      return;
    }
    this.setStatus('error');
    this.errorBox.hidden = false;
    this.errorBox.replaceChildren(
      el('strong', { text: 'Could not open the snapshot: ' }),
      el('span', { class: 'msg', text: e.message }),
      e.hint ? el('div', { class: 'hint', text: e.hint }) : '',
      el('code', { text: e.code }),
    );
  }

  hideError() {
    this.errorBox.hidden = true;
  }

  async exportReport() {
    const f = this.current;
    if (!f) return;
    const html = await f.client.call<string>('report');
    download(f.name.replace(/\.(pickle|pkl|json|gz)+$/i, '') + '-report.html', html, 'text/html');
  }

  async exportDb() {
    const f = this.current;
    if (!f) return;
    const buf = await f.client.exportDb();
    download(f.name.replace(/\.(pickle|pkl|json|gz)+$/i, '') + '.db', buf, 'application/vnd.sqlite3');
  }
}

/** The last segment of a URL path, decoded when it decodes (a malformed % escape stays as is). */
function fileName(path: string): string {
  const last = path.split('/').pop() || 'snapshot';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The event in a URL hash: a whole number ≥ 0, or null (a link may carry anything). */
function eventOf(p: URLSearchParams): number | null {
  const e = p.has('event') ? Number(p.get('event')) : NaN;
  return Number.isSafeInteger(e) && e >= 0 ? e : null;
}

const app = new App();

/** The embedding API (documented in the README). */
const api = {
  load: async (src: File | Blob | string) =>
    (typeof src === 'string' ? app.openUrl(src) : app.openFiles([src])).then(() => api.overview()),
  overview: () => (app.current ? JSON.parse(app.current.overviewJson) : null),
  sql: (text: string, maxRows = 10000) => requireFile().client.call<Rows>('sql', text, maxRows, 30000),
  query: (name: string, params: Record<string, unknown> = {}) =>
    requireFile().client.call<Rows>('query', name, JSON.stringify(params)),
  stats: () => requireFile().client.call<Record<string, number>>('stats'),
  exportDb: () => requireFile().client.exportDb(),
  select: (event: number | null, view?: ViewName) => app.select(event, view),
};
function requireFile() {
  if (!app.current) throw new Error('no snapshot is loaded');
  return app.current;
}
(window as unknown as { snapscope: typeof api }).snapscope = api;

/**
 * Keep one engine started and warmed up for the next file, prepared when the page is idle.
 * `data-engine="ready"` tells tests and benchmarks that a file chosen now meets a warm engine.
 */
function prepareNextEngine() {
  const idle = window.requestIdleCallback ?? ((f: () => void) => setTimeout(f, 200));
  idle(
    () => {
      boot()
        .then(prepareEngine)
        .then(() => (document.documentElement.dataset.engine = 'ready'))
        .catch((e) => console.warn('snapscope: could not prepare an engine', e));
    },
    { timeout: 2000 },
  );
}
prepareNextEngine();

boot().catch((e) =>
  app.showError({
    code: 'BOOT_FAILED',
    message: `the engine could not start: ${e}`,
    hint: 'serve www/dist as static files (application/wasm for .wasm) or open snapscope.html',
  }),
);
const src = new URLSearchParams(location.search).get('src');
if (src) app.openUrl(src).catch(() => {});
