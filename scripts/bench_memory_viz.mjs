#!/usr/bin/env node
// Side-by-side benchmark (not a test): PyTorch's memory_viz page and snapscope's page on the same
// snapshots, in headless Debian chromium, alternating in one run (memory_viz, snapscope,
// memory_viz, snapscope …), with the native `snapscope overview` (read + replay) of each pair.
//
// usage: node scripts/bench_memory_viz.mjs --files A.pickle,B.pickle [--memory-viz DIR] [--pairs 3]
//          [--dist www/dist] [--native target/release/snapscope] [--settle-ms 1000]
//          [--out bench-out/memory-viz.json] [--snapscope-only] [--shots]
//
// DIR (or SNAPSCOPE_MEMORY_VIZ_DIR) holds a copy of memory_viz that the project does not keep:
// MemoryViz.js (torch/utils/viz/MemoryViz.js of PyTorch), the page that loads it (index.html; a
// body and `<script type="module" src="MemoryViz.js">` if absent) and node_modules/ with the d3
// packages its CDN imports name (`npm install d3@5 d3-axis@1 d3-scale@1 d3-zoom@1 d3-brush@1` in
// DIR). The CDN imports are mapped to a local bundle of those packages by an import map put into
// the page; nothing is fetched from the network: any request off the local server is aborted and
// reported (the run then claims nothing).
//
// memory_viz: the file is dropped on its page the way a user does (its only way in: a drop on the
// body, here a `drop` event carrying the chosen File), and timed from choosing it to the Active
// Memory Timeline (its default view) drawn: its SVG polygons in the document, seen by the test
// driver's poll (every 5 ms, from before `setInputFiles`), and in the page from the drop to the
// task after the next frame (the same kind of mark as snapscope's `snapscope:peak-figures`).
// snapscope: scripts/bench_page.mjs's figures measurement (what scripts/bench_browser.mjs --views
// measures first). Each in a browser of its own; the tab's peak RSS (its renderer processes).
// --shots saves each page once its figures are up (bench-out/memory-viz-*.png), to see what was timed.
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import {
  basename,
  dirname,
  extname,
  join,
  normalize,
  resolve,
} from "node:path";
import { serve, launch, ROOT } from "../tests/browser/harness.mjs";
import {
  tabRssSampler,
  snapscopeReady,
  snapscopeFigures,
  arg,
} from "./bench_page.mjs";

const files = arg("--files", "").split(",").filter(Boolean);
const pairs = Number(arg("--pairs", "3"));
const settleMs = Number(arg("--settle-ms", "1000"));
const dist = resolve(arg("--dist", join(ROOT, "www/dist")));
const outFile = arg("--out", join(ROOT, "bench-out/memory-viz.json"));
const snapscopeOnly = process.argv.includes("--snapscope-only");
const shots = process.argv.includes("--shots");
const nativeBin = arg(
  "--native",
  ["release", "fasttest"]
    .map((p) => join(ROOT, "target", p, "snapscope"))
    .find(existsSync) ?? "",
);
const TIMEOUT_MS = 900000;

/** The CDN modules MemoryViz.js imports, each with the package it is. */
const CDN = {
  "https://cdn.skypack.dev/d3@5": "d3",
  "https://cdn.skypack.dev/d3-axis@1": "d3-axis",
  "https://cdn.skypack.dev/d3-scale@1": "d3-scale",
  "https://cdn.skypack.dev/d3-zoom@1": "d3-zoom",
  "https://cdn.skypack.dev/d3-brush@1": "d3-brush",
};

const HOW_TO_GET = `No memory_viz copy given: nothing measured, nothing claimed.
To get one (outside this repository), in a directory DIR:
  - MemoryViz.js: PyTorch's torch/utils/viz/MemoryViz.js (a torch install has it, or the
    pytorch/pytorch repository);
  - npm install d3@5 d3-axis@1 d3-scale@1 d3-zoom@1 d3-brush@1   (the versions it imports);
then: node scripts/bench_memory_viz.mjs --memory-viz DIR --files A.pickle,...
(or SNAPSCOPE_MEMORY_VIZ_DIR=DIR).`;

const vizDir = arg("--memory-viz", process.env.SNAPSCOPE_MEMORY_VIZ_DIR ?? "");
if (!snapscopeOnly) {
  const lacks = [
    "MemoryViz.js",
    ...Object.values(CDN).map((p) => `node_modules/${p}`),
  ].filter((f) => !vizDir || !existsSync(join(vizDir, f)));
  if (lacks.length) {
    const why = vizDir
      ? `${vizDir} lacks ${lacks.join(", ")}`
      : "no --memory-viz DIR nor SNAPSCOPE_MEMORY_VIZ_DIR";
    console.log(`${HOW_TO_GET}\n(${why})`);
    process.exit(0);
  }
}
if (!files.length) {
  console.error("usage: --files A.pickle,B.pickle (snapshots to open)");
  process.exit(2);
}
if (!existsSync(join(dist, "index.html"))) {
  console.error(
    `${dist}/index.html not found: build the page (scripts/build.sh)`,
  );
  process.exit(2);
}

