// What a person reads first (issue 14), on real corpus files: stacks named by user code in Peak,
// the event panel, the Memory tree and Compare (never C++ unwinding or allocator frames); the
// OOM view of a dump-only file answers with the dump; a link's #event=N reopens that event.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { serve, launch, openFiles, shot, CORPUS, ROOT } from "./harness.mjs";

const CPP = join(
  CORPUS,
  "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
);
const DUMP_ONLY = join(
  CORPUS,
  "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle",
);
const OOM = join(
  CORPUS,
  "cuda/Constructor-Sun__code_location/memory_snapshot.pickle",
);
// The CLI's peak answer for the C++ file's device 0, read once for the Peak tests.
let cppPeakAnswer;
const cppPeak = () =>
  (cppPeakAnswer ??= JSON.parse(
    execFileSync(
      join(ROOT, "target/release/snapscope"),
      ["analyze", CPP, "--mode", "peak", "--device", "0", "--json"],
      { encoding: "utf8" },
    ),
  ).devices[0].peak);

const SKIP = [CPP, DUMP_ONLY, OOM].every(existsSync)
  ? false
  : `the corpus files are missing under ${CORPUS}: these checks read real snapshots`;

/** C++ frames that must never name a stack. */
const NOT_USER = /unwind|CachingAllocator|\?\?:0|c10::|_PyEval/;
/** A Python frame as shown: `name (path.py:line)`. */
const PYTHON = /^\S.* \([^()]+\.py:\d+\)$/;

let server, origin, ctx, page, errors;
before(async () => {
  if (SKIP) return;
  ({ server, origin } = await serve());
  ctx = await launch();
  page = await ctx.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
});
after(async () => {
  await ctx?.close();
  server?.close();
});

/** Show a view and wait until it has rendered. */
async function view(name) {
  await page.click(`[data-view=${name}]`);
  await page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
  );
}

test(
  "a link with #event=N opens the file at that event, its first frame a Python frame",
  { skip: SKIP },
  async () => {
    const ov = JSON.parse(
      execFileSync(
        join(ROOT, "target/release/snapscope"),
        ["overview", CPP, "--json"],
        {
          encoding: "utf8",
        },
      ),
    );
    const peak = ov.devices[0].peaks.allocated.event;
    await page.goto(`${origin}/#view=timeline&device=0&event=${peak}`);
    assert.equal(await openFiles(page, [CPP]), "ready");
    await page.waitForSelector(".event-panel h3");
    assert.match(
      await page.textContent(".event-panel h3"),
      new RegExp(`^event ${peak.toLocaleString("en-US")}(?!\\d)`),
    );
    assert.match(
      await page.evaluate(() => location.hash),
      new RegExp(`event=${peak}(?!\\d)`),
    );
    // Python frames first; the rest behind "all N frames".
    const first = await page.$eval(".event-panel ol.stack.python li", (li) => ({
      cls: li.className,
      text: li.textContent,
    }));
    assert.match(first.cls, /^(user|library|generated)$/, first.text);
    assert.doesNotMatch(first.text, NOT_USER);
    assert.match(
      await page.textContent(".event-panel details.all-frames summary"),
      /all [\d,]+ frames/,
    );
    await shot(page, "14-event-panel");
  },
);

test(
  "Peak by stack: the first stack is named by a user frame",
  { skip: SKIP },
  async () => {
    await view("peak");
    const labels = await page.$$eval("table.groups .label-cell .label", (a) =>
      a.map((x) => x.textContent),
    );
    const named = labels.filter((l) => !l.startsWith("["));
    assert.ok(named.length, labels.join(" | "));
    assert.match(named[0], PYTHON);
    assert.doesNotMatch(named[0], NOT_USER);
    // Before-window memory is not called an allocation site.
    assert.doesNotMatch(
      await page.textContent("table.groups thead"),
      /allocation site/,
    );
  },
);

