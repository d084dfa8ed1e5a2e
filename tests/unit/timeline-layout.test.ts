// Timeline geometry: buckets, the x scale by index and by time, axis ticks, the centred window.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  PAD,
  bucketAt,
  bucketEvents,
  columnEdges,
  flatNote,
  stepPoints,
  centredWindow,
  groupLabels,
  labelLeft,
  niceStep,
  timeLabel,
  timeOf,
  xScale,
  xTicks,
} from "../../www/src/views/timeline-layout";
import {
  byteTicks,
  fitLabel,
  niceTicks,
  yScaleTo,
} from "../../www/src/ui/plot";
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

test("x ticks: round event indices at their x", () => {
  const ticksAt = xTicks(null, 0, 1000, frame, false);
  assert.deepEqual(
    ticksAt.map((k) => k.label),
    ["0", "200", "400", "600", "800", "1,000"],
  );
  assert.equal(ticksAt[0].x, 72);
  assert.equal(ticksAt[1].x, 272);
  assert.equal(ticksAt[5].x, 1072);
  // A zoomed window starts at the first round index inside it.
  assert.deepEqual(
    xTicks(null, 1234, 1789, frame, false).map((k) => k.label),
    ["1,300", "1,400", "1,500", "1,600", "1,700"],
  );
});

test("x ticks of a one-event window: one label, not 0 0 0 0 0", () => {
  assert.deepEqual(
    xTicks(null, 0, 0, frame, false).map((k) => k.label),
    ["0"],
  );
  assert.deepEqual(
    xTicks(null, 0, 2, frame, false).map((k) => k.label),
    ["0", "1", "2"],
  );
});

test("x ticks by time: round offsets from the trace's first event, in ms or s", () => {
  const timed = timeline([0, 10], [1_000_000, 1_050_000]);
  assert.deepEqual(
    xTicks(timed, 0, 19, frame, true).map((k) => k.label),
    ["0", "10 ms", "20 ms", "30 ms", "40 ms", "50 ms"],
  );
  // Counted from the trace's first event (the origin), not the visible window's.
  const later = timeline([0, 10], [8_000_000, 15_700_000]);
  assert.deepEqual(
    xTicks(later, 0, 19, frame, true, 1_000_000).map((k) => k.label),
    ["8 s", "10 s", "12 s", "14 s"],
  );
});

test("time labels: the unit and decimals the step calls for", () => {
  assert.equal(timeLabel(7_500_000, 2_500_000), "7.5 s");
  assert.equal(timeLabel(7_635_500, 1_000_000), "8 s");
  assert.equal(timeLabel(250_000, 250_000), "0.25 s");
  assert.equal(timeLabel(40_000, 20_000), "40 ms");
  assert.equal(timeLabel(2_500, 2_500), "2.5 ms");
  assert.equal(timeLabel(40, 20), "40 µs");
  assert.equal(timeLabel(0, 1_000_000), "0");
});

test("nice steps: the 1, 2, 2.5, 5 × 10^k nearest on a log scale", () => {
  assert.equal(niceStep(0.7, [1, 2, 2.5, 5]), 0.5);
  assert.equal(niceStep(3.1, [1, 2, 2.5, 5]), 2.5);
  assert.equal(niceStep(2.1, [1, 2, 2.5, 5]), 2);
  assert.equal(niceStep(7, [1, 2, 5]), 5);
  assert.equal(niceStep(8, [1, 2, 5]), 10);
  assert.equal(niceStep(1540, [1, 2, 5]), 2000);
  assert.equal(niceStep(111, [1, 2, 5]), 100);
});