/** One ES module per CDN import, bundled from DIR's node_modules with shared chunks, so that
 * d3-zoom and d3-brush use the same d3-selection (and its `d3.event`) as d3 itself. */
async function bundleD3(dir) {
  const require = createRequire(join(ROOT, "www/package.json"));
  const esbuild = require("esbuild");
  const work = mkdtempSync(join(tmpdir(), "memory-viz-d3-"));
  const entryPoints = {};
  for (const pkg of Object.values(CDN)) {
    const entry = join(work, `${pkg}.entry.js`);
    writeFileSync(entry, `export * from ${JSON.stringify(pkg)};\n`);
    entryPoints[pkg] = entry;
  }
  const out = join(work, "out");
  await esbuild.build({
    entryPoints,
    bundle: true,
    splitting: true,
    format: "esm",
    outdir: out,
    nodePaths: [join(dir, "node_modules")],
    logLevel: "error",
  });
  return out;
}

/** The memory_viz page as memory_viz serves it, with an import map of its CDN imports put in
 * front of its first script. */
function memoryVizPage(dir) {
  const page = existsSync(join(dir, "index.html"))
    ? readFileSync(join(dir, "index.html"), "utf8")
    : '<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n<script type="module" src="MemoryViz.js"></script>\n</body>\n</html>\n';
  const imports = Object.fromEntries(
    Object.entries(CDN).map(([url, pkg]) => [url, `/d3/${pkg}.js`]),
  );
  const map = `<script type="importmap">${JSON.stringify({ imports })}</script>\n`;
  const at = page.indexOf("<script");
  if (at < 0) throw new Error(`${dir}/index.html has no <script>`);
  return page.slice(0, at) + map + page.slice(at);
}

/** DIR's files (MemoryViz.js) and the d3 bundle under /d3/, on 127.0.0.1. */
function serveMemoryViz(dir, d3Dir) {
  const html = memoryVizPage(dir);
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/" || path === "/index.html")
      return res.writeHead(200, { "content-type": "text/html" }).end(html);
    const [root, rel] = path.startsWith("/d3/")
      ? [d3Dir, path.slice(4)]
      : [dir, path.slice(1)];
    const file = join(root, normalize(rel));
    if (
      !file.startsWith(root) ||
      !existsSync(file) ||
      statSync(file).isDirectory()
    )
      return res.writeHead(404).end();
    const type = extname(file) === ".js" ? "text/javascript" : "text/plain";
    res.writeHead(200, { "content-type": type }).end(readFileSync(file));
  });
  return new Promise((ok) =>
    server.listen(0, "127.0.0.1", () =>
      ok({ server, origin: `http://127.0.0.1:${server.address().port}` }),
    ),
  );
}

/** Aborts every request that is not to `origin` and keeps its URL: a run with any is void. */
async function offline(ctx, origin) {
  const refused = [];
  await ctx.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin + "/") || url.startsWith("data:"))
      return route.continue();
    refused.push(url);
    return route.abort();
  });
  return refused;
}

/** With --shots, the page as it is now, under bench-out/. */
async function shot(page, name) {
  if (shots)
    await page.screenshot({
      path: join(ROOT, `bench-out/memory-viz-${name}.png`),
    });
}

