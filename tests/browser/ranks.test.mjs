// The Ranks view: a distributed run, one snapshot per rank. A generated 64-rank run with known
// answers (scripts/gen_ranks.py: rank 7 gathers 300 MiB more at fsdp/_flat_param.py:391) picked
// at once through the file input; fixtures by URL through `loadMany`; the real corpus as a
// folder. Every figure is checked against the generator's answers or the native CLI
// (`snapscope ranks --json`, `snapscope overview --json`), the engines live at once against the
// limit, and a bar, a row and "Compare with the median rank" against what they open.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import {
  serve,
  launch,
  openRun,
  shot,
  viewShown,
  CORPUS,
  ROOT,
} from "./harness.mjs";

const CLI = join(ROOT, "target/release/snapscope");
const cli = (...args) =>
  JSON.parse(
    execFileSync(CLI, args, {
      encoding: "utf8",
      maxBuffer: 1 << 28,
      cwd: ROOT,
    }),
  );
/** `snapscope ranks --json` without its envelope: what `ranks()` answers. */
const cliRanks = (files) => {
  const { ok, schema_version, ...body } = cli("ranks", ...files, "--json");
  assert.equal(ok, true);
  assert.equal(typeof schema_version, "number");
  return body;
};
/** A report with every file name passed through `rename` (the CLI names files by their path). */
const renamed = (r, rename) => {
  const x = structuredClone(r);
  for (const f of x.files) f.file = rename(f.file);
  for (const e of x.errors) e.file = rename(e.file);
  const s = x.summary;
  for (const k of ["max", "median", "min"])
    for (const m of ["allocated", "reserved"])
      if (s[k][m]) s[k][m].file = rename(s[k][m].file);
  for (const o of s.outliers) o.file = rename(o.file);
  if (s.worst) {
    s.worst.file = rename(s.worst.file);
    s.worst.median_file = rename(s.worst.median_file);
  }
  return x;
};

