// Page-side handle of one engine worker. Each opened file gets its own worker: its own 4 GiB of
// wasm memory, and cancelling a load terminates just that worker.
import type { EngineMethod, Envelope, PaintRequest, Progress, Reply, EngineError } from './protocol';
import type { At, EngineAnswers, ModeAnswers } from './generated/answers';

export class EngineFailure extends Error {
  constructor(public readonly info: EngineError) {
    super(info.message);
  }
}

type Pending = { resolve: (r: Reply) => void; reject: (e: unknown) => void; onProgress?: (p: Progress) => void };

/** How to start a worker: its script URL and the compiled engine. */
export interface Boot {
  workerUrl: string;
  wasm: WebAssembly.Module;
}

declare global {
  // Filled in by the single-file build: worker source and base64 wasm.
  var __SNAPSCOPE_INLINE__: { worker: string; wasm: string } | undefined;
}

let booting: Promise<Boot> | null = null;

/**
 * Fetch the worker script and compile the wasm once, at page load: later workers start from
 * memory, so opening a file needs no network (the page keeps working offline). `base`: where
 * worker.js and snapscope_bg.wasm are (the page's folder; the web component's own).
 */
export function boot(base: URL = new URL('.', document.baseURI)): Promise<Boot> {
  return (booting ??= (async () => {
    const inline = globalThis.__SNAPSCOPE_INLINE__;
    if (inline) {
      const bin = atob(inline.wasm);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      const workerUrl = URL.createObjectURL(new Blob([inline.worker], { type: 'text/javascript' }));
      return { workerUrl, wasm: await WebAssembly.compile(bytes) };
    }
    const [src, wasm] = await Promise.all([
      fetchOk(new URL('worker.js', base)).then((r) => r.text()),
      compileWasm(base),
    ]);
    return { workerUrl: URL.createObjectURL(new Blob([src], { type: 'text/javascript' })), wasm };
  })());
}

