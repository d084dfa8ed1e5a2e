// The one message protocol between the page and the engine worker. Both sides import it.
import type { EngineAnswers } from './generated/answers';
import type { Frame } from './ui/plot';

/** Requests carry an id; the worker answers each with exactly one Reply of the same id. */
export type Request =
  | {
      op: 'init';
      wasm: WebAssembly.Module;
      warmUp: boolean;
      /** Test hooks (worker.ts): the SnapshotDB's slice budget, and a pause after that many slices. */
      storeSliceMs?: number;
      storePauseAfter?: number;
    }
  | { op: 'warmUp' }
  | { op: 'load'; file: Blob; name: string; key: string; store?: boolean }
  | { op: 'call'; key: string; method: EngineMethod; args: (string | number)[]; paint?: PaintRequest }
  | { op: 'export'; key: string }
  | { op: 'drop'; key: string }
  /** Let a SnapshotDB build paused by the `storePauseAfter` test hook go on. */
  | { op: 'storeResume'; key: string }
  /** Combine rank summaries (JSON array) into a RanksReport; needs no loaded snapshot. */
  | { op: 'combineRanks'; summaries: string }
  /** A run's files in the engine's order (JSON array of names → JSON array of indices). */
  | { op: 'orderRunFiles'; names: string };

/**
 * Engine methods the page may call, all answering JSON text: the wasm `Engine`'s methods, whose
 * answers are declared once in Rust (generated/answers.ts, `EngineAnswers`), and `analyze`.
 */
export type EngineMethod = keyof EngineAnswers | 'analyze';

/**
 * A chart the worker paints into pixels with its answer (`bands`): the chart's frame in CSS pixels
 * and the device pixels per CSS pixel. The page's main thread then only copies them to its canvas.
 */
export type PaintRequest = { frame: Frame; ratio: number };

export type Envelope = { id: number } & Request;

export type Progress = {
  stage: 'reading' | 'parsing' | 'replaying' | 'storing';
  bytesRead: number;
  totalBytes: number;
  events?: number;
};

/** Stage name → when it ended (performance.timeOrigin + performance.now() in the worker). */
export type LoadStages = Record<string, number>;

export type EngineError = { code: string; message: string; hint: string };

export type Reply =
  | { id: number; kind: 'progress'; progress: Progress }
  | {
      id: number;
      kind: 'ok';
      json?: string;
      bytes?: ArrayBuffer;
      value?: unknown;
      /** A load's stages in the worker: when each ended, in epoch ms (the page marks them). */
      stages?: LoadStages;
    }
  | { id: number; kind: 'error'; error: EngineError }
  /** Unasked (id 0): a span of the worker's own work, in epoch ms (the page measures it). */
  | { id: number; kind: 'span'; name: string; start: number; end: number };

/** Chunk size for streaming a File into the engine. */
export const CHUNK_BYTES = 4 << 20;