let server, origin, ctx, tmp, runDir, expected, runFiles;
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "snapscope-ranks-"));
  runDir = join(tmp, "run64");
  execFileSync("python3", [join(ROOT, "scripts/gen_ranks.py"), runDir]);
  expected = JSON.parse(readFileSync(runDir + ".expected.json", "utf8"));
  // In rank order (the names carry the rank; the order given does not matter for them).
  runFiles = readdirSync(runDir)
    .sort((a, b) => Number(/\d+/.exec(a)) - Number(/\d+/.exec(b)))
    .map((f) => join(runDir, f));
  ({ server, origin } = await serve());
  ctx = await launch();
});
after(async () => {
  await ctx?.close();
  server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A fresh page with a warm spare engine, recording the most engines (workers) live at once. */
async function freshPage() {
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/");
  await page.waitForFunction(
    () => document.documentElement.dataset.engine === "ready",
  );
  await page.evaluate(() => {
    window.__enginesMax = 0;
    const html = document.documentElement;
    new MutationObserver(() => {
      window.__enginesMax = Math.max(
        window.__enginesMax,
        Number(html.dataset.engines ?? 0),
      );
    }).observe(html, { attributes: true, attributeFilter: ["data-engines"] });
  });
  return { page, errors };
}

/**
 * The live engine count once it reaches `want` (the spare is started when the page is idle again
 * after a load, so the count settles a moment later), or whatever it is after 10 s.
 */
async function enginesSettled(page, want) {
  await page
    .waitForFunction(
      (n) => document.documentElement.dataset.engines === n,
      want,
      {
        timeout: 10_000,
      },
    )
    .catch(() => {});
  return page.evaluate(() => document.documentElement.dataset.engines);
}

const limit = (page) =>
  page.evaluate(() =>
    Math.min(4, Math.max(1, Math.floor(navigator.hardwareConcurrency || 1))),
  );

/** The bar of `rank` (its centre, in the page's coordinates). */
async function barOf(page, rank) {
  const c = page.locator("canvas.ranks-chart");
  await c.scrollIntoViewIfNeeded();
  const box = await c.boundingBox();
  const d = await c.evaluate((x) => ({ ...x.dataset }));
  const i = d.ranks.split(",").indexOf(String(rank));
  assert.ok(i >= 0, `rank ${rank} has a bar`);
  const x = Number(d.left) + (i + 0.5) * Number(d.group);
  return { x: box.x + x, y: box.y + box.height - 60 };
}

let run; // the page with the 64 ranks open, for the tests after the first

test("64 ranks picked at once: the worst rank, its excess, the site behind it, the outlier, every peak", async () => {
  run = await freshPage();
  const { page, errors } = run;
  assert.equal(
    await openRun(page, runFiles),
    "ready",
    await page.textContent("#error"),
  );
  await viewShown(page, "ranks");
  const r = await page.evaluate(() => window.snapscope.ranks());
  const w = r.summary.worst;
  assert.equal(w.rank, expected.worst_rank);
  assert.equal(w.median_rank, expected.median_rank);
  assert.equal(w.excess_bytes, expected.excess_bytes);
  assert.ok(w.top_sites[0].label.includes(expected.site), w.top_sites[0].label);
  assert.equal(w.top_sites[0].delta, expected.site_bytes);
  assert.deepEqual(
    r.summary.outliers.map((o) => o.rank),
    expected.outliers,
  );
  assert.equal(r.files.length, expected.ranks);
  assert.deepEqual(r.errors, []);
  for (const f of r.files)
    assert.equal(
      f.devices[0].peaks.allocated.bytes,
      expected.peak_allocated[String(f.rank)],
      f.file,
    );
  // The same JSON as `snapscope ranks FILES --json` (files named by their path there).
  assert.deepEqual(r, renamed(cliRanks(runFiles), basename));

  // What the page shows: the sentence, the site, the outlier, every rank's peak.
  const box = page.locator(".ranks-worst");
  assert.equal(
    await box.getAttribute("data-rank"),
    String(expected.worst_rank),
  );
  assert.equal(
    await box.getAttribute("data-excess"),
    String(expected.excess_bytes),
  );
  const sentence = await box.textContent();
  assert.match(sentence, /^Rank 7 holds 300\.00 MiB more/);
  assert.ok(sentence.includes(expected.site), sentence);
  assert.ok(
    (await page.textContent("table.ranks-sites tbody tr")).includes(
      expected.site,
    ),
  );
  assert.match(
    await page.textContent("table.ranks-sites tbody tr"),
    /\+300\.00 MiB/,
  );
  assert.equal(
    await page.getAttribute("canvas.ranks-chart", "data-outliers"),
    expected.outliers.join(","),
  );
  const rows = await page.$$eval("tr.rank-row", (trs) =>
    trs.map((t) => ({
      rank: t.dataset.rank,
      allocated: Number(t.dataset.allocated),
      outlier: t.classList.contains("outlier"),
    })),
  );
  assert.equal(rows.length, expected.ranks);
  assert.deepEqual(
    rows.map((x) => x.rank),
    Object.keys(expected.peak_allocated).sort((a, b) => a - b),
  );
  for (const x of rows)
    assert.equal(
      x.allocated,
      expected.peak_allocated[x.rank],
      `rank ${x.rank}`,
    );
  assert.deepEqual(
    rows.filter((x) => x.outlier).map((x) => Number(x.rank)),
    expected.outliers,
  );
  assert.match(
    await page.textContent("table.ranks-figures"),
    /406\.00 MiB rank 7.*106\.00 MiB rank 1.*104\.00 MiB rank 0.*3\.83× the median/s,
  );
  assert.match(await page.textContent(".outlier-rule"), /modified z-score/);

  // Engines: at most one per core (≤ 4) at once, each closed after its file; the spare remains.
  const most = await page.evaluate(() => window.__enginesMax);
  assert.ok(
    most >= 1 && most <= (await limit(page)),
    `engines at once: ${most}`,
  );
  assert.equal(await enginesSettled(page, "1"), "1");
  assert.deepEqual(errors, []);
  await shot(page, "ranks-64");
});

test("hovering rank 7's bar reads its figures; clicking it opens rank7.pickle", async () => {
  const { page, errors } = run;
  const at = await barOf(page, 7);
  await page.mouse.move(at.x, at.y);
  const tip = page.locator(".view-ranks .tip");
  await tip.waitFor();
  const text = await tip.textContent();
  assert.match(text, /^rank 7/);
  assert.match(text, /peak allocated 406\.00 MiB at event 20/);
  assert.match(text, /outlier: \+300\.00 MiB above the median/);
  assert.match(
    await page.textContent(".ranks-readout"),
    /rank 7 · rank7\.pickle/,
  );
  await page.mouse.click(at.x, at.y);
  await viewShown(page, "overview");
  const sel = page.locator("#file-select");
  assert.match(
    await sel.evaluate((s) => s.selectedOptions[0].textContent),
    /^rank7\.pickle /,
  );
  const ov = await page.evaluate(() => window.snapscope.overview());
  assert.equal(
    ov.devices[0].peaks.allocated.bytes,
    expected.peak_allocated[String(expected.worst_rank)],
  );
  // The run stays a tab away; a row opens its rank too.
  await page.click("[data-view=ranks]");
  await viewShown(page, "ranks");
  await page.click('tr.rank-row[data-rank="3"] td.file');
  await viewShown(page, "overview");
  assert.match(
    await sel.evaluate((s) => s.selectedOptions[0].textContent),
    /^rank3\.pickle /,
  );
  // Two ranks open, each with its engine (plus the spare): the other 62 stay closed.
  assert.equal(await page.locator("#file-select option").count(), 2);
  assert.equal(await enginesSettled(page, "3"), "3");
  assert.deepEqual(errors, []);
});

test("Compare with the median rank: the median rank against rank 7 in Compare", async () => {
  const { page, errors } = run;
  await page.click("[data-view=ranks]");
  await viewShown(page, "ranks");
  await page.click("button.compare-median");
  await viewShown(page, "compare");
  const bar = await page.textContent(".view-compare .toolbar");
  assert.match(
    bar,
    new RegExp(`^rank${expected.median_rank}\\.pickle compared with`),
  );
  assert.equal(
    await page.$eval(
      ".view-compare .toolbar select",
      (s) => s.selectedOptions[0].textContent,
    ),
    `rank${expected.worst_rank}.pickle`,
  );
  // The figures: rank 7 holds 300 MiB more at its allocated peak.
  const peakRow = page
    .locator(".view-compare tr", { hasText: /peak allocated/ })
    .first();
  assert.match(await peakRow.textContent(), /\+300\.00 MiB/);
  // rank 7 was open already: only the median rank was read again.
  assert.equal(await page.locator("#file-select option").count(), 3);
  assert.deepEqual(errors, []);
  await shot(page, "ranks-compare");
  await page.close();
});

test("loadMany(URLs): the same report as the CLI, failed files listed with their message", async () => {
  const { page, errors } = await freshPage();
  const good = [
    "fixtures/cuda_training.pickle",
    "fixtures/multi_device_oom.pickle",
    "fixtures/npu_expandable.pkl",
    "fixtures/pinned_host.pickle",
  ];
  const bad = [
    "fixtures/bad/truncated.pickle",
    "fixtures/bad/os_system.pickle",
  ];
  const urls = [...good, ...bad].map((f) => "/" + f);
  // Given in any order: the page orders them as the CLI does (by rank in the name, then name).
  const r = await page.evaluate(
    (u) =>
      window.snapscope.loadMany(["/fixtures/no_such.pickle", ...u.reverse()]),
    urls,
  );
  await viewShown(page, "ranks");
  // The CLI reads the same files (named without the leading slash); the missing one is the page's.
  const want = renamed(cliRanks([...good, ...bad]), (f) => "/" + f);
  assert.deepEqual(await page.evaluate(() => window.snapscope.ranks()), r);
  const missing = r.errors.find((e) => e.file === "/fixtures/no_such.pickle");
  assert.equal(missing?.code, "FETCH_FAILED");
  assert.deepEqual(
    { ...r, errors: r.errors.filter((e) => e !== missing) },
    want,
  );
  const shown = await page.$$eval("table.ranks-errors tbody tr", (trs) =>
    trs.map((t) => t.textContent),
  );
  assert.equal(shown.length, 3);
  assert.ok(
    shown.some((t) =>
      /truncated\.pickle.*PICKLE_INVALID.*truncated file/.test(t),
    ),
    shown.join("\n"),
  );
  assert.ok(
    shown.some((t) => /no_such\.pickle.*FETCH_FAILED.*HTTP 404/.test(t)),
    shown.join("\n"),
  );
  // A URL rank opens by fetching it again.
  await page.click('tr.rank-row[data-file="1"] td.file');
  await viewShown(page, "overview");
  assert.deepEqual(
    await page.evaluate(() => window.snapscope.overview()),
    cli("overview", "fixtures/multi_device_oom.pickle", "--json"),
  );
  assert.deepEqual(errors, []);
  await page.close();
});

test("Cancel stops a run: its engines end, the page is empty again", async () => {
  const { page, errors } = await freshPage();
  await page.setInputFiles("#file-input", runFiles);
  await page.waitForFunction(() =>
    /Summarized [1-9]/.test(
      document.querySelector("#progress .stage")?.textContent ?? "",
    ),
  );
  await page.click("#cancel");
  await page.waitForFunction(
    () => document.documentElement.dataset.snapscope === "empty",
  );
  assert.match(await page.textContent("#error"), /Loading cancelled/);
  assert.equal(await page.locator("#progress").isHidden(), true);
  assert.equal(await page.evaluate(() => window.snapscope.ranks()), null);
  await page.waitForFunction(
    () => Number(document.documentElement.dataset.engines) <= 1,
  );
  assert.deepEqual(errors, []);
  await page.close();
});

test("several files dropped at once are a run too", async () => {
  const { page, errors } = await freshPage();
  const names = ["rank0.pickle", "rank7.pickle", "rank1.pickle"];
  const bytes = names.map((n) => [n, [...readFileSync(join(runDir, n))]]);
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const [n, b] of files) dt.items.add(new File([new Uint8Array(b)], n));
    document.dispatchEvent(
      new DragEvent("drop", {
        dataTransfer: dt,
        bubbles: true,
        cancelable: true,
      }),
    );
  }, bytes);
  await viewShown(page, "ranks");
  const r = await page.evaluate(() => window.snapscope.ranks());
  assert.deepEqual(
    r.files.map((f) => f.file),
    ["rank0.pickle", "rank1.pickle", "rank7.pickle"],
  );
  assert.equal(r.summary.worst.rank, 7);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a folder's tricky names: the page orders the run as the CLI does (the engine's order)", async () => {
  // Same-named files in two folders, the rank in a folder's name, two files of rank 3.
  const folder = join(tmp, "order");
  const names = [
    "b/memory_snapshot.pickle",
    "zeta.pickle",
    "run/rank10/memory_snapshot.pickle",
    "a/memory_snapshot.pickle",
    "rank3/ranking.pickle",
    "run/rank3/memory_snapshot.pickle",
    "rank2.pickle",
  ];
  for (const n of names) {
    mkdirSync(dirname(join(folder, n)), { recursive: true });
    copyFileSync(join(runDir, "rank0.pickle"), join(folder, n));
  }
  const { page, errors } = await freshPage();
  assert.equal(
    await openRun(page, folder, { folder: true }),
    "ready",
    await page.textContent("#error"),
  );
  const r = await page.evaluate(() => window.snapscope.ranks());
  const cliOrder = cliRanks([folder]).files.map((f) => relative(tmp, f.file));
  assert.deepEqual(
    r.files.map((f) => f.file),
    cliOrder,
  );
  assert.deepEqual(
    cliOrder.map((f) => relative("order", f)),
    [
      "rank2.pickle",
      "run/rank3/memory_snapshot.pickle",
      "rank3/ranking.pickle",
      "run/rank10/memory_snapshot.pickle",
      "a/memory_snapshot.pickle",
      "b/memory_snapshot.pickle",
      "zeta.pickle",
    ],
  );
  assert.deepEqual(errors, []);
  await page.close();
});

