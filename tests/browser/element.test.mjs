// The npm package and its web component: `npm pack --dry-run` lists exactly the package's files;
// the packed tarball, unpacked beside a plain HTML page with a strict Content-Security-Policy (the
// one the package's README documents), runs two <snapscope-view> elements (one from `src`, one
// from bytes given to its `data` property) and one whose `src` is missing, in real Chromium.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, launch, shot, ROOT, FIXTURES } from "./harness.mjs";

const PACKAGE = join(ROOT, "www/package");
const CLI = join(ROOT, "target/release/snapscope");
const cli = (...args) =>
  JSON.parse(execFileSync(CLI, args, { encoding: "utf8", maxBuffer: 1 << 28 }));
const crateVersion = readFileSync(join(ROOT, "crate/Cargo.toml"), "utf8").match(
  /^version = "(.*)"/m,
)[1];

// The policy the package README asks of a host page, and nothing more: no inline scripts or
// styles, the worker from blob:, the engine compiled with 'wasm-unsafe-eval'.
const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src blob:; connect-src 'self'; style-src 'self'; img-src 'self'";

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>docs portal</title>
<script src="embed.js"></script>
<script type="module" src="package/snapscope-view.js"></script>
</head><body>
<h1>Training run: memory</h1>
<snapscope-view id="a" src="/fixtures/cuda_training.pickle" view="peak" height="520"></snapscope-view>
<p>The OOM of the multi-device run:</p>
<snapscope-view id="b" view="oom" device="1" height="480"></snapscope-view>
<snapscope-view id="c" src="/fixtures/no-such-file.pickle"></snapscope-view>
</body></html>`;

// A classic script (CSP: from 'self'): counts policy violations, gives #b its bytes.
const EMBED_JS = `window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
window.addEventListener("DOMContentLoaded", async () => {
  const bytes = await (await fetch("/fixtures/multi_device_oom.pickle")).arrayBuffer();
  document.getElementById("b").data = bytes;
});`;

let server, origin, context, page, errors, packageDir;
before(async () => {
  packageDir = unpackedPackage();
  ({ server, origin } = await serve(packageDir));
  context = await launch();
  page = await context.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/embed.html");
});
after(async () => {
  await context?.close();
  server?.close();
  if (packageDir) rmSync(packageDir, { recursive: true, force: true });
});

/** `npm pack` of www/package, unpacked into a fresh folder with the host page beside it. */
function unpackedPackage() {
  const dir = mkdtempSync(join(tmpdir(), "snapscope-npm-"));
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: PACKAGE,
      encoding: "utf8",
    }),
  );
  execFileSync("tar", ["xzf", join(dir, packed.filename), "-C", dir]);
  writeFileSync(join(dir, "embed.html"), HOST_PAGE);
  writeFileSync(join(dir, "embed.js"), EMBED_JS);
  return dir;
}

const state = (id) =>
  page.evaluate((id) => document.getElementById(id).dataset.state, id);
const settled = (id) =>
  page.waitForFunction(
    (id) =>
      ["ready", "error"].includes(document.getElementById(id).dataset.state),
    id,
    { timeout: 60_000 },
  );

test("npm pack --dry-run: the module, its types, the worker, the wasm, the README, at the crate's version", () => {
  const [dry] = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json"], {
      cwd: PACKAGE,
      encoding: "utf8",
    }),
  );
  assert.equal(dry.name, "snapscope");
  assert.equal(dry.version, crateVersion);
  assert.deepEqual(dry.files.map((f) => f.path).sort(), [
    "README.md",
    "answers.d.ts",
    "package.json",
    "snapscope-view.d.ts",
    "snapscope-view.js",
    "snapscope_bg.wasm",
    "worker.js",
  ]);
  const pkg = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  assert.equal(pkg.exports["."].default, "./snapscope-view.js");
  assert.equal(pkg.exports["."].types, "./snapscope-view.d.ts");
});

test("two elements from the packed files: each its own snapshot, view and device, the CLI's peaks", async () => {
  await settled("a");
  await settled("b");
  assert.equal(await state("a"), "ready");
  assert.equal(await state("b"), "ready");
  for (const [id, fixture] of [
    ["a", "cuda_training.pickle"],
    ["b", "multi_device_oom.pickle"],
  ]) {
    const ov = await page.evaluate(
      (id) => document.getElementById(id).overview(),
      id,
    );
    const want = cli("overview", join(FIXTURES, fixture), "--json");
    assert.deepEqual(
      ov.devices.map((d) => [d.device, d.peaks.allocated, d.peaks.reserved]),
      want.devices.map((d) => [d.device, d.peaks.allocated, d.peaks.reserved]),
      `${id}: ${fixture}`,
    );
  }
  // Each renders the view its attributes ask for, inside its shadow root.
  await page.waitForFunction(
    () =>
      ["a", "b"].every(
        (id) => document.getElementById(id).dataset.view === "done",
      ),
    null,
    { timeout: 60_000 },
  );
  const shown = await page.evaluate(() =>
    ["a", "b"].map((id) => {
      const root = document.getElementById(id).shadowRoot;
      return {
        view: root.querySelector("main > .view").className,
        tab: root.querySelector(".tabs a.active")?.dataset.view,
        device: root.querySelector(".status select")?.value ?? null,
        text: root.querySelector("main").textContent,
      };
    }),
  );
  assert.equal(shown[0].view, "view view-peak");
  assert.equal(shown[0].tab, "peak");
  assert.equal(shown[1].view, "view view-oom");
  assert.equal(shown[1].device, "1");
  assert.match(shown[1].text, /out of memory|OOM/i);
  // Nothing of the element leaks into the host page: its own DOM holds no view.
  // (document.querySelectorAll, unlike Playwright's locators, does not enter shadow roots.)
  assert.equal(
    await page.evaluate(
      () => document.querySelectorAll("main, .view, .tabs").length,
    ),
    0,
  );
  // height="520": the element is that tall and scrolls inside.
  const box = await page.locator("#a").boundingBox();
  assert.equal(Math.round(box.height), 520);
  await shot(page, "element-two-views");
});

test("the element's methods answer like the CLI: a template query", async () => {
  const rows = await page.evaluate(() =>
    document.getElementById("a").query("memory_peak", {}),
  );
  const want = cli(
    "query",
    join(FIXTURES, "cuda_training.pickle"),
    "-t",
    "memory_peak",
    "--rows",
    "arrays",
    "--json",
  );
  assert.deepEqual(rows.rows, want.rows);
});

test("a tab switches the element's view; the other element stays where it was", async () => {
  await page.click("#a >> .tabs a[data-view=timeline]");
  await page.waitForFunction(() =>
    document
      .getElementById("a")
      .shadowRoot.querySelector("main > .view-timeline"),
  );
  await page.waitForFunction(
    () => document.getElementById("a").dataset.view === "done",
  );
  const b = await page.evaluate(
    () =>
      document.getElementById("b").shadowRoot.querySelector("main > .view")
        .className,
  );
  assert.equal(b, "view view-oom");
});

test("a missing src: data-state=error with what and what to do; the others are unaffected", async () => {
  await settled("c");
  assert.equal(await state("c"), "error");
  const text = await page.evaluate(
    () =>
      document.getElementById("c").shadowRoot.querySelector(".error")
        .textContent,
  );
  assert.match(text, /no-such-file\.pickle: HTTP 404/);
  assert.match(text, /check the src= path/);
  assert.equal(await state("a"), "ready");
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors, []);
});

test("an element taken out of the page ends its engine; put back, it loads its src again", async () => {
  const live = () =>
    page.evaluate(() => document.getElementById("a").dataset.state ?? "none");
  await page.evaluate(() => {
    window.__a = document.getElementById("a");
    window.__a.remove();
  });
  assert.equal(
    await page.evaluate(() => window.__a.dataset.state ?? "none"),
    "none",
  );
  await page.evaluate(() => document.body.prepend(window.__a));
  await settled("a");
  assert.equal(await live(), "ready");
  const ov = await page.evaluate(() => document.getElementById("a").overview());
  assert.equal(
    ov.devices.length,
    cli("overview", join(FIXTURES, "cuda_training.pickle"), "--json").devices
      .length,
  );
  assert.deepEqual(errors, []);
});

test("an element made by a script: file property, the ready event, sql(), a refused cross-origin src", async () => {
  const got = await page.evaluate(async () => {
    const el = document.createElement("snapscope-view");
    const ready = new Promise((r) =>
      el.addEventListener("snapscope-ready", (e) => r(e.detail)),
    );
    const blob = await (await fetch("/fixtures/cuda_training.pickle")).blob();
    el.file = blob;
    el.setAttribute("event", "7");
    document.body.append(el);
    const detail = await ready;
    const sql = await el.sql("SELECT COUNT(*) FROM traces");
    const sameBlob = el.file === blob;
    const failed = new Promise((r) =>
      el.addEventListener("snapscope-error", (e) => r(e.detail)),
    );
    el.setAttribute("src", "http://example.invalid/x.pickle");
    const error = await failed;
    const state = el.dataset.state;
    el.remove();
    return {
      events: detail.devices[0].events,
      count: sql.rows[0][0],
      sameBlob,
      error,
      state,
    };
  });
  assert.equal(got.count, got.events);
  assert.ok(got.sameBlob);
  assert.equal(got.error.code, "CROSS_ORIGIN");
  assert.match(got.error.hint, /same-origin/);
  assert.equal(got.state, "error");
});

test("query() before a snapshot is open rejects (a promise, not a throw)", async () => {
  const msg = await page.evaluate(() =>
    document
      .createElement("snapscope-view")
      .query("memory_peak")
      .then(
        () => "resolved",
        (e) => e.message,
      ),
  );
  assert.equal(msg, "no snapshot is loaded");
});

test("an element removed while it loads leaves no engine worker behind", async () => {
  // Count only the workers this element starts: an earlier test's engine may still be ending
  // when this one begins, so the page's worker total is not a baseline.
  const started = [];
  const closed = new Set();
  const onWorker = (w) => {
    started.push(w);
    w.on("close", () => closed.add(w));
  };
  page.on("worker", onWorker);
  try {
    await page.evaluate(() => {
      const el = document.createElement("snapscope-view");
      el.setAttribute("src", "/fixtures/semantics_training.pickle");
      document.body.append(el);
      el.remove();
    });
    // Long enough for a load that was not cancelled to have started its worker.
    await page.waitForTimeout(1500);
    const deadline = Date.now() + 5000;
    while (closed.size < started.length && Date.now() < deadline)
      await page.waitForTimeout(50);
    const alive = started.filter(
      (w) => !closed.has(w) && page.workers().includes(w),
    );
    assert.equal(
      alive.length,
      0,
      `${alive.length} of ${started.length} engine workers still running`,
    );
  } finally {
    page.off("worker", onWorker);
  }
});

test("the package's types: a consumer of snapscope-view.d.ts type-checks; the element has every method they declare", async () => {
  const dir = mkdtempSync(join(tmpdir(), "snapscope-types-"));
  const mod = join(PACKAGE, "snapscope-view.js");
  writeFileSync(
    join(dir, "consumer.ts"),
    `import type { SnapscopeView, TemplateRows, Rows, Overview } from ${JSON.stringify(mod)};
