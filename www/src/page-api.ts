// `window.snapscope`, the page's embedding API (documented in the README): open files, URLs and
// runs, read the open file's overview, SQL and templates, select an event.
import type { OpenFile, RanksRun, RankSource, ViewName } from './app-types';
import type { Overview, RanksReport } from './generated/answers';

/** What the API needs of the page. */
export interface PageHost {
  readonly current: OpenFile | undefined;
  readonly run: RanksRun | null;
  openUrl(url: string): Promise<Overview | undefined>;
  openFiles(files: Blob[]): Promise<Overview | undefined>;
  openRun(given: RankSource[]): Promise<RanksReport>;
  select(event: number | null, view?: ViewName): void;
}

export function installPageApi(app: PageHost) {
  const api = {
    load: async (src: File | Blob | string) =>
      (typeof src === 'string' ? app.openUrl(src) : app.openFiles([src])).then(() => api.overview()),
    /**
     * Many snapshots as the ranks of one run (files, blobs or same-origin URLs; ordered like the
     * CLI: by the rank in the name, then by name): resolves with the RanksReport once every file is
     * summarized.
     */
    loadMany: (srcs: Iterable<File | Blob | string>) =>
      app.openRun(
        [...srcs].map((s, i) =>
          typeof s === 'string'
            ? { name: s, url: s }
            : { name: (s as File).webkitRelativePath || (s as File).name || `snapshot ${i + 1}`, blob: s },
        ),
      ),
    /** The last run's RanksReport: the JSON `snapscope ranks FILES --json` prints (null before one). */
    ranks: (): RanksReport | null => (app.run ? JSON.parse(JSON.stringify(app.run.report)) : null),
    overview: () => (app.current ? JSON.parse(app.current.overviewJson) : null),
    sql: (text: string, maxRows = 10000) => requireFile().client.call('sql', text, maxRows, 30000),
    query: (name: string, params: Record<string, unknown> = {}) =>
      requireFile().client.call('query', name, JSON.stringify(params)),
    stats: () => requireFile().client.call('stats'),
    exportDb: () => requireFile().client.exportDb(),
    /** Test hook: let the SnapshotDB build `?storePauseAfter=N` paused go on (else nothing). */
    resumeStore: () => requireFile().client.resumeStore(),
    select: (event: number | null, view?: ViewName) => app.select(event, view),
  };
  function requireFile() {
    if (!app.current) throw new Error('no snapshot is loaded');
    return app.current;
  }
  (window as unknown as { snapscope: typeof api }).snapscope = api;
}
