// Categories geometry (pure: no DOM; tests/unit): the stacked share bar. Each category is a
// segment as wide as its share (the engine's figure), in the engine's order, and its label is
// drawn inside the segment only when it fits there, so that no two labels ever overlap.

export interface ShareSegment {
  category: string;
  /** Start and width as fractions of the bar (0..1). */
  left: number;
  width: number;
  /** The text inside the segment: "name 34.3%", "name", "34.3%" or '' (nothing fits). */
  label: string;
}

/**
 * Segments of a bar `barWidth` px wide for `parts` (share = fraction of the total), empty parts
 * skipped. `measure` gives a text's width in px; `pad` is the room left on each side of a label.
 */
export function shareSegments(
  parts: { category: string; share: number }[],
  barWidth: number,
  measure: (s: string) => number,
  pad = 4,
): ShareSegment[] {
  const out: ShareSegment[] = [];
  let left = 0;
  for (const p of parts) {
    if (!(p.share > 0)) continue;
    // Never past the end of the bar (shares are rounded fractions).
    const width = Math.max(0, Math.min(p.share, 1 - left));
    const room = width * barWidth - 2 * pad;
    const pct = `${(p.share * 100).toFixed(1)}%`;
    const label = [`${p.category} ${pct}`, p.category, pct].find((t) => measure(t) <= room) ?? '';
    out.push({ category: p.category, left, width, label });
    left += width;
  }
  return out;
}

/**
 * Each part's fraction of `total` (the engine's exact bytes over the figure they sum to), for a
 * bar's widths; every share is 0 when the total is not positive. Order is kept.
 */
export function byteShares<T extends { category: string; bytes: number }>(
  parts: T[],
  total: number,
): (T & { share: number })[] {
  return parts.map((p) => ({ ...p, share: total > 0 ? p.bytes / total : 0 }));
}

/**
 * The row of a comparison to put in a one-line summary: the first with a change (the engine sorts
 * the rows by |delta|, largest first), or null when no category changed.
 */
export function largestChange<T extends { delta: number }>(rows: T[]): T | null {
  return rows.find((r) => r.delta !== 0) ?? null;
}
