// Hostile but valid inputs on the page (issue 19): each is made at test time (python3's pickle,
// from fixtures/cuda_training.pickle; nothing is written to the repository). The page must reach
// `ready` or `error` within 30 s and render every view without a page error; ?src= failures end in
// `error`; a link's #view=constructor is no view; the CSV export neutralises formulas; the single
// file runs only its own scripts.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, launch, waitReady, shot, FIXTURES, DIST } from "./harness.mjs";

const VIEWS = [
  "overview",
  "timeline",
  "allocations",
  "peak",
  "tree",
  "state",
  "leaks",
  "oom",
  "whatif",
  "queries",
  "compare",
];

// Python: one file per hostile input, shared objects kept shared by the pickle memo (small files).
const GEN = `
import os, pickle, sys
good = pickle.load(open(sys.argv[1], "rb"))
out = sys.argv[2]
events = good["device_traces"][0]

def write(name, snap):
    with open(os.path.join(out, name), "wb") as f:
        pickle.dump(snap, f, protocol=4)

def with_frames(frames):
    evs = [dict(e) for e in events]
    for e in evs:
        if e["action"] == "alloc":
            e["frames"] = frames + list(e["frames"])
    return dict(good, device_traces=[evs])

# One 1M-character name in a user frame of every allocation (stored once).
write("long_name.pickle", with_frames([{"filename": "/work/train/model.py", "line": 1, "name": "f" * 1_000_000}]))
# A 100k-frame Python stack (one list shared by every allocation).
write("deep_stack.pickle", with_frames([{"filename": "/work/train/m%d.py" % i, "line": i, "name": "f%d" % i} for i in range(100_000)]))
# 10^6 annotations over the trace's time span.
t0, t1 = events[0]["time_us"], events[-1]["time_us"]
ann = [{"name": "step", "stage": "START" if i % 2 else "END", "device": 0, "time_us": t0 + i * (t1 - t0) // 1_000_000} for i in range(1_000_000)]
write("annotations.pickle", dict(good, external_annotations=ann))
# Times at the ends of int64 (and an annotation there).
evs = [dict(e) for e in events]
for i, e in enumerate(evs):
    e["time_us"] = -(2**63) if i < len(evs) // 2 else 2**63 - 1
write("extreme_time.pickle", dict(good, device_traces=[evs], external_annotations=[{"name": "x", "stage": "START", "device": 0, "time_us": 2**63 - 1}]))
# Issue 29.6: the recording's own settings say large_segment_size_mb:0 (the simulator divided by zero).
write("settings_zero.pickle", dict(good, allocator_settings={"PYTORCH_CUDA_ALLOC_CONF": "large_segment_size_mb:0"}))
`;

