// The What if view and the OOM view's simulated verdict in real Chromium on real snapshots: the
// self-check of the recorded settings, a simulation from the form and its errors, the standard
// set ranked and cancelled, the OOM view's sentence and its link, a dump-only file (no trace to
// simulate), a recording the simulator does not reproduce and a pinned host entry.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  openPage,
  showView,
  viewShown,
  shot,
  CORPUS,
  FIXTURES,
} from "./harness.mjs";

const NPU = join(CORPUS, "npu/snapshot_with_empty_cache.pkl");
const CONSTRUCTOR = join(
  CORPUS,
  "cuda/Constructor-Sun__code_location/memory_snapshot.pickle",
);
const DUMP_ONLY = join(
  CORPUS,
  "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle",
);
const PINNED = join(FIXTURES, "pinned_host.pickle");
const SKIP = [NPU, CONSTRUCTOR, DUMP_ONLY].every(existsSync)
  ? false
  : "needs the corpus in ../shared/snapshots";

let page, errors, close;
before(async () => {
  if (SKIP) return;
  let state;
  ({ page, errors, state, close } = await openPage([
    NPU,
    CONSTRUCTOR,
    DUMP_ONLY,
    PINNED,
  ]));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

const ROOT = "#view > .view-whatif";
const text = (sel) => page.textContent(sel);

/** Run `action` and wait until the view's `data-<key>` says it finished (done, error, cancelled). */
async function settled(key, action, timeout = 120000) {
  await page.evaluate(
    ([sel, k]) => delete document.querySelector(sel).dataset[k],
    [ROOT, key],
  );
  await action();
  await page.waitForFunction(
    ([sel, k]) =>
      ["done", "error", "cancelled"].includes(
        document.querySelector(sel)?.dataset[k],
      ),
    [ROOT, key],
    { timeout },
  );
  return page.getAttribute(ROOT, `data-${key}`);
}

const simulate = (conf) =>
  settled("sim", async () => {
    await page.fill(`${ROOT} textarea`, conf);
    await page.click(`${ROOT} button:text-is("Simulate")`);
  });

test(
  "NPU with empty_cache: the self-check passes; expandable segments lower the reserved peak to 614 MiB",
  { skip: SKIP },
  async () => {
    await showView(page, 0, "whatif");
    assert.match(
      await text(".whatif-health"),
      /The simulator reproduces this recording exactly/,
    );
    assert.equal(
      await page.getAttribute(".whatif-health", "data-reproduces"),
      "true",
    );
    // As recorded: the simulated peak is the recorded one.
    assert.equal(await text(".sim-reserved-peak"), "632.00 MiB");
    assert.equal(await page.isChecked(`${ROOT} input[type=checkbox]`), false);
    // The conf typed fills the form; the run answers in the summary and the chart's legend.
    assert.equal(await simulate("expandable_segments:True"), "done");
    assert.equal(await page.isChecked(`${ROOT} input[type=checkbox]`), true);
    assert.equal(await text(".sim-reserved-peak"), "614.00 MiB");
    assert.equal(
      await page.getAttribute(".sim-reserved-peak", "title"),
      "643,825,664 B",
    );
    assert.match(await text(".whatif-summary .card.primary"), /−18\.00 MiB/);
    assert.match(
      await text(".whatif-legend"),
      /simulated reserved: expandable_segments:True/,
    );
    assert.match(
      await text(".whatif-verdict"),
      /OOM: unknown capacity — give the device memory/,
    );
    await shot(page, "16-whatif-npu");
    assert.deepEqual(errors, []);
  },
);

test(
  "the form writes the alloc-conf string: only what differs from the recorded settings",
  { skip: SKIP },
  async () => {
    await showView(page, 0, "whatif");
    await page.click(`${ROOT} button:text-is("Recorded settings")`);
    const conf = () => page.inputValue(`${ROOT} textarea`);
    assert.equal(await conf(), "");
    await page.check(`${ROOT} input[type=checkbox]`);
    assert.equal(await conf(), "expandable_segments:True");
    await page.fill(`${ROOT} input[placeholder=unlimited]`, "256");
    assert.equal(
      await conf(),
      "expandable_segments:True,max_split_size_mb:256",
    );
    // torch_npu refuses the pair: the engine's message and hint show in the form.
    assert.equal(
      await settled("sim", () =>
        page.click(`${ROOT} button:text-is("Simulate")`),
      ),
      "error",
    );
    assert.match(await text(`${ROOT} .rules-error`), /torch_npu rejects/);
    // An unknown key: the message, and the accepted keys as the hint.
    assert.equal(await simulate("expandable_segment:True"), "error");
    assert.match(
      await text(`${ROOT} .rules-error`),
      /unknown allocator setting `expandable_segment`/,
    );
    assert.match(
      await text(`${ROOT} .rules-error .hint`),
      /accepted keys: expandable_segments, max_split_size_mb/,
    );
    // A device memory that is no size is refused before the engine is asked.
    await page.fill(`${ROOT} textarea`, "");
    await page.fill(`${ROOT} input[placeholder="e.g. 80GiB"]`, "lots");
    assert.equal(
      await settled("sim", () =>
        page.click(`${ROOT} button:text-is("Simulate")`),
      ),
      "error",
    );
    assert.match(await text(`${ROOT} .rules-error`), /"lots" is not a size/);
    // With a device memory the verdict names it.
    await page.fill(`${ROOT} input[placeholder="e.g. 80GiB"]`, "1GiB");
    assert.equal(
      await settled("sim", () =>
        page.click(`${ROOT} button:text-is("Simulate")`),
      ),
      "done",
    );
    assert.equal(
      await page.isVisible(`${ROOT} .rules-error`),
      false,
      "the error is gone",
    );
    assert.match(
      await text(".whatif-verdict"),
      /no out-of-memory within 1\.00 GiB/,
    );
    // Back to the recorded settings (and no device memory) for the next test.
    assert.equal(
      await settled("sim", () =>
        page.click(`${ROOT} button:text-is("Recorded settings")`),
      ),
      "done",
    );
    assert.equal(
      await page.inputValue(`${ROOT} input[placeholder="e.g. 80GiB"]`),
      "",
    );
    assert.deepEqual(errors, []);
  },
);

test(
  "the standard set: every setting simulated in turn, ranked, the one to try first picked and shown on click",
  { skip: SKIP },
  async () => {
    await showView(page, 0, "whatif");
    assert.equal(
      await settled("set", () =>
        page.click(`${ROOT} button:text-is("Try the standard set")`),
      ),
      "done",
    );
    assert.match(await text(".set-progress"), /^7 \/ 7 simulated/);
    assert.match(
      await text(".set-verdict"),
      /Try expandable_segments:True first: it lowers the reserved peak by 18\.00 MiB to 614\.00 MiB \(simulated\)\./,
    );
    const rows = await page.$$eval("table.whatif-set tbody tr", (trs) =>
      trs.map((tr) => ({
        conf: tr.dataset.conf,
        cells: [...tr.cells].map((td) => td.textContent),
        first: tr.classList.contains("current"),
      })),
    );
    assert.equal(rows.length, 7);
    assert.deepEqual(rows[0].cells.slice(0, 2), [
      "expandable_segments:Truetry first",
      "614.00 MiB",
    ]);
    assert.deepEqual(
      rows.filter((r) => r.first).map((r) => r.conf),
      ["expandable_segments:True"],
    );
    assert.ok(rows.some((r) => r.conf === "" && r.cells[0] === "as recorded"));
    await shot(page, "16-whatif-npu-set");
    // A row loads its setting into the form and the chart (no new simulation).
    await page.click(
      "table.whatif-set tbody tr[data-conf='roundup_power2_divisions:4']",
    );
    assert.equal(
      await page.inputValue(`${ROOT} textarea`),
      "roundup_power2_divisions:4",
    );
    assert.equal(await text(".sim-reserved-peak"), "706.00 MiB");
    // Another tab and back: the ranking is still there.
    await page.click("[data-view=overview]");
    await viewShown(page, "overview");
    await page.click("[data-view=whatif]");
    await viewShown(page, "whatif");
    assert.equal(
      await page.$$eval("table.whatif-set tbody tr", (t) => t.length),
      7,
    );
    assert.equal(
      await page.inputValue(`${ROOT} textarea`),
      "roundup_power2_divisions:4",
    );
    assert.equal(await text(".sim-reserved-peak"), "706.00 MiB");
    assert.deepEqual(errors, []);
  },
);

test(
  "the standard set stops between two simulations when cancelled",
  { skip: SKIP },
  async () => {
    await showView(page, 0, "whatif");
    // Cancel right after the start: the run stops before its first simulation.
    const state = await settled("set", () =>
      page.evaluate(() => {
        const buttons = [
          ...document.querySelectorAll(".whatif-set-box button"),
        ];
        buttons.find((b) => b.textContent === "Try the standard set").click();
        buttons.find((b) => b.textContent === "Cancel").click();
      }),
    );
    assert.equal(state, "cancelled");
    assert.equal(
      await text(".set-progress"),
      "Cancelled after 0 of 7 settings.",
    );
    assert.equal(await page.$("table.whatif-set"), null);
    assert.equal(
      await page.isVisible(`${ROOT} button:text-is("Cancel")`),
      false,
    );
    assert.deepEqual(errors, []);
  },
);

test(
  "an OOM recorded with expandable segments: the OOM view says it would still happen without them, and opens What if",
  { skip: SKIP },
  async () => {
    await showView(page, 1, "oom");
    await page.selectOption("#device-select", "1");
    await viewShown(page, "oom");
    const line = await text(".what-if-line");
    assert.match(
      line,
      /With expandable_segments:False this OOM would still have happened \(simulated\)\./,
    );
    assert.equal(
      await page.getAttribute(".what-if-line", "data-happens"),
      "true",
    );
    await shot(page, "16-oom-whatif-line");
    await page.click(".what-if-line a");
    await viewShown(page, "whatif");
    assert.match(
      await text(".whatif-health"),
      /The simulator reproduces this recording exactly/,
    );
    // Opened on the setting the sentence is about.
    assert.equal(
      await page.inputValue(`${ROOT} textarea`),
      "expandable_segments:False",
    );
    assert.match(
      await text(".whatif-summary h3"),
      /Simulated: expandable_segments:False/,
    );
    assert.match(
      await text(".whatif-verdict"),
      /would run out of memory at event \d/,
    );
    // The capacity comes from the recorded OOM.
    assert.match(
      await text(".whatif-details"),
      /Device memory: 78\.51 GiB, reserved 78\.42 GiB .* at the OOM of event 421/,
    );
    // As recorded, the simulated OOM is the recorded one.
    assert.equal(
      await settled("sim", () =>
        page.click(`${ROOT} button:text-is("Recorded settings")`),
      ),
      "done",
    );
    assert.match(
      await text(".whatif-verdict"),
      /would run out of memory at event 421 \(4\.94 GiB requested, 78\.42 GiB reserved\), where the recording ran out of memory too/,
    );
    await shot(page, "16-whatif-oom");
    assert.deepEqual(errors, []);
  },
);

test(
  "a dump-only file: What if says a simulation needs a trace",
  { skip: SKIP },
  async () => {
    await showView(page, 2, "whatif");
    assert.match(await text(ROOT), /A simulation needs a trace/);
    assert.equal(await page.getAttribute(ROOT, "data-whatif"), "no-trace");
    assert.equal(await page.$(".whatif-form"), null);
    assert.deepEqual(errors, []);
  },
);

test(
  "a recording the simulator does not reproduce: the health line warns where; a pinned host entry is not simulated",
  { skip: SKIP },
  async () => {
    await showView(page, 3, "whatif");
    assert.equal(
      await text(".whatif-health strong"),
      "The simulator first differs at event 1: the recording cudaMallocs a segment of 20.00 MiB (segment_alloc) at event 1; the simulation does the same only at event 3",
    );
    assert.equal(
      await page.getAttribute(".whatif-health", "class"),
      "health whatif-health warn",
    );
    await page.selectOption("#device-select", "1");
    await viewShown(page, "whatif");
    assert.match(await text(ROOT), /Pinned host memory is not simulated/);
    assert.equal(await page.$(".whatif-form"), null);
    assert.deepEqual(errors, []);
  },
);
