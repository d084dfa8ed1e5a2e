// The engine's Web Worker: streams files into the wasm engine, answers queries. Heavy work never
// runs on the page's thread.
import init, {
  Engine,
  combineRanks,
  orderRunFiles,
  wasmMemory,
  wasmMemoryBytes,
  __wbg_reset_state,
} from '../pkg/snapscope.js';
import type { Envelope, Reply, EngineError, LoadStages, PaintRequest, Progress } from './protocol';
import { bandScale, paintBands, type BandsData } from './views/allocations-layout';

const engines = new Map<string, Engine>();
let ready: Promise<unknown> | null = null;

/** What each snapshot was loaded from: loaded again after the engine instance is replaced. */
const sources = new Map<string, { file: Blob; name: string; store: boolean }>();
/** Per snapshot: its load again after a recovery, while it runs. */
const reloading = new Map<string, Promise<void>>();

/**
 * A trap (a Rust panic or a failed allocation: `unreachable`) leaves the wasm instance unusable:
 * the engine's borrow flag stays taken, the stack pointer is not restored. Replace the instance
 * with a fresh one of the same module; every snapshot is loaded again (from its Blob) when it is
 * next asked for.
 */
function recover() {
  __wbg_reset_state();
  engines.clear();
  stored.clear();
  early.clear();
  for (const key of [...storeTimers.keys()]) cancelStore(key);
  building.clear();
  paused.clear();
  warmedUp = false;
}

/** The engine of `key`, loaded again first if a recovery dropped it. */
async function ensureLoaded(key: string) {
  const src = sources.get(key);
  if (engines.has(key) || !src) return;
  let again = reloading.get(key);
  if (!again) {
    // id 0: no request waits on its progress or answer.
    again = load(0, src.file, src.name, key, src.store).finally(() => reloading.delete(key));
    reloading.set(key, again);
  }
  await again;
}

/** A time both threads read alike (each has its own performance.timeOrigin). */
const epoch = () => performance.timeOrigin + performance.now();

const post = (r: Reply, transfer: Transferable[] = []) => (self as unknown as Worker).postMessage(r, transfer);

function asError(e: unknown): EngineError {
  if (typeof e === 'string') {
    try {
      return JSON.parse(e) as EngineError;
    } catch {
      return { code: 'ERROR', message: e, hint: '' };
    }
  }
  const msg = e instanceof Error ? e.message : String(e);
  // A failed allocation in Rust aborts, which wasm reports as an `unreachable` trap.
  let nearLimit = false;
  try {
    nearLimit = wasmMemoryBytes() > 3.5 * 2 ** 30;
  } catch {
    nearLimit = true;
  }
  if (/memory|allocation/i.test(msg) || (/unreachable/i.test(msg) && nearLimit)) {
    return {
      code: 'OUT_OF_MEMORY',
      message: msg,
      hint: 'the snapshot does not fit the 4 GiB of a browser tab; use the native snapscope CLI',
    };
  }
  return {
    code: 'ENGINE_FAILED',
    message: msg,
    hint: 'this is a bug in snapscope; the native CLI may give more detail',
  };
}

/**
 * The file's bytes in order. A BYOB reader refills two 1 MiB buffers in turn: while the engine
 * decodes one, the browser already reads into the other, and reading a 1 GB file leaves no
 * trail of chunk garbage in the tab. Browsers whose Blob stream is not a byte stream get the
 * default reader.
 */
async function* chunksOf(file: Blob): AsyncGenerator<Uint8Array> {
  let byob: ReadableStreamBYOBReader | null = null;
  const stream = file.stream();
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    byob = null;
  }
  if (!byob) {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  const reader = byob;
  const readInto = (buffer: ArrayBuffer) => reader.read(new Uint8Array(buffer));
  const inFlight = [readInto(new ArrayBuffer(1 << 20)), readInto(new ArrayBuffer(1 << 20))];
  for (;;) {
    const { done, value } = await inFlight.shift()!;
    if (done || !value) return;
    yield value;
    // The consumer is done with this chunk: its buffer takes the next read.
    inFlight.push(readInto(value.buffer as ArrayBuffer));
  }
}

/**
 * Run the engine on a small synthetic snapshot before the user's file. Browsers optimize a
 * WebAssembly function only once it has run for a while, and a function called once per load
 * (the replay of a device) would otherwise run unoptimized for seconds. The page warms its next
 * engine up while it waits for a file ('warmUp'); an engine started for a file warms up only
 * before a large one, and briefly, since the ~0.1 s it costs there gains nothing for a small file.
 * `?warmup=0` turns both off (to measure what they save); a failure only costs the speed-up.
 */
