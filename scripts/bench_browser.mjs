#!/usr/bin/env node
// Scale benchmark (not a test): generated snapshots of several sizes, natively and in headless
// Debian chromium, in one run.
//
// usage: node scripts/bench_browser.mjs [--sizes 10,100,1000] [--files A.pickle,B.pickle] [--out bench-out/bench.json] [--settle-ms 1000]
//        node scripts/bench_browser.mjs --views A.pickle,B.pickle [--runs 3] [--tabs overview,allocations] [--dist www/dist] [--native target/release/snapscope]
// (--files adds existing snapshots, e.g. ../shared/tools/gen_big.py output, to the generated sizes)
//
// --views: what a user sees, per file (no generated sizes): from choosing the file to the peak
// figures on screen (the Overview's peak cards painted: the `snapscope:peak-figures` mark, set in
// the task after the frame that paints them, and the test driver's view: from the file input's
// change event to its poll, every 5 ms, finding the cards' figure; setInputFiles' own delivery of
// the file before the change event is reported apart, set_input_files_ms), then for every tab in turn: clicking it → the view drawn (`data-view="done"` seen
// by a poll that runs only when the main thread is free) → the page answering again (a task queued
// after that runs and a round trip to the engine's worker, `window.snapscope.stats()`), and the
// longest main-thread task meanwhile (PerformanceObserver "longtask"); beside each file, the native
// `snapscope overview` (read + replay) in the same run (the median of three runs right before
// the page and three right after), and the figures' time over it. Beside
// memory_viz: scripts/bench_memory_viz.mjs (the same figures measurement, alternating with it).
//
// Per size: the read-only floor (the page streams the File through File.stream() and does nothing
// else), time from choosing the file to the first view (overview rendered), measured in the page
// (performance marks: the file input's change → the frame that paints the overview) and as the test driver sees
// it (setInputFiles → the overview found, which adds the driver's round trips); the clock starts
// once the page reports its engine warmed up (data-engine=ready) and --settle-ms more have passed,
// the engine's stage timings, latency of the peak / leak / memory-tree queries, timeline zoom
// latency (wheel → redrawn, p95), the wasm memory high-water mark and the peak RSS of all the
// browser's processes; natively: `snapscope overview` and `snapscope import` wall time.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { serve, launch, ROOT } from "../tests/browser/harness.mjs";
import {
  browserRss,
  tabRssSampler,
  snapscopeReady,
  snapscopeFigures,
  arg,
} from "./bench_page.mjs";

const sizes = arg("--sizes", "10,100,1000")
  .split(",")
  .filter(Boolean)
  .map(Number);
const extraFiles = arg("--files", "").split(",").filter(Boolean);
const outFile = arg("--out", join(ROOT, "bench-out/bench.json"));
const settleMs = Number(arg("--settle-ms", "1000"));
const EVENTS_PER_MB = 11000;
mkdirSync(join(ROOT, "bench-out"), { recursive: true });

function snapshot(mb) {
  const p = join(ROOT, `bench-out/big${mb}.pickle`);
  if (!existsSync(p))
    execFileSync(
      "python3",
      [join(ROOT, "scripts/gen_big.py"), String(mb * EVENTS_PER_MB), p],
      { stdio: "inherit" },
    );
  return p;
}

function timeNative(args) {
  const t0 = performance.now();
  const r = spawnSync(
    arg("--native", join(ROOT, "target/release/snapscope")),
    args,
    {
      encoding: "utf8",
      maxBuffer: 1 << 30,
    },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return (performance.now() - t0) / 1000;
}

const pct = (xs, p) =>
  xs.slice().sort((a, b) => a - b)[
    Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))
  ];

/** Read-only floor: stream the file through File.stream() and do nothing with it. In a browser
 * of its own, so that its garbage does not count in the tab measured afterwards. */