test(
  "Peak by site: one row a label, and the engine's sentence says how much the rows hold",
  { skip: SKIP },
  async () => {
    const cli = cppPeak();
    await view("peak");
    assert.equal(await page.inputValue("select.group-by"), "site");
    assert.equal(
      (await page.textContent(".peak-table .rows-cover")).trim(),
      cli.site_rows.text,
    );
    assert.match(
      cli.site_rows.text,
      /^These \d+ rows hold \d+\.\d% of the memory live /,
    );
    const rows = await page.$$eval("table.groups > tbody > tr", (trs) =>
      trs.map((tr) => ({
        bytes: Number(
          tr.children[1].querySelector(".bytes").title.replace(/[^0-9]/g, ""),
        ),
        label: tr.querySelector(".label-cell .label").textContent,
      })),
    );
    // The rows (with the rest row) sum to the live bytes; no two sites share a label.
    assert.equal(
      rows.reduce((s, r) => s + r.bytes, 0),
      cli.live_bytes,
    );
    const sites = rows.map((r) => r.label).filter((l) => !l.startsWith("["));
    assert.equal(new Set(sites).size, sites.length, sites.join(" | "));
    assert.equal(rows.length, cli.by_site.length);
    await shot(page, "28-peak-rows");
  },
);

test(
  "Peak by site: a merged row opens on every stack it holds, their bytes adding up to the row",
  { skip: SKIP },
  async () => {
    const cli = cppPeak();
    const at = cli.by_site.findIndex((g) => g.merged);
    assert.ok(at >= 0, "this file has a row of merged stacks at its peak");
    const row = cli.by_site[at];
    const n = Number(/^(\d+) stacks merged/.exec(row.detail)[1]);
    await view("peak");
    const tr = page.locator("table.groups > tbody > tr").nth(at);
    assert.equal(
      await tr.locator(".label-cell .label").textContent(),
      row.label,
    );
    assert.ok(!(await tr.locator(".merged").isVisible()));
    await tr.locator(".label-cell .label").click();
    const lines = await tr
      .locator("table.merged-stacks tbody tr")
      .evaluateAll((trs) =>
        trs.map((x) => ({
          bytes: Number(x.querySelector(".bytes").title.replace(/[^0-9]/g, "")),
          blocks: Number(x.children[1].textContent.replace(/[^0-9]/g, "")),
          text: x.children[2].textContent,
          more: x.classList.contains("more"),
        })),
      );
    const listed = lines.filter((l) => !l.more);
    const more = lines.find((l) => l.more);
    // Every stack of the row: the listed ones and the "… N more" line add up to the row.
    assert.equal(
      listed.length + Number(more ? /… (\d+) more/.exec(more.text)[1] : 0),
      n,
    );
    assert.equal(
      lines.reduce((s, l) => s + l.bytes, 0),
      row.bytes,
    );
    assert.equal(
      lines.reduce((s, l) => s + l.blocks, 0),
      row.blocks,
    );
    // Largest first, each with the caller that tells it apart, as the engine lists them.
    for (let i = 1; i < listed.length; i++)
      assert.ok(listed[i - 1].bytes >= listed[i].bytes);
    assert.deepEqual(
      listed.map((l) => l.text),
      row.merged.stacks.map((s) => s.detail ?? "no calling frame"),
    );
    // Below the list, the frames of the largest stack.
    assert.match(
      await tr.locator(".merged pre.stack-text").textContent(),
      /\.py:\d+/,
    );
    await shot(page, "28-peak-merged-row");
  },
);

test(
  "Memory tree: the root's first child is user code",
  { skip: SKIP },
  async () => {
    await view("tree");
    // The side list is filled once the tree and its category bar have both arrived.
    await page.waitForSelector(".tree-side tbody td.label a", {
      timeout: 60000,
    });
    const kids = await page.$$eval(".tree-side tbody td.label a", (a) =>
      a.map((x) => x.textContent),
    );
    const named = kids.filter((k) => !k.startsWith("["));
    assert.ok(named.length, kids.join(" | "));
    assert.match(named[0], PYTHON);
    assert.doesNotMatch(named[0], NOT_USER);
  },
);

test(
  "Compare: the first stack label is not an unwinding frame",
  { skip: SKIP },
  async () => {
    assert.equal(await openFiles(page, [OOM]), "ready");
    await page.selectOption("#file-select", "0");
    await view("compare");
    await page.waitForSelector(".stack-cell .label");
    const first = await page.textContent(".stack-cell .label");
    assert.doesNotMatch(first, /unwind/);
    assert.doesNotMatch(first, NOT_USER);
  },
);

