// How the Overview shows a device's streams (pure: no DOM; tests/unit): a table only when there is
// something to tell apart (several streams, or frees that waited on another stream), else a line.
import type { StreamFigures } from '../generated/answers';
import { hex } from '../ui/format';

/** Whether any block of these streams was ever freed and left waiting on another stream. */
export function anyPendingFree(streams: StreamFigures[]): boolean {
  return streams.some((s) => s.peak_pending_free.bytes > 0 || s.pending_free_at_dump > 0);
}

/** 'table' for several streams or any pending free, 'line' for one plain stream, 'none' for none. */
export function streamsShape(streams: StreamFigures[]): 'table' | 'line' | 'none' {
  if (!streams.length) return 'none';
  return streams.length > 1 || anyPendingFree(streams) ? 'table' : 'line';
}

/** A stream id as PyTorch's own tools print it: hex ("0x0", "0x6c3a2f40"); the query's text form too. */
export function streamHex(id: number | string): string {
  const n = typeof id === 'number' ? id : /^-?\d+$/.test(id.trim()) ? Number(id) : NaN;
  return Number.isSafeInteger(n) ? hex(n) : String(id);
}
