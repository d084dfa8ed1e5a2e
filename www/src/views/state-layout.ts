// Allocator state geometry (pure: no DOM; tests/unit): one row per segment, largest first, bar
// length in proportion to the segment's size, blocks at their offsets; hit-testing.
import type { StateBlock, StateSegment } from '../generated/answers';

export const ROW = 18;
/** Room for the segment's address and size left of its bar. */
export const LABEL_W = 170;

/** Segments largest first, then by address. */
export function segmentOrder(segs: StateSegment[]): StateSegment[] {
  return [...segs].sort((a, b) => b.size - a.size || a.address - b.address);
}

/** Pixels per byte when the largest segment spans the width. */
export function byteScale(segs: StateSegment[], width: number): number {
  return (width - LABEL_W - 8) / Math.max(1, ...segs.map((s) => s.size));
}

/** The x of an address in its segment's row. */
export const xOfAddress = (s: StateSegment, address: number, scale: number) => LABEL_W + (address - s.address) * scale;

/** The segment and block under (x, y) of rows laid out in `segs`' order, or null. */
export function blockAt(segs: StateSegment[], scale: number, x: number, y: number): [StateSegment, StateBlock] | null {
  const s = segs[Math.floor(y / ROW)];
  if (!s) return null;
  const addr = s.address + (x - LABEL_W) / scale;
  const b = s.blocks.find((b) => addr >= b.address && addr < b.address + b.size);
  return b ? [s, b] : null;
}