const WARM_UP_MIN_BYTES = 32 << 20;
let warmUpAllowed = true;
let warmedUp = false;

/**
 * Warm up unless done already or turned off (longer when `ahead` of a file); the milliseconds it
 * took (0 if it did not run).
 */
function warmUp(ahead: boolean): number {
  if (!warmUpAllowed || warmedUp) return 0;
  warmedUp = true;
  try {
    const ms = Engine.warmUp(ahead);
    console.info(`snapscope: engine warmed up in ${ms.toFixed(0)} ms`);
    return ms;
  } catch (e) {
    console.warn('snapscope: warm-up failed', e);
    return 0;
  }
}

/** Per snapshot: whether the engine had warmed up before its file arrived (reported in stats). */
const warmedAhead = new Map<string, boolean>();

/**
 * Per snapshot: resolves once its SnapshotDB is built. Nothing waits for it but the export: every
 * analysis reads the replay, and a call that needs SQL before the database is built builds it
 * itself (the engine builds it on first use).
 */
const stored = new Map<string, Promise<void>>();

/**
 * Per snapshot: the database build waiting for the worker to be idle. The build holds the worker
 * (one thread) for a while, so it starts only once no call came for STORE_IDLE_MS: the first
 * views' questions, asked right after the overview, are answered from the replay first.
 */
const storeTimers = new Map<string, { timer: ReturnType<typeof setTimeout>; build: (all?: boolean) => void }>();
const STORE_IDLE_MS = 250;
/** A slice of the database build: short enough that a view's call waits little behind it. */
const STORE_SLICE_MS = 25;
/** Per snapshot: its database build under way, in slices or (an export waits) to the end. */
const building = new Map<string, 'slices' | 'all'>();

/**
 * Test hooks (the page's `?storeSliceMs=` and `?storePauseAfter=`, see client.ts): the slice
 * budget (0: one unit of the build's work a slice, so a build has many slices on any machine),
 * and a pause after that many slices until `storeResume` (or an export) lets the build go on,
 * so a test sees a build under way however fast the machine is. Not set: 25 ms, no pause.
 */
let sliceMs = STORE_SLICE_MS;
let pauseAfter = Infinity;
/** Per snapshot: its paused build's next slice. */
const paused = new Map<string, () => void>();

/**
 * Let the paused build of `key` go on, its next slice now: a call queued meanwhile is then
 * answered only if the build yields between slices (what store-slices.test.mjs checks).
 */
function resumeStore(key: string) {
  const next = paused.get(key);
  paused.delete(key);
  next?.();
}

/** Run `f` as a new task, after the messages already queued (no timer clamping). */
function nextTask(f: () => void) {
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    channel.port1.close();
    f();
  };
  channel.port2.postMessage(null);
}

/** Put the database build of `key` back by STORE_IDLE_MS (a call came). */
function deferStore(key: string) {
  const pending = storeTimers.get(key);
  if (!pending) return;
  clearTimeout(pending.timer);
  pending.timer = setTimeout(pending.build, STORE_IDLE_MS);
}

/** Forget the waiting database build of `key` (its snapshot is dropped). */
function cancelStore(key: string) {
  clearTimeout(storeTimers.get(key)?.timer);
  storeTimers.delete(key);
  building.delete(key);
  paused.delete(key);
}

/** Build the database of `key` now, to the end, if it waits for idle time or is under way. */
function storeNow(key: string) {
  if (building.has(key)) building.set(key, 'all');
  resumeStore(key);
  storeTimers.get(key)?.build(true);
}

/**
 * Per snapshot: answers computed with the overview, before the SnapshotDB (the Overview's small
 * timeline of each device), by call (`method(args)` as JSON). Building the database holds the
 * worker for a while; these are answered from here at once, and dropped when first asked.
 */
const early = new Map<string, Map<string, string>>();
/** Buckets of the Overview's small timeline (views/overview.ts OVERVIEW_BUCKETS). */
const OVERVIEW_BUCKETS = 400;
const callKey = (method: string, args: unknown[]) => JSON.stringify([method, ...args]);

/** The long arrays of a `bands` answer (a million entries and more), in `bandsTyped`'s order. */
const BAND_ARRAYS = ['column_event', 'column_start', 'entry_block', 'entry_bottom', 'other_bytes', 'active'];

/**
 * `bands` as the page takes it: the engine's typed arrays (`bandsTyped`), transferred, with the
 * rest of the answer parsed here. As JSON, the long arrays took the engine and the page's main
 * thread a second and more.
 */
