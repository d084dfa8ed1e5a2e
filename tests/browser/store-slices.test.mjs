// The in-memory SnapshotDB is built in the worker in slices (issues #28/#30): a call the page
// makes while it is being built is answered between two slices, not after the whole build, and
// Queries answer from the finished database afterwards.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { serve, launch, waitReady, viewShown, CORPUS } from "./harness.mjs";

// The largest real snapshot at hand: its build takes several slices.
const FILE = join(
  CORPUS,
  "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
);
const SKIP = existsSync(FILE) ? false : "the corpus is not here";

let server, context, page, errors;
before(async () => {
  if (SKIP) return;
  let origin;
  ({ server, origin } = await serve());
  context = await launch();
  page = await context.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  // On the first slice of the build, ask the worker something and click a view; record when
  // each is answered (the page's clock, as the worker's spans are measured on it).
  await page.addInitScript(() => {
    window.__during = {};
    new PerformanceObserver((list, obs) => {
      if (!list.getEntriesByName("snapscope:worker-store").length) return;
      obs.disconnect();
      const d = window.__during;
      d.asked = performance.now();
      window.snapscope
        .stats()
        .then(() => (d.statsAnswered = performance.now()));
      document.querySelector("[data-view=timeline]").click();
      const poll = () =>
        document.querySelector("#view > .view-timeline") &&
        document.documentElement.dataset.view === "done"
          ? (d.viewDrawn = performance.now())
          : requestAnimationFrame(poll);
      poll();
    }).observe({ entryTypes: ["measure"] });
  });
  await page.goto(origin + "/");
  await page.setInputFiles("#file-input", FILE);
  assert.equal(await waitReady(page), "ready");
});
after(async () => {
  await context?.close();
  server?.close();
});

const measures = (name) =>
  page.evaluate(
    (n) =>
      performance.getEntriesByName(n).map((m) => ({
        start: m.startTime,
        end: m.startTime + m.duration,
      })),
    name,
  );

test(
  "a call during the database build is answered between its slices",
  { skip: SKIP },
  async () => {
    await page.waitForFunction(
      () =>
        performance.getEntriesByName("snapscope:worker-store-extent").length >
        0,
      null,
      { timeout: 60000 },
    );
    await viewShown(page, "timeline");
    const [extent] = await measures("snapscope:worker-store-extent");
    const slices = await measures("snapscope:worker-store");
    const d = await page.evaluate(() => window.__during);
    assert.ok(slices.length >= 2, `the build ran in ${slices.length} slice(s)`);
    assert.ok(d.asked < extent.end, "the call was made during the build");
    // Answered before the build's last slice: it did not wait for the whole build.
    assert.ok(
      d.statsAnswered < extent.end,
      `stats answered at ${d.statsAnswered}, the build ended at ${extent.end}`,
    );
    // The slices are the only time the worker answered nothing else: each is short beside the
    // whole build, and the engine says the same.
    const stats = await page.evaluate(() => window.snapscope.stats());
    assert.ok(
      stats.store_longest_slice_ms > 0 &&
        stats.store_longest_slice_ms < stats.store_ms,
      JSON.stringify(stats),
    );
    const slicesAfterClick = slices.filter(
      (s) => s.start >= d.asked && s.end <= (d.viewDrawn ?? Infinity),
    );
    assert.ok(d.viewDrawn !== undefined, "the view was drawn");
    assert.ok(
      slicesAfterClick.length < slices.length,
      "the view did not wait for every slice of the build",
    );
    assert.deepEqual(errors, []);
  },
);

test("Queries answer from the finished database", { skip: SKIP }, async () => {
  const overview = await page.evaluate(() => window.snapscope.overview());
  const events = overview.devices.reduce((n, d) => n + d.events, 0);
  const { rows } = await page.evaluate(() =>
    window.snapscope.sql(
      "SELECT (SELECT COUNT(*) FROM devices), (SELECT COUNT(*) FROM traces), (SELECT COUNT(*) FROM call_stacks) > 0",
    ),
  );
  assert.deepEqual(rows[0], [overview.devices.length, events, 1]);
});
