// snapscope's page: open snapshots (drop, picker, ?src=), show them through the views, and expose
// `window.snapscope` for embedding. Every number comes from the engine worker.
import { EngineClient, EngineFailure, boot, onLiveEngines, prepareEngine, releaseEngine, takeEngine } from './client';
import type { Progress } from './protocol';
import type { Overview, RanksReport } from './generated/answers';
import type { OpenFile, PageName, RankSource, RanksRun, Route, ViewName } from './app-types';
import { bytes, download, el, int, plural } from './ui/format';
import { VIEWS, isView } from './views';
import { renderRanks } from './views/ranks';
import { SNAPSHOT_EXTENSIONS, folderSnapshots, isSnapshotName, uniqueNames } from './views/ranks-layout';
import { summarizeRun } from './run-pool';
import { installPageApi } from './page-api';
import { changeSelection, errorInfo, renderView, viewContext } from './shell';
import { fetchSnapshot } from './fetch-snapshot';
import { warmFonts } from './ui/fonts';

/** A file chosen, dropped or found in a dropped folder, with its path there (or its name). */
interface Picked {
  file: File;
  path: string;
}

/** `view`, or the Ranks view: what the URL hash and the tabs may name. */
const isPage = (name: unknown): name is PageName => name === 'ranks' || isView(name);

class App {
  files: OpenFile[] = [];
  route: Route = {
    view: 'overview',
    file: 0,
    device: 0,
    event: null,
    atPeak: false,
    template: null,
    range: null,
    other: null,
  };
  /** The last run of many files (the Ranks view), if any. */
  run: RanksRun | null = null;
  private loading: EngineClient | null = null;
  /** Stops the run being summarized, if any. */
  private cancelRun: (() => void) | null = null;
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
  async openUrl(url: string, source?: RankSource): Promise<Overview | undefined> {
    this.setStatus('loading');
    this.showProgress({ stage: 'reading', bytesRead: 0, totalBytes: 0 }, url);
    let blob: Blob;
    try {
      blob = await fetchSnapshot(url);
    } catch (e) {
      this.hideProgress();
      this.showError(errorInfo(e));
      return undefined;
    }
    return this.openOne(blob, source?.name ?? fileName(new URL(url, document.baseURI).pathname), { source });
  }

  // ---- many files: a distributed run ---------------------------------------------------------

  /**
   * Files chosen together, dropped together or found in a folder: one opens as usual; several are
   * a run (the Ranks view), of their snapshots only.
   */
  openPicked(picked: Picked[], folder: boolean): Promise<unknown> {
    const list = folder
      ? folderSnapshots(picked)
      : picked.length > 1
        ? picked.filter((p) => isSnapshotName(p.path))
        : picked;
    if (!list.length) {
      this.showError({
        code: 'NO_SNAPSHOTS',
        message: `no snapshot among the ${plural(picked.length, 'file')} ${folder ? 'in the folder' : 'chosen'}`,
        hint: `snapshots end in ${SNAPSHOT_EXTENSIONS.join(', ')}`,
      });
      if (this.files.length || this.run) this.setStatus('ready');
      return Promise.resolve();
    }
    if (list.length === 1) return this.openFiles([list[0].file], [list[0].path]);
    return this.openRun(list.map((p) => ({ name: p.path, blob: p.file })));
  }

