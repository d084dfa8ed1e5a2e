// The newer trace fields in the event panel, on the project's fixture with known answers
// (scripts/gen_fixtures.py `semantics_training`): a backward allocation's phase, category and
// forward stack, and the FX node of a frame of generated code.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { openPage, showView, viewDone, ROOT } from "./harness.mjs";

const CLI = join(ROOT, "target/release/snapscope");
const FIXTURE = join(ROOT, "fixtures/semantics_training.pickle");
const PINNED = join(ROOT, "fixtures/pinned_host.pickle");
const COMPILED = join(ROOT, "fixtures/compiled_ranges.pickle");
const firstRow = (sql) =>
  JSON.parse(
    execFileSync(CLI, ["sql", FIXTURE, sql, "--json", "--rows", "arrays"], {
      encoding: "utf8",
    }),
  ).rows[0][0];

let page, close;
before(async () => {
  let state;
  ({ page, state, close } = await openPage([FIXTURE, PINNED, COMPILED]));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

async function panelText(event) {
  await showView(page, 0, "timeline");
  await page.evaluate((e) => window.snapscope.select(e, "timeline"), event);
  await page.waitForFunction(
    (e) =>
      document
        .querySelector(".event-panel h3")
        ?.textContent.includes(String(e)),
    event,
    { timeout: 60000 },
  );
  return page.$eval(".event-panel", (p) => p.textContent);
}

test("a backward allocation shows its phase, category and forward stack", async () => {
  const grad = firstRow(
    "SELECT trace_index FROM traces WHERE action = 'alloc' AND extra_json LIKE '%forward_frames%' LIMIT 1",
  );
  const text = await panelText(grad);
  assert.match(text, /phase\s*backward/);
  assert.match(text, /gradient/);
  assert.match(text, /forward stack/);
  assert.match(text, /model\.py:12:forward/);
});

test("a frame of generated code shows its FX node", async () => {
  const act = firstRow(
    "SELECT t.trace_index FROM traces t JOIN stack_frames sf ON sf.stack_id = t.stack_id JOIN frames f ON f.id = sf.frame_id WHERE f.fx_node_name = 'mm_default' AND t.action = 'alloc' LIMIT 1",
  );
  const text = await panelText(act);
  assert.match(
    text,
    /FX mm_default: call_function aten\.mm\.default ← \/work\/train\/model\.py:12 forward/,
  );
  assert.match(text, /activation/);
});

test("pinned host memory is an entry of its own, named as such", async () => {
  await showView(page, 1, "overview");
  const label = await page.$eval(
    "#device-select option[value='1']",
    (o) => o.textContent,
  );
  assert.match(label, /^pinned host memory \(entry 1\) · 9 events$/);
  await page.selectOption("#device-select", "1");
  await viewDone(page);
  const text = await page.$eval(".overview", (o) => o.textContent);
  assert.match(text, /Entry 1 is pinned host memory/);
  await showView(page, 0, "overview");
});

test("framework ranges stay out of the timeline's markers; the steps' ranges stay in", async () => {
  await showView(page, 2, "timeline");
  // The markers' legend comes with the chart, after the view's first paint.
  await page.waitForFunction(
    () => /annotation \(/.test(document.querySelector("#view").textContent),
    null,
    { timeout: 60000 },
  );
  const text = await page.$eval("#view", (v) => v.textContent);
  assert.match(
    text,
    /annotation \(6\)/,
    "the ProfilerStep START/END markers only",
  );
  assert.doesNotMatch(text, /6,006/);
  assert.match(text, /show 3,000 framework ranges/);
});
