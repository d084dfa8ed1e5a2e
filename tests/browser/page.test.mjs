// The page in real Chromium: real snapshots through the file input, the same answers as the CLI,
// every view rendered (screenshots in tests/out/screenshots), export read back by the CLI.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  serve,
  launch,
  openFiles,
  waitReady,
  shot,
  textMatches,
  viewShown,
  CORPUS,
  FIXTURES,
  ROOT,
} from "./harness.mjs";

const CLI = join(ROOT, "target/release/snapscope");
const cli = (...args) =>
  JSON.parse(execFileSync(CLI, args, { encoding: "utf8", maxBuffer: 1 << 28 }));
const HAVE_CORPUS = existsSync(join(CORPUS, "reference.json"));
const files = HAVE_CORPUS
  ? [
      join(
        CORPUS,
        "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
      ),
      join(CORPUS, "npu/snapshot_with_multi_devices.pkl"),
      join(
        CORPUS,
        "cuda/Constructor-Sun__code_location/memory_snapshot.pickle",
      ),
    ]
  : [
      join(FIXTURES, "cuda_training.pickle"),
      join(FIXTURES, "multi_device_oom.pickle"),
      join(FIXTURES, "npu_expandable.pkl"),
    ];

let server, origin, ctx, page, errors;
before(async () => {
  ({ server, origin } = await serve());
  ctx = await launch();
  page = await ctx.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/");
});
after(async () => {
  await ctx?.close();
  server?.close();
});

test("the empty page invites a drop and says nothing is uploaded", async () => {
  assert.equal(
    await page.evaluate(() => document.documentElement.dataset.snapscope),
    "empty",
  );
  assert.match(
    await page.textContent(".drop"),
    /Drop a PyTorch memory snapshot/,
  );
  assert.match(await page.textContent(".privacy"), /nothing uploaded/);
  // The footer names the release: the CLI's `--version` and every exported database's.
  const version = execFileSync(CLI, ["--version"], { encoding: "utf8" }).trim();
  assert.equal(
    `snapscope ${await page.textContent(".foot .version")}`,
    version,
  );
  await shot(page, "00-empty");
});

test("several snapshots open through the file input; overview() equals the CLI JSON", async () => {
  assert.equal(await openFiles(page, files), "ready");
  const names = await page.$$eval("#file-select option", (o) =>
    o.map((x) => x.textContent),
  );
  assert.equal(names.length, files.length);
  for (const [i, f] of files.entries()) {
    await page.selectOption("#file-select", String(i));
    const got = await page.evaluate(() => window.snapscope.overview());
    assert.deepEqual(got, cli("overview", f, "--json"), f);
  }
  await shot(page, "01-overview");
});

test("multi-device snapshot: the device picker switches devices", async () => {
  await page.selectOption("#file-select", "1");
  const opts = await page.$$eval("#device-select option", (o) =>
    o.map((x) => x.value),
  );
  assert.ok(opts.length >= 2, `devices: ${opts}`);
  await page.selectOption("#device-select", opts[1]);
  // The view has rendered (its figures come from the engine, after a "computing…" cover).
  await page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
  );
  assert.match(await page.textContent("main"), /Peak allocated/i);
  assert.equal(
    new URLSearchParams(
      (await page.evaluate(() => location.hash)).slice(1),
    ).get("device"),
    opts[1],
  );
  await shot(page, "02-overview-device1");
});

test("timeline draws and selecting an event shows its stack and counters", async () => {
  await page.selectOption("#file-select", "0");
  await page.click("[data-view=timeline]");
  const canvas = page.locator("canvas.chart");
  await canvas.waitFor();
  const box = await canvas.boundingBox();
  await page.waitForTimeout(300);
  await page.mouse.click(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.waitForSelector(".event-panel h3");
  assert.match(
    await page.textContent(".event-panel"),
    /Counters after this event/,
  );
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /event=\d+/);
  await shot(page, "03-timeline");
  // The selection follows to the other views.
  const selected = /event=(\d+)/.exec(hash)[1];
  await page.click("[data-view=tree]");
  await page.waitForSelector("canvas.flame");
  assert.match(
    await page.textContent(".toolbar"),
    new RegExp(
      `after the selected event ${Number(selected).toLocaleString("en-US")}(?!\\d)`,
    ),
  );
  await page.click("[data-view=state]");
  await page.waitForSelector("canvas.segmap");
  assert.match(
    await page.textContent(".toolbar"),
    new RegExp(
      `after the selected event ${Number(selected).toLocaleString("en-US")}(?!\\d)`,
    ),
  );
});

