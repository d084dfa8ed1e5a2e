// Shared chart helpers: the event window (zoom, pan) and the tooltip's placement.
import { test } from "node:test";
import assert from "node:assert/strict";
import { panBy, zoomAround } from "../../www/src/ui/window";
import { tipPosition } from "../../www/src/ui/tooltip";

test("zoom keeps the event under the cursor and stays inside the trace", () => {
  assert.deepEqual(zoomAround(0, 1000, 10000, 500, true), [100, 900]);
  assert.deepEqual(zoomAround(0, 1000, 10000, 0, true), [0, 800]);
  assert.deepEqual(zoomAround(0, 9999, 10000, 5000, false), [0, 9999]);
  assert.deepEqual(zoomAround(100, 120, 10000, 110, true), [100, 120]); // 20 events at least
});

test("pan moves the window by the dragged share of the plot, clamped", () => {
  assert.deepEqual(panBy(1000, 2000, 10000, 100, 1000), [1100, 2100]);
  assert.deepEqual(panBy(1000, 2000, 10000, -5000, 1000), [0, 1000]);
  assert.deepEqual(panBy(1000, 2000, 10000, 100000, 1000), [8999, 9999]);
});

test("the tooltip sits below right of the pointer, inside the box", () => {
  assert.deepEqual(tipPosition(100, 50, 1000), { left: 114, top: 66 });
  assert.deepEqual(tipPosition(900, 50, 1000), { left: 680, top: 66 });
});
