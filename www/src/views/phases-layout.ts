// Phase bands under the timeline (pure: no DOM; tests/unit). Row 0 holds the phase runs
// (forward, backward, optimizer, data), the rows below it the named ranges, packed into lanes so
// that no two ranges of a lane overlap. A label is drawn inside its band and only where it fits
// after the previous label of its lane: labels never overlap, and dense bands go unlabelled.
import type { PhaseSpan, Step } from '../generated/answers';
import { fitLabel } from '../ui/plot';

/** Height of one row of bands, and the gap above the range lanes. */
export const ROW_H = 16;
export const GAP = 3;
/** Range lanes drawn at most; ranges that fit none are counted in `hidden`. */
export const MAX_LANES = 3;
/** A label shows at least this many characters of its name, or none. */
const MIN_CHARS = 3;

export interface Band {
  span: PhaseSpan;
  /** 0: the phase runs; 1…: range lanes. */
  row: number;
  x0: number;
  x1: number;
  /** Where the label starts and its text ('' when it does not fit). */
  labelX: number;
  label: string;
  /** Ranges of one name this band stands for (dense ones are grouped into one band). */
  count: number;
}

/** Ranges of the same name closer than this (px) are drawn as one group band. */
export const GROUP_GAP = 2;

export interface BandLayout {
  bands: Band[];
  /** Rows drawn (1 + the range lanes in use; 0 when nothing is visible). */
  rows: number;
  /** Ranges in the window that found no lane. */
  hidden: number;
}

/** The name to show: a range PyTorch left unnamed ("N/A", "None", empty) reads "unnamed <group> range". */
export const spanName = (p: PhaseSpan) =>
  /^\s*(n\/a|none|null|)\s*$/i.test(p.name) ? `unnamed ${p.group} range` : p.name;

/** Whether a span is shown with the framework ranges off. */
export const isFramework = (p: PhaseSpan) => p.kind === 'range' && p.group === 'framework';

/**
 * The bands of the spans that meet events from..to, placed by `xOf` (an event's x) inside
 * left..right. `measure` gives a text's width in px.
 */
export function layoutBands(
  spans: PhaseSpan[],
  from: number,
  to: number,
  xOf: (i: number) => number,
  left: number,
  right: number,
  measure: (s: string) => number,
  showFramework = false,
): BandLayout {
  const clampX = (x: number) => Math.max(left, Math.min(right, x));
  const place = (p: PhaseSpan) => {
    const s = p.start_event as number;
    const e = p.end_event as number;
    const x0 = clampX(xOf(Math.max(s, from)));
    // At least a pixel wide: a two-event run still shows.
    const x1 = Math.max(x0 + 1, clampX(xOf(Math.min(e, to) + (e < to ? 1 : 0))));
    return { x0, x1: Math.min(right, x1) };
  };
  const visible = spans.filter(
    (p) =>
      p.start_event !== null &&
      p.end_event !== null &&
      p.start_event <= to &&
      p.end_event >= from &&
      (showFramework || !isFramework(p)),
  );
  const bands: Band[] = [];
  for (const p of visible.filter((p) => p.kind === 'run'))
    bands.push({ span: p, row: 0, ...place(p), labelX: 0, label: '', count: 1 });
  // Ranges: longest first into the first lane where they fit, then drawn in x order.
  const ranges = visible
    .filter((p) => p.kind === 'range')
    .map((p) => ({ p, ...place(p) }))
    .sort((a, b) => b.x1 - b.x0 - (a.x1 - a.x0) || a.x0 - b.x0);
  const lanes: { x0: number; x1: number }[][] = [];
  let hidden = 0;
  for (const r of ranges) {
    let lane = lanes.findIndex((l) => l.every((o) => r.x1 <= o.x0 || r.x0 >= o.x1));
    if (lane < 0 && lanes.length < MAX_LANES) lane = lanes.push([]) - 1;
    if (lane < 0) {
      hidden++;
      continue;
    }
    lanes[lane].push(r);
    bands.push({ span: r.p, row: lane + 1, x0: r.x0, x1: r.x1, labelX: 0, label: '', count: 1 });
  }
  bands.sort((a, b) => a.row - b.row || a.x0 - b.x0);
  grouped(bands);
  // Labels: inside the band, after the previous label of the row.
  const lastEnd = new Map<number, number>();
  for (const b of bands) {
    const start = Math.max(b.x0 + 3, (lastEnd.get(b.row) ?? -Infinity) + 6);
    const room = b.x1 - 3 - start;
    const name = b.count > 1 ? `${spanName(b.span)} ×${b.count}` : spanName(b.span);
    const text = room > 0 ? fitLabel(name, room, measure) : '';
    if (text.replace('…', '').length >= Math.min(MIN_CHARS, name.length) && text) {
      b.label = text;
      b.labelX = start;
      lastEnd.set(b.row, start + measure(text));
    }
  }
  const rows = bands.length ? 1 + lanes.length : 0;
  return { bands, rows, hidden };
}

/**
 * Dense ranges of one name in one lane (a compiled model's thousands) become one band spanning
 * them, counted, whose span covers their events (a click zooms to all of them). In place; bands
 * sorted by row, then x.
 */
function grouped(bands: Band[]): void {
  let w = 0;
  for (const b of bands) {
    const prev = w > 0 ? bands[w - 1] : null;
    const same = prev && prev.row === b.row && b.row > 0 && spanName(prev.span) === spanName(b.span);
    if (prev && same && b.x0 - prev.x1 < GROUP_GAP) {
      prev.x1 = Math.max(prev.x1, b.x1);
      prev.count += b.count;
      prev.span = {
        ...prev.span,
        end_event: Math.max(prev.span.end_event as number, b.span.end_event as number),
        end_us: b.span.end_us ?? prev.span.end_us,
      };
    } else {
      bands[w++] = b;
    }
  }
  bands.length = w;
}

/** Canvas height for `rows` rows of bands. */
export const bandsHeight = (rows: number) => (rows ? rows * ROW_H + (rows > 1 ? GAP : 0) + 2 : 0);

/** The top y of a row. */
export const rowTop = (row: number) => 1 + row * ROW_H + (row > 0 ? GAP : 0);

/** The band under (x, y), the innermost (shortest) when bands nest; null off every band. */
export function bandAt(layout: BandLayout, x: number, y: number): Band | null {
  const hits = layout.bands.filter(
    (b) => x >= b.x0 - 1 && x <= b.x1 + 1 && y >= rowTop(b.row) && y < rowTop(b.row) + ROW_H - 1,
  );
  return hits.sort((a, b) => a.x1 - a.x0 - (b.x1 - b.x0))[0] ?? null;
}

/** The events where a step starts inside from..to (a step starting at the window's start is no boundary). */
export function stepBoundaries(steps: Step[], from: number, to: number): number[] {
  return steps.map((s) => s.first_event).filter((e) => e > from && e <= to);
}