async function readFloor(origin, file) {
  const ctx = await launch();
  const page = await ctx.newPage();
  await page.goto(origin + "/");
  await page.evaluate(() => {
    const i = document.createElement("input");
    i.type = "file";
    i.id = "floor-input";
    document.body.append(i);
  });
  await page.setInputFiles("#floor-input", file);
  const floorMs = await page.evaluate(async () => {
    const f = document.getElementById("floor-input").files[0];
    const t0 = performance.now();
    const r = f.stream().getReader();
    let n = 0;
    for (;;) {
      const { done, value } = await r.read();
      if (done) break;
      n += value.byteLength;
    }
    return performance.now() - t0;
  });
  await ctx.close();
  return floorMs;
}

async function browserRun(origin, file) {
  const floorMs = await readFloor(origin, file);
  const ctx = await launch();
  const profile = ctx.profileDir;
  const page = await ctx.newPage();
  const tPage = performance.now();
  await page.goto(origin + "/");
  // The clock starts when the page is ready for a file: its engine started and warmed up.
  await page.waitForFunction(
    () =>
      document.documentElement.dataset.snapscope === "empty" &&
      document.documentElement.dataset.engine === "ready",
  );
  const pageReadyMs = performance.now() - tPage;
  // A person takes longer than this to choose a file: the browser's background compiles of the
  // warm-up's hot code finish meanwhile, as they would before any real choice.
  await page.waitForTimeout(settleMs);
  const browserSampler = tabRssSampler(profile, 100, "");
  const tabSampler = tabRssSampler(profile, 100);
  const t0 = performance.now();
  await page.setInputFiles("#file-input", file);
  await page.waitForFunction(
    () =>
      ["ready", "error"].includes(document.documentElement.dataset.snapscope),
    null,
    { timeout: 600000 },
  );
  await page.waitForSelector(".view-overview .cards", { timeout: 600000 });
  const firstViewMs = performance.now() - t0;
  // The tab's memory at each phase, to see which one sets the peak.
  const tabMib = () =>
    Math.round(browserRss(profile, "--type=renderer") / 2 ** 20);
  const phases = { first_view: tabMib() };
  // The same interval measured inside the page (without the test driver's round trips), and
  // its parts: until the engine's overview arrived, then rendering it.
  await page.waitForFunction(
    () => performance.getEntriesByName("snapscope:first-view").length > 0,
  );
  const marks = await page.evaluate(() => {
    const at = (n) => performance.getEntriesByName(n).at(-1)?.startTime ?? NaN;
    const chosen = at("snapscope:file-chosen");
    return {
      in_page_first_view_ms: at("snapscope:first-view") - chosen,
      overview_received_ms: at("snapscope:overview-received") - chosen,
    };
  });
  const status = await page.evaluate(
    () => document.documentElement.dataset.snapscope,
  );
  const result = {
    floor_ms: Math.round(floorMs),
    page_ready_ms: Math.round(pageReadyMs),
    first_view_ms: Math.round(firstViewMs),
    in_page_first_view_ms: Math.round(marks.in_page_first_view_ms),
    overview_received_ms: Math.round(marks.overview_received_ms),
    status,
  };
  if (status === "ready") {
    result.stats = await page.evaluate(() => window.snapscope.stats());
    phases.snapshot_db = tabMib();
    const ov = await page.evaluate(() => window.snapscope.overview());
    const peak = ov.devices[0].peaks.allocated.event;
    const time = (fn, arg) =>
      page.evaluate(
        async ([fn, arg]) => {
          const t = performance.now();
          await window.snapscope.query(fn, arg);
          return performance.now() - t;
        },
        [fn, arg],
      );
    result.peak_query_ms = Math.round(await time("memory_peak", {}));
    phases.peak_query = tabMib();
    result.leak_query_ms = Math.round(
      await time("leak_detection", { limit: 100 }),
    );
    result.tree_query_ms = Math.round(
      await time("active_memory_frame_tree_at_event", { event_id: peak }),
    );
    phases.queries = tabMib();
    // Timeline: wheel zoom steps, each until the chart is redrawn.
    await page.click("[data-view=timeline]");
    await page.waitForSelector("canvas.chart");
    await page.waitForTimeout(500);
    const box = await page.locator("canvas.chart").boundingBox();
    const lat = [];
    for (let k = 0; k < 20; k++) {
      const before = await page.evaluate(
        () => performance.getEntriesByName("snapscope:timeline-drawn").length,
      );
      const t = performance.now();
      await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
      await page.mouse.wheel(0, k < 10 ? -200 : 200);
      await page.waitForFunction(
        (n) =>
          performance.getEntriesByName("snapscope:timeline-drawn").length > n,
        before,
        { timeout: 60000 },
      );
      lat.push(performance.now() - t);
    }
    result.timeline_zoom_p95_ms = Math.round(pct(lat, 95));
    phases.timeline = tabMib();
    // Frame time measured in the page: engine answer + redraw, per zoom step.
    const frames = await page.evaluate(() =>
      performance
        .getEntriesByName("snapscope:timeline-drawn")
        .slice(1)
        .map((e) => e.detail.engine_ms + e.detail.draw_ms),
    );
    result.timeline_frame_p95_ms = Math.round(pct(frames, 95));
  } else {
    result.error = await page.textContent("#error");
  }
  result.browser_peak_rss_mib = browserSampler.stop();
  result.tab_peak_rss_mib = tabSampler.stop();
  result.tab_rss_mib_by_phase = phases;
  await ctx.close();
  return result;
}