test("allocations view stacks the live blocks over time", async () => {
  await page.click("[data-view=allocations]");
  await page.waitForSelector("canvas.chart");
  await page.waitForFunction(() =>
    /blocks drawn one by one/.test(
      document.querySelector(".readout")?.textContent ?? "",
    ),
  );
  await shot(page, "03b-allocations");
});

test("memory tree at the peak: flame graph whose root holds the active bytes of that event", async () => {
  const ov = await page.evaluate(() => window.snapscope.overview());
  const d = ov.devices[0];
  await page.evaluate(
    (e) => window.snapscope.select(e, "tree"),
    d.peaks.allocated.event,
  );
  await page.waitForSelector("canvas.flame");
  assert.match(await page.textContent(".toolbar"), /allocated peak/);
  const rows = await page.evaluate(
    (e) =>
      window.snapscope.query("active_memory_frame_tree_at_event", {
        event_id: e,
      }),
    d.peaks.allocated.event,
  );
  assert.equal(
    rows.rows[0][8],
    d.peaks.active.event === d.peaks.allocated.event
      ? d.peaks.active.bytes
      : rows.rows[0][8],
  );
  // Keyboard navigation and search reach small frames through the side list.
  await page.focus("canvas.flame");
  await page.keyboard.press("ArrowDown");
  await page.fill("input.search", "py");
  await textMatches(page, ".tree-side h4", /frames match/);
  assert.match(await page.textContent(".tree-side h4"), /frames match/);
  await shot(page, "04-tree");
});

test("memory tree: a new width redraws the flame graph, not its side list", async () => {
  // The side list holds up to 500 rows: laying it out again on every resize held the page for
  // tens of milliseconds (and did so right after the view first drew, when a scrollbar came).
  const before = await page.evaluate(() => {
    document.querySelector(".tree-side table").dataset.kept = "yes";
    return document.querySelector("canvas.flame").width;
  });
  const size = page.viewportSize();
  await page.setViewportSize({ width: size.width - 200, height: size.height });
  try {
    await page.waitForFunction(
      (w) => document.querySelector("canvas.flame").width !== w,
      before,
    );
    assert.equal(
      await page.evaluate(
        () => document.querySelector(".tree-side table")?.dataset.kept,
      ),
      "yes",
    );
  } finally {
    await page.setViewportSize(size);
  }
});

test("allocator state at the peak lays out segments with their blocks", async () => {
  await page.click("[data-view=state]");
  await page.waitForSelector("canvas.segmap");
  const text = await page.textContent("main");
  assert.match(text, /Largest free block/);
  await shot(page, "05-state");
});

test("queries: a template form and the SQL console run in the worker", async () => {
  await page.click("[data-view=queries]");
  await page.waitForSelector(".template-select");
  await page.selectOption(".template-select", "memory_peak");
  await page.click("text=Run template");
  await page.waitForSelector(".result-row");
  const ov = await page.evaluate(() => window.snapscope.overview());
  const peak = await page.evaluate(() =>
    window.snapscope.query("memory_peak", {}),
  );
  assert.equal(peak.rows[0][0], ov.devices[0].peaks.allocated.bytes);
  const sql = await page.evaluate(() =>
    window.snapscope.sql("SELECT COUNT(*) FROM traces"),
  );
  assert.equal(
    sql.rows[0][0],
    ov.devices.reduce((n, d) => n + d.events, 0),
  );
  await page.fill(
    "textarea.sql",
    "SELECT action, COUNT(*) AS n FROM traces GROUP BY action ORDER BY n DESC",
  );
  await page.click("text=Run SQL");
  await textMatches(page, ".results", /alloc/);
  assert.match(await page.textContent(".results"), /alloc/);
  const bad = await page.evaluate(() =>
    window.snapscope.query("memory_peak", { nope: 1 }).then(
      () => "ok",
      (e) => e.message,
    ),
  );
  assert.match(bad, /unknown parameter/);
  await shot(page, "06-queries");
});

