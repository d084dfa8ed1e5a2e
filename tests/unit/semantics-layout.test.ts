// Layout of the semantics views: the category share bar, the phase bands under the timeline (no
// two labels overlap, ranges packed into lanes), step boundaries, the stacked category areas,
// and the category palette.
import { test } from "node:test";
import assert from "node:assert/strict";
import { shareSegments } from "../../www/src/views/categories-layout";
import {
  MAX_LANES,
  bandAt,
  bandsHeight,
  layoutBands,
  rowTop,
  spanName,
  stepBoundaries,
} from "../../www/src/views/phases-layout";
import { stackColumns } from "../../www/src/views/timeline-layout";
import {
  UNKNOWN_COLOR,
  categoryColor,
} from "../../www/src/ui/categories-palette";
import type { PhaseSpan, Step } from "../../www/src/types";

/** 7 px a character, like an 11–12 px sans-serif. */
const measure = (s: string) => s.length * 7;

test("share segments tile the bar in order, empty categories skipped", () => {
  const segs = shareSegments(
    [
      { category: "optimizer state", share: 0.5 },
      { category: "empty", share: 0 },
      { category: "activation", share: 0.3 },
      { category: "unknown", share: 0.2 },
    ],
    1000,
    measure,
  );
  assert.deepEqual(
    segs.map((s) => s.category),
    ["optimizer state", "activation", "unknown"],
  );
  let left = 0;
  for (const s of segs) {
    assert.ok(Math.abs(s.left - left) < 1e-12);
    left += s.width;
  }
  assert.ok(Math.abs(left - 1) < 1e-12);
  assert.equal(segs[0].label, "optimizer state 50.0%");
});

test("share labels fit inside their segment or are dropped", () => {
  const parts = [
    { category: "parameter", share: 0.9 },
    { category: "gradient", share: 0.06 },
    { category: "optimizer state", share: 0.03 },
    { category: "unknown", share: 0.01 },
  ];
  const width = 800;
  const segs = shareSegments(parts, width, measure, 4);
  for (const s of segs)
    assert.ok(
      measure(s.label) <= s.width * width - 8,
      `${s.category}: "${s.label}" overflows ${s.width * width}px`,
    );
  // 6% of 800 px = 48 px: only the percentage fits; 1% = 8 px: nothing.
  assert.equal(segs[1].label, "6.0%");
  assert.equal(segs[3].label, "");
});

test("shares that add past 1 never run past the bar", () => {
  const segs = shareSegments(
    [
      { category: "a", share: 0.7 },
      { category: "b", share: 0.4 },
    ],
    100,
    measure,
  );
  assert.ok(segs.at(-1)!.left + segs.at(-1)!.width <= 1 + 1e-12);
});

const run = (name: string, s: number, e: number): PhaseSpan => ({
  name,
  kind: "run",
  group: "phase",
  start_event: s,
  end_event: e,
  start_us: null,
  end_us: null,
  open: false,
});
const range = (
  name: string,
  group: string,
  s: number | null,
  e: number | null,
): PhaseSpan => ({
  ...run(name, 0, 0),
  kind: "range",
  group,
  start_event: s,
  end_event: e,
});

// Events 0..999 over x 100..1100 (1 px an event).
const xOf = (i: number) => 100 + i;

/** Labels of one row never overlap, and each stays inside its band. */
function assertLabelsFit(bands: ReturnType<typeof layoutBands>["bands"]) {
  const rows = new Map<number, [number, number][]>();
  for (const b of bands.filter((b) => b.label)) {
    const w = measure(b.label);
    assert.ok(b.labelX >= b.x0, `${b.label} starts before its band`);
    assert.ok(b.labelX + w <= b.x1, `${b.label} runs past its band`);
    rows.set(b.row, [...(rows.get(b.row) ?? []), [b.labelX, b.labelX + w]]);
  }
  for (const [row, spans] of rows) {
    spans.sort((a, b) => a[0] - b[0]);
    for (let k = 1; k < spans.length; k++)
      assert.ok(
        spans[k][0] >= spans[k - 1][1],
        `row ${row}: labels overlap at ${spans[k][0]}`,
      );
  }
}