  /**
   * Summarize many files as the ranks of one run: each file is read by an engine of its own,
   * summarized (`rankSummary`) and its engine closed, at most `poolSize` engines at once; then
   * the summaries are combined (`combineRanks`) into the Ranks view. Resolves with the report
   * (the JSON of `snapscope ranks --json`); rejects when cancelled.
   */
  async openRun(given: RankSource[]): Promise<RanksReport> {
    if (!given.length)
      throw new EngineFailure({
        code: 'INVALID_PARAMETER',
        message: 'no snapshot files given',
        hint: 'loadMany([file0, file1, ...]): one snapshot per rank',
      });
    // The CLI's order, asked of the engine (files without a rank are numbered by it).
    const b = await boot();
    const orderer = takeEngine(b);
    let ordered: RankSource[];
    try {
      ordered = (await orderer.orderRunFiles(given.map((s) => s.name))).map((i) => given[i]);
    } finally {
      releaseEngine(orderer);
    }
    const names = uniqueNames(ordered.map((s) => s.name));
    const sources = ordered.map((s, i) => ({ ...s, name: names[i] }));
    const total = sources.length;
    this.hideError();
    this.setStatus('loading');
    const label = `${plural(total, 'snapshot')} of a run`;
    const run = summarizeRun(sources, (p) =>
      this.showRunProgress(
        label,
        `Summarized ${int(p.done)} of ${int(p.total)} files · ${plural(p.reading, 'engine')} reading (each closed after its file)`,
        p.done / p.total,
      ),
    );
    this.cancelRun = run.cancel;
    try {
      this.run = await run.outcome;
      const report = this.run.report;
      this.route.view = 'ranks';
      this.hideProgress();
      if (this.run.sources.length) this.setStatus('ready');
      else
        this.showError({
          code: 'NO_RANK_READ',
          message: `none of the ${plural(total, 'file')} could be read`,
          hint: 'the Ranks view lists each file with its error',
        });
      this.render();
      return JSON.parse(JSON.stringify(report)) as RanksReport;
    } catch (e) {
      this.hideProgress();
      this.showError(errorInfo(e));
      if (this.files.length || this.run) this.setStatus('ready');
      throw e;
    } finally {
      this.cancelRun = null;
      prepareNextEngine();
    }
  }

  /** Open `run.report.files[file]` as the current file, in the Overview (at `device`). */
  async openRank(file: number, device?: number): Promise<void> {
    await this.ensureRank(file);
    const i = this.files.findIndex((f) => f.source === this.run?.sources[file]);
    if (i < 0) return;
    Object.assign(this.route, { file: i, view: 'overview', event: null, range: null, other: null });
    this.route.device = device ?? this.files[i].overview.devices[0]?.device ?? 0;
    this.render();
  }

  /**
   * The open file of `run.report.files[file]`, read again when it is not open. A failure (the
   * file changed since) is shown like any failed load; the caller finds the file not open.
   */
  private async ensureRank(file: number): Promise<void> {
    const src = this.run?.sources[file];
    if (!src || this.files.some((f) => f.source === src)) return;
    const view = this.route.view;
    try {
      if (src.blob) await this.openOne(src.blob, src.name, { source: src, view });
      else if (src.url) await this.openUrl(src.url, src);
    } catch {
      // openOne showed why.
    }
  }

  /** The worst rank and the median rank side by side in Compare (the median rank first). */
  async compareWithMedian(): Promise<void> {
    const r = this.run?.report;
    const w = r?.summary.worst;
    if (!r || !w) return;
    const worst = r.files.findIndex((f) => f.file === w.file);
    const median = r.files.findIndex((f) => f.file === w.median_file);
    await this.ensureRank(worst);
    await this.ensureRank(median);
    const at = (k: number) => this.files.findIndex((f) => f.source === this.run?.sources[k]);
    const [a, b] = [at(median), at(worst)];
    if (a < 0 || b < 0) return;
    Object.assign(this.route, { file: a, view: 'compare', event: null, range: null, other: b });
    this.route.device = w.device;
    this.render();
  }

  private showRunProgress(name: string, stage: string, frac: number) {
    this.progress.hidden = false;
    this.progress.querySelector('.name')!.textContent = name;
    this.progress.querySelector('.stage')!.textContent = stage;
    (this.progress.querySelector('.bar > div') as HTMLElement).style.width = `${Math.round(frac * 100)}%`;
  }