test("peak, leak and OOM views come from the engine analyses", async () => {
  await page.selectOption("#file-select", "2");
  const devs = await page.$$eval("#device-select option", (o) =>
    o.map((x) => x.value),
  );
  if (devs.length > 1) await page.selectOption("#device-select", devs[1]);
  await page.click("[data-view=peak]");
  await page.waitForSelector("table.groups");
  assert.match(await page.textContent("main"), /Who holds the memory/);
  await shot(page, "09-peak");
  await page.click("[data-view=leaks]");
  await page.waitForSelector(".floor");
  assert.match(
    await page.textContent("main"),
    /leak candidates|kept to the dump/i,
  );
  await shot(page, "09-leaks");
  await page.click("[data-view=oom]");
  const oom = HAVE_CORPUS ? /Out of memory at event \d+/ : /OOM/;
  await viewShown(page, "oom");
  await textMatches(page, "main", oom);
  assert.match(await page.textContent("main"), oom);
  await shot(page, "09-oom");
  await page.click("[data-view=overview]");
  await page.waitForSelector(".view-overview h3");
  await shot(page, "09-findings");
});

test("the HTML report downloads and opens from file:// without any request", async () => {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click("#export-report"),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "snapscope-report-"));
  const path = join(dir, "report.html");
  await download.saveAs(path);
  const report = await ctx.newPage();
  const seen = [];
  report.on("request", (r) => seen.push(r.url()));
  await report.goto("file://" + path);
  assert.match(await report.textContent("h1"), /Memory report/);
  assert.deepEqual(
    seen.filter((u) => u !== "file://" + path),
    [],
  );
  await shot(report, "11-report");
  await report.close();
  // Last, so a failing test keeps its files to look at (so in the tests below too).
  rmSync(dir, { recursive: true, force: true });
});

test("compare shows two snapshots side by side", async () => {
  await page.click("[data-view=compare]");
  await page.waitForSelector("text=by site (largest change first)");
  assert.match(await page.textContent("main"), /difference/);
  await shot(page, "07-compare");
});

test("the exported .db opens with the native CLI", async () => {
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click("#export-db"),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "snapscope-export-"));
  const path = join(dir, "export.db");
  await download.saveAs(path);
  assert.equal(
    readFileSync(path).subarray(0, 15).toString(),
    "SQLite format 3",
  );
  const fromDb = cli("overview", path, "--json");
  assert.deepEqual(
    fromDb,
    await page.evaluate(() => window.snapscope.overview()),
  );
  // The CLI's JSON rows are objects keyed by column name.
  const n = cli("sql", path, "SELECT COUNT(*) AS n FROM lifetimes", "--json");
  assert.ok(n.rows[0].n > 0);
  // And with the sqlite3 shell.
  const traces = execFileSync(
    "sqlite3",
    [path, "SELECT COUNT(*) FROM traces"],
    { encoding: "utf8" },
  ).trim();
  assert.equal(
    Number(traces),
    fromDb.devices.reduce((n, d) => n + d.events, 0),
  );
  rmSync(dir, { recursive: true, force: true });
});

test("stats() reports load stages and the wasm memory high-water mark", async () => {
  const s = await page.evaluate(() => window.snapscope.stats());
  for (const k of [
    "read_ms",
    "parse_ms",
    "replay_ms",
    "store_ms",
    "total_ms",
    "wasm_memory_bytes",
  ])
    assert.equal(typeof s[k], "number", k);
  assert.ok(s.wasm_memory_bytes > 1 << 20);
});

test("the URL hash reopens a view, device and event", async () => {
  await page.evaluate(() => (location.hash = "#view=state&device=0&event=3"));
  await textMatches(page, ".toolbar", /after the selected event 3(?!\d)/);
  assert.match(
    await page.textContent(".toolbar"),
    /after the selected event 3(?!\d)/,
  );
});

test("a broken file shows a clear error on the page", async () => {
  const dir = mkdtempSync(join(tmpdir(), "snapscope-bad-"));
  const p = join(dir, "broken.pickle");
  const fs = await import("node:fs");
  fs.writeFileSync(p, Buffer.from([0x80, 0x04, 0x95, 1, 2, 3]));
  await page.setInputFiles("#file-input", p);
  await waitReady(page);
  await page.waitForSelector("#error:not([hidden])");
  const msg = await page.textContent("#error");
  assert.match(msg, /Could not open the snapshot/);
  assert.match(msg, /PICKLE_INVALID|byte \d+/);
  await shot(page, "08-error");
  assert.deepEqual(errors, []);
  rmSync(dir, { recursive: true, force: true });
});