/** The tabs, in the page's order (Compare needs two files: left out). */
const VIEW_TABS = [
  "overview",
  "timeline",
  "allocations",
  "peak",
  "categories",
  "steps",
  "tree",
  "state",
  "leaks",
  "oom",
  "whatif",
  "queries",
];

/** The tabs --views clicks (--tabs a,b: only those, e.g. to profile one view). */
const tabs = arg("--tabs", VIEW_TABS.join(",")).split(",").filter(Boolean);

/** One file as a user meets it: peak figures, then each tab drawn and the page answering. */
async function viewsRun(origin, file) {
  const ctx = await launch();
  const page = await ctx.newPage();
  // Every long task of the page, from the start (the observer is the page's own).
  await page.addInitScript(() => {
    // When the file input's change event fired (an epoch clock, as the driver's): the user's
    // choice, where the driver's figure starts (not when setInputFiles was called, whose own
    // delivery of the file takes 40-90 ms here).
    document.addEventListener(
      "change",
      () => (window.__changeAt ??= performance.timeOrigin + performance.now()),
      true,
    );
    window.__long = [];
    new PerformanceObserver((l) => {
      for (const e of l.getEntries())
        window.__long.push({ start: e.startTime, ms: e.duration });
    }).observe({ type: "longtask", buffered: true });
  });
  await snapscopeReady(page, origin, settleMs);
  // The tab's resident memory (its renderer, worker included), sampled while the file loads.
  const sampler = tabRssSampler(ctx.profileDir);
  const { driverMs: driverFiguresMs, setInputFilesMs } = await snapscopeFigures(
    page,
    file,
  );
  await page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
    null,
    { timeout: 600000 },
  );
  const tabPeakRssMib = sampler.stop();
  const stats = await page.evaluate(() => window.snapscope.stats());
  const marks = await page.evaluate(() => {
    const at = (n) => performance.getEntriesByName(n)[0]?.startTime ?? NaN;
    const chosen = at("snapscope:file-chosen");
    const long = window.__long.filter((e) => e.start >= chosen);
    return {
      // Negative: the page's fonts were warmed up before the file was chosen.
      fonts_ready_ms: at("snapscope:fonts-ready") - chosen,
      overview_received_ms: at("snapscope:overview-received") - chosen,
      peak_figures_ms: at("snapscope:peak-figures") - chosen,
      empty_first_paint_ms: at("snapscope:first-view") - chosen,
      longest_task_ms: Math.max(0, ...long.map((e) => e.ms)),
      // Every stage of the load, page and worker (client.ts marks the worker's), in time order.
      stages: Object.fromEntries(
        performance
          .getEntriesByType("mark")
          .filter(
            (m) => m.name.startsWith("snapscope:") && m.startTime >= chosen,
          )
          .sort((a, b) => a.startTime - b.startTime)
          .map((m) => [m.name.slice(10), Math.round(m.startTime - chosen)]),
      ),
      // Long tasks while loading: when each started (from the choice) and how long it ran.
      long_tasks: long.map((e) => [
        Math.round(e.start - chosen),
        Math.round(e.ms),
      ]),
    };
  });
  const views = {};
  for (const v of tabs) {
    await page.waitForTimeout(300);
    views[v] = await page.evaluate(async (v) => {
      const tab = document.querySelector(`#tabs [data-view=${v}]`);
      const t = performance.now();
      const first = window.__long.length;
      tab.click();
      // Polls run only when the main thread is free: "drawn" includes any blocking.
      await new Promise((res) => {
        const poll = () =>
          document.querySelector(`#view > .view-${v}`) &&
          document.documentElement.dataset.view === "done"
            ? res()
            : setTimeout(poll, 2);
        poll();
      });
      const drawn = performance.now() - t;
      // The next frame, a task after it and a round trip to the engine's worker: the page and
      // its engine answer again.
      await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
      await window.snapscope.stats();
      const answering = performance.now() - t;
      const long = window.__long.slice(first).filter((e) => e.start >= t);
      // What a view's own mark says (allocations: the engine's and the drawing's parts).
      const own = performance
        .getEntriesByType("mark")
        .filter((m) => m.name === `snapscope:${v}-drawn` && m.startTime >= t)
        .at(-1)?.detail;
      // The worker's database build, where it overlapped this view's time (ms of overlap,
      // summed over its slices: each span is a time the worker answered nothing else).
      const end = performance.now();
      const store = performance
        .getEntriesByName("snapscope:worker-store")
        .map(
          (m) =>
            Math.min(end, m.startTime + m.duration) - Math.max(t, m.startTime),
        )
        .filter((ms) => ms > 0);
      return {
        ...(own ? { mark: own } : {}),
        ...(store.length
          ? { store_overlap_ms: Math.round(store.reduce((a, b) => a + b, 0)) }
          : {}),
        drawn_ms: Math.round(drawn),
        answering_ms: Math.round(answering),
        longest_task_ms: Math.round(Math.max(0, ...long.map((e) => e.ms))),
      };
    }, v);
  }
  await ctx.close();
  return {
    driver_peak_figures_ms: Math.round(driverFiguresMs),
    set_input_files_ms: Math.round(setInputFilesMs),
    events: stats?.events ?? null,
    wasm_memory_mib: stats?.wasm_memory_bytes
      ? Math.round(stats.wasm_memory_bytes / 2 ** 20)
      : null,
    tab_peak_rss_mib: tabPeakRssMib,
    // The engine's own clock of the load (read includes waiting for the file's chunks).
    engine_ms: stats
      ? Object.fromEntries(
          ["read_ms", "decode_ms", "parse_ms", "replay_ms", "store_ms"].map(
            (k) => [k.replace(/_ms$/, ""), Math.round(stats[k])],
          ),
        )
      : null,
    ...Object.fromEntries(
      Object.entries(marks).map(([k, x]) => [
        k,
        typeof x === "number" ? Math.round(x) : x,
      ]),
    ),
    views,
  };
}