/** One memory_viz run: the file dropped on its page → the Active Memory Timeline drawn. */
async function memoryVizRun(origin, file, name) {
  const ctx = await launch();
  const refused = await offline(ctx, origin);
  const page = await ctx.newPage();
  const errors = [];
  // memory_viz reports nothing on screen when it fails (an exception in its loader, the tab out
  // of memory): each ends the waits below at once instead of after the time limit.
  let failed = () => {};
  const failure = new Promise((_, reject) => (failed = reject));
  failure.catch(() => {});
  const fail = (why) => {
    errors.push(why);
    failed(new Error(why));
  };
  page.on("pageerror", (e) => fail(String(e)));
  page.on("crash", () => fail("the tab crashed"));
  page.on("console", (m) => {
    if (m.type() === "error") fail(`console error: ${m.text()}`);
  });
  // memory_viz reads the dropped file with a FileReader and handles no error: a failed read
  // would leave it waiting forever. Observed here (not changed): a failure is reported, and the
  // read's end is noted, to tell reading from parsing and drawing.
  await page.addInitScript(() => {
    const read = FileReader.prototype.readAsArrayBuffer;
    FileReader.prototype.readAsArrayBuffer = function (blob) {
      this.addEventListener("error", () =>
        console.error(`memory_viz's FileReader failed: ${this.error}`),
      );
      // The last progress event (all bytes read) comes before memory_viz's onload, which
      // parses and draws in the same task (a "load" listener would run after it).
      this.addEventListener("progress", (e) => {
        if (e.loaded === e.total) window.__readAt = performance.now();
      });
      return read.call(this, blob);
    };
  });
  await page.goto(origin + "/");
  // MemoryViz.js has run when its controls (three <select>s) are in the body.
  await page.waitForFunction(
    () => document.querySelectorAll("body > select").length === 3,
  );
  await page.waitForTimeout(settleMs);
  // memory_viz has no file input: a user drops the file. The driver chooses it in an input of
  // its own (the file is not copied into the page) and drops that File on the body.
  await page.evaluate(() => {
    const i = document.createElement("input");
    i.type = "file";
    i.id = "bench-file";
    i.style.display = "none";
    document.documentElement.append(i);
  });
  const sampler = tabRssSampler(ctx.profileDir);
  const t0 = performance.now();
  await page.setInputFiles("#bench-file", file);
  await page.evaluate(() => {
    const input = /** @type {HTMLInputElement} */ (
      document.getElementById("bench-file")
    );
    const dt = new DataTransfer();
    dt.items.add(input.files[0]);
    const drop = performance.now();
    window.__dropAt = drop;
    // The page's mark: a poll that runs when the main thread is free sees the timeline's
    // polygons, then the task after the next frame (the one that paints them).
    const poll = () =>
      document.querySelector("svg polygon")
        ? requestAnimationFrame(() =>
            setTimeout(() => {
              window.__figuresMs = performance.now() - drop;
            }, 0),
          )
        : setTimeout(poll, 2);
    document.body.dispatchEvent(
      new DragEvent("drop", {
        dataTransfer: dt,
        bubbles: true,
        cancelable: true,
      }),
    );
    poll();
  });
  let driverMs = NaN;
  try {
    await Promise.race([
      failure,
      page.waitForFunction(
        () => document.querySelector("svg polygon") !== null,
        null,
        { timeout: TIMEOUT_MS, polling: 5 },
      ),
    ]);
    driverMs = performance.now() - t0;
  } catch (e) {
    if (!errors.length) errors.push(String(e).split("\n")[0]);
  }
  let inPageMs = NaN;
  let readMs = NaN;
  let polygons = 0;
  // The frame that paints the polygons can take long on a large file: the same time limit.
  if (!errors.length)
    try {
      await Promise.race([
        failure,
        page.waitForFunction(() => window.__figuresMs !== undefined, null, {
          timeout: TIMEOUT_MS,
        }),
      ]);
      [inPageMs, readMs, polygons] = await page.evaluate(() => [
        window.__figuresMs,
        window.__readAt - window.__dropAt,
        document.querySelectorAll("svg polygon").length,
      ]);
      await shot(page, `${name}-memory_viz`);
    } catch (e) {
      if (!errors.length) errors.push(String(e).split("\n")[0]);
    }
  const tabPeakRssMib = sampler.stop();
  await ctx.close();
  return {
    driver_ms: Math.round(driverMs),
    in_page_ms: Math.round(inPageMs),
    read_ms: Math.round(readMs),
    polygons,
    tab_peak_rss_mib: tabPeakRssMib,
    errors,
    refused,
  };
}

/** One snapscope run: the same figures measurement as scripts/bench_browser.mjs --views. */
async function snapscopeRun(origin, file, name) {
  const ctx = await launch();
  const refused = await offline(ctx, origin);
  const page = await ctx.newPage();
  await snapscopeReady(page, origin, settleMs);
  const sampler = tabRssSampler(ctx.profileDir);
  const { driverMs, markMs } = await snapscopeFigures(page, file, TIMEOUT_MS);
  const tabPeakRssMib = sampler.stop();
  const stats = await page.evaluate(() => window.snapscope.stats());
  await shot(page, `${name}-snapscope`);
  await ctx.close();
  return {
    driver_ms: Math.round(driverMs),
    in_page_ms: Math.round(markMs),
    tab_peak_rss_mib: tabPeakRssMib,
    wasm_memory_mib: stats?.wasm_memory_bytes
      ? Math.round(stats.wasm_memory_bytes / 2 ** 20)
      : null,
    events: stats?.events ?? null,
    refused,
  };
}