test("y: round byte ticks in the unit of the maximum, the top at the last one", () => {
  const GiB = 2 ** 30;
  assert.deepEqual(
    byteTicks(23.8 * GiB).map((t) => t.label),
    ["0", "5 GiB", "10 GiB", "15 GiB", "20 GiB", "25 GiB"],
  );
  assert.deepEqual(
    byteTicks(9.29 * GiB).map((t) => t.label),
    ["0", "2.5 GiB", "5 GiB", "7.5 GiB", "10 GiB"],
  );
  assert.equal(byteTicks(9.29 * GiB)[1].value, 2.5 * GiB);
  assert.deepEqual(
    byteTicks(700 * 2 ** 20).map((t) => t.label),
    ["0", "200 MiB", "400 MiB", "600 MiB", "800 MiB"],
  );
  // Nothing to show: whole bytes still.
  assert.deepEqual(
    byteTicks(0).map((t) => t.label),
    ["0", "1 B", "2 B", "3 B", "4 B"],
  );
  assert.deepEqual(niceTicks(1000, 4), [0, 250, 500, 750, 1000]);
  const y = yScaleTo(1000, frame);
  assert.equal(y.y(0), 360 - PAD.b);
  assert.equal(y.y(1000), PAD.t);
});

test("labels stay inside the plot: centred on their x, moved in at the edges", () => {
  assert.equal(labelLeft(500, 40, 72, 1082), 480);
  assert.equal(labelLeft(1080, 40, 72, 1082), 1042); // the last tick is never clipped
  assert.equal(labelLeft(60, 40, 64, 1082), 64);
});

test("annotation labels are grouped when they would overlap, never cut at the right edge", () => {
  const measure = (s: string) => s.length * 6; // 6 px a character
  const items = [
    { x: 100, label: "forward" },
    { x: 110, label: "backward" },
    { x: 120, label: "optimizer" },
    { x: 400, label: "step 2" },
    { x: 1075, label: "end" },
  ];
  const groups = groupLabels(items, measure, 1080);
  assert.deepEqual(
    groups.map((g) => g.text),
    ["forward +2", "step 2", "end"],
  );
  assert.deepEqual(groups[0].labels, ["forward", "backward", "optimizer"]);
  assert.equal(groups[2].left, 1080 - 18); // ends at the right edge
  for (let i = 1; i < groups.length; i++)
    assert.ok(
      groups[i].left >= groups[i - 1].left + groups[i - 1].width,
      "no overlap",
    );
  // 1,802 annotations in a 1,000 px plot: a few labels, none overlapping.
  const many = Array.from({ length: 1802 }, (_, i) => ({
    x: 72 + (i * 1000) / 1802,
    label: `## op ${i} ##`,
  }));
  const g2 = groupLabels(many, measure, 1082);
  assert.ok(g2.length < 20, `${g2.length} groups`);
  assert.equal(
    g2.reduce((n, g) => n + g.labels.length, 0),
    1802,
  );
  for (let i = 1; i < g2.length; i++)
    assert.ok(g2[i].left >= g2[i - 1].left + g2[i - 1].width);
  assert.ok(g2.every((g) => g.left + g.width <= 1082));
});

test("label fitting: the longest prefix with an ellipsis that fits", () => {
  const measure = (s: string) => s.length * 10;
  assert.equal(fitLabel("forward", 100, measure), "forward");
  assert.equal(fitLabel("forward_pass", 60, measure), "forwa…");
  assert.equal(fitLabel("forward", 10, measure), "");
});

test("the window centred on an event stays inside the trace", () => {
  assert.deepEqual(centredWindow(5000, 100000, 2000), [4000, 6000]);
  assert.deepEqual(centredWindow(100, 100000, 2000), [0, 2000]);
  assert.deepEqual(centredWindow(99990, 100000, 2000), [98990, 99999]);
});

// ---- the picture over wall-clock time (issue 28 item 2) ----------------------------------------

/** A timeline of `index` buckets with counters `vals` (all four the same) and times. */
function counters(
  index: number[],
  time_us: (number | null)[],
  vals: number[],
  to: number,
): Timeline {
  return {
    ...timeline(index, time_us),
    to,
    allocated_min: vals,
    allocated_max: vals,
    active_max: vals,
    reserved_max: vals,
    requested_max: vals,
  };
}

