// Nothing leaves the machine: every request stays on the page's origin (or blob:/data:), none
// carries a body, the CSP forbids others, and the page works with the network switched off.
// Also: the single-file page from file://, and ?src= for docs portals.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  serve,
  launch,
  openFiles,
  waitReady,
  recordRequests,
  shot,
  CORPUS,
  FIXTURES,
  DIST,
} from "./harness.mjs";

const HAVE_CORPUS = existsSync(join(CORPUS, "reference.json"));
const snaps = HAVE_CORPUS
  ? [
      join(CORPUS, "npu/snapshot_expandable.pkl"),
      join(
        CORPUS,
        "cuda/Constructor-Sun__code_location/memory_snapshot.pickle",
      ),
    ]
  : [
      join(FIXTURES, "npu_expandable.pkl"),
      join(FIXTURES, "multi_device_oom.pickle"),
    ];

let server, origin, ctx;
before(async () => {
  ({ server, origin } = await serve());
  ctx = await launch();
});
after(async () => {
  await ctx?.close();
  server?.close();
});

test("no request leaves the origin or carries the file, even with the network off", async () => {
  const page = await ctx.newPage();
  const seen = recordRequests(page);
  await page.goto(origin + "/");
  const csp = await page.getAttribute(
    "meta[http-equiv=Content-Security-Policy]",
    "content",
  );
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /connect-src 'self'/);
  await ctx.setOffline(true);
  assert.equal(await openFiles(page, snaps), "ready");
  for (const v of ["timeline", "tree", "state", "queries"]) {
    await page.click(`[data-view=${v}]`);
    await page.waitForTimeout(300);
  }
  await ctx.setOffline(false);
  assert.ok(seen.length > 0);
  for (const r of seen) {
    assert.ok(
      r.url.startsWith(origin) ||
        r.url.startsWith("blob:") ||
        r.url.startsWith("data:"),
      `request left the origin: ${r.url}`,
    );
    assert.equal(r.body, 0, `request carries a body: ${r.method} ${r.url}`);
    assert.equal(r.method, "GET", r.url);
  }
  // The page asks the engine, not the network: no request after the initial assets.
  assert.ok(
    seen.every(
      (r) =>
        /\/(|index\.html|style\.css|app\.js|worker\.js|snapscope_bg\.wasm)$/.test(
          new URL(r.url).pathname,
        ) || !r.url.startsWith("http"),
    ),
    seen.map((r) => r.url).join("\n"),
  );
  await page.close();
});

test("the single-file page works from file://", async () => {
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto("file://" + join(DIST, "snapscope.html"));
  assert.equal(
    await openFiles(page, [snaps[0]]),
    "ready",
    await page.textContent("#error"),
  );
  const ov = await page.evaluate(() => window.snapscope.overview());
  assert.ok(ov.devices.length >= 1);
  await page.click("[data-view=tree]");
  await page.waitForSelector("canvas.flame");
  await shot(page, "10-single-file");
  assert.deepEqual(errors, []);
  await page.close();
});

test("?src= loads a same-origin snapshot (docs portals)", async () => {
  const page = await ctx.newPage();
  await page.goto(
    origin + "/?src=/fixtures/multi_device_oom.pickle#view=overview",
  );
  assert.equal(await waitReady(page), "ready");
  const ov = await page.evaluate(() => window.snapscope.overview());
  assert.equal(ov.devices.length, 2);
  assert.equal(await page.$$eval("#device-select option", (o) => o.length), 2);
  await page.close();
});

test("?src= refuses another origin", async () => {
  const page = await ctx.newPage();
  const seen = recordRequests(page);
  await page.goto(origin + "/?src=http://example.invalid/snap.pickle");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.textContent("#error"), /not on this page's origin/);
  assert.ok(
    seen.every(
      (r) =>
        !r.url.startsWith("http") || new URL(r.url).hostname === "127.0.0.1",
    ),
    seen.map((r) => r.url).join(" "),
  );
  await page.close();
});