/** `snapscope overview F --json` wall time (the native read + replay), ms. */
function nativeOverviewMs(file) {
  if (!nativeBin) return null;
  const t0 = performance.now();
  const r = spawnSync(nativeBin, ["overview", file, "--json"], {
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0)
    throw new Error(`${nativeBin} overview ${file}: ${r.stderr}`);
  return Math.round(performance.now() - t0);
}

const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2
    ? s[(s.length - 1) / 2]
    : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ratio = (a, b) => +(a / b).toFixed(2);
const loadavg = () =>
  readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

mkdirSync(join(ROOT, "bench-out"), { recursive: true });
const snap = await serve(dist);
const d3 = snapscopeOnly ? null : await bundleD3(resolve(vizDir));
const viz = d3 ? await serveMemoryViz(resolve(vizDir), d3) : null;
const runs = [];
for (const file of files)
  for (let pair = 1; pair <= pairs; pair++) {
    const row = {
      file,
      bytes: statSync(file).size,
      pair,
      load_before: loadavg(),
    };
    const name = `${basename(file, ".pickle")}-${pair}`;
    if (viz) row.memory_viz = await memoryVizRun(viz.origin, file, name);
    row.snapscope = await snapscopeRun(snap.origin, file, name);
    row.native_overview_ms = nativeOverviewMs(file);
    row.load_after = loadavg();
    const ok =
      row.memory_viz &&
      !row.memory_viz.errors.length &&
      !row.memory_viz.refused.length &&
      !row.snapscope.refused.length;
    if (ok) {
      row.memory_viz_over_snapscope_driver = ratio(
        row.memory_viz.driver_ms,
        row.snapscope.driver_ms,
      );
      row.memory_viz_over_snapscope_in_page = ratio(
        row.memory_viz.in_page_ms,
        row.snapscope.in_page_ms,
      );
    }
    if (row.native_overview_ms)
      row.snapscope_over_native = ratio(
        row.snapscope.in_page_ms,
        row.native_overview_ms,
      );
    runs.push(row);
    console.log(JSON.stringify(row));
  }
snap.server.close();
viz?.server.close();
// The bundle is made afresh on each run: its scratch folder goes with the servers.
if (d3) rmSync(dirname(d3), { recursive: true, force: true });
writeFileSync(
  outFile,
  JSON.stringify({ date: new Date().toISOString(), runs }, null, 1),
);

console.log(
  "\n| file | pair | memory_viz timeline drawn, page (driver) | its tab RSS | snapscope figures, page (driver) | its tab RSS (wasm) | native overview | memory_viz ÷ snapscope, page (driver) | snapscope ÷ native | load average |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
// A figure with its unit, or a dash where there is none (a failed or skipped side).
const fig = (x, unit) => (Number.isFinite(x) ? `${x}${unit}` : "—");
for (const r of runs) {
  const v = r.memory_viz;
  const s = r.snapscope;
  const vCell = !v
    ? "—"
    : v.errors.length || v.refused.length
      ? `FAILED: ${[...v.errors, ...v.refused.map((u) => "refused " + u)].join("; ").slice(0, 120)}`
      : `${v.in_page_ms} ms (${v.driver_ms} ms)`;
  console.log(
    `| ${r.file.split("/").pop()} (${mib(r.bytes)}) | ${r.pair} | ${vCell} | ${fig(v?.tab_peak_rss_mib, " MiB")} | ${s.in_page_ms} ms (${s.driver_ms} ms) | ${s.tab_peak_rss_mib} MiB (${fig(s.wasm_memory_mib, "")}) | ${fig(r.native_overview_ms, " ms")} | ${fig(r.memory_viz_over_snapscope_in_page, "×")} (${fig(r.memory_viz_over_snapscope_driver, "×")}) | ${fig(r.snapscope_over_native, "×")} | ${r.load_before} → ${r.load_after} |`,
  );
}
for (const file of files) {
  const of = runs.filter((r) => r.file === file);
  const m = (f, unit) => fig(median(of.map(f)), unit);
  const vizPart = viz
    ? `memory_viz ${m((r) => r.memory_viz?.in_page_ms, " ms")} in the page (${m((r) => r.memory_viz?.driver_ms, " ms")} driver), `
    : "";
  const ratioPart = viz
    ? `; per-pair ratio memory_viz ÷ snapscope ${m((r) => r.memory_viz_over_snapscope_in_page, "×")} in the page (${m((r) => r.memory_viz_over_snapscope_driver, "×")} driver)`
    : "";
  console.log(
    `\n${file}: medians of ${of.length} pair(s): ${vizPart}snapscope ${m((r) => r.snapscope.in_page_ms, " ms")} (${m((r) => r.snapscope.driver_ms, " ms")})${ratioPart}; snapscope ÷ native overview ${m((r) => r.snapscope_over_native, "×")}`,
  );
}
const refused = runs.flatMap((r) => [
  ...(r.memory_viz?.refused ?? []),
  ...r.snapscope.refused,
]);
if (refused.length)
  console.log(
    `\nRequests off the local servers were aborted (no figure of those runs is claimed): ${[...new Set(refused)].join(", ")}`,
  );