/** Checks the step line of `vals` under scale `byTime`: what the chart draws, as the draw does. */
function lineOf(tl: Timeline, byTime: boolean) {
  const x = xScale(tl, tl.from, tl.to, frame, byTime);
  const edges = columnEdges(tl, x, tl.from, tl.to, frame);
  const pts = stepPoints(tl.allocated_max, edges);
  // No diagonal and never backwards: each step is a column (same value) or a jump (same x).
  for (let k = 1; k < pts.length; k++) {
    const [[xa, va], [xb, vb]] = [pts[k - 1], pts[k]];
    assert.ok(xb >= xa - 1e-9, `x runs backwards at point ${k}: ${xa} → ${xb}`);
    assert.ok(xa === xb || va === vb, `diagonal at point ${k}`);
  }
  /** The value the line holds at event i: the column drawn over xOf(i) that is i's bucket. */
  const valueAt = (i: number) => {
    const k = bucketAt(tl.index, i);
    const xi = x.xOf(i);
    assert.ok(
      edges.x0[k] <= xi + 1e-9 && xi <= edges.x1[k] + 1e-9,
      `event ${i} at x ${xi} outside its column ${k}`,
    );
    return tl.allocated_max[k];
  };
  return { x, edges, valueAt };
}

test("over time and over events the chart draws the same counters at the same events", () => {
  // Irregular times: a burst, a long pause, equal timestamps, one bucket without a time, and
  // one a clock step earlier than the bucket before it.
  const index = [0, 5, 10, 15, 20, 25, 30, 35];
  const times = [1000, 1001, 1001, 1001, 90_000, null, 89_000, 200_000];
  const vals = [10, 50, 20, 70, 30, 80, 40, 90];
  const tl = counters(index, times, vals, 39);
  const byEvents = lineOf(tl, false);
  const byTime = lineOf(tl, true);
  for (let i = 0; i <= 39; i++)
    assert.equal(byTime.valueAt(i), byEvents.valueAt(i), `event ${i}`);
  // The columns tile the plot: each ends where the next begins.
  for (const { edges } of [byEvents, byTime])
    for (let k = 0; k + 1 < index.length; k++)
      assert.equal(edges.x1[k], edges.x0[k + 1]);
});

test("a trace with known times: every bucket stands at its time since the first event", () => {
  // Buckets of 10 events at 0, 0.1, 0.1 (equal), 0.9 and 1 s; the plot is 1000 px wide.
  const index = [0, 10, 20, 30, 40];
  const times = [5_000_000, 5_100_000, 5_100_000, 5_900_000, 6_000_000];
  const tl = counters(index, times, [1, 2, 3, 4, 5], 49);
  const { x, edges } = lineOf(tl, true);
  assert.deepEqual(
    index.map((i) => x.xOf(i)),
    [72, 172, 172, 972, 1072],
  );
  // Inside a bucket, events are spread over its time (event 35: halfway from 0.9 s to 1 s).
  assert.equal(x.xOf(35), 1022);
  assert.deepEqual(edges.x0, [72, 172, 172, 972, 1072]);
  assert.deepEqual(edges.x1.slice(0, 4), [172, 172, 972, 1072]);
  // The axis: 0 at the left edge, 1 s at the right.
  const ticks = xTicks(tl, 0, 49, frame, true, 5_000_000);
  assert.equal(ticks[0].label, "0");
  assert.equal(ticks[0].x, 72);
  assert.equal(ticks.at(-1)!.label, "1 s");
  assert.equal(ticks.at(-1)!.x, 1072);
  // Back from x: the bucket starting at or left of it.
  assert.equal(x.iOf(500), 20);
  assert.equal(x.iOf(1000), 30);
});

test("a flat chart says why: a trace of one event, or counters that hardly move", () => {
  const GiB = 2 ** 30;
  const one = counters([0], [null], [16 * GiB], 0);
  assert.match(
    flatNote(one, 1, 412)!,
    /only 1 event.*412 blocks from before the window/,
  );
  const still = counters(
    [0, 10],
    [null, null],
    [8 * GiB, 8 * GiB + 2 ** 20],
    19,
  );
  assert.match(flatNote(still, 20, 0)!, /moves by 1.00 MiB only, under 1 %/);
  const moving = counters([0, 10], [null, null], [GiB, 2 * GiB], 19);
  assert.equal(flatNote(moving, 20, 0), null);
});