const el = document.createElement("snapscope-view");
el.addEventListener("snapscope-ready", (e) => {
  const o: Overview = e.detail;
  o.devices[0].peaks.requested.bytes.toFixed(0);
});
el.addEventListener("snapscope-error", (e) => e.detail.hint.toUpperCase());
export async function use(view: SnapscopeView): Promise<string> {
  const t: TemplateRows = await view.query("memory_peak", { device: 0 });
  const s: Rows = await view.sql("SELECT 1");
  view.file = new Blob([]);
  view.data = new ArrayBuffer(8);
  view.show("peak");
  view.select(3, "tree");
  view.setDevice(0, "timeline");
  const o = await view.load("/run.pickle", "run");
  return t.columns[0].name + s.columns[0] + o.devices.length + (view.file?.size ?? 0) + el.tagName;
}
`,
  );
  execFileSync(
    "node",
    [
      join(ROOT, "www/node_modules/typescript/bin/tsc"),
      "--noEmit",
      "--strict",
      "--target",
      "es2022",
      "--module",
      "es2022",
      "--moduleResolution",
      "bundler",
      "--lib",
      "es2022,dom",
      join(dir, "consumer.ts"),
    ],
    { encoding: "utf8" },
  );
  const declared = [
    ...readFileSync(join(PACKAGE, "snapscope-view.d.ts"), "utf8").matchAll(
      /^  (\w+)\(/gm,
    ),
  ].map((m) => m[1]);
  assert.ok(declared.length >= 7, declared.join());
  const missing = await page.evaluate(
    (names) =>
      names.filter(
        (n) =>
          typeof document.createElement("snapscope-view")[n] !== "function",
      ),
    declared,
  );
  assert.deepEqual(missing, []);
  assert.equal(
    await page.evaluate(() => customElements.get("snapscope-view").version),
    crateVersion,
  );
  // Last, so a failing test keeps its files to look at.
  rmSync(dir, { recursive: true, force: true });
});
