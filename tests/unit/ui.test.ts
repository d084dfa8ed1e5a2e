// Shared chart helpers: the event window (zoom, pan) and the tooltip's placement.
import { test } from "node:test";
import assert from "node:assert/strict";
import { panBy, zoomAround } from "../../www/src/ui/window";
import { tipPosition } from "../../www/src/ui/tooltip";
import { pageFonts } from "../../www/src/ui/fonts";

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

test("the tooltip sits below right of the pointer, inside the box and the viewport", () => {
  assert.deepEqual(tipPosition(100, 50, 1000), { left: 114, top: 66 });
  // Near the right edge: left of the pointer.
  assert.deepEqual(tipPosition(900, 50, 1000), { left: 566, top: 66 });
  // A box narrower than the card: at its left edge (the card wraps to the box's width).
  assert.deepEqual(tipPosition(100, 50, 200, 320), { left: 0, top: 66 });
  // Near the bottom of the viewport: above the pointer.
  assert.deepEqual(tipPosition(100, 500, 1000, 320, 120, 560), {
    left: 114,
    top: 368,
  });
});

test("the fonts warmed up are every size, weight and family the rules declare", () => {
  const rule = (fontSize = "", fontWeight = "", fontFamily = "") =>
    ({ fontSize, fontWeight, fontFamily }) as CSSStyleDeclaration;
  const fonts = pageFonts(
    [
      rule("12px", "600"),
      rule("", "bold", "monospace"),
      rule("1.2em"),
      rule("", "", "inherit"),
    ],
    rule("14px", "", "sans-serif"),
  );
  // 2 families x 2 sizes x (3 weights + italic); an em size is left to its first use.
  assert.equal(fonts.length, 16);
  assert.ok(fonts.includes("normal 600 12px monospace"));
  assert.ok(fonts.includes("normal 700 14px sans-serif"));
  assert.ok(fonts.includes("italic 400 12px sans-serif"));
  assert.ok(!fonts.some((f) => f.includes("em ") || f.includes("inherit")));
});
