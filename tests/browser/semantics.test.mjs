// The semantics views in real Chromium on real snapshots: Categories (shares that sum to the
// active figure, user rules and their errors), Steps (step table, ranges, the growth verdict,
// a trace without steps) and the Timeline's phase bands and stack by category.
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
  FIXTURES,
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
const DUMP_ONLY = join(
  CORPUS,
  "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle",
);
// Every fifth step keeps its logits: the ends do not rise every step, the kept blocks pile up.
const KEPT = join(FIXTURES, "program_steps_kept_every_fifth.pickle");
// A first attempt runs out of memory and is run again at a smaller batch: four steps after it.
const RETRY = join(FIXTURES, "program_oom_retry_smaller_batch.pickle");
const SKIP = [HANMIN, NPU, DUMP_ONLY].every(existsSync)
  ? false
  : "needs the corpus in ../shared/snapshots";

let page, errors, close;
before(async () => {
  if (SKIP) return;
  let state;
  ({ page, errors, state, close } = await openPage([
    HANMIN,
    NPU,
    DUMP_ONLY,
    KEPT,
    RETRY,
  ]));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

const done = () => viewDone(page);
const show = (file, view) => showView(page, file, view);
const categoryRows = () =>
  page.$$eval("table.categories tbody tr", (rows) =>
    rows.map((r) => ({
      category: r.dataset.category,
      bytes: Number(r.querySelector("[data-bytes]").dataset.bytes),
    })),
  );

test(
  "Categories at the peak: the four training categories, bytes summing to the active figure",
  { skip: SKIP },
  async () => {
    await show(0, "categories");
    const rows = await categoryRows();
    const names = rows.map((r) => r.category);
    for (const c of ["optimizer state", "activation", "parameter", "gradient"])
      assert.ok(names.includes(c), `no ${c} row in ${names}`);
    const active = Number(await page.getAttribute(".cat-active", "data-bytes"));
    assert.equal(
      rows.reduce((n, r) => n + r.bytes, 0),
      active,
    );
    const engine = cli("analyze", HANMIN, "--mode", "categories", "--json")
      .devices[0].categories;
    assert.equal(active, engine.active);
    assert.deepEqual(
      rows,
      engine.categories.map((c) => ({ category: c.category, bytes: c.bytes })),
    );
    // The finding, the share bar (a segment per category) and each row's why.
    assert.equal(
      (await page.textContent(".cat-finding")).trim(),
      engine.finding,
    );
    assert.equal(
      await page.locator(".catbar .catseg").count(),
      engine.categories.length,
    );
    assert.match(
      await page.textContent(
        "table.categories tr[data-category='optimizer state']",
      ),
      /torch\.optim/,
    );
    // A rule's own advice under its why (the cuBLAS workspace's: CUBLAS_WORKSPACE_CONFIG).
    const advised = engine.categories.flatMap((c) =>
      c.rules.filter((r) => r.advice).map((r) => [c.category, r.advice]),
    );
    assert.ok(advised.length > 0, "a rule with advice on this file");
    for (const [category, advice] of advised)
      assert.equal(
        await page.textContent(
          `table.categories tr[data-category='${category}'] .advice`,
        ),
        `try: ${advice}`,
      );
    assert.match(await page.textContent(".toolbar"), /allocated peak/);
    await shot(page, "semantics-categories");
  },
);

test("Categories at a picked event follow it", { skip: SKIP }, async () => {
  await page.fill(".toolbar input.event-input", "100");
  await page.click(".toolbar button:text('Show')");
  await done();
  assert.match(
    await page.textContent(".toolbar b"),
    /after the selected event 100$/,
  );
  const engine = cli(
    "analyze",
    HANMIN,
    "--mode",
    "categories",
    "--event",
    "100",
    "--json",
  );
  const active = Number(await page.getAttribute(".cat-active", "data-bytes"));
  assert.equal(active, engine.devices[0].categories.active);
  await page.click(".toolbar .focus-peak");
  await done();
});

test(
  "a user rule adds its category; an invalid one shows the engine's error beside the editor",
  { skip: SKIP },
  async () => {
    await show(0, "categories");
    const rules = await page.locator("table.rules tbody tr").count();
    assert.ok(rules > 5, `${rules} rules listed`);
    await page.fill(
      "textarea.rules-text",
      `[[rule]]\nname = "adam"\ncategory = "adam state"\nfunction = '^step$'\nfile = 'adapters'\n`,
    );
    await page.click(".rules-editor button:text('Apply')");
    await done();
    await page.waitForSelector(
      "table.categories tr[data-category='adam state']",
    );
    const rows = await categoryRows();
    assert.ok(rows.find((r) => r.category === "adam state").bytes > 0);
    // Still the active figure, now split differently.
    const active = Number(await page.getAttribute(".cat-active", "data-bytes"));
    assert.equal(
      rows.reduce((n, r) => n + r.bytes, 0),
      active,
    );
    assert.equal(
      await page.locator("table.rules tbody tr.user-rule").count(),
      1,
    );
    assert.equal(
      await page.inputValue("textarea.rules-text"),
      `[[rule]]\nname = "adam"\ncategory = "adam state"\nfunction = '^step$'\nfile = 'adapters'\n`,
    );
    await shot(page, "semantics-categories-user-rule");

    // An invalid regex: the message next to the editor, no page error, the view still there.
    await page.fill(
      "textarea.rules-text",
      `[[rule]]\nname = "bad"\ncategory = "x"\nfile = '('\n`,
    );
    await page.click(".rules-editor button:text('Apply')");
    await page.waitForSelector(".rules-error:not([hidden])");
    assert.match(await page.textContent(".rules-error"), /regular expression/);
    assert.equal(await page.isHidden("#error"), true);
    // The rules in force are still the user's.
    assert.equal(
      await page
        .locator("table.categories tr[data-category='adam state']")
        .count(),
      1,
    );

    // Reset: the defaults again. The view stays "done" until the engine has the rules and the
    // view is drawn again, so wait for the user's category to go (a timeout if it never does).
    await page.click(".rules-editor button:text('Reset to defaults')");
    await page.waitForSelector(
      "table.categories tr[data-category='adam state']",
      { state: "detached" },
    );
    await done();
    await page.waitForSelector("table.categories");
    assert.equal(
      await page.locator("table.rules tbody tr.user-rule").count(),
      0,
    );
  },
);

test(
  "Steps: the step table, the optimizer ranges, clicking a step opens the timeline on it",
  { skip: SKIP },
  async () => {
    await show(0, "steps");
    const steps = cli("analyze", HANMIN, "--mode", "steps", "--json").devices[0]
      .steps;
    assert.equal(
      await page.locator("table.steps tbody tr").count(),
      steps.steps.length,
    );
    assert.match(await page.textContent(".step-source"), /optimizer steps/);
    assert.match(
      await page.textContent("table.ranges"),
      /Optimizer\.step#AdamW\.step/,
    );
    assert.equal(
      await page.getAttribute(".growth", "data-verdict"),
      steps.growth.verdict,
    );
    await shot(page, "semantics-steps");
    await page.click("table.ranges a:text('Optimizer.step#AdamW.step')");
    await done();
    await page.waitForSelector("canvas.phase-bands");
    assert.match(await page.evaluate(() => location.hash), /view=timeline/);
  },
);

test(
  "Timeline: phase bands under the chart, a stack by category",
  { skip: SKIP },
  async () => {
    await show(0, "timeline");
    const bands = page.locator("canvas.phase-bands");
    await bands.waitFor();
    const box = await bands.boundingBox();
    assert.ok(box.height >= 16, `band canvas ${box.height}px high`);
    const legend = await page.textContent(".band-legend");
    for (const p of ["forward", "backward", "optimizer"])
      assert.match(legend, new RegExp(p));
    // Something is drawn on the bands: not a blank canvas.
    const inked = await page.evaluate(() => {
      const c = document.querySelector("canvas.phase-bands");
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    assert.ok(inked > 1000, `${inked} inked pixels`);
    await page.click("button.stack-toggle");
    await page.waitForSelector(".category-legend:not([hidden])");
    const cats = await page.textContent(".category-legend");
    for (const c of ["parameter", "gradient", "optimizer state", "activation"])
      assert.match(cats, new RegExp(c));
    await shot(page, "semantics-timeline-stacked");
    // A click on the forward band zooms to its events.
    await page.mouse.click(box.x + 100, box.y + 8);
    await page.waitForTimeout(500);
    const ticks = await page.evaluate(
      () => document.querySelector("canvas.chart") !== null,
    );
    assert.ok(ticks);
  },
);

test(
  "Steps on an NPU trace that grows: the verdict says so",
  { skip: SKIP },
  async () => {
    await show(1, "steps");
    assert.equal(await page.getAttribute(".growth", "data-verdict"), "growing");
    assert.match(await page.textContent(".growth"), /grows/);
    assert.ok((await page.locator("table.steps tbody tr").count()) >= 3);
    assert.equal(await page.locator("table.steps tr.partial").count(), 1);
  },
);

test(
  "memory kept across steps: Steps warns, Leaks calls the blocks leak candidates",
  { skip: SKIP },
  async () => {
    await show(3, "steps");
    assert.equal(
      await page.getAttribute(".growth", "data-verdict"),
      "kept_across_steps",
    );
    assert.match(await page.getAttribute(".growth", "class"), /warn/);
    assert.match(await page.textContent(".growth"), /steps 5 and 10/);
    await show(3, "leaks");
    assert.match(
      await page.textContent(".view-leaks .step-growth"),
      /Memory is kept across steps\./,
    );
    assert.match(
      await page.textContent(".view-leaks .card.primary .card-title"),
      /leak candidates/,
    );
  },
);

test(
  "a failed attempt: Steps marks the step out of memory, not complete, apart from the retry",
  { skip: SKIP },
  async () => {
    await show(4, "steps");
    const rows = page.locator("table.steps tbody tr");
    assert.equal(await rows.count(), 5);
    const first = rows.first();
    assert.match(await first.getAttribute("class"), /partial/);
    assert.equal(
      (await first.locator(".partial-tag").textContent()).trim(),
      "out of memory",
    );
    assert.match(
      await first.locator(".partial-tag").getAttribute("title"),
      /an allocation failed at event \d+: the step did not finish/,
    );
    assert.equal(await page.locator("table.steps tr.partial").count(), 1);
  },
);

test(
  "a dump-only file: Categories works (all unknown), Steps says no steps were found",
  { skip: SKIP },
  async () => {
    await show(2, "categories");
    const rows = await categoryRows();
    assert.deepEqual(
      rows.map((r) => r.category),
      ["unknown"],
    );
    assert.equal(
      rows[0].bytes,
      Number(await page.getAttribute(".cat-active", "data-bytes")),
    );
    assert.match(await page.textContent(".toolbar b"), /at the dump/);
    await page.click("[data-view=steps]");
    await done();
    assert.match(await page.textContent(".view"), /No steps (were )?found/);
    assert.deepEqual(errors, []);
  },
);
