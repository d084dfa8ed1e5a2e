// The Ranks view's pure part (no DOM; tests/unit/ranks-layout.test.ts): which files of a drop or
// folder are snapshots, how many engines summarize them at once, the (file, device) units of a
// RanksReport in rank order, the bar chart's geometry and hit test, and the figures in words.
import type { Outlier, RanksReport } from '../generated/answers';
import { bytes } from '../ui/format';
import { plotWidth, type Frame } from '../ui/plot';

/** The file names a run's folder may hold snapshots under (anything else in it is skipped). */
export const SNAPSHOT_EXTENSIONS = ['.pickle', '.pkl', '.pt', '.json', '.gz'];

export const isSnapshotName = (path: string) => {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  return !name.startsWith('.') && SNAPSHOT_EXTENSIONS.some((e) => name.endsWith(e));
};

/**
 * The snapshots among the files of a folder (or several folders): snapshot names only, in path
 * order (code-unit order), so that files of the same name in different subfolders come in one
 * order every time (the engine then orders the run: `orderRunFiles`).
 */
export function folderSnapshots<T extends { path: string }>(files: T[]): T[] {
  return files.filter((f) => isSnapshotName(f.path)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Engines that summarize a run at once: one per core, at least 1, at most 4 (4 GiB of wasm each). */
export function poolSize(hardwareConcurrency: number | undefined): number {
  const n = Math.floor(Number(hardwareConcurrency));
  return Number.isFinite(n) ? Math.min(4, Math.max(1, n)) : 1;
}

/**
 * Names that tell apart files of the same name (picked one by one from several folders): the
 * second "memory_snapshot.pickle" reads "memory_snapshot.pickle (2)"; unique names stay.
 */
export function uniqueNames(names: string[]): string[] {
  const used = new Set<string>();
  const seen = new Map<string, number>();
  return names.map((n) => {
    let name = n;
    let k = seen.get(n) ?? 1;
    while (used.has(name)) name = `${n} (${++k})`;
    seen.set(n, k);
    used.add(name);
    return name;
  });
}

/**
 * One bar of the chart and one row of the table: a device of a rank's file (or a file without
 * any device: a row only, `device` null).
 */
export interface RankUnit {
  /** Index in `report.files`. */
  file: number;
  name: string;
  rank: number;
  device: number | null;
  /** Its file holds several compared devices: it is named with its device. */
  shared: boolean;
  events: number;
  allocated: number;
  allocatedEvent: number | null;
  reserved: number;
  reservedEvent: number | null;
  oom: number;
  steps: number | null;
  /** Compared (the engine leaves out devices with neither events nor allocated bytes). */
  counted: boolean;
  outlier: Outlier | null;
  worst: boolean;
  median: boolean;
}

const compared = (d: RanksReport['files'][number]['devices'][number]) => d.events > 0 || d.peaks.allocated.bytes > 0;

/** Every (file, device) of the report, by rank, then device, then the order given. */
export function rankUnits(r: RanksReport): RankUnit[] {
  const w = r.summary.worst;
  const units: RankUnit[] = r.files.flatMap((f, file): RankUnit[] => {
    const shared = f.devices.filter(compared).length > 1;
    if (!f.devices.length)
      return [
        {
          file,
          name: f.file,
          rank: f.rank,
          device: null,
          shared,
          events: 0,
          allocated: 0,
          allocatedEvent: null,
          reserved: 0,
          reservedEvent: null,
          oom: 0,
          steps: null,
          counted: false,
          outlier: null,
          worst: false,
          median: false,
        },
      ];
    return f.devices.map((d) => {
      const outlier = r.summary.outliers.find((o) => o.file === f.file && o.device === d.device) ?? null;
      return {
        file,
        name: f.file,
        rank: f.rank,
        device: d.device,
        shared,
        events: d.events,
        allocated: d.peaks.allocated.bytes,
        allocatedEvent: d.peaks.allocated.event,
        reserved: d.peaks.reserved.bytes,
        reservedEvent: d.peaks.reserved.event,
        oom: d.oom_events,
        steps: d.steps,
        counted: compared(d),
        outlier,
        worst: !!w && w.file === f.file && w.device === d.device,
        median: isMedianDevice(r, f.file, d.device),
      };
    });
  });
  return units.sort((a, b) => a.rank - b.rank || (a.device ?? -1) - (b.device ?? -1) || a.file - b.file);
}

function isMedianDevice(r: RanksReport, file: string, device: number): boolean {
  const m = r.summary.median.allocated;
  return !!m && m.file === file && m.device === device;
}

/** Whether any rank's file holds several compared devices (then the table shows devices). */
export const manyDevices = (units: RankUnit[]) => units.some((u) => u.shared);

/** A unit for people: "rank 7", or "rank 16 · device 1" when its file holds several devices. */
export const unitName = (u: Pick<RankUnit, 'rank' | 'device' | 'shared'>) =>
  u.shared && u.device !== null ? `rank ${u.rank} · device ${u.device}` : `rank ${u.rank}`;

/** The name of the unit of `file` (a name in the report) and `device`: as `unitName`. */
export function nameAt(units: RankUnit[], file: string, rank: number, device: number): string {
  const u = units.find((x) => x.name === file && x.device === device);
  return unitName(u ?? { rank, device, shared: false });
}

// ---- the chart --------------------------------------------------------------------------------

/** The chart's padding: byte axis left, rank axis below, outlier labels above. */
export const RANKS_PAD = { l: 72, r: 16, t: 30, b: 40 };
/** Narrowest bar group: beyond this many ranks the chart grows wider than the page and scrolls. */
export const MIN_GROUP = 5;

/** The CSS width the chart needs for `n` bars in a box `boxWidth` wide. */
export const chartWidth = (n: number, boxWidth: number) =>
  Math.max(boxWidth, RANKS_PAD.l + RANKS_PAD.r + n * MIN_GROUP);

export interface BarGeometry {
  /** Left of the first group, width of a group. */
  left: number;
  group: number;
  /** The reserved bar (wide, behind) and the allocated bar (narrow, in front), centred. */
  reservedWidth: number;
  allocatedWidth: number;
}

export function barGeometry(n: number, f: Frame): BarGeometry {
  const group = plotWidth(f) / Math.max(1, n);
  const reservedWidth = Math.max(1, Math.min(48, group * 0.82));
  return { left: f.pad.l, group, reservedWidth, allocatedWidth: Math.max(1, reservedWidth * 0.55) };
}

/** The centre x of bar `i`. */
export const barCentre = (g: BarGeometry, i: number) => g.left + (i + 0.5) * g.group;

/** The bar under x (its whole group's width counts), or null outside the bars. */
export function barAt(g: BarGeometry, n: number, x: number): number | null {
  const i = Math.floor((x - g.left) / g.group);
  return i >= 0 && i < n ? i : null;
}

/**
 * Show every k-th rank label under the bars so that none overlaps the next: k is 1, 2 or 5 × 10^m,
 * the least that leaves `labelWidth` (plus a gap) per label.
 */
export function labelStep(group: number, labelWidth: number, gap = 6): number {
  const need = (labelWidth + gap) / Math.max(1e-9, group);
  if (need <= 1) return 1;
  for (let m = 1; ; m *= 10) for (const k of [1, 2, 5]) if (k * m >= need) return k * m;
}

/** Runs of consecutive bars of one rank (the devices of one file): the rank and its first and last bar. */
export function rankSpans(ranks: number[]): { rank: number; from: number; to: number }[] {
  const out: { rank: number; from: number; to: number }[] = [];
  ranks.forEach((rank, i) => {
    const last = out[out.length - 1];
    if (last && last.rank === rank && last.to === i - 1) last.to = i;
    else out.push({ rank, from: i, to: i });
  });
  return out;
}

/**
 * Labels above bars that do not overlap: taken in the order given (most important first), each
 * centred on its x, kept inside left..right, dropped when it would run into one already placed.
 */
export function placeLabels<T extends { x: number; width: number }>(
  items: T[],
  left: number,
  right: number,
  gap = 6,
): (T & { left: number })[] {
  const placed: (T & { left: number })[] = [];
  for (const it of items) {
    const l = Math.max(left, Math.min(it.x - it.width / 2, right - it.width));
    if (placed.some((p) => l < p.left + p.width + gap && p.left < l + it.width + gap)) continue;
    placed.push({ ...it, left: l });
  }
  return placed;
}

// ---- the figures in words ---------------------------------------------------------------------

/** The imbalance (max / median) for people: "3.83× the median"; a dash when there is none. */
export const imbalanceText = (x: number | null) => (x === null ? '—' : `${trim2(x)}× the median`);

const trim2 = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));

/** An outlier's distance from the median: "+300.00 MiB above the median (z = 101)". */
export function outlierText(o: Outlier): string {
  const side = o.above_median >= 0 ? 'above' : 'below';
  const z = o.z === null ? '' : ` (modified z-score ${trim2(o.z)})`;
  return `${o.above_median >= 0 ? '+' : '−'}${bytes(Math.abs(o.above_median))} ${side} the median${z}`;
}

/** A signed difference of bytes: "+300.00 MiB", "−1.59 GiB", "0 B". */
export const signedBytes = (b: number) => (b > 0 ? '+' : b < 0 ? '−' : '') + bytes(Math.abs(b));

/** "event 20", or where a peak without an event is: before the first event of the trace. */
export const peakAt = (event: number | null) =>
  event === null ? 'window start' : `event ${event.toLocaleString('en-US')}`;
