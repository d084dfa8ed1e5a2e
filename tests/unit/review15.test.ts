// Screenshot review 15: the exact count beside bytes only when it adds something, absent PyTorch
// fields, unbreakable `file:line`, names for files opened twice, event-id cells, hidden columns.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  bytesWithExact,
  distinctNames,
  isAbsent,
  splitFrameDisplay,
} from "../../www/src/ui/format";
import { cellText, columnsRightOf } from "../../www/src/views/queries";

test("the exact count in brackets only when the human unit differs", () => {
  assert.equal(bytesWithExact(512), "512 B");
  assert.equal(bytesWithExact(1000), "1000 B");
  assert.equal(bytesWithExact(1536), "1.50 KiB (1,536 B)");
});

test("absent PyTorch fields are told apart from values", () => {
  for (const v of [null, undefined, "", "N/A", "n/a", " None "])
    assert.equal(isAbsent(v), true, String(v));
  assert.equal(isAbsent("torch/_dynamo: frame 3"), false);
});

test("a frame's file:line stays one piece", () => {
  assert.deepEqual(
    splitFrameDisplay(
      "forward (transformers/models/qwen3/modeling_qwen3.py:114)",
    ),
    ["forward (transformers/models/qwen3/", "modeling_qwen3.py:114)"],
  );
  assert.deepEqual(splitFrameDisplay("forward (model.py:7)"), [
    "forward ",
    "(model.py:7)",
  ]);
  assert.deepEqual(splitFrameDisplay("a/b::c"), ["a/b::c", ""]);
});

test("files opened under one name get an order number and their size", () => {
  assert.deepEqual(
    distinctNames([
      { name: "memory_snapshot.pickle", size: 2048 },
      { name: "other.pickle", size: 1 },
      { name: "memory_snapshot.pickle", size: 3 * 2 ** 20 },
    ]),
    [
      "memory_snapshot.pickle (1, 2.00 KiB)",
      "other.pickle",
      "memory_snapshot.pickle (2, 3.00 MiB)",
    ],
  );
});

test("event indices get thousands separators, by unit or SQL column name", () => {
  assert.equal(cellText(19417, "event"), "19,417");
  assert.equal(cellText(19417, null, "alloc_event"), "19,417");
  assert.equal(cellText(19417, undefined, "trace_index"), "19,417");
  assert.equal(cellText(19417, undefined, "allocEventId"), "19,417");
  assert.equal(cellText(19417, null, "line"), "19417");
  assert.equal(cellText(null, "event"), "NULL");
});

test("columns past the right edge are counted", () => {
  assert.equal(columnsRightOf([100, 100, 100], 0, 300), 0);
  assert.equal(columnsRightOf([100, 100, 100, 100], 0, 250), 2);
  assert.equal(columnsRightOf([100, 100, 100, 100], 150, 250), 0);
});