  /**
   * Open one file as the current one. `source`: the rank of the run it is; `view`: the page to
   * show once open (default: the current view, or the Overview instead of Ranks).
   */
  private async openOne(
    file: Blob,
    name: string,
    opts: { source?: RankSource; view?: PageName } = {},
  ): Promise<Overview | undefined> {
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
      this.files.push({ name, size: file.size, client, overview, overviewJson: json, source: opts.source });
      this.route.file = this.files.length - 1;
      this.route.other = null;
      this.route.view = opts.view ?? (this.route.view === 'ranks' ? 'overview' : this.route.view);
      // The first file opens where the URL hash points (device and event), e.g. a shared link.
      const hash = this.files.length === 1 ? new URLSearchParams(location.hash.slice(1)) : null;
      const device = hash?.has('device') ? Number(hash.get('device')) : null;
      this.route.device = overview.devices.some((d) => d.device === device)
        ? (device as number)
        : (overview.devices[0]?.device ?? 0);
      this.route.event = hash ? eventOf(hash) : null;
      this.route.atPeak = hash?.get('at') === 'peak';
      this.route.range = null;
      this.hideProgress();
      this.setStatus('ready');
      this.render();
      performance.mark('snapscope:overview-built');
      // After the frame that paints it (a task queued from the next animation frame).
      requestAnimationFrame(() => setTimeout(() => performance.mark('snapscope:first-view')));
      return overview;
    } catch (e) {
      client.terminate();
      this.hideProgress();
      this.showError(errorInfo(e));
      if (this.files.length || this.run) this.setStatus('ready');
      throw e;
    } finally {
      this.loading = null;
      // The next file gets a warm engine too, whether this one opened, failed or was cancelled.
      prepareNextEngine();
    }
  }

  cancelLoad() {
    this.loading?.terminate();
    this.cancelRun?.();
  }

  // ---- chrome ------------------------------------------------------------------------------

  private wireChrome() {
    const input = document.getElementById('file-input') as HTMLInputElement;
    const folderInput = document.getElementById('folder-input') as HTMLInputElement;
    const picked = (list: FileList | null) =>
      [...(list ?? [])].map((file) => ({ file, path: file.webkitRelativePath || file.name }));
    input.addEventListener('change', () => {
      if (input.files?.length) this.openPicked(picked(input.files), false).catch(() => {});
      input.value = '';
    });
    folderInput.addEventListener('change', () => {
      if (folderInput.files?.length) this.openPicked(picked(folderInput.files), true).catch(() => {});
      folderInput.value = '';
    });
    for (const b of document.querySelectorAll<HTMLElement>('[data-open]'))
      b.addEventListener('click', () => input.click());
    for (const b of document.querySelectorAll<HTMLElement>('[data-open-folder]'))
      b.addEventListener('click', (e) => {
        // Inside the drop zone, whose click opens the file picker.
        e.stopPropagation();
        folderInput.click();
      });
    document.getElementById('cancel')!.addEventListener('click', () => this.cancelLoad());
    document.getElementById('export-db')!.addEventListener('click', () => this.exportDb());
    document.getElementById('export-report')!.addEventListener('click', () => this.exportReport());
    this.fileSel.addEventListener('change', () => {
      this.route.file = Number(this.fileSel.value);
      this.route.device = this.current?.overview.devices[0]?.device ?? 0;
      this.route.event = null;
      this.route.range = null;
      this.route.other = null;
      if (this.route.view === 'ranks') this.route.view = 'overview';
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
      // Entries are only readable during the event: take them now, walk the folders after.
      const items = [...(e.dataTransfer?.items ?? [])].filter((i) => i.kind === 'file');
      const entries = items.map((i) => i.webkitGetAsEntry?.() ?? null);
      const files = [...(e.dataTransfer?.files ?? [])];
      if (entries.length && entries.every((x) => x !== null) && entries.some((x) => x!.isDirectory))
        droppedFiles(entries as FileSystemEntry[])
          .then((list) => this.openPicked(list, true).catch(() => {}))
          .catch((err) =>
            this.showError({ code: 'DROP_FAILED', message: `the dropped folder could not be read (${err})`, hint: '' }),
          );
      else if (files.length)
        this.openPicked(
          files.map((file) => ({ file, path: file.name })),
          false,
        ).catch(() => {});
    });
  }

  private readHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const view = p.get('view');
    if (isPage(view)) this.route.view = view;
    if (p.has('device')) this.route.device = Number(p.get('device'));
    this.route.event = eventOf(p);
    this.route.atPeak = p.get('at') === 'peak';
    this.route.template = p.get('template');
    this.route.range = null;
  }

  private writeHash() {
    const p = new URLSearchParams();
    p.set('view', this.route.view);
    p.set('device', String(this.route.device));
    if (this.route.event !== null) p.set('event', String(this.route.event));
    if (this.route.atPeak) p.set('at', 'peak');
    if (this.route.template) p.set('template', this.route.template);
    const h = '#' + p.toString();
    if (location.hash === h) return;
    try {
      history.replaceState(null, '', h);
    } catch {
      // A page without a URL of its own (an iframe's srcdoc, as Jupyter shows snapscope.html())
      // may not change it: the view then has no shareable link, and works the same.
    }
  }

  // ---- AppHandle: what the views ask of their host (shell.ts) ---------------------------------

  private readonly change = changeSelection(this.route, isPage);

  select(event: number | null, view?: ViewName) {
    this.after(this.change.select(event, view));
  }

  show(view: PageName) {
    this.after(this.change.show(view));
  }

  setDevice(device: number, view?: ViewName) {
    this.after(this.change.setDevice(device, view));
  }

  setEvent(event: number | null) {
    this.after(this.change.setEvent(event));
  }

  showAt(peak: boolean, view: ViewName) {
    this.after(this.change.showAt(peak, view));
  }

  setTemplate(name: string | null) {
    this.after(this.change.setTemplate(name));
  }

  showRange(from: number, to: number) {
    this.after(this.change.showRange(from, to));
  }

  /** After a change: render the view again, or keep it and update the hash and tabs. */
  private after(rerender: boolean) {
    if (rerender) return this.render();
    this.writeHash();
    this.renderTabs();
  }

  render() {
    const f = this.current;
    if (this.route.view === 'ranks' && !this.run) this.route.view = 'overview';
    // A run without an open file has only its Ranks view to show.
    if (!f && this.run) this.route.view = 'ranks';
    const ranks = this.route.view === 'ranks' ? this.run : null;
    document.body.classList.toggle('has-file', !!f || !!ranks);
    this.fileSel.replaceChildren(
      ...this.files.map((x, i) =>
        el('option', { value: i, text: `${x.name} (${bytes(x.size)})`, selected: i === this.route.file }),
      ),
    );
    this.fileSel.hidden = this.files.length === 0;
    // The whole name on hover (a long one is cut in the bar).
    this.fileSel.title = f ? `${f.name} (${bytes(f.size)})` : '';
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
    this.devSel.hidden = devices.length < 2 || !!ranks;
    (document.getElementById('export-db') as HTMLButtonElement).disabled = !f;
    (document.getElementById('export-report') as HTMLButtonElement).disabled = !f;
    this.renderTabs();
    this.writeHash();
    if (ranks) {
      const root = el('div', { class: 'view view-ranks' });
      this.main.replaceChildren(root);
      document.documentElement.dataset.view = 'computing';
      renderRanks({ app: this, run: ranks, root })
        .then(() => {
          if (root.isConnected) document.documentElement.dataset.view = 'done';
        })
        .catch((e) => this.showError(errorInfo(e)));
      return;
    }
    if (!f) {
      this.main.replaceChildren();
      if (
        document.documentElement.dataset.snapscope !== 'loading' &&
        document.documentElement.dataset.snapscope !== 'error'
      )
        this.setStatus('empty');
      return;
    }
    const view = this.route.view === 'ranks' ? 'overview' : this.route.view;
    renderView(view, viewContext(this, f, this.route, this.route.other), this.main, document.documentElement, (e) =>
      this.showError(e),
    );
  }

  private renderTabs() {
    const ev = this.route.event === null ? '' : `&event=${this.route.event}`;
    const ranks = this.run
      ? [
          el('a', {
            href: '#view=ranks',
            class: this.route.view === 'ranks' ? 'active ranks-tab' : 'ranks-tab',
            'data-view': 'ranks',
            text: `Ranks (${int(this.run.total)})`,
            title: 'the run of many files: every rank, the outliers, the worst against the median',
          }),
        ]
      : [];
    this.nav.replaceChildren(
      ...ranks,
      ...(this.current ? Object.entries(VIEWS) : []).map(([name, v]) =>
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
      if (!this.files.length && !this.run) this.setStatus('empty');
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
    const html = await f.client.call('report');
    download(f.name.replace(/\.(pickle|pkl|json|gz)+$/i, '') + '-report.html', html, 'text/html');
  }

  async exportDb() {
    const f = this.current;
    if (!f) return;
    const buf = await f.client.exportDb();
    download(f.name.replace(/\.(pickle|pkl|json|gz)+$/i, '') + '.db', buf, 'application/vnd.sqlite3');
  }
}

/** Every file under dropped entries (folders walked), with its path from the dropped item. */
async function droppedFiles(entries: FileSystemEntry[]): Promise<Picked[]> {
  const out: Picked[] = [];
  const walk = async (entry: FileSystemEntry): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
      out.push({ file, path: entry.fullPath.replace(/^\//, '') || file.name });
    } else if (entry.isDirectory) {
      const reader = (entry as FileSystemDirectoryEntry).createReader();
      // readEntries answers in batches (100 in Chrome) until an empty one.
      for (;;) {
        const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
        if (!batch.length) break;
        for (const e of batch) await walk(e);
      }
    }
  };
  for (const e of entries) await walk(e);
  return out;
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

installPageApi(app);
// Engines (workers) holding memory now, for tests and the curious: `data-engines`.
onLiveEngines((n) => (document.documentElement.dataset.engines = String(n)));

/**
 * After a load, the next engine waits this long: its warm-up (a CPU core for a few tenths of a
 * second) would otherwise compete with the file just opened, whose analysis, database and first
 * views keep the page and its worker busy meanwhile (the machine may have 2 cores).
 */
const AFTER_LOAD_MS = 2000;

/**
 * Keep one engine started and warmed up for the next file, prepared when the page is idle.
 * `data-engine="ready"` tells tests and benchmarks that a file chosen now meets a warm engine.
 */
function prepareNextEngine(afterMs = AFTER_LOAD_MS) {
  const idle = window.requestIdleCallback ?? ((f: () => void) => setTimeout(f, 200));
  const prepare = () =>
    boot()
      .then(prepareEngine)
      .then(() => (document.documentElement.dataset.engine = 'ready'))
      .catch((e) => console.warn('snapscope: could not prepare an engine', e));
  setTimeout(() => idle(prepare, { timeout: 2000 }), afterMs);
}
prepareNextEngine(0);
// The fonts too, while the page waits: a file's first view then lays out without font look-ups.
void warmFonts();

boot().catch((e) =>
  app.showError({
    code: 'BOOT_FAILED',
    message: `the engine could not start: ${e}`,
    hint: 'serve www/dist as static files (application/wasm for .wasm) or open snapscope.html',
  }),
);
const src = new URLSearchParams(location.search).get('src');
if (src) app.openUrl(src).catch(() => {});
openEmbedded();

/**
 * A snapshot carried in the document itself (the Python module's `snapscope.html()`): a
 * `<script type="application/x-snapscope-snapshot" id="snapscope-snapshot" data-name=…>` holding
 * its bytes in base64. Not a script that runs, so the page's CSP is unchanged; opened at once.
 */
function openEmbedded() {
  const node = document.getElementById('snapscope-snapshot');
  if (!node || node.getAttribute('type') !== 'application/x-snapscope-snapshot') return;
  const name = node.dataset.name || 'snapshot';
  fetch(`data:application/octet-stream;base64,${(node.textContent ?? '').trim()}`)
    .then((r) => r.blob())
    .then(
      // A file the engine refuses shows the engine's error (openFiles does that).
      (blob) => app.openFiles([blob], [name]).catch(() => {}),
      (e) =>
        app.showError({
          code: 'EMBEDDED_SNAPSHOT',
          message: `the snapshot embedded in this page could not be read (${e instanceof Error ? e.message : e})`,
          hint: 'make the page again with snapscope.html(...)',
        }),
    );
}