// --dist DIR: serve another build of the page (e.g. main's, for an A/B of the same files).
const { server, origin } = await serve(arg("--dist", undefined));
const viewFiles = arg("--views", "").split(",").filter(Boolean);
if (viewFiles.length) {
  const runs = Number(arg("--runs", "1"));
  const out = [];
  for (const file of viewFiles)
    for (let r = 0; r < runs; r++) {
      // The native replay beside it, in the same run: `overview` reads, replays and answers.
      // Three times right before the page and three right after, the median of the six: this
      // machine's speed drifts by a third within a minute, and one run on either side would
      // carry that drift into the ratio.
      const nativeRuns = () =>
        [0, 1, 2].map((_) => 1000 * timeNative(["overview", file, "--json"]));
      const before = nativeRuns();
      const page = await viewsRun(origin, file);
      const natives = [...before, ...nativeRuns()];
      const nativeOverviewMs = Math.round(pct(natives, 50));
      const res = {
        // The folder too: corpus files share names (memory_snapshot.pickle).
        file: file.split("/").slice(-2).join("/"),
        bytes: statSync(file).size,
        native_overview_ms: nativeOverviewMs,
        native_overview_runs_ms: natives.map(Math.round),
        ...page,
      };
      res.figures_vs_native = +(
        res.driver_peak_figures_ms / nativeOverviewMs
      ).toFixed(2);
      out.push(res);
      console.log(JSON.stringify(res));
    }
  server.close();
  writeFileSync(
    outFile.replace(/\.json$/, "-views.json"),
    JSON.stringify({ date: new Date().toISOString(), runs: out }, null, 1),
  );
  console.log(
    `\n| file | peak figures in page (driver) | native overview | figures ÷ native | overview answer | longest task while loading | ${tabs.join(" | ")} |`,
  );
  console.log(`|---|---|---|---|---|---|${tabs.map(() => "---").join("|")}|`);
  for (const r of out)
    console.log(
      `| ${r.file} (${(r.bytes / 2 ** 20).toFixed(1)} MiB) | ${r.peak_figures_ms} ms (${r.driver_peak_figures_ms} ms) | ${r.native_overview_ms} ms | ${r.figures_vs_native}× | ${r.overview_received_ms} ms | ${r.longest_task_ms} ms | ${tabs.map((v) => `${r.views[v].drawn_ms} / ${r.views[v].answering_ms} ms (${r.views[v].longest_task_ms})`).join(" | ")} |`,
    );
  process.exit(0);
}
const rows = [];
const inputs = [
  ...sizes.map((mb) => ({ label: `big${mb}`, file: snapshot(mb) })),
  ...extraFiles.map((f) => ({ label: basename(f, ".pickle"), file: f })),
];
for (const { label, file } of inputs) {
  const bytes = statSync(file).size;
  const native = {
    overview_s: timeNative(["overview", file, "--json"]),
    import_s: timeNative([
      "import",
      file,
      "-o",
      join(ROOT, `bench-out/${label}.db`),
      "--force",
      "--no-focus",
    ]),
  };
  const browser = await browserRun(origin, file);
  const events = browser.stats?.events ?? null;
  rows.push({ label, bytes, events, native, browser });
  console.log(JSON.stringify(rows.at(-1)));
}
server.close();
writeFileSync(
  outFile,
  JSON.stringify({ date: new Date().toISOString(), rows }, null, 1),
);