test("the real corpus as a folder: every file's peaks equal `snapscope overview --json`", async () => {
  // cuda/ and npu/ of the corpus, with their licences and notes (skipped as not snapshots).
  const folder = join(tmp, "corpus");
  for (const d of ["cuda", "npu"])
    cpSync(join(CORPUS, d), join(folder, d), { recursive: true });
  const paths = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }))
      if (e.isDirectory()) walk(join(d, e.name));
      else if (/\.(pickle|pkl)$/.test(e.name)) paths.push(join(d, e.name));
  };
  walk(folder);
  paths.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  assert.ok(paths.length >= 30, `${paths.length} snapshots`);
  const { page, errors } = await freshPage();
  assert.equal(
    await openRun(page, folder, { folder: true }),
    "ready",
    await page.textContent("#error"),
  );
  const r = await page.evaluate(() => window.snapscope.ranks());
  // Every snapshot, named by its path in the folder (in the CLI's order, checked below); none failed.
  const rel = (p) => relative(tmp, p);
  assert.deepEqual(r.files.map((f) => f.file).sort(), paths.map(rel).sort());
  assert.deepEqual(r.errors, []);
  for (const f of r.files) {
    const ov = cli("overview", join(tmp, f.file), "--json");
    const want = ov.devices
      .filter((d) => !d.pinned_host)
      .map((d) => ({
        device: d.device,
        allocated: d.peaks.allocated,
        reserved: d.peaks.reserved,
      }));
    const got = f.devices.map((d) => ({
      device: d.device,
      allocated: d.peaks.allocated,
      reserved: d.peaks.reserved,
    }));
    assert.deepEqual(got, want, f.file);
  }
  // And the whole report is the CLI's for the same files (given in path order, which orders the
  // files of the same name).
  assert.deepEqual(r, renamed(cliRanks(paths), rel));
  // Every device has its row with the right peaks; a file without devices has one row too.
  const rows = await page.$$eval("tr.rank-row", (trs) =>
    trs.map((t) => ({
      file: Number(t.dataset.file),
      device: t.dataset.device === "" ? null : Number(t.dataset.device),
      allocated: Number(t.dataset.allocated),
      reserved: Number(t.dataset.reserved),
      text: t.textContent,
    })),
  );
  assert.equal(
    rows.length,
    r.files.reduce((n, f) => n + Math.max(1, f.devices.length), 0),
  );
  for (const row of rows) {
    const f = r.files[row.file];
    if (row.device === null) {
      assert.equal(f.devices.length, 0, f.file);
      assert.match(row.text, /no devices/);
      continue;
    }
    const d = f.devices.find((x) => x.device === row.device);
    assert.equal(row.allocated, d.peaks.allocated.bytes, f.file);
    assert.equal(row.reserved, d.peaks.reserved.bytes, f.file);
  }
  const most = await page.evaluate(() => window.__enginesMax);
  assert.ok(most <= (await limit(page)), `engines at once: ${most}`);
  assert.deepEqual(errors, []);
  await shot(page, "ranks-corpus");
  await page.close();
});
