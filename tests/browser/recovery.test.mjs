// Recovery in the page's engine (issue 29.6, 29.15): a panic in the worker's engine (a bug) must
// not poison it for the next request or the next file, and a <snapscope-view> given an event the
// snapshot does not have says so and recovers once the attribute is valid again.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve, launch, ROOT } from "./harness.mjs";

const HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>host</title>
<script type="module" src="snapscope-view.js"></script>
</head><body>
<snapscope-view id="a" src="/fixtures/cuda_training.pickle" view="state" event="99999999999" height="500"></snapscope-view>
</body></html>`;

let server, origin, context, page, errors, dir;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), "snapscope-recovery-"));
  for (const f of ["snapscope-view.js", "worker.js", "snapscope_bg.wasm"])
    copyFileSync(join(ROOT, "www/package", f), join(dir, f));
  writeFileSync(join(dir, "host.html"), HOST_PAGE);
  ({ server, origin } = await serve(dir));
  context = await launch();
  page = await context.newPage();
  errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/host.html");
});
after(async () => {
  await context?.close();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const elementState = () =>
  page.evaluate(() => document.getElementById("a").dataset.state);
const statusText = () =>
  page.evaluate(
    () =>
      document.getElementById("a").shadowRoot.querySelector("[role=status]")
        .textContent,
  );

test("an event beyond the snapshot is named, not wrapped; a valid one brings the element back", async () => {
  await page.waitForFunction(
    () => document.getElementById("a").dataset.state === "error",
    null,
    { timeout: 60000 },
  );
  const events = await page.evaluate(
    () => document.getElementById("a").overview().devices[0].events,
  );
  const text = await statusText();
  assert.match(text, /event 99999999999 is not in this snapshot/, text);
  assert.match(text, new RegExp(`from 0 to ${events - 1}`), text);
  // 99999999999 mod 2^32 would have shown some other event's state: nothing is shown.
  assert.equal(
    await page.evaluate(
      () =>
        document.getElementById("a").shadowRoot.querySelector("main")
          .childElementCount,
    ),
    0,
  );
  await page.evaluate(() =>
    document.getElementById("a").setAttribute("event", "3"),
  );
  await page.waitForFunction(
    () =>
      document.getElementById("a").dataset.state === "ready" &&
      document.getElementById("a").dataset.view === "done",
    null,
    { timeout: 30000 },
  );
  assert.doesNotMatch(await statusText(), /not in this snapshot/);
  assert.deepEqual(errors, []);
});

test("a panic in the engine: the next request and the next file still work", async () => {
  // The worker as every engine client starts it, spoken to through its own protocol.
  const got = await page.evaluate(async () => {
    const src = await (await fetch("worker.js")).text();
    const wasm = await WebAssembly.compile(
      await (await fetch("snapscope_bg.wasm")).arrayBuffer(),
    );
    const worker = new Worker(
      URL.createObjectURL(new Blob([src], { type: "text/javascript" })),
    );
    let next = 1;
    const waiting = new Map();
    worker.onmessage = (ev) => {
      const r = ev.data;
      if (r.kind === "progress" || !waiting.has(r.id)) return;
      waiting.get(r.id)(r);
      waiting.delete(r.id);
    };
    const send = (m) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        worker.postMessage({ ...m, id });
      });
    const file = async (name) =>
      new Blob([await (await fetch(`/fixtures/${name}`)).arrayBuffer()]);
    const call = (key, method, ...args) =>
      send({ op: "call", key, method, args });
    await send({ op: "init", wasm, warmUp: false });
    const training = await file("cuda_training.pickle");
    const first = await send({
      op: "load",
      file: training,
      name: "a.pickle",
      key: "main",
    });
    await send({
      op: "load",
      file: await file("multi_device_oom.pickle"),
      name: "b.pickle",
      key: "other",
    });
    const treeBefore = await call(
      "main",
      "analyze",
      "tree",
      0,
      JSON.stringify({ event: 10 }),
    );
    const panic = await call("main", "panicForTest");
    const treeAfter = await call(
      "main",
      "analyze",
      "tree",
      0,
      JSON.stringify({ event: 10 }),
    );
    const otherAfter = await call("other", "overview");
    const sqlAfter = await call(
      "main",
      "sql",
      "SELECT COUNT(*) FROM traces",
      10,
      5000,
    );
    const exported = await send({ op: "export", key: "main" });
    const third = await send({
      op: "load",
      file: training,
      name: "c.pickle",
      key: "third",
    });
    worker.terminate();
    return {
      first: first.kind,
      treeBefore: treeBefore.json,
      panic: panic.kind === "error" ? panic.error : null,
      treeAfter: treeAfter.kind === "ok" ? treeAfter.json : treeAfter.error,
      other: otherAfter.kind,
      sql: sqlAfter.kind === "ok" ? JSON.parse(sqlAfter.json) : sqlAfter.error,
      exported: exported.kind === "ok" ? exported.bytes.byteLength : 0,
      third: third.kind,
    };
  });
  assert.equal(got.first, "ok");
  assert.ok(got.panic, "the panicking call answers an error");
  assert.equal(got.panic.code, "ENGINE_FAILED", JSON.stringify(got.panic));
  assert.match(got.panic.hint, /restarted/);
  // The snapshot was loaded again into the fresh engine: the same answer as before the panic.
  assert.equal(got.treeAfter, got.treeBefore);
  assert.ok(JSON.parse(got.treeBefore).nodes.length > 1, got.treeBefore);
  assert.equal(got.other, "ok");
  assert.ok(got.sql.rows[0][0] > 0, JSON.stringify(got.sql));
  assert.ok(got.exported > 4096, `export of ${got.exported} bytes`);
  assert.equal(got.third, "ok");
  assert.deepEqual(errors, []);
});
