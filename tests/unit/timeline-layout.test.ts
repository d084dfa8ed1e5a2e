// Timeline geometry: buckets, the x scale by index and by time, axis ticks, the centred window.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PAD,
  bucketAt,
  bucketEvents,
  centredWindow,
  timeOf,
  xScale,
  xTicks,
} from "../../www/src/views/timeline-layout";
import { ticks, yScale } from "../../www/src/ui/plot";
import type { Timeline } from "../../www/src/types";

// A plot 1000 px wide: x = 72 + px.
const frame = { w: 1084, h: 360, pad: PAD };

function timeline(index: number[], time_us: (number | null)[]): Timeline {
  const zeros = index.map(() => 0);
  return {
    device: 0,
    from: index[0],
    to: 39,
    index,
    allocated_min: zeros,
    allocated_max: zeros,
    active_max: zeros,
    reserved_max: zeros,
    requested_max: zeros,
    time_us,
  };
}
const t = timeline([0, 10, 20, 30], [0, 100, 200, 1000]);

test("the bucket of an event is the last one starting at or before it", () => {
  const index = [0, 10, 20, 30];
  assert.equal(bucketAt(index, 0), 0);
  assert.equal(bucketAt(index, 9), 0);
  assert.equal(bucketAt(index, 20), 2);
  assert.equal(bucketAt(index, 25), 2);
  assert.equal(bucketAt(index, 99), 3);
  assert.equal(bucketAt(index, -5), 0);
  assert.equal(bucketAt([], 5), -1);
});

test("a bucket covers the events up to the next one's start, the last up to the window's end", () => {
  assert.deepEqual(bucketEvents(t, 1), [10, 19]);
  assert.deepEqual(bucketEvents(t, 3), [30, 39]);
});

test("by index: events map linearly across the plot and back", () => {
  const x = xScale(t, 0, 1000, frame, false);
  assert.equal(x.xOf(0), 72);
  assert.equal(x.xOf(500), 572);
  assert.equal(x.xOf(1000), 1072);
  for (const i of [0, 1, 333, 999, 1000]) assert.equal(x.iOf(x.xOf(i)), i);
});

test("by time: events sit at their interpolated time; x maps back to a bucket start", () => {
  assert.equal(timeOf(t, 25), 600);
  const x = xScale(t, 0, 39, frame, true);
  assert.equal(x.xOf(20), 72 + 200);
  assert.equal(x.xOf(25), 72 + 600);
  assert.equal(x.iOf(72 + 300), 20);
  assert.equal(x.iOf(72 + 5), 0);
});

test("by time without timestamps falls back to the index", () => {
  const none = timeline([0, 10], [null, null]);
  assert.equal(timeOf(none, 5), null);
  assert.equal(xScale(none, 0, 1000, frame, true).xOf(500), 572);
});

test("x ticks: six labels of event indices, kept inside the plot", () => {
  const ticksAt = xTicks(null, 0, 1000, frame, false);
  assert.deepEqual(
    ticksAt.map((k) => k.label),
    ["0", "200", "400", "600", "800", "1,000"],
  );
  assert.equal(ticksAt[0].x, 72);
  assert.equal(ticksAt[1].x, 262);
  assert.equal(ticksAt[5].x, 1084 - 60);
});

test("x ticks by time: milliseconds since the first bucket", () => {
  const timed = timeline([0, 10], [1_000_000, 1_050_000]);
  assert.deepEqual(
    xTicks(timed, 0, 19, frame, true).map((k) => k.label),
    ["+0.0 ms", "+10.0 ms", "+20.0 ms", "+30.0 ms", "+40.0 ms", "+50.0 ms"],
  );
});

test("y: 5 % headroom over the maximum, byte ticks in whole bytes", () => {
  const y = yScale(1000, frame);
  assert.equal(y.top, 1050);
  assert.equal(y.y(0), 360 - PAD.b);
  assert.equal(y.y(1050), PAD.t);
  assert.deepEqual(ticks(y.top, 4), [0, 263, 525, 788, 1050]);
});

test("the window centred on an event stays inside the trace", () => {
  assert.deepEqual(centredWindow(5000, 100000, 2000), [4000, 6000]);
  assert.deepEqual(centredWindow(100, 100000, 2000), [0, 2000]);
  assert.deepEqual(centredWindow(99990, 100000, 2000), [98990, 99999]);
});