test("hostile and broken files show their error on the page, never a blank page", async () => {
  for (const [file, code] of [
    ["os_system.pickle", "PICKLE_UNSAFE"],
    ["gzip_bomb.pickle.gz", "BUDGET_EXCEEDED"],
    ["malformed.json", "JSON_INVALID"],
    ["not_a_snapshot.pickle", "SNAPSHOT_INVALID"],
    ["truncated.pickle", "PICKLE_INVALID"],
  ]) {
    await page.setInputFiles("#file-input", join(FIXTURES, "bad", file));
    await page.waitForFunction(
      (c) =>
        document.querySelector("#error:not([hidden])")?.textContent.includes(c),
      code,
      { timeout: 20000 },
    );
    assert.match(await page.textContent("#error"), new RegExp(code), file);
  }
  await shot(page, "12-unsafe-error");
  assert.deepEqual(errors, []);
});

test("a load can be cancelled and the page stays usable", async () => {
  const dir = mkdtempSync(join(tmpdir(), "snapscope-cancel-"));
  const big = join(dir, "big.pickle");
  execFileSync("python3", [join(ROOT, "scripts/gen_big.py"), "400000", big]);
  // Cancel from the page in the same task that shows `when` in the progress box: a click the
  // driver sends after seeing it can arrive once a load on a loaded machine is already over.
  // `when`: the box appearing (the load only just asked for), or the worker's first stage after
  // reading (mid-load).
  const cancelAt = (when) =>
    page.evaluate((when) => {
      window.__cancelSent = new Promise((resolve) => {
        const progress = document.querySelector("#progress");
        const observer = new MutationObserver(() => {
          const stage = progress.querySelector(".stage").textContent;
          if (progress.hidden || !new RegExp(when).test(stage)) return;
          observer.disconnect();
          document.querySelector("#cancel").click();
          resolve(stage);
        });
        observer.observe(progress, {
          attributes: true,
          childList: true,
          characterData: true,
          subtree: true,
        });
      });
    }, when);
  for (const when of ["^Reading", "^(Parsing|Replaying)"]) {
    await cancelAt(when);
    await page.setInputFiles("#file-input", big);
    const stage = await page.evaluate(() => window.__cancelSent);
    assert.match(stage, new RegExp(when));
    await page.waitForFunction(() =>
      document
        .querySelector("#error:not([hidden])")
        ?.textContent.includes("cancelled"),
    );
    assert.ok(await page.isHidden("#progress"), when);
    assert.notEqual(
      await page.evaluate(() => window.snapscope.overview()?.source_bytes),
      (await import("node:fs")).statSync(big).size,
      when,
    );
  }
  assert.equal(
    await openFiles(page, [join(FIXTURES, "npu_expandable.pkl")]),
    "ready",
  );
  rmSync(dir, { recursive: true, force: true });
});

test("a file chosen once the page is ready meets an engine warmed up ahead, and so does the next", async () => {
  const c = await launch();
  const p = await c.newPage();
  const engineReady = () =>
    p.waitForFunction(
      () => document.documentElement.dataset.engine === "ready",
    );
  const stats = () => p.evaluate(() => window.snapscope.stats());
  await p.goto(origin + "/");
  await engineReady();
  assert.equal(await openFiles(p, [files[0]]), "ready");
  let s = await stats();
  assert.equal(s.warmed_ahead, true);
  assert.equal(s.warm_up_ms, 0, "no warm-up on the load's path");
  // The page prepares the next engine while idle.
  await engineReady();
  assert.equal(await openFiles(p, [files[1]]), "ready");
  s = await stats();
  assert.equal(s.warmed_ahead, true);
  // A file that fails to open uses up the prepared engine; the page prepares another.
  const dir = mkdtempSync(join(tmpdir(), "snapscope-bad-"));
  const broken = join(dir, "x.pickle");
  (await import("node:fs")).writeFileSync(
    broken,
    Buffer.from([0x80, 0x04, 0x95, 1]),
  );
  await engineReady();
  await p.setInputFiles("#file-input", broken);
  await p.waitForSelector("#error:not([hidden])");
  await engineReady();
  assert.equal(await openFiles(p, [files[0]]), "ready");
  assert.equal((await stats()).warmed_ahead, true);
  // ?warmup=0 turns it off: the engine is started ahead but runs cold.
  await p.goto(origin + "/?warmup=0");
  await engineReady();
  assert.equal(await openFiles(p, [files[0]]), "ready");
  s = await stats();
  assert.equal(s.warmed_ahead, false);
  await c.close();
  rmSync(dir, { recursive: true, force: true });
});
