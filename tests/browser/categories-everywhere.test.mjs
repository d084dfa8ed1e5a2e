// Categories and streams carried into the other views, in real Chromium on real snapshots: Peak
// (the by-category bar, grouping by phase through the `categories` template, a click to the
// Categories view), the Memory tree's category bar, Leaks (kept memory by category, the growth
// across steps), Compare (the category deltas and their one-line summary) and the Overview's
// streams line. Figures are checked against the native CLI's answers on the same files.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  openPage,
  viewDone,
  showView,
  shot,
  CORPUS,
  ROOT,
} from "./harness.mjs";

const CLI = join(ROOT, "target/release/snapscope");
const cli = (...args) =>
  JSON.parse(execFileSync(CLI, args, { encoding: "utf8", maxBuffer: 1 << 28 }));
const HANMIN = join(
  CORPUS,
  "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
);
const NPU = join(CORPUS, "npu/snapshot_with_empty_cache.pkl");
const NPU_EXP = join(CORPUS, "npu/snapshot_with_empty_cache_expandable.pkl");
const MULTI = join(CORPUS, "npu/snapshot_with_multi_devices.pkl");
const FILES = [HANMIN, NPU, NPU_EXP, MULTI];
const SKIP =
  FILES.every(existsSync) && existsSync(CLI)
    ? false
    : "needs the corpus in ../shared/snapshots and target/release/snapscope";

