// Hostile inputs (issue 19) meet pure helpers: CSV cells that a spreadsheet would run, labels of
// 1M characters, stacks 100k frames deep, timestamps beyond the dates JavaScript holds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { csvCell, toCsv } from "../../www/src/ui/csv";
import { fitLabel } from "../../www/src/ui/plot";
import { clip, clipLines, utcTime } from "../../www/src/ui/format";
import {
  MAX_ROWS,
  ROW,
  childrenOf,
  icicle,
  icicleHeight,
  levelsBelow,
  navigate,
  pathTo,
} from "../../www/src/views/tree-layout";
import type { TreeNode } from "../../www/src/types";

test("CSV: formulas are neutralised with a leading quote, numbers stay numbers", () => {
  assert.equal(
    csvCell('=HYPERLINK("http://x")'),
    `"'=HYPERLINK(""http://x"")"`,
  );
  assert.equal(csvCell("+1+1"), "'+1+1");
  assert.equal(csvCell("-2+3"), "'-2+3");
  assert.equal(csvCell("@SUM(A1)"), "'@SUM(A1)");
  assert.equal(csvCell("\t=1"), "'\t=1");
  assert.equal(csvCell("\r=1"), `"'\r=1"`);
  assert.equal(csvCell(-5), "-5");
  assert.equal(csvCell(1.5), "1.5");
  assert.equal(csvCell(null), "");
  assert.equal(csvCell("forward (model.py:10)"), "forward (model.py:10)");
  assert.equal(csvCell("a,b"), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell("two\nlines"), '"two\nlines"');
  // Headers go through the same escaping (SQL aliases are user text too).
  assert.equal(
    toCsv(
      ["=a", "b"],
      [
        ["-x", 3],
        [null, "y"],
      ],
    ),
    "'=a,b\n'-x,3\n,y",
  );
});

/** A monospace measure that counts the characters it was asked to measure. */
function counting() {
  const m = { chars: 0, calls: 0, measure: (s: string) => 0 };
  m.measure = (s: string) => {
    m.calls++;
    m.chars += s.length;
    return s.length * 7;
  };
  return m;
}

test("fitLabel: a 1M-character label costs about the width, not the length", () => {
  const m = counting();
  const out = fitLabel("x".repeat(1_000_000), 300, m.measure);
  assert.equal(out, "x".repeat(41) + "…");
  assert.ok(m.calls <= 12, `${m.calls} measures`);
  assert.ok(m.chars <= 12 * 302, `${m.chars} characters measured`);
  // Short labels and tiny widths as before.
  assert.equal(fitLabel("forward", 100, m.measure), "forward");
  assert.equal(fitLabel("forward_pass", 60, m.measure), "forward…");
  assert.equal(fitLabel("forward", 10, m.measure), "");
  assert.equal(fitLabel("x".repeat(50), 0, m.measure), "");
  // Never half an emoji.
  assert.equal(fitLabel("ab😀cd", 28, m.measure), "ab…");
});

test("clip and clipLines bound what reaches the DOM", () => {
  assert.equal(clip("short"), "short");
  assert.equal(clip("y".repeat(1_000_000), 10), "yyyyyyyyy…");
  const stack = Array.from(
    { length: 100_000 },
    (_, i) => `m${i}.py:${i} f${i}`,
  ).join("\n");
  const lines = clipLines(stack, 3).split("\n");
  assert.deepEqual(lines, [
    "m0.py:0 f0",
    "m1.py:1 f1",
    "m2.py:2 f2",
    "… 99,997 more lines",
  ]);
  assert.equal(clipLines("a\nb", 3), "a\nb");
});

test("utcTime: int64 extremes are no date, not a RangeError", () => {
  assert.equal(utcTime(1_700_000_000_000_000), "2023-11-14 22:13:20.000 UTC");
  assert.equal(utcTime(2 ** 63 - 1), null);
  assert.equal(utcTime(-(2 ** 63)), null);
  assert.equal(utcTime(9e18), null);
});

/** A chain root → 1 → 2 → … → n - 1, every frame holding the same bytes. */
function chain(n: number): TreeNode[] {
  return Array.from({ length: n }, (_, id) => ({
    id,
    parent: id ? id - 1 : null,
    depth: id,
    label: `f${id}`,
    filename: "m.py",
    line: id,
    name: `f${id}`,
    total_bytes: 1024,
    self_bytes: id === n - 1 ? 1024 : 0,
    requested_bytes: 1024,
    blocks: 1,
    self_blocks: id === n - 1 ? 1 : 0,
    share: 1,
  }));
}

test("a 100k-frame stack: the icicle is iterative and draws at most MAX_ROWS rows", () => {
  const nodes = chain(100_000);
  const kids = childrenOf(nodes);
  const t0 = performance.now();
  const boxes = icicle(nodes, kids, 0, 1000);
  assert.equal(boxes.length, MAX_ROWS);
  assert.deepEqual(
    boxes.slice(0, 3).map((b) => [b.id, b.y]),
    [
      [0, 0],
      [1, ROW],
      [2, 2 * ROW],
    ],
  );
  assert.equal(icicleHeight(nodes, 0), MAX_ROWS * ROW + 4);
  assert.equal(levelsBelow(nodes, 0), 100_000);
  // Zoomed deep, the rows start at the zoom.
  assert.equal(icicle(nodes, kids, 99_990, 1000).length, 10);
  assert.equal(icicleHeight(nodes, 99_990), 10 * ROW + 4);
  assert.equal(pathTo(nodes, 99_999).length, 100_000);
  assert.deepEqual(pathTo(nodes, 2), [0, 1, 2]);
  assert.ok(performance.now() - t0 < 2000, `${performance.now() - t0} ms`);
});

test("keyboard: going down past the drawn rows moves the zoom along", () => {
  const nodes = chain(1000);
  const kids = childrenOf(nodes);
  let f = { selected: 0, zoom: 0 };
  for (let i = 0; i < MAX_ROWS + 5; i++)
    f = navigate(nodes, kids, f, "ArrowDown")!;
  assert.equal(f.selected, MAX_ROWS + 5);
  assert.ok(nodes[f.selected].depth - nodes[f.zoom].depth < MAX_ROWS);
});
