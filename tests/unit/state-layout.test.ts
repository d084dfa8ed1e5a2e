// Allocator state geometry: segment order, byte scale, the block under the pointer.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  LABEL_W,
  ROW,
  blockAt,
  byteScale,
  segmentOrder,
  xOfAddress,
} from "../../www/src/views/state-layout";
import type { StateBlock, StateSegment } from "../../www/src/types";

const blk = (
  address: number,
  size: number,
  state = "active_allocated",
): StateBlock => ({
  address,
  size,
  requested: size,
  state,
  stack_id: null,
  lifetime_id: null,
});
const seg = (
  address: number,
  size: number,
  blocks: StateBlock[],
): StateSegment => ({
  address,
  size,
  stream: 0,
  segment_type: "large",
  is_expandable: false,
  blocks,
  free_bytes: 0,
  largest_free: 0,
});

const segs = segmentOrder([
  seg(1000, 100, [blk(1000, 100)]),
  seg(5000, 300, [blk(5000, 100), blk(5100, 200, "inactive")]),
  seg(500, 100, [blk(500, 100)]),
]);

test("segments largest first, then by address", () => {
  assert.deepEqual(
    segs.map((s) => s.address),
    [5000, 500, 1000],
  );
});

test("the largest segment spans the width; blocks sit at their offsets", () => {
  const scale = byteScale(segs, LABEL_W + 8 + 600);
  assert.equal(scale, 2);
  assert.equal(xOfAddress(segs[0], 5100, scale), LABEL_W + 200);
});

test("the block under the pointer", () => {
  const scale = byteScale(segs, LABEL_W + 8 + 300);
  assert.equal(blockAt(segs, scale, LABEL_W + 50, 5)?.[1].address, 5000);
  assert.equal(blockAt(segs, scale, LABEL_W + 150, 5)?.[1].state, "inactive");
  assert.equal(blockAt(segs, scale, LABEL_W + 50, ROW + 5)?.[0].address, 500);
  assert.equal(blockAt(segs, scale, LABEL_W + 150, ROW + 5), null); // past the segment's end
  assert.equal(blockAt(segs, scale, LABEL_W + 50, 3 * ROW + 5), null); // below the last row
});