function bandsValue(
  engine: Engine,
  args: unknown[],
  paint?: PaintRequest,
): { value: Record<string, unknown>; transfer: ArrayBuffer[] } {
  const started = performance.now();
  const [rest, ...arrays] = (engine as unknown as { bandsTyped: (...a: unknown[]) => unknown[] }).bandsTyped(...args);
  const value = JSON.parse(rest as string) as Record<string, unknown>;
  const answered = performance.now();
  const transfer: ArrayBuffer[] = [];
  BAND_ARRAYS.forEach((key, i) => {
    const typed = arrays[i] as Uint32Array | Float64Array;
    value[key] = typed;
    transfer.push(typed.buffer as ArrayBuffer);
  });
  if (paint) {
    // Painted here, off the page's thread: the chart's pixels (allocations-layout paintBands).
    const data = value as unknown as BandsData;
    const painted = paintBands(data, bandScale(data, paint.frame), paint.frame, paint.ratio);
    value.painted = { ...painted, ...paint };
    transfer.push(painted.pixels.buffer as ArrayBuffer);
  }
  // The worker's own part of the answer, for the page's allocations-drawn mark.
  value.worker_ms = { engine: answered - started, paint: performance.now() - answered };
  return { value, transfer };
}

/** The Overview's small timeline of every traced device (at most 64), from the replay. */
function earlyAnswers(engine: Engine, overview: string): Map<string, string> {
  const out = new Map<string, string>();
  try {
    const devices = (JSON.parse(overview) as { devices?: { device: number; events: number }[] }).devices ?? [];
    for (const d of devices.slice(0, 64))
      if (d.events > 0) {
        const args = [d.device, 0, d.events - 1, OVERVIEW_BUCKETS];
        out.set(callKey('timeline', args), engine.timeline(d.device, 0, d.events - 1, OVERVIEW_BUCKETS));
      }
  } catch {
    // Only a head start: the page asks again and gets its answer after the database.
  }
  return out;
}

/**
 * Read, parse and replay `file`, answer its overview, then build its SnapshotDB unless `store` is
 * false (a rank of a run is only summarized: the summary needs the replay, not the database).
 */
async function load(id: number, file: Blob, name: string, key: string, store = true) {
  const stages: LoadStages = { received: epoch() };
  warmedAhead.set(key, warmedUp);
  const warmUpMs = file.size >= WARM_UP_MIN_BYTES ? warmUp(false) : 0;
  const engine = new Engine();
  engine.begin(name, file.size, warmUpMs);
  const progress = (p: Progress) => post({ id, kind: 'progress', progress: p });
  let read = 0;
  let lastPost = 0;
  // The engine's memory now (a recovery replaces the instance, never during a load).
  const memory = wasmMemory() as WebAssembly.Memory;
  for await (const value of chunksOf(file)) {
    // Copied once, straight into the decoder's buffer (the room may grow the memory: its
    // buffer is read after).
    const at = engine.pushRoom(value.byteLength);
    new Uint8Array(memory.buffer, at, value.byteLength).set(value);
    engine.pushed(value.byteLength);
    read += value.byteLength;
    const now = performance.now();
    if (now - lastPost > 50) {
      progress({ stage: 'reading', bytesRead: read, totalBytes: file.size });
      lastPost = now;
    }
  }
  stages.read = epoch();
  progress({ stage: 'parsing', bytesRead: read, totalBytes: file.size });
  const events = engine.parse();
  stages.parsed = epoch();
  progress({ stage: 'replaying', bytesRead: read, totalBytes: file.size, events });
  // The overview needs no database: answer with it now, then build the SnapshotDB.
  const overview = engine.replay();
  stages.replayed = epoch();
  engines.get(key)?.free();
  engines.set(key, engine);
  sources.set(key, { file, name, store });
  if (!store) {
    stored.delete(key);
    post({ id, kind: 'ok', json: overview, stages });
    return;
  }
  let done!: () => void;
  let failed!: (e: unknown) => void;
  stored.set(key, new Promise<void>((res, rej) => ((done = res), (failed = rej))));
  post({ id, kind: 'ok', json: overview, stages });
  early.set(key, earlyAnswers(engine, overview));
  // Built in slices of about STORE_SLICE_MS, the event loop let run between them: calls queued
  // meanwhile are answered from the replay (or finish the build, for those that need SQL).
  const build = (all = false) => {
    const pending = storeTimers.get(key);
    if (!pending || pending.build !== build) return;
    clearTimeout(pending.timer);
    storeTimers.delete(key);
    const started = epoch();
    let slices = 0;
    const slice = (budget: number) => {
      if (engines.get(key) !== engine) return done();
      try {
        const sliceStart = epoch();
        const finished = engine.storeStep(budget);
        // Each span the worker answered nothing else (benchmarks: snapscope:worker-store).
        post({ id: 0, kind: 'span', name: 'store', start: sliceStart, end: epoch() });
        if (!finished) {
          const next = () => slice(building.get(key) === 'all' ? Infinity : sliceMs);
          if (++slices === pauseAfter && building.get(key) !== 'all') paused.set(key, next);
          else nextTask(next);
          return;
        }
        building.delete(key);
        engine.store();
        // The whole build, from its first slice to its last (snapscope:worker-store-extent).
        post({ id: 0, kind: 'span', name: 'store-extent', start: started, end: epoch() });
        done();
      } catch (e) {
        building.delete(key);
        if (e instanceof WebAssembly.RuntimeError) {
          // This snapshot breaks the engine: not loaded again. The export waiting for it gets
          // the error as an answer (not as a second trap to recover from).
          const error = asError(e);
          sources.delete(key);
          recover();
          failed(JSON.stringify(error));
        } else failed(e);
      }
    };
    building.set(key, all ? 'all' : 'slices');
    slice(all ? Infinity : sliceMs);
  };
  storeTimers.set(key, { timer: setTimeout(() => build(), STORE_IDLE_MS), build });
}

