// The page's one byte formatter: B, KiB, MiB, GiB, two decimals, the text the Rust side prints.
import { test } from "node:test";
import assert from "node:assert/strict";
import { bytes, exact, pct } from "../../www/src/ui/format";

test("one unit set, B to GiB, two decimals", () => {
  assert.equal(bytes(0), "0 B");
  assert.equal(bytes(1023), "1023 B");
  assert.equal(bytes(1024), "1.00 KiB");
  assert.equal(bytes(1536), "1.50 KiB");
  assert.equal(bytes(5 * 2 ** 20 + 2 ** 19), "5.50 MiB");
  assert.equal(bytes(123.4 * 2 ** 20), "123.40 MiB");
  assert.equal(bytes(3 * 2 ** 30), "3.00 GiB");
});

test("no TiB: GiB is the largest unit, as in Rust", () => {
  assert.equal(bytes(2 ** 40), "1024.00 GiB");
  assert.equal(bytes(1536 * 2 ** 30), "1536.00 GiB");
});

test("rounds like Rust's {:.2}: to nearest, ties to even", () => {
  assert.equal(bytes(1152), "1.12 KiB"); // 1.125: tie, 2 is even
  assert.equal(bytes(3456), "3.38 KiB"); // 3.375: tie, 7 is odd
  assert.equal(bytes(1153), "1.13 KiB"); // just above the tie
  assert.equal(bytes(2 ** 20 - 1), "1024.00 KiB"); // rounds up into the next hundred
});

test("negative values carry the sign in front", () => {
  assert.equal(bytes(-1536), "-1.50 KiB");
  assert.equal(bytes(-1152), "-1.12 KiB");
  assert.equal(bytes(-5), "-5 B");
});

test("exact bytes and shares", () => {
  assert.equal(exact(23281500672), "23,281,500,672 B");
  assert.equal(pct(0.1234), "12.3%");
});
