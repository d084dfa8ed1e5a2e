// The Compare view by meaning: the generated training program against the same program with
// model.py's lines moved down by three (scripts/gen_fixtures.py). Every site must be matched
// (no "new" or "vanished" row), the layer's row must name its line change, the site column must
// stay inside the view, and the two-moment diff must give the generator's kept / freed / born
// bytes by category. A dump-only corpus file without stacks must be refused for its stacks.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import {
  openPage,
  showView,
  shot,
  viewShown,
  FIXTURES,
  CORPUS,
} from "./harness.mjs";

const expected = JSON.parse(
  readFileSync(join(FIXTURES, "expected.json"), "utf8"),
);
let page, errors, close;

before(async () => {
  ({ page, errors, close } = await openPage([
    join(FIXTURES, "program_steps_stable.pickle"),
    join(FIXTURES, "program_steps_moved.pickle"),
  ]));
});
after(async () => close && (await close()));

test("a moved line is one site with its line change; both sides on every row", async () => {
  await showView(page, 0, "compare");
  await page.waitForSelector("table.compare-sites tbody tr");
  const rows = await page.$$eval("table.compare-sites tbody tr", (trs) =>
    trs.map((tr) => ({
      change: tr.dataset.change,
      matched: tr.dataset.matched,
      cells: [...tr.children].map((td) => td.textContent.trim()),
      a: tr.children[1].querySelector(".bytes").title,
      b: tr.children[2].querySelector(".bytes").title,
    })),
  );
  assert.ok(rows.length >= 4, JSON.stringify(rows));
  assert.deepEqual(
    rows.filter((r) => r.change === "new" || r.change === "vanished"),
    [],
  );
  for (const r of rows) assert.equal(r.a, r.b, "the same bytes on both sides");
  const layer = rows.find((r) =>
    r.cells[5].startsWith("forward (model.py:20)"),
  );
  assert.ok(layer, JSON.stringify(rows));
  assert.equal(layer.cells[4], "model.py:20 → 23");
  assert.equal(layer.matched, "code");
  // The site column stays inside the view.
  const fits = await page.evaluate(() => {
    const view = document.querySelector("#view").getBoundingClientRect();
    return [
      ...document.querySelectorAll("table.compare-sites td.stack-cell"),
    ].every((td) => td.getBoundingClientRect().right <= view.right + 1);
  });
  assert.ok(fits, "the site column runs off the right edge");
  await shot(page, "compare-moved-lines");
});

test("step by step: step N against step N, every step of the moved program the same bytes and sites", async () => {
  const steps = expected["program_steps_stable.pickle"].program.training_steps;
  await page.waitForSelector(".compare-steps table.steps-diff tbody tr");
  const rows = await page.$$eval(
    ".compare-steps table.steps-diff tbody tr",
    (trs) =>
      trs.map((tr) => ({
        step: Number(tr.dataset.step),
        a: Number(
          tr.children[1].querySelector(".bytes").title.replace(/[^0-9]/g, ""),
        ),
        b: Number(
          tr.children[2].querySelector(".bytes").title.replace(/[^0-9]/g, ""),
        ),
        diff: tr.children[3].textContent.trim(),
      })),
  );
  assert.deepEqual(
    rows.map((r) => r.step),
    Array.from({ length: steps }, (_, i) => i + 1),
  );
  for (const r of rows) {
    assert.ok(r.a > 0, JSON.stringify(r));
    assert.equal(r.a, r.b, `step ${r.step}: the same peak in both runs`);
    assert.match(r.diff, /^\+?0 B$/);
  }
  // Each step's sites are matched across the edit: none new or vanished.
  const changes = await page.$$eval(
    ".compare-steps details.step-diff table.steps-sites tbody tr",
    (trs) => trs.map((tr) => tr.dataset.change),
  );
  assert.ok(changes.length >= steps, changes.join(","));
  assert.deepEqual(
    changes.filter((c) => c !== "same"),
    [],
  );
  assert.equal(
    await page.$$eval(
      ".compare-steps details.step-diff[open]",
      (d) => d.length,
    ),
    1,
  );
  await page.locator(".compare-steps").scrollIntoViewIfNeeded();
  await shot(page, "compare-steps");
});

test("two moments of one file: kept, freed and born by category, as the generator says", async () => {
  const m = expected["program_steps_stable.pickle"].program.moments[1];
  await page.fill(".compare-moments input.moment-a", String(m.a));
  await page.fill(".compare-moments input.moment-b", String(m.b));
  await page.click(".compare-moments button");
  // The answer for this pair, both moments named (not an earlier answer that shares A).
  await page.waitForFunction(
    ([a, b]) => {
      const t = document.querySelector(".moments-summary")?.textContent ?? "";
      const e = (n) => `event ${n.toLocaleString("en-US")}:`;
      return t.includes(`After ${e(a)}`) && t.includes(`after ${e(b)}`);
    },
    [m.a, m.b],
  );
  const got = await page.$$eval("table.moments-categories tbody tr", (trs) =>
    Object.fromEntries(
      trs.map((tr) => [
        tr.dataset.category,
        [...tr.querySelectorAll(".bytes")]
          .slice(0, 4)
          .map((s) => Number(s.title.replace(/[^0-9]/g, ""))),
      ]),
    ),
  );
  for (const [cat, w] of Object.entries(m.by_category))
    assert.deepEqual(
      got[cat] ?? [0, 0, 0, 0],
      [w.kept, w.freed, w.born, w.transient],
      cat,
    );
  await page.locator(".compare-moments").scrollIntoViewIfNeeded();
  await shot(page, "compare-moments");
  assert.deepEqual(errors, []);
});

const DUMP = join(
  CORPUS,
  "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle",
);
test(
  "a dump-only file without stacks is refused for its stacks, not for trace events",
  { skip: !existsSync(DUMP) },
  async () => {
    const p = await openPage([
      join(FIXTURES, "program_steps_stable.pickle"),
      DUMP,
    ]);
    try {
      await showView(p.page, 0, "compare");
      const why = await p.page.textContent(".no-stacks");
      assert.match(why, /carry no stacks/);
      assert.doesNotMatch(why, /no trace events/);
    } finally {
      await p.close();
    }
  },
);
