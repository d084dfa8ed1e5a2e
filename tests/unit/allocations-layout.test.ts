// Allocations geometry: band stacking per column, hit-testing, the column under the cursor.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NO_STACK_PIXEL,
  PAD,
  REST_PIXEL,
  bandAt,
  bandScale,
  blockPixel,
  columnAt,
  columnRects,
  eventNear,
  hslPixel,
  paintBands,
  paintedFor,
  rgbPixel,
  xTicks,
} from "../../www/src/views/allocations-layout";
import type { BandBlock, Bands } from "../../www/src/types";

const block = (
  lifetime: number,
  size: number,
  stack: number | null,
): BandBlock => ({
  lifetime,
  address: 4096 * lifetime,
  size,
  alloc_event: lifetime,
  free_event: null,
  stack,
  site: "",
});

// Column 0 (event 0): block 0 (100 B) at the bottom, block 1 (200 B) on it, 50 B of smaller
// blocks on top. Column 1 (event 50): block 1 alone.
const bands: Bands = {
  from: 0,
  to: 99,
  column_event: [0, 50],
  column_start: [0, 2, 3],
  entry_block: [0, 1, 1],
  entry_bottom: [0, 100, 0],
  other_bytes: [50, 0],
  active: [350, 200],
  blocks: [block(0, 100, 7), block(1, 200, null)],
};
// Two 100 px columns; y = 408 - bytes (the top, the round axis value 400 B above the largest
// active 350 B, is the plot's 400 px).
const frame = { w: PAD.l + PAD.r + 200, h: 400 + PAD.t + PAD.b, pad: PAD };
const scale = bandScale(bands, frame);
/** Rectangles with their y to a millionth of a pixel. */
const rects = (col: number) =>
  columnRects(bands, col, scale, frame).map((r) => ({
    ...r,
    top: Math.round(r.top * 1e6) / 1e6,
    bottom: Math.round(r.bottom * 1e6) / 1e6,
  }));

test("scale: one column per engine column, the top at the round axis value above the largest active", () => {
  assert.equal(scale.cols, 2);
  assert.equal(scale.colW, 100);
  assert.equal(scale.y.top, 400);
  assert.equal(scale.y.y(0), 408);
  assert.deepEqual(
    scale.ticks.map((t) => t.label),
    ["0", "100 B", "200 B", "300 B", "400 B"],
  );
});

test("a column stacks its blocks bottom up in the engine's order, the rest on top", () => {
  assert.deepEqual(rects(0), [
    { x: 72, w: 100, top: 308, bottom: 408, block: 0 },
    { x: 72, w: 100, top: 108, bottom: 308, block: 1 },
    { x: 72, w: 100, top: 58, bottom: 108, block: null },
  ]);
  assert.deepEqual(rects(1), [
    { x: 172, w: 100, top: 208, bottom: 408, block: 1 },
  ]);
});

test("hit-testing names the block under the pointer", () => {
  assert.equal(bandAt(bands, scale, frame, 80, 332)?.block, 0);
  assert.equal(bandAt(bands, scale, frame, 80, 132)?.block, 1);
  assert.equal(bandAt(bands, scale, frame, 80, 82)?.block, null); // the summed rest
  assert.equal(bandAt(bands, scale, frame, 80, 42), null); // above the stack
  assert.equal(bandAt(bands, scale, frame, 180, 332)?.block, 1);
  assert.equal(bandAt(bands, scale, frame, 180, 132), null);
  assert.equal(bandAt(bands, scale, frame, 60, 332), null); // left of the plot
});

test("columns under x, and the event to zoom around", () => {
  assert.equal(columnAt(72, scale, frame), 0);
  assert.equal(columnAt(171.9, scale, frame), 0);
  assert.equal(columnAt(172, scale, frame), 1);
  assert.equal(columnAt(272, scale, frame), -1);
  assert.equal(eventNear(bands, scale, frame, 0), 0);
  assert.equal(eventNear(bands, scale, frame, 250), 50);
  assert.equal(eventNear(bands, scale, frame, 5000), 50);
});

test("x ticks stand at round events, between columns by their events", () => {
  const ticks = xTicks(bands, scale, frame);
  assert.deepEqual(
    ticks.map((t) => t.label),
    ["0", "10", "20", "30", "40", "50"],
  );
  assert.equal(ticks[0].x, 72);
  assert.equal(ticks[1].x, 92);
  assert.equal(ticks[5].x, 172);
});

test("x ticks are round numbers, not column fractions (0, 3,883, 7,767…)", () => {
  const cols = 100;
  const many = {
    ...bands,
    column_event: Array.from({ length: cols }, (_, i) =>
      Math.round((19417 / (cols - 1)) * i),
    ),
  };
  const s = { ...scale, cols, colW: 2 };
  const labels = xTicks(many, s, frame).map((t) => t.label);
  assert.deepEqual(labels, ["0", "5,000", "10,000", "15,000"]);
  const one = { ...bands, column_event: [7] };
  assert.deepEqual(
    xTicks(one, { ...scale, cols: 1 }, frame).map((t) => t.label),
    ["7"],
  );
});

