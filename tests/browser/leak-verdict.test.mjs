// The leak verdict of a program without training steps, on the project's fixture with known
// answers (scripts/gen_fixtures.py: an inference server that keeps every request's output): the
// Leaks view leads with the engine's "kept pass after pass" verdict, names the site, and its floor
// sentence does not call the growth memory in use; the Overview lists the same finding.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { openPage, showView, ROOT } from "./harness.mjs";

const SERVER = join(ROOT, "fixtures/program_serve_kept.pickle");
const known = JSON.parse(
  readFileSync(join(ROOT, "fixtures/expected.json"), "utf8"),
)["program_serve_kept.pickle"].program.kept_per_pass;

let page, errors, close;
before(async () => {
  let state;
  ({ page, errors, state, close } = await openPage([SERVER]));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

test("Leaks: a site kept pass after pass is the verdict, and the floor sentence agrees", async () => {
  await showView(page, 0, "leaks");
  const verdict = await page.$eval(".leak-verdict", (e) => ({
    text: e.textContent,
    priority: e.dataset.priority,
  }));
  assert.equal(verdict.priority, "medium");
  assert.match(
    verdict.text,
    new RegExp(
      `Memory kept pass after pass: forward \\(model\\.py:44\\) holds blocks from ${known.passes} forward passes`,
    ),
  );
  assert.match(
    verdict.text,
    new RegExp(`${known.blocks} blocks \\(8\\.00 MiB\\)`),
  );
  const main = await page.textContent("main");
  assert.match(main, /Leak candidates by allocation site/);
  assert.doesNotMatch(main, /more likely memory in use than a leak/);
  await showView(page, 0, "overview");
  assert.match(await page.textContent("main"), /Memory kept pass after pass/);
  assert.deepEqual(errors, []);
});