console.log(
  "\n| snapshot | read floor (File.stream) | first view in page (driver) | load ÷ floor | read + decode (decode) | replay | store | peak / leak / tree query | zoom frame p95 (end-to-end) | wasm memory | tab RSS | browser RSS | native overview / import |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const b = r.browser;
  const s = b.stats ?? {};
  const mib = (x) => `${(x / 2 ** 20).toFixed(0)} MiB`;
  const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;
  const ok = b.status === "ready";
  console.log(
    `| ${mib(r.bytes)}, ${((r.events ?? 0) / 1e6).toFixed(2)} M events | ${b.floor_ms} ms | ${ok ? `${sec(b.in_page_first_view_ms)} (${sec(b.first_view_ms)})` : "FAILED: " + (b.error ?? "").slice(0, 80)} | ${ok ? (b.in_page_first_view_ms / Math.max(1, b.floor_ms)).toFixed(1) + "×" : "—"} | ${s.read_ms?.toFixed(0) ?? "—"} ms (${s.decode_ms?.toFixed(0) ?? "—"} ms) | ${s.replay_ms?.toFixed(0) ?? "—"} ms | ${s.store_ms?.toFixed(0) ?? "—"} ms | ${b.peak_query_ms ?? "—"} / ${b.leak_query_ms ?? "—"} / ${b.tree_query_ms ?? "—"} ms | ${b.timeline_frame_p95_ms ?? "—"} ms (${b.timeline_zoom_p95_ms ?? "—"} ms) | ${s.wasm_memory_bytes ? mib(s.wasm_memory_bytes) : "—"} | ${b.tab_peak_rss_mib} MiB | ${b.browser_peak_rss_mib} MiB | ${r.native.overview_s.toFixed(2)} s / ${r.native.import_s.toFixed(2)} s |`,
  );
}
