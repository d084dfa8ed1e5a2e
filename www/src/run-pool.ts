// A distributed run's files summarized by a few engines at once (each closed after its file, so
// the tab holds at most `width` snapshots), then combined into the RanksReport that
// `snapscope ranks` prints. The page shows its progress; nothing here touches the DOM.
import { CANCELLED, EngineClient, EngineFailure, boot, releaseEngine, takeEngine } from './client';
import type { EngineError } from './protocol';
import type { FileError, RanksReport } from './generated/answers';
import type { RankSource, RanksRun } from './app-types';
import { poolSize } from './views/ranks-layout';
import { fetchSnapshot } from './fetch-snapshot';

export interface RunProgress {
  done: number;
  total: number;
  /** Engines reading a file now. */
  reading: number;
}

/** A run being summarized: its outcome, and how to stop it (the outcome then rejects). */
export interface PendingRun {
  outcome: Promise<RanksRun>;
  cancel: () => void;
}

/** Summarize `sources` (in the order given, names unique) and combine them. */
export function summarizeRun(sources: RankSource[], onProgress: (p: RunProgress) => void): PendingRun {
  const total = sources.length;
  const width = Math.min(poolSize(navigator.hardwareConcurrency), total);
  const summaries: (string | null)[] = sources.map(() => null);
  const failed: (FileError | null)[] = sources.map(() => null);
  const active = new Set<EngineClient>();
  let next = 0;
  let done = 0;
  let peakEngines = 0;
  let cancelled = false;
  const progress = () => onProgress({ done, total, reading: active.size });
  const cancel = () => {
    cancelled = true;
    for (const c of active) c.terminate();
  };
  const outcome = (async (): Promise<RanksRun> => {
    progress();
    const b = await boot();
    const worker = async () => {
      while (!cancelled && next < total) {
        const i = next++;
        const s = sources[i];
        const fail = (e: unknown) => {
          const info: EngineError =
            e instanceof EngineFailure ? e.info : { code: 'ERROR', message: String(e), hint: '' };
          failed[i] = { file: s.name, code: info.code, message: info.message };
        };
        // A URL is fetched before its engine starts (and its bytes dropped once summarized).
        let blob: Blob | null = s.blob ?? null;
        if (!blob)
          try {
            blob = await fetchSnapshot(s.url ?? '');
          } catch (e) {
            fail(e);
          }
        if (blob && !cancelled) {
          const client = takeEngine(b);
          active.add(client);
          peakEngines = Math.max(peakEngines, active.size);
          progress();
          try {
            summaries[i] = await client.summarize(blob, s.name);
          } catch (e) {
            fail(e);
          } finally {
            client.terminate();
            active.delete(client);
          }
        }
        if (!cancelled) done++;
        progress();
      }
    };
    await Promise.all(Array.from({ length: width }, worker));
    if (cancelled) throw new EngineFailure(CANCELLED);
    const read = sources.map((_, i) => i).filter((i) => summaries[i] !== null);
    const combiner = takeEngine(b);
    let report: RanksReport;
    try {
      report = JSON.parse(await combiner.combineRanks(`[${read.map((i) => summaries[i]).join(',')}]`));
    } finally {
      releaseEngine(combiner);
    }
    report.errors = [...report.errors, ...failed.filter((f): f is FileError => f !== null)];
    return { report, sources: read.map((i) => sources[i]), total, width, peakEngines };
  })();
  return { outcome, cancel };
}