let server, origin, ctx, dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "snapscope-hostile-"));
  execFileSync("python3", [
    "-c",
    GEN,
    join(FIXTURES, "cuda_training.pickle"),
    dir,
  ]);
  ({ server, origin } = await serve());
  ctx = await launch();
});
after(async () => {
  await ctx?.close();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh page that records its uncaught errors. */
async function newPage(url = origin + "/") {
  const page = await ctx.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  await page.goto(url);
  return page;
}

/** Open `file`; the page must settle within 30 s. */
async function open(page, file) {
  await page.setInputFiles("#file-input", file);
  return waitReady(page, 30000);
}

/** The error box's text, or "" when hidden. */
const errorText = (page) =>
  page.evaluate(() => {
    const e = document.getElementById("error");
    return e.hidden ? "" : e.textContent;
  });

/** Show every view through its tab: each renders within 30 s, with no error shown or thrown. */
async function everyView(page, label) {
  for (const v of VIEWS) {
    const t0 = Date.now();
    await page.click(`[data-view=${v}]`);
    await page.waitForFunction(
      () =>
        document.documentElement.dataset.view === "done" ||
        document.documentElement.dataset.snapscope === "error",
      null,
      { timeout: 30000 },
    );
    assert.equal(await errorText(page), "", `${label}: ${v}`);
    assert.deepEqual(page.errors, [], `${label}: ${v}`);
    assert.ok(
      Date.now() - t0 < 30000,
      `${label}: ${v} took ${Date.now() - t0} ms`,
    );
  }
}

/** Select event `i` in the timeline; its panel must show within `ms`. */
async function eventPanel(page, i, ms) {
  const t0 = Date.now();
  await page.evaluate(
    (i) => (location.hash = `#view=timeline&device=0&event=${i}`),
    i,
  );
  await page.waitForFunction(
    (i) =>
      document
        .querySelector(".event-panel h3")
        ?.textContent.startsWith(`event ${i}`),
    i,
    { timeout: ms },
  );
  assert.deepEqual(page.errors, []);
  return Date.now() - t0;
}

test("a 1M-character frame name: the memory tree draws, zooms and hovers at once", async () => {
  const page = await newPage();
  assert.equal(await open(page, join(dir, "long_name.pickle")), "ready");
  await everyView(page, "long name");
  await page.click("[data-view=tree]");
  await page.waitForSelector("canvas.flame");
  // Zoom into the second row (the long frame) and hover it: crumbs, side panel and card.
  const t0 = Date.now();
  await page.click("canvas.flame", { position: { x: 50, y: 30 } });
  await page.mouse.move(60, 30);
  await page.hover("canvas.flame", { position: { x: 60, y: 30 } });
  assert.ok(Date.now() - t0 < 5000, `${Date.now() - t0} ms`);
  const longest = await page.evaluate(() =>
    Math.max(
      ...[...document.querySelectorAll("main *")].map(
        (e) => e.textContent.length,
      ),
    ),
  );
  assert.ok(longest < 20000, `${longest} characters of text in the view`);
  assert.ok((await eventPanel(page, 3, 10000)) < 10000);
  await shot(page, "20-long-name");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a 100k-frame stack: every view renders, the tree shows its first rows, the event panel is quick", async () => {
  const page = await newPage();
  assert.equal(await open(page, join(dir, "deep_stack.pickle")), "ready");
  await everyView(page, "deep stack");
  await page.click("[data-view=tree]");
  await page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
  );
  assert.match(
    await page.textContent(".crumbs"),
    /levels: click a frame to zoom in/,
  );
  // Deep in: the crumbs stay short.
  await page.click("canvas.flame", { position: { x: 50, y: 3000 } });
  assert.ok((await page.$$(".crumbs a")).length <= 11);
  await shot(page, "21-deep-stack");
  const ms = await eventPanel(page, 3, 10000);
  assert.ok(ms < 5000, `event panel took ${ms} ms`);
  assert.match(
    await page.textContent(".event-panel"),
    /more frames not listed/,
  );
  assert.ok((await page.$$(".event-panel li")).length <= 400);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("10^6 annotations: the timeline summarises them and every view renders", async () => {
  const page = await newPage();
  assert.equal(await open(page, join(dir, "annotations.pickle")), "ready");
  await everyView(page, "annotations");
  await page.click("[data-view=timeline]");
  await page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
  );
  assert.match(await page.textContent(".legend"), /annotation \(1,000,000\)/);
  await shot(page, "22-annotations");
  await page.close();
});

test("time_us of ±2^63: the event panel and the time axis show no RangeError", async () => {
  const page = await newPage();
  assert.equal(await open(page, join(dir, "extreme_time.pickle")), "ready");
  await everyView(page, "extreme time");
  for (const i of [3, 20]) await eventPanel(page, i, 10000);
  const axis = page.locator("button", { hasText: "x: events" });
  if (await axis.isVisible()) await axis.click();
  await page.waitForTimeout(200);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("#view=constructor, __proto__ or toString in a link is no view: the next file opens", async () => {
  for (const name of [
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
  ]) {
    const page = await newPage(`${origin}/#view=${name}&event=abc`);
    await page.evaluate((n) => (location.hash = `#view=${n}&device=NaN`), name);
    assert.equal(
      await open(page, join(FIXTURES, "cuda_training.pickle")),
      "ready",
      name,
    );
    await page.waitForFunction(
      () => document.documentElement.dataset.view === "done",
    );
    assert.equal(await errorText(page), "", name);
    // The embedding API takes any string too, and the engine still answers after.
    await page.evaluate((n) => window.snapscope.select(0, n), name);
    const rows = await page.evaluate(() =>
      window.snapscope.sql("SELECT COUNT(*) FROM traces"),
    );
    assert.equal(rows.rows[0][0], 24);
    assert.deepEqual(page.errors, [], name);
    await page.close();
  }
});

test("?src= failures end in error with a message, never at loading", async () => {
  const cases = [
    ["/?src=/redirect-away", /redirect|could not be fetched|origin/],
    [
      `/?src=${encodeURIComponent("blob:" + origin + "/0a1b2c3d")}`,
      /blob: URLs/,
    ],
    ["/?src=/fixtures/%E0%A4%A.pickle", /HTTP 40\d|could not be fetched/],
    ["/?src=%25E0%25A4%25A", /HTTP 40\d|could not be fetched/],
    ["/?src=/fixtures/missing.pickle", /HTTP 404/],
    ["/?src=http://[::1", /not a URL/],
  ];
  for (const [path, message] of cases) {
    const page = await newPage(origin + path);
    assert.equal(await waitReady(page, 30000), "error", path);
    assert.match(await errorText(page), message, path);
    assert.deepEqual(page.errors, [], path);
    await page.close();
  }
});

test("the single file: ?src= from file:// ends in error; its CSP runs only its own scripts", async () => {
  const html = readFileSync(join(DIST, "snapscope.html"), "utf8");
  const csp = html.match(/Content-Security-Policy" content="([^"]+)"/)[1];
  const scripts = csp.match(/script-src ([^;]+)/)[1];
  assert.doesNotMatch(scripts, /unsafe-inline/);
  assert.equal(scripts.match(/'sha256-/g)?.length, 2);
  const page = await newPage(
    "file://" + join(DIST, "snapscope.html") + "?src=snap.pickle",
  );
  assert.equal(await waitReady(page, 30000), "error");
  assert.match(await errorText(page), /file: URLs cannot be opened/);
  // An injected inline script does not run (the CSP names the page's own by hash).
  const ran = await page.evaluate(async () => {
    const s = document.createElement("script");
    s.textContent = "window.__injected = 1";
    document.body.append(s);
    await new Promise((r) => setTimeout(r, 100));
    return window.__injected === 1;
  });
  assert.equal(ran, false);
  // And the page still opens a file.
  assert.equal(
    await open(page, join(FIXTURES, "cuda_training.pickle")),
    "ready",
  );
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("the CSV export writes formulas as text", async () => {
  const page = await newPage();
  assert.equal(
    await open(page, join(FIXTURES, "cuda_training.pickle")),
    "ready",
  );
  await page.click("[data-view=queries]");
  await page.waitForSelector("textarea.sql");
  await page.fill(
    "textarea.sql",
    `SELECT '=HYPERLINK("http://x")' AS "=a", '+1' AS b, '@x' AS c, -5 AS d, 'plain' AS e`,
  );
  await page.click("text=Run SQL");
  await page.waitForSelector(".result-row");
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.click("text=Export CSV"),
  ]);
  const csv = readFileSync(await download.path(), "utf8");
  assert.equal(
    csv,
    `'=a,b,c,d,e\n"'=HYPERLINK(""http://x"")",'+1,'@x,-5,plain`,
  );
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("issue 29: memo gaps, gzip inside gzip and a recorded large_segment_size_mb:0 end in a clear answer; the next file opens", async () => {
  const page = await newPage();
  for (const [file, code] of [
    [join(FIXTURES, "bad", "memo_gaps.pickle"), "SNAPSHOT_INVALID"],
    [join(FIXTURES, "bad", "gzip_in_gzip.pickle.gz"), "GZIP_NESTED"],
  ]) {
    assert.equal(await open(page, file), "error", file);
    const text = await errorText(page);
    assert.match(text, new RegExp(code), file);
    assert.doesNotMatch(text, /ENGINE_FAILED|unreachable/, file);
  }
  // The recording's invalid setting is named in a warning and the default used: every view renders.
  assert.equal(await open(page, join(dir, "settings_zero.pickle")), "ready");
  await everyView(page, "settings_zero");
  const warnings = await page.evaluate(async () =>
    JSON.stringify((await window.snapscope.overview()).warnings),
  );
  assert.match(warnings, /ALLOC_CONF_INVALID.*large_segment_size_mb/);
  // And the page stays usable: a good file opens and renders.
  assert.equal(
    await open(page, join(FIXTURES, "cuda_training.pickle")),
    "ready",
  );
  await everyView(page, "after hostile files");
  assert.deepEqual(page.errors, []);
  await page.close();
});

test("a file over the 4 GiB the page reads is refused at once, naming the CLI; the next file opens", async () => {
  // Sparse: 4 GiB and one byte on the file system's books, no disk used. Refused from its size,
  // before any of it is read (the page once read 4 GiB, ten seconds, to refuse it).
  const big = join(dir, "too_large.pickle");
  execFileSync("truncate", ["-s", String(4 * 2 ** 30 + 1), big]);
  const page = await newPage();
  const t0 = Date.now();
  assert.equal(await open(page, big), "error");
  const ms = Date.now() - t0;
  const text = await errorText(page);
  assert.match(text, /INPUT_TOO_LARGE/);
  assert.match(
    text,
    /4\.00 GiB \(4,294,967,297 B\), more than the 4\.00 GiB \(4,294,967,296 B\)/,
  );
  assert.match(text, /native snapscope CLI/);
  // Reading even a tenth of it takes a second and more; a refusal from the size takes far less.
  assert.ok(ms < 5000, `refused after ${ms} ms`);
  assert.equal(
    await open(page, join(FIXTURES, "cuda_training.pickle")),
    "ready",
  );
  assert.deepEqual(page.errors, []);
  await page.close();
  rmSync(big);
});