async function fetchOk(url: URL): Promise<Response> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url.pathname}: HTTP ${r.status}`);
  return r;
}

/** The engine, compiled while it downloads; a host that serves .wasm without application/wasm (docs portals do) gets the slower way. */
async function compileWasm(base: URL): Promise<WebAssembly.Module> {
  const url = new URL('snapscope_bg.wasm', base);
  const r = await fetchOk(url);
  if (r.headers.get('content-type')?.startsWith('application/wasm')) return WebAssembly.compileStreaming(r);
  return WebAssembly.compile(await r.arrayBuffer());
}

let spare: EngineClient | null = null;

/** Workers started and not yet terminated: engines holding memory (the spare one included). */
let live = 0;
const liveListeners: ((n: number) => void)[] = [];
export const liveEngines = () => live;
/** Be told each time the number of live engines changes. */
export function onLiveEngines(f: (n: number) => void) {
  liveListeners.push(f);
}
function setLive(n: number) {
  live = n;
  for (const f of liveListeners) f(n);
}

/**
 * Start and warm up the engine for the next file while the page waits for one, so that a chosen
 * file goes straight to an engine that is running optimized code. Resolves when it is ready.
 */
export function prepareEngine(boot: Boot): Promise<void> {
  spare ??= new EngineClient(boot);
  return spare.warmUp();
}

/** The engine for a file: the prepared one if there is one, else a new one. */
export function takeEngine(boot: Boot): EngineClient {
  const client = spare ?? new EngineClient(boot);
  spare = null;
  return client;
}

/** Keep `client` (holding no snapshot) as the spare engine, or end it if there is one already. */
export function releaseEngine(client: EngineClient) {
  if (spare || client.ended) client.terminate();
  else spare = client;
}

/** What every request of an engine that was cancelled (terminated) rejects with. */
export const CANCELLED: EngineError = { code: 'CANCELLED', message: 'cancelled', hint: '' };

export class EngineClient {
  private worker: Worker;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private ready: Promise<Reply>;
  /** Terminated: its memory is back to the system. */
  ended = false;

  constructor(boot: Boot) {
    this.worker = new Worker(boot.workerUrl);
    setLive(live + 1);
    this.worker.onmessage = (ev: MessageEvent<Reply>) => this.receive(ev.data);
    this.worker.onerror = (ev) =>
      this.failAll({
        code: 'WORKER_FAILED',
        message: ev.message || 'the engine worker failed',
        hint: 'reload the page',
      });
    const query = new URLSearchParams(location.search);
    // `?warmup=0` skips the engine warm-up before large files (to measure what it saves).
    const warmUp = query.get('warmup') !== '0';
    // Test hooks (tests/browser/store-slices.test.mjs): `?storeSliceMs=0` builds the SnapshotDB
    // one unit of work a slice, `?storePauseAfter=N` pauses it after N slices until resumeStore().
    const hook = (name: string) => {
      const v = query.get(name);
      return v === null || v === '' || !Number.isFinite(Number(v)) ? undefined : Number(v);
    };
    this.ready = this.send({
      op: 'init',
      wasm: boot.wasm,
      warmUp,
      storeSliceMs: hook('storeSliceMs'),
      storePauseAfter: hook('storePauseAfter'),
    });
    // An engine ended before it was used: nobody waits for its start.
    this.ready.catch(() => {});
  }

  private receive(r: Reply) {
    if (r.kind === 'span') {
      const t = performance.timeOrigin;
      performance.measure(`snapscope:worker-${r.name}`, { start: r.start - t, end: r.end - t });
      return;
    }
    const p = this.pending.get(r.id);
    if (!p) return;
    if (r.kind === 'progress') return p.onProgress?.(r.progress);
    this.pending.delete(r.id);
    if (r.kind === 'error') p.reject(new EngineFailure(r.error));
    else p.resolve(r);
  }

  private failAll(err: EngineError) {
    for (const p of this.pending.values()) p.reject(new EngineFailure(err));
    this.pending.clear();
  }

  private send(
    req: Envelope extends infer E ? (E extends { id: number } ? Omit<E, 'id'> : never) : never,
    onProgress?: (p: Progress) => void,
  ): Promise<Reply> {
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      // Ended between a caller's awaits (a load cancelled as it starts): nothing would answer.
      if (this.ended) return reject(new EngineFailure(CANCELLED));
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ ...req, id });
    });
  }

  /** Warm the engine up now, ahead of a file (see the worker). */
  async warmUp(): Promise<void> {
    await this.ready;
    await this.send({ op: 'warmUp' });
  }

  async load(file: Blob, name: string, onProgress: (p: Progress) => void): Promise<string> {
    await this.ready;
    const r = await this.send({ op: 'load', file, name, key: 'main' }, onProgress);
    if (r.kind !== 'ok') return '';
    // Benchmarks: the worker's stages on the page's timeline (snapscope:worker-read, ...).
    for (const [stage, at] of Object.entries(r.stages ?? {}))
      performance.mark(`snapscope:worker-${stage}`, { startTime: at - performance.timeOrigin });
    return r.json ?? '';
  }

  /**
   * `file` as one rank of a run: read and replay it (no SnapshotDB), answer its summary JSON
   * (`rankSummary`, named `name`) and drop the snapshot again.
   */
  async summarize(file: Blob, name: string, onProgress?: (p: Progress) => void): Promise<string> {
    await this.ready;
    await this.send({ op: 'load', file, name, key: 'rank', store: false }, onProgress);
    const r = await this.send({ op: 'call', key: 'rank', method: 'rankSummary', args: [name] });
    await this.send({ op: 'drop', key: 'rank' });
    return r.kind === 'ok' ? (r.json ?? 'null') : 'null';
  }

  /** Rank summaries (a JSON array, in order) combined into the RanksReport JSON. */
  async combineRanks(summaries: string): Promise<string> {
    await this.ready;
    const r = await this.send({ op: 'combineRanks', summaries });
    return r.kind === 'ok' ? (r.json ?? 'null') : 'null';
  }

  /** The indices of a run's file names in the engine's run order (the CLI's). */
  async orderRunFiles(names: string[]): Promise<number[]> {
    await this.ready;
    const r = await this.send({ op: 'orderRunFiles', names: JSON.stringify(names) });
    return JSON.parse(r.kind === 'ok' ? (r.json ?? '[]') : '[]') as number[];
  }

  /** One engine method's answer (declared in Rust, generated/answers.ts). */
  async call<M extends keyof EngineAnswers>(method: M, ...args: (string | number)[]): Promise<EngineAnswers[M]> {
    return this.answer<EngineAnswers[M]>(method, args);
  }

  /** One analysis mode's part for a device, at a peak, the window start, the dump or an event. */
  async analyze<M extends keyof ModeAnswers>(mode: M, device: number, at: At): Promise<ModeAnswers[M]> {
    return this.answer<ModeAnswers[M]>('analyze', [mode, device, JSON.stringify(at)]);
  }

  /** The allocator's segments and blocks at `at`. */
  async state(device: number, at: At): Promise<EngineAnswers['state']> {
    return this.answer<EngineAnswers['state']>('state', [device, JSON.stringify(at)]);
  }

  /**
   * `bands`, painted by the worker for a chart of `paint`'s frame (its `painted` pixels): the
   * main thread copies them instead of painting a million entries itself.
   */
  async bandsPainted(
    paint: PaintRequest,
    ...args: [device: number, from: number, to: number, columns: number, maxBlocks: number]
  ): Promise<EngineAnswers['bands']> {
    return this.answer<EngineAnswers['bands']>('bands', args, paint);
  }

  private async answer<T>(method: EngineMethod, args: (string | number)[], paint?: PaintRequest): Promise<T> {
    const r = await this.send({ op: 'call', key: 'main', method, args, paint });
    // An answer the worker parsed already (large arrays as typed arrays, see the worker).
    if (r.kind === 'ok' && r.value !== undefined) return r.value as T;
    return JSON.parse(r.kind === 'ok' ? (r.json ?? 'null') : 'null') as T;
  }

  /** Let the SnapshotDB build the `?storePauseAfter=` test hook paused go on. */
  async resumeStore(): Promise<void> {
    await this.send({ op: 'storeResume', key: 'main' });
  }

  async exportDb(): Promise<ArrayBuffer> {
    const r = await this.send({ op: 'export', key: 'main' });
    if (r.kind !== 'ok' || !r.bytes) throw new Error('export failed');
    return r.bytes;
  }

  /** Stop whatever the worker is doing and free its memory. */
  terminate() {
    this.worker.terminate();
    if (!this.ended) setLive(live - 1);
    this.ended = true;
    this.failAll(CANCELLED);
  }
}