let page, errors, close;
before(async () => {
  if (SKIP) return;
  let state;
  ({ page, errors, state, close } = await openPage(FILES));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

const done = () => viewDone(page);
const show = (file, view) => showView(page, file, view);
/** The categories of a strip's bar, in order, and its legend's text. */
const strip = (scope) =>
  page.$eval(scope, (s) => ({
    bar: [...s.querySelectorAll(".catbar .catseg")].map(
      (x) => x.dataset.category,
    ),
    legend: s.querySelector(".cat-legend").textContent,
  }));

test(
  "Peak: a by-category bar of the engine's peak.by_category, in its order",
  { skip: SKIP },
  async () => {
    await show(0, "peak");
    const engine = cli("analyze", HANMIN, "--mode", "all", "--json").devices[0]
      .peak.by_category;
    const s = await strip(".peak-categories .cat-strip");
    assert.ok(s.bar.includes("optimizer state"), `bar: ${s.bar}`);
    assert.deepEqual(
      s.bar,
      engine.filter((c) => c.bytes > 0).map((c) => c.category),
    );
    assert.match(s.legend, /optimizer state 34\.3% · 7\.43 GiB/);
    await shot(page, "everywhere-peak");
  },
);

test(
  "Peak grouped by phase: the categories template's rows (forward), by category: the engine's",
  { skip: SKIP },
  async () => {
    await show(0, "peak");
    await page.selectOption("select.group-by", "phase");
    await page.waitForSelector('table.peak-groups tr[data-group="forward"]', {
      timeout: 30000,
    });
    const groups = await page.$$eval("table.peak-groups tbody tr", (rows) =>
      rows.map((r) => r.dataset.group),
    );
    const peak = cli("overview", HANMIN, "--json").devices[0].peaks.allocated
      .event;
    const q = cli(
      "query",
      HANMIN,
      "-t",
      "categories",
      "--params",
      JSON.stringify({ event_id: peak, group_by: "phase" }),
      "--rows",
      "arrays",
      "--json",
    );
    assert.deepEqual(
      groups,
      q.rows.map((r) => r[0]),
    );
    await shot(page, "everywhere-peak-by-phase");
    await page.selectOption("select.group-by", "category");
    await page.waitForSelector(
      'table.peak-groups tr[data-group="optimizer state"]',
    );
    // The grouping is kept when the view is shown again.
    await show(0, "overview");
    await show(0, "peak");
    assert.equal(await page.inputValue("select.group-by"), "category");
    await page.selectOption("select.group-by", "stack");
  },
);

test(
  "Peak: a click on a category opens the Categories view at the same event",
  { skip: SKIP },
  async () => {
    await show(0, "peak");
    await page.click(
      '.peak-categories .cat-legend a[data-category="optimizer state"]',
    );
    await done();
    assert.equal(
      await page.evaluate(
        () => document.querySelector("nav a.active")?.dataset.view,
      ),
      "categories",
    );
    const peak = cli("overview", HANMIN, "--json").devices[0].peaks.allocated
      .event;
    const hash = await page.evaluate(() => location.hash);
    assert.match(hash, /view=categories/);
    assert.match(hash, new RegExp(`event=${peak}\\b`));
  },
);

test(
  "Memory tree: the category bar of the tree's event",
  { skip: SKIP },
  async () => {
    await show(0, "tree");
    const s = await strip(".view-tree .cat-strip");
    for (const c of ["optimizer state", "activation", "parameter", "gradient"])
      assert.ok(s.bar.includes(c), `no ${c} in ${s.bar}`);
    assert.ok(await page.$("canvas.flame"), "the tree is still there");
    await shot(page, "everywhere-tree");
  },
);

test(
  "Leaks: kept memory by category; no growth sentence without growth",
  { skip: SKIP },
  async () => {
    await show(0, "leaks");
    const engine = cli("analyze", HANMIN, "--mode", "all", "--json").devices[0]
      .leak.candidates_by_category;
    const s = await strip(".view-leaks .cat-strip");
    assert.deepEqual(
      s.bar,
      engine.map((c) => c.category),
    );
    assert.ok(s.bar.includes("gradient"));
    assert.equal(await page.$(".step-growth"), null);
  },
);

test(
  "Leaks: the engine's growth across steps comes first, with a way to Steps",
  { skip: SKIP },
  async () => {
    await show(1, "leaks");
    const text = await page.textContent(".view-leaks > .step-growth");
    assert.match(text, /grows by 40\.00 MiB per step/);
    assert.doesNotMatch(text, /see Leaks/);
    await shot(page, "everywhere-leaks-growth");
    await page.click(".step-growth a.steps-link");
    await done();
    assert.ok(await page.$("table.steps"), "the Steps view is shown");
  },
);

test(
  "Compare: category deltas of the engine, the largest change in one line",
  { skip: SKIP },
  async () => {
    await show(1, "compare");
    await page.selectOption(".view-compare .toolbar select", "2");
    await page.waitForFunction(
      () =>
        document
          .querySelector(".view-compare .toolbar select")
          ?.selectedOptions[0]?.textContent.includes("expandable") &&
        document.querySelector("table.categories-delta"),
      null,
      { timeout: 30000 },
    );
    // Wait for the answer of the file just picked (the table is replaced when it comes).
    await page.waitForFunction(
      () =>
        document
          .querySelector(".compare-categories .cat-change")
          ?.textContent.includes("expandable"),
      null,
      { timeout: 30000 },
    );
    const engine = cli(
      "analyze",
      NPU,
      "--mode",
      "compare",
      "--ref",
      NPU_EXP,
      "--json",
    ).comparison.devices[0].categories;
    // The table of the comparison just picked replaces the previous one when its answer comes.
    const want = engine.map((c) => c.category).join("|");
    await page
      .waitForFunction(
        (w) =>
          [...document.querySelectorAll("table.categories-delta tbody tr")]
            .map((r) => r.dataset.category)
            .join("|") === w,
        want,
        { timeout: 30000 },
      )
      .catch(() => {});
    const rows = await page.$$eval("table.categories-delta tbody tr", (rs) =>
      rs.map((r) => [r.dataset.category, r.lastElementChild.textContent]),
    );
    assert.deepEqual(
      rows.map((r) => r[0]),
      engine.map((c) => c.category),
    );
    assert.equal(rows[0][1], "-6.37 MiB");
    const line = await page.textContent(".compare-categories .cat-change");
    assert.match(line, /^optimizer state -6\.37 MiB between the runs/);
    await shot(page, "everywhere-compare");
  },
);

test("Overview: one stream in one line", { skip: SKIP }, async () => {
  await show(3, "overview");
  const line = await page.textContent(".streams-line");
  const stream = cli("analyze", MULTI, "--mode", "streams", "--json").devices[0]
    .streams.streams[0].stream;
  assert.equal(
    line,
    `Streams: one stream (0x${stream.toString(16)}), no frees waited on other streams.`,
  );
  assert.equal(await page.$("table.streams"), null);
});

test("no page errors", { skip: SKIP }, () => {
  assert.deepEqual(errors, []);
});