test(
  "OOM view of a dump-only file: the dump's answer, not 'No OOM'",
  { skip: SKIP },
  async () => {
    assert.equal(await openFiles(page, [DUMP_ONLY]), "ready");
    await view("oom");
    const text = await page.textContent(".oom-dump");
    assert.match(text, /no trace events/);
    assert.match(text, /free in reserved segments/);
    assert.doesNotMatch(
      await page.textContent("main"),
      /No OOM on this device/,
    );
    // The figures, each "free" with its definition on hover.
    const free = await page.getAttribute(
      ".card[title*='pending frees excluded']",
      "title",
    );
    assert.match(free, /free in reserved segments, pending frees excluded/);
    await shot(page, "14-oom-dump");
    // No "after window start" anywhere on a device without events.
    for (const v of ["tree", "state", "peak"]) {
      await view(v);
      const bar = await page.textContent(".toolbar");
      assert.match(bar, /at the dump \(this snapshot has no trace events\)/, v);
      assert.equal(
        await page.$(".peak-button, .focus-switch"),
        null,
        `${v}: no Peak button without a peak`,
      );
    }
    assert.deepEqual(errors, []);
  },
);

test(
  "OOM view of the device that ran out: the engine's request, free room and the events before it",
  { skip: SKIP },
  async () => {
    const run = (...a) =>
      JSON.parse(
        execFileSync(join(ROOT, "target/release/snapscope"), a, {
          encoding: "utf8",
        }),
      );
    const dev = run("overview", OOM, "--json").devices.find(
      (d) => d.window.oom_events > 0,
    ).device;
    const o = run(
      "analyze",
      OOM,
      "--mode",
      "oom",
      "--device",
      String(dev),
      "--json",
    ).devices[0].oom.ooms[0];
    // The file is open (Compare above); another device's OOM view points to this one.
    const files = await page.$$eval("#file-select option", (x) =>
      x.map((o) => o.textContent),
    );
    await page.selectOption(
      "#file-select",
      String(
        files.findIndex((f) => f.startsWith("memory_snapshot.pickle (2.5")),
      ),
    );
    await page.selectOption("#device-select", dev === 0 ? "1" : "0");
    await view("oom");
    await page.click(".device-link");
    await page.waitForFunction(
      (d) =>
        document.querySelector("#device-select").value === String(d) &&
        document.documentElement.dataset.view === "done" &&
        document.querySelector(".view-oom h3"),
      dev,
    );
    assert.equal(
      await page.textContent(".view-oom h3"),
      `Out of memory at event ${o.event.toLocaleString("en-US")} — ${o.verdict.replace(/_/g, " ")}`,
    );
    assert.match(
      await page.textContent(".view-oom .health.warn"),
      new RegExp(o.explanation.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
    );
    // The cards' exact bytes (on hover) are the engine's.
    const exact = (n) => `${n.toLocaleString("en-US")} B`;
    const titles = await page.$$eval(
      ".view-oom .cards .card-value .bytes",
      (x) => x.map((s) => s.title),
    );
    assert.deepEqual(titles.slice(0, 3), [
      exact(o.requested),
      exact(o.device_free),
      exact(o.counters.allocated),
    ]);
    // The events just before, under their headings, the last one's counter the OOM's.
    assert.deepEqual(
      await page.$$eval("table.events-before th", (x) =>
        x.map((t) => t.textContent),
      ),
      ["event", "action", "bytes", "allocated after it"],
    );
    const rows = await page.$$eval("table.events-before tbody tr", (x) =>
      x.map((tr) => [...tr.children].map((td) => td.textContent)),
    );
    assert.equal(rows.length, o.events_before.length);
    assert.deepEqual(
      rows.map((r) => [Number(r[0].replace(/,/g, "")), r[1]]),
      o.events_before.map((e) => [e.index, e.action]),
    );
    assert.deepEqual(errors, []);
    await shot(page, "28-oom-device");
  },
);
