// The in-memory SnapshotDB is built in the worker in slices (issues #28/#30): the views draw
// while it is being built (none of their calls needs SQL), a call made during the build is
// answered between two slices rather than after the whole build, and a call that needs SQL
// finishes the build first.
//
// Deterministic on any machine: the page's test hooks (client.ts, worker.ts) build the database
// one unit of work a slice (`?storeSliceMs=0`: many slices for any file, however fast the
// machine) and pause it after its first slice until `snapscope.resumeStore()`
// (`?storePauseAfter=1`); every check reads the engine's own account of the build at the moment
// it answered (`stats()`: store_built, store_slices), not the clock.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  serve,
  launch,
  waitReady,
  viewDone,
  viewShown,
  CORPUS,
} from "./harness.mjs";

// A real snapshot (3.6 MiB, 19 k events, annotations and OOM/snapshot markers).
const FILE = join(
  CORPUS,
  "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
);
const SKIP = existsSync(FILE) ? false : "the corpus is not here";
const HOOKS = "?storeSliceMs=0&storePauseAfter=1";

let server, origin, context;
before(async () => {
  if (SKIP) return;
  ({ server, origin } = await serve());
  context = await launch();
});
after(async () => {
  await context?.close();
  server?.close();
});

/** A page with FILE open and its database build paused after its first slice. */
async function pausedPage() {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/" + HOOKS);
  await page.setInputFiles("#file-input", FILE);
  assert.equal(await waitReady(page), "ready");
  await viewDone(page);
  // The build starts once the worker is idle; its first slice's span says it began.
  await page.waitForFunction(
    () => performance.getEntriesByName("snapscope:worker-store").length > 0,
    null,
    { timeout: 60000 },
  );
  return { page, errors };
}

const stats = (page) => page.evaluate(() => window.snapscope.stats());

/** Click a tab and wait for its view drawn. */
async function show(page, view) {
  await page.click(`#tabs [data-view=${view}]`);
  await viewShown(page, view);
  await viewDone(page);
}

let paused;

test(
  "the views draw while the database build is paused after one slice",
  { skip: SKIP },
  async () => {
    paused = await pausedPage();
    const { page } = paused;
    let s = await stats(page);
    assert.deepEqual(
      [s.store_built, s.store_slices],
      [false, 1],
      `paused after one slice: ${JSON.stringify(s)}`,
    );
    await show(page, "timeline");
    // The Timeline's markers and phase bands came (from the replay): its chart is drawn.
    assert.ok(
      await page.$eval("#view canvas.chart", (c) => c.width > 0),
      "the Timeline chart was drawn",
    );
    await show(page, "allocations");
    await show(page, "overview");
    // The Overview in full: the findings in place of their spinner, the small timeline drawn.
    await page.waitForFunction(
      () =>
        document.querySelector("#view .findings .finding, #view .findings p") &&
        !document.querySelector("#view .findings .busy-inline") &&
        document.querySelector("#view canvas.overview-chart")?.dataset.drawn ===
          "true",
    );
    // None of those views' calls built the database (a call that needs SQL finishes it).
    s = await stats(page);
    assert.deepEqual(
      [s.store_built, s.store_slices],
      [false, 1],
      `no view built the database: ${JSON.stringify(s)}`,
    );
    assert.equal(
      await page.evaluate(
        () =>
          performance.getEntriesByName("snapscope:worker-store-extent").length,
      ),
      0,
      "the build has not ended",
    );
    assert.deepEqual(paused.errors, []);
  },
);

test(
  "a call made during the database build is answered between its slices",
  { skip: SKIP },
  async () => {
    const { page, errors } = paused;
    // Resumed (its next slice runs in the resume's own task), then asked at once: the call
    // waits in the worker's queue behind that slice, and is answered before the build's end
    // only if the worker lets queued calls in between slices.
    const during = await page.evaluate(() => {
      void window.snapscope.resumeStore();
      return window.snapscope.stats();
    });
    await page.waitForFunction(
      () =>
        performance.getEntriesByName("snapscope:worker-store-extent").length >
        0,
      null,
      { timeout: 60000 },
    );
    const end = await stats(page);
    const spans = await page.evaluate(
      () => performance.getEntriesByName("snapscope:worker-store").length,
    );
    assert.equal(end.store_built, true, JSON.stringify(end));
    assert.equal(spans, end.store_slices, "a span per slice");
    assert.ok(
      end.store_slices >= 3,
      `the build ran in ${end.store_slices} slices`,
    );
    // Answered with the build under way: slices ran after the answer.
    assert.equal(during.store_built, false, JSON.stringify(during));
    assert.ok(
      during.store_slices >= 1 && during.store_slices < end.store_slices,
      `answered after ${during.store_slices} of ${end.store_slices} slices`,
    );
    // The slices are the only time the worker answered nothing else: each is short beside the
    // whole build.
    assert.ok(
      end.store_longest_slice_ms > 0 &&
        end.store_longest_slice_ms < end.store_ms,
      JSON.stringify(end),
    );
    assert.deepEqual(errors, []);
  },
);

test("Queries answer from the finished database", { skip: SKIP }, async () => {
  const { page } = paused;
  const overview = await page.evaluate(() => window.snapscope.overview());
  const events = overview.devices.reduce((n, d) => n + d.events, 0);
  const { rows } = await page.evaluate(() =>
    window.snapscope.sql(
      "SELECT (SELECT COUNT(*) FROM devices), (SELECT COUNT(*) FROM traces), (SELECT COUNT(*) FROM call_stacks) > 0",
    ),
  );
  assert.deepEqual(rows[0], [overview.devices.length, events, 1]);
  await page.close();
});

test(
  "a call that needs SQL finishes a paused build, and the export follows it",
  { skip: SKIP },
  async () => {
    const { page, errors } = await pausedPage();
    const { rows } = await page.evaluate(() =>
      window.snapscope.sql("SELECT COUNT(*) > 0 FROM call_stacks"),
    );
    assert.deepEqual(rows[0], [1]);
    const s = await stats(page);
    assert.equal(s.store_built, true, JSON.stringify(s));
    // The worker's paused slices are let go by the export, which then has its database.
    const bytes = await page.evaluate(
      async () => (await window.snapscope.exportDb()).byteLength,
    );
    assert.ok(bytes > 4096, `exported ${bytes} bytes`);
    assert.deepEqual(errors, []);
    await page.close();
  },
);
