// Layout of categories and streams in the other views: the strip's shares (bytes over the total
// the engine says they sum to), the largest category change of a comparison, and how the Overview
// shows a device's streams (a table, one line or nothing) with ids in hex.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  byteShares,
  largestChange,
} from "../../www/src/views/categories-layout";
import {
  anyPendingFree,
  streamHex,
  streamsShape,
} from "../../www/src/views/streams-layout";
import type { StreamInfo } from "../../www/src/types";

test("byte shares: each part over the total, order and fields kept", () => {
  const parts = [
    { category: "optimizer state", bytes: 750, blocks: 3 },
    { category: "activation", bytes: 250, blocks: 1 },
    { category: "empty", bytes: 0, blocks: 0 },
  ];
  const s = byteShares(parts, 1000);
  assert.deepEqual(
    s.map((x) => [x.category, x.share, x.blocks]),
    [
      ["optimizer state", 0.75, 3],
      ["activation", 0.25, 1],
      ["empty", 0, 0],
    ],
  );
  // Nothing to share: no NaN or Infinity for a bar width.
  assert.deepEqual(
    byteShares(parts, 0).map((x) => x.share),
    [0, 0, 0],
  );
  assert.deepEqual(byteShares([], 10), []);
});

test("largest change: the engine's first row with a change, or none", () => {
  const rows = [
    { category: "a", delta: 0 },
    { category: "optimizer state", delta: -6676992 },
    { category: "temporary", delta: 6403584 },
  ];
  assert.equal(largestChange(rows)?.category, "optimizer state");
  assert.equal(largestChange([{ category: "a", delta: 0 }]), null);
  assert.equal(largestChange([]), null);
});

const stream = (id: number, pending = 0, atDump = 0): StreamInfo => ({
  stream: id,
  allocations: 10,
  peak_active: { bytes: 100, event: 5 },
  at_allocated_peak: 100,
  peak_pending_free: { bytes: pending, event: pending ? 7 : null },
  pending_free_at_dump: atDump,
});

test("streams: a table for several streams or a pending free, else one line", () => {
  assert.equal(streamsShape([]), "none");
  assert.equal(streamsShape([stream(0)]), "line");
  assert.equal(streamsShape([stream(0), stream(7)]), "table");
  assert.equal(streamsShape([stream(0, 512)]), "table");
  assert.equal(streamsShape([stream(0, 0, 4096)]), "table");
  assert.equal(anyPendingFree([stream(0), stream(1)]), false);
  assert.equal(anyPendingFree([stream(0), stream(1, 512)]), true);
});

test("stream ids in hex, from numbers or the query's decimal text", () => {
  assert.equal(streamHex(0), "0x0");
  assert.equal(streamHex(1632243552), "0x614a0f60");
  assert.equal(streamHex("1632243552"), "0x614a0f60");
  assert.equal(streamHex(" 2 "), "0x2");
  assert.equal(streamHex("-1"), "-0x1");
  // Not a whole number (a bucket, or beyond 2^53): shown as given.
  assert.equal(streamHex("[none]"), "[none]");
  assert.equal(streamHex("99999999999999999999"), "99999999999999999999");
});