test("the painted pixels are the rectangles: each block in its colour, the rest pale, nothing above", () => {
  for (const ratio of [1, 2]) {
    const img = paintBands(bands, scale, frame, ratio);
    assert.equal(img.width, 200 * ratio);
    assert.equal(img.height, 400 * ratio);
    /** The pixel at CSS (x, y) of the canvas. */
    const at = (x: number, y: number) =>
      img.pixels[
        Math.floor((y - PAD.t) * ratio) * img.width +
          Math.floor((x - PAD.l) * ratio)
      ];
    const colour = (stack: number | null) => blockPixel(stack, new Map());
    for (const col of [0, 1])
      for (const r of columnRects(bands, col, scale, frame)) {
        const want =
          r.block === null ? REST_PIXEL : colour(bands.blocks[r.block].stack);
        for (const y of [r.top + 1, (r.top + r.bottom) / 2, r.bottom - 1])
          assert.equal(at(r.x + r.w / 2, y), want, `column ${col} y ${y}`);
      }
    assert.equal(at(80, 50), 0, "nothing above the stack");
    assert.equal(at(180, 150), 0);
  }
  // Block 0's stack 7 at its golden-angle hue, a block without a stack grey.
  assert.equal(
    blockPixel(7, new Map()),
    hslPixel((7 * 137.508) % 360, 0.65, 0.58),
  );
  assert.equal(blockPixel(null, new Map()), NO_STACK_PIXEL);
  assert.equal(hslPixel(0, 1, 0.5), rgbPixel(255, 0, 0));
  assert.equal(hslPixel(120, 1, 0.5), rgbPixel(0, 255, 0));
});

test("a block thinner than a pixel still shows (one pixel), on a million entries in well under half a second", () => {
  const cols = 1200;
  const per = 1000;
  const blocks = Array.from({ length: per }, (_, i) => block(i, 1000, i));
  const n = cols * per;
  const b = {
    ...bands,
    column_event: Array.from({ length: cols }, (_, i) => i),
    column_start: Uint32Array.from({ length: cols + 1 }, (_, c) => c * per),
    entry_block: Uint32Array.from({ length: n }, (_, e) => e % per),
    entry_bottom: Float64Array.from({ length: n }, (_, e) => (e % per) * 1000),
    other_bytes: new Float64Array(cols),
    active: new Float64Array(cols).fill(per * 1000),
    blocks,
  };
  const f = { w: PAD.l + PAD.r + cols, h: 400 + PAD.t + PAD.b, pad: PAD };
  const s = bandScale(b, f);
  // The best of three (the machine may be busy with other work). About 30 ms on a quiet machine;
  // the bound catches a paint that is no longer linear in the entries (a quadratic one takes
  // minutes), not a busy machine (101 ms once while CI shared its two cores with builds).
  let ms = Infinity;
  let img = paintBands(b, s, f, 1);
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    img = paintBands(b, s, f, 1);
    ms = Math.min(ms, performance.now() - t);
  }
  assert.ok(ms < 500, `${ms.toFixed(0)} ms`);
  // Each block is 0.38 px tall: every pixel of the stack is painted.
  const top = Math.floor(400 - (per * 1000 * 400) / s.y.top);
  for (let r = top + 1; r < 400; r++) assert.notEqual(img.pixels[r * cols], 0);
});

test("a draw uses the pixels painted for its frame (the worker's), and paints anew for another frame", () => {
  const data = { ...bands };
  const first = paintedFor(data, scale, frame, 1);
  assert.deepEqual(first.pixels, paintBands(bands, scale, frame, 1).pixels);
  // The same frame and ratio again (a selection redrawn): those very pixels, not painted again.
  assert.equal(
    paintedFor(data, scale, { ...frame, pad: { ...frame.pad } }, 1),
    first,
  );
  // Painted elsewhere (the worker) for this frame: taken as they are.
  const worker = { ...first, pixels: first.pixels.slice() };
  assert.equal(
    paintedFor({ ...bands, painted: worker }, scale, frame, 1),
    worker,
  );
  // Another size or ratio (the chart resized, another screen): painted for it.
  const wider = { ...frame, w: frame.w + 100 };
  const resized = paintedFor(data, bandScale(data, wider), wider, 1);
  assert.notEqual(resized, first);
  assert.equal(resized.width, first.width + 100);
  const sharp = paintedFor(data, bandScale(data, wider), wider, 2);
  assert.equal(sharp.width, resized.width * 2);
});