self.onmessage = async (ev: MessageEvent<Envelope>) => {
  const m = ev.data;
  try {
    switch (m.op) {
      case 'init':
        ready = init({ module_or_path: m.wasm });
        await ready;
        warmUpAllowed = m.warmUp;
        sliceMs = m.storeSliceMs ?? STORE_SLICE_MS;
        pauseAfter = m.storePauseAfter ?? Infinity;
        post({ id: m.id, kind: 'ok' });
        break;
      case 'warmUp':
        await ready;
        warmUp(true);
        post({ id: m.id, kind: 'ok' });
        break;
      case 'load':
        await ready;
        sources.delete(m.key);
        await load(m.id, m.file, m.name, m.key, m.store ?? true);
        break;
      case 'call': {
        const head = early.get(m.key);
        const known = head?.get(callKey(m.method, m.args));
        if (known !== undefined) {
          head!.delete(callKey(m.method, m.args));
          post({ id: m.id, kind: 'ok', json: known });
          break;
        }
        await ensureLoaded(m.key);
        deferStore(m.key);
        const e = engines.get(m.key);
        if (!e) throw JSON.stringify({ code: 'NOT_LOADED', message: `no snapshot "${m.key}"`, hint: 'load it first' });
        if (m.method === 'bands') {
          const { value, transfer } = bandsValue(e, m.args, m.paint);
          post({ id: m.id, kind: 'ok', value }, transfer);
          break;
        }
        const fn = (e as unknown as Record<string, (...a: unknown[]) => string>)[m.method];
        const out = m.method === 'stats' ? { ...e.stats(), warmed_ahead: warmedAhead.get(m.key) } : fn.apply(e, m.args);
        // report() answers HTML and stats() an object; everything else JSON text.
        const json = m.method === 'report' || typeof out !== 'string' ? JSON.stringify(out) : out;
        post({ id: m.id, kind: 'ok', json });
        break;
      }
      case 'export': {
        await ensureLoaded(m.key);
        storeNow(m.key);
        await stored.get(m.key);
        const e = engines.get(m.key);
        if (!e) throw JSON.stringify({ code: 'NOT_LOADED', message: `no snapshot "${m.key}"`, hint: 'load it first' });
        const bytes = e.exportDb();
        post({ id: m.id, kind: 'ok', bytes: bytes.buffer as ArrayBuffer }, [bytes.buffer as ArrayBuffer]);
        break;
      }
      case 'storeResume':
        resumeStore(m.key);
        post({ id: m.id, kind: 'ok' });
        break;
      case 'combineRanks':
        await ready;
        post({ id: m.id, kind: 'ok', json: combineRanks(m.summaries) });
        break;
      case 'orderRunFiles':
        await ready;
        post({ id: m.id, kind: 'ok', json: orderRunFiles(m.names) });
        break;
      case 'drop':
        sources.delete(m.key);
        early.delete(m.key);
        cancelStore(m.key);
        stored.delete(m.key);
        engines.get(m.key)?.free();
        engines.delete(m.key);
        post({ id: m.id, kind: 'ok' });
        break;
    }
  } catch (e) {
    const error = asError(e);
    if (e instanceof WebAssembly.RuntimeError) {
      // A load that trapped is not loaded again; a call's snapshot is, when next asked for.
      if (m.op === 'load') sources.delete(m.key);
      recover();
      error.hint = `${error.hint}; the engine was restarted, other views and files still work`;
    }
    post({ id: m.id, kind: 'error', error });
  }
};