test("phase runs go on row 0, ranges below; labels never overlap", () => {
  const spans = [
    run("forward", 0, 299),
    run("backward", 300, 899),
    run("optimizer", 900, 999),
    range("Optimizer.step#AdamW.step", "optimizer", 900, 999),
    range("ProfilerStep#1", "step", 0, 999),
  ];
  const l = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  assert.equal(l.rows, 3); // runs + 2 lanes (the step range nests the optimizer range)
  assert.deepEqual(
    l.bands.filter((b) => b.row === 0).map((b) => b.span.name),
    ["forward", "backward", "optimizer"],
  );
  assert.ok(
    l.bands.every((b) => b.label),
    "wide bands are labelled",
  );
  assertLabelsFit(l.bands);
});

test("dense runs: labels are dropped rather than overlapping", () => {
  const spans: PhaseSpan[] = [];
  for (let i = 0; i < 1000; i += 10)
    spans.push(run(i % 20 ? "backward" : "forward", i, i + 9));
  const l = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  assert.equal(l.bands.length, 100);
  assertLabelsFit(l.bands);
  assert.ok(
    l.bands.every((b) => !b.label),
    "10 px bands cannot hold a label",
  );
});

test("adjacent bands: a label starts after the previous label of its row", () => {
  // 60 px bands whose names need more: each label is cut to fit.
  const spans = [0, 60, 120].map((s) => run("optimizer-phase-long", s, s + 59));
  const l = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  assertLabelsFit(l.bands);
  assert.ok(l.bands.every((b) => b.label.endsWith("…")));
});

test("overlapping ranges pack into at most MAX_LANES lanes; the rest are counted", () => {
  const spans = Array.from({ length: MAX_LANES + 2 }, (_, k) =>
    range(`r${k}`, "user", 100 + k, 600 + k),
  );
  const l = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  assert.equal(l.rows, 1 + MAX_LANES);
  assert.equal(l.hidden, 2);
  // No two bands of a lane overlap.
  for (const a of l.bands)
    for (const b of l.bands)
      if (a !== b && a.row === b.row)
        assert.ok(
          a.x1 <= b.x0 || b.x1 <= a.x0,
          `${a.span.name} overlaps ${b.span.name}`,
        );
});

test("bands: framework ranges only on request, ranges outside the window or without events skipped", () => {
  const spans = [
    run("forward", 0, 999),
    range("inductor internals", "framework", 10, 20),
    range("outside", "user", null, null),
    range("later", "user", 2000, 3000),
  ];
  const off = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  assert.deepEqual(
    off.bands.map((b) => b.span.name),
    ["forward"],
  );
  const on = layoutBands(spans, 0, 999, xOf, 100, 1100, measure, true);
  assert.deepEqual(
    on.bands.map((b) => b.span.name),
    ["forward", "inductor internals"],
  );
  assert.equal(layoutBands([], 0, 999, xOf, 100, 1100, measure).rows, 0);
  assert.equal(bandsHeight(0), 0);
});

test("bands are clipped to the window and at least a pixel wide", () => {
  const l = layoutBands(
    [run("forward", 0, 5000), run("optimizer", 500, 500)],
    400,
    600,
    (i) => 100 + (i - 400) * 5,
    100,
    1100,
    measure,
  );
  const [fwd, opt] = l.bands;
  assert.equal(fwd.x0, 100);
  assert.equal(fwd.x1, 1100);
  assert.ok(opt.x1 - opt.x0 >= 1);
});

