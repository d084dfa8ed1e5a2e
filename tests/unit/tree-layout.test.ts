// Memory tree geometry: children by size, icicle rectangles, hit-testing, keyboard, search.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ROW,
  boxAt,
  childrenOf,
  clickBox,
  icicle,
  icicleHeight,
  navigate,
  pathTo,
  search,
} from "../../www/src/views/tree-layout";
import type { TreeNode } from "../../www/src/types";

function node(
  id: number,
  parent: number | null,
  label: string,
  total: number,
  filename: string | null = "model.py",
): TreeNode {
  const depth = parent === null ? 0 : parent === 0 ? 1 : 2;
  return {
    id,
    parent,
    depth,
    label,
    filename,
    line: 1,
    name: label,
    total_bytes: total,
    self_bytes: 0,
    requested_bytes: total,
    blocks: 1,
    self_blocks: 0,
  };
}

//          root 1000
//   forward 600    backward 300   optimizer 100
//  linear 400  attn 200
const nodes = [
  node(0, null, "all", 1000, null),
  node(1, 0, "backward", 300),
  node(2, 0, "forward", 600),
  node(3, 0, "optimizer", 100, "optim/adam.py"),
  node(4, 2, "attn", 200),
  node(5, 2, "linear", 400),
];
const kids = childrenOf(nodes);

test("children come largest first", () => {
  assert.deepEqual(kids[0], [2, 1, 3]);
  assert.deepEqual(kids[2], [5, 4]);
  assert.deepEqual(kids[5], []);
});

test("icicle: each child as wide as its share, left to right, one row per depth", () => {
  const boxes = icicle(nodes, kids, 0, 1000);
  const at = (id: number) => boxes.find((b) => b.id === id)!;
  assert.deepEqual(at(0), { id: 0, x: 0, w: 1000, y: 0 });
  assert.deepEqual(at(2), { id: 2, x: 0, w: 600, y: ROW });
  assert.deepEqual(at(1), { id: 1, x: 600, w: 300, y: ROW });
  assert.deepEqual(at(3), { id: 3, x: 900, w: 100, y: ROW });
  assert.deepEqual(at(5), { id: 5, x: 0, w: 400, y: 2 * ROW });
  assert.deepEqual(at(4), { id: 4, x: 400, w: 200, y: 2 * ROW });
  // Children without self bytes fill their parent exactly.
  for (const parent of [0, 2]) {
    const sum = kids[parent].reduce((s, k) => s + at(k).w, 0);
    assert.equal(sum, at(parent).w);
  }
});

test("icicle of a zoomed subtree starts at its row 0 and spans the width", () => {
  const boxes = icicle(nodes, kids, 2, 600);
  assert.deepEqual(
    boxes.map((b) => b.id),
    [2, 5, 4],
  );
  assert.deepEqual(boxes[0], { id: 2, x: 0, w: 600, y: 0 });
  assert.deepEqual(boxes[2], { id: 4, x: 400, w: 200, y: ROW });
  assert.equal(icicleHeight(nodes, 0), 3 * ROW + 4);
  assert.equal(icicleHeight(nodes, 2), 2 * ROW + 4);
});

test("slivers under a third of a pixel are left out", () => {
  const thin = [
    node(0, null, "all", 10000, null),
    node(1, 0, "big", 9999),
    node(2, 0, "tiny", 1),
  ];
  const ids = icicle(thin, childrenOf(thin), 0, 1000).map((b) => b.id);
  assert.deepEqual(ids, [0, 1]);
});

test("hit-testing finds the box under a pixel", () => {
  const boxes = icicle(nodes, kids, 0, 1000);
  assert.equal(boxAt(boxes, 450, 2 * ROW + 5)?.id, 4);
  assert.equal(boxAt(boxes, 399, 2 * ROW + 5)?.id, 5);
  assert.equal(boxAt(boxes, 950, ROW)?.id, 3);
  assert.equal(boxAt(boxes, 10, 5)?.id, 0);
  assert.equal(boxAt(boxes, 950, 2 * ROW + 5), undefined); // optimizer has no children
  assert.equal(boxAt(boxes, 1000, 5), undefined); // right edge is outside
});

test("a click zooms into a box, a second click zooms out to its parent", () => {
  assert.deepEqual(clickBox(nodes, 0, 2), { selected: 2, zoom: 2 });
  assert.deepEqual(clickBox(nodes, 2, 2), { selected: 2, zoom: 0 });
});

test("keys walk the tree and the zoom follows the selection", () => {
  const go = (f: { selected: number; zoom: number }, key: string) =>
    navigate(nodes, kids, f, key);
  assert.deepEqual(go({ selected: 0, zoom: 0 }, "ArrowDown"), {
    selected: 2,
    zoom: 0,
  });
  assert.deepEqual(go({ selected: 2, zoom: 0 }, "ArrowRight"), {
    selected: 1,
    zoom: 0,
  });
  assert.deepEqual(go({ selected: 1, zoom: 0 }, "ArrowLeft"), {
    selected: 2,
    zoom: 0,
  });
  assert.equal(go({ selected: 2, zoom: 0 }, "ArrowLeft"), null); // first sibling
  assert.deepEqual(go({ selected: 2, zoom: 0 }, "Enter"), {
    selected: 2,
    zoom: 2,
  });
  assert.deepEqual(go({ selected: 5, zoom: 2 }, "ArrowUp"), {
    selected: 2,
    zoom: 2,
  });
  // Leaving the zoomed subtree zooms out to the new selection's parent.
  assert.deepEqual(go({ selected: 2, zoom: 2 }, "ArrowUp"), {
    selected: 0,
    zoom: 0,
  });
  assert.deepEqual(go({ selected: 5, zoom: 2 }, "Escape"), {
    selected: 5,
    zoom: 0,
  });
  assert.equal(go({ selected: 0, zoom: 0 }, "ArrowUp"), null);
  assert.equal(go({ selected: 0, zoom: 0 }, "x"), null);
});

test("paths and search", () => {
  assert.deepEqual(pathTo(nodes, 4), [0, 2, 4]);
  assert.deepEqual([...search(nodes, "  FOR ")], [2]);
  assert.deepEqual([...search(nodes, "adam")], [3]); // by file name
  assert.deepEqual([...search(nodes, "all")], []); // never the root
  assert.equal(search(nodes, "").size, 0);
});