test("bandAt finds the innermost band under the cursor", () => {
  const l = layoutBands(
    [
      run("forward", 0, 999),
      range("outer", "step", 0, 999),
      range("inner", "user", 100, 200),
    ],
    0,
    999,
    xOf,
    100,
    1100,
    measure,
  );
  assert.equal(bandAt(l, 300, rowTop(0) + 5)?.span.name, "forward");
  assert.equal(bandAt(l, 250, rowTop(1) + 5)?.span.name, "outer");
  assert.equal(bandAt(l, 250, rowTop(2) + 5)?.span.name, "inner");
  assert.equal(bandAt(l, 50, rowTop(0) + 5), null);
});

test("unnamed ranges read as such", () => {
  assert.equal(
    spanName(range("N/A", "compiled", 0, 1)),
    "unnamed compiled range",
  );
  assert.equal(spanName(range("fwd", "user", 0, 1)), "fwd");
});

test("step boundaries: starts inside the window, not at its first event", () => {
  const step = (first: number): Step => ({
    step: first,
    first_event: first,
    last_event: first + 99,
    complete: true,
    peak_allocated: { bytes: 0, event: first },
    peak_reserved: { bytes: 0, event: first },
    peak_phase: "forward",
    end_allocated: 0,
    change_peak_allocated: null,
    change_end_allocated: null,
  });
  const steps = [0, 100, 200, 300].map(step);
  assert.deepEqual(stepBoundaries(steps, 0, 999), [100, 200, 300]);
  assert.deepEqual(stepBoundaries(steps, 100, 250), [200]);
});

test("stacked columns: the engine's equal slices, categories stacked from 0", () => {
  const cols = stackColumns(
    {
      events: [3, 7],
      values: [
        [10, 5],
        [20, 0],
      ],
    },
    0,
    9,
    (i) => i * 10,
  );
  assert.deepEqual(
    cols.map((c) => [c.x0, c.x1]),
    [
      [0, 50],
      [50, 90],
    ],
  );
  assert.deepEqual(cols[0].lower, [0, 10]);
  assert.deepEqual(cols[0].upper, [10, 15]);
  assert.deepEqual(cols[1].upper, [20, 20]);
  assert.deepEqual(
    stackColumns({ events: [], values: [] }, 0, 9, (i) => i),
    [],
  );
});

test("category colors: fixed, distinct for the built-in categories, grey for unknown, stable for others", () => {
  const builtIn = [
    "parameter",
    "gradient",
    "optimizer state",
    "activation",
    "autograd temporary",
    "temporary",
    "input/data",
    "communication",
    "cache",
  ];
  const colors = builtIn.map(categoryColor);
  assert.equal(new Set(colors).size, builtIn.length);
  assert.equal(categoryColor("unknown"), UNKNOWN_COLOR);
  assert.ok(!colors.includes(UNKNOWN_COLOR));
  assert.equal(categoryColor("adam state"), categoryColor("adam state"));
  assert.ok(![...colors, UNKNOWN_COLOR].includes(categoryColor("adam state")));
});

test("dense ranges of one name are grouped into one counted band that covers them all", () => {
  const spans: PhaseSpan[] = [run("forward", 0, 999)];
  // 500 compiled-graph calls one event apart, 1 px wide each.
  for (let i = 0; i < 1000; i += 2)
    spans.push(range("## Call CompiledFxGraph f1 ##", "user", i, i));
  spans.push(range("my_block", "user", 100, 400));
  const l = layoutBands(spans, 0, 999, xOf, 100, 1100, measure);
  const calls = l.bands.filter((b) => b.span.name.startsWith("## Call"));
  assert.ok(calls.length <= 3, `${calls.length} bands for 500 dense ranges`);
  assert.equal(
    calls.reduce((n, b) => n + b.count, 0),
    500,
    "every range is counted in a group",
  );
  const widest = calls.sort((a, b) => b.x1 - b.x0 - (a.x1 - a.x0))[0];
  assert.match(widest.label, /×\d+/);
  assert.ok(
    (widest.span.end_event as number) >
      (widest.span.start_event as number) + 100,
    "the group's span covers its ranges",
  );
  assertLabelsFit(l.bands);
});
