// A merged Peak row on a real file (by site: stacks named by one frame merged into one row): its
// list names the stacks it holds, one line sums those not listed ("… N more stacks"), and the
// lines add up to the row's bytes and blocks, as the engine (the CLI's answer) says.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, ROOT, openPage, shot, viewShown } from "./harness.mjs";

// Three NPU devices; at this event device 0's largest site row merges 29 stacks.
const FILE = join(CORPUS, "npu/snapshot_with_multi_devices.pkl");
const DEVICE = 0;
const EVENT = 677;
const SKIP = !existsSync(FILE) && "the real corpus is not here";

/** The exact count of a `bytesSpan` ("1,234 B" on hover). */
const exactBytes = (title) => Number(title.replace(/[^\d]/g, ""));

let page, close, errors;
before(async () => {
  if (SKIP) return;
  let state;
  ({ page, state, close, errors } = await openPage([FILE]));
  assert.equal(state, "ready");
});
after(async () => {
  await close?.();
});

test(
  "a merged Peak row lists its stacks and the rest on one line, adding up to the row",
  { skip: SKIP },
  async () => {
    const cli = JSON.parse(
      execFileSync(
        join(ROOT, "target/release/snapscope"),
        [
          "analyze",
          FILE,
          "--mode",
          "peak",
          "--device",
          String(DEVICE),
          "--event",
          String(EVENT),
          "--json",
        ],
        { encoding: "utf8" },
      ),
    ).devices[0].peak;
    const merged = cli.by_site.find((g) => g.merged?.more > 0);
    assert.ok(
      merged,
      `a row of device ${DEVICE} at event ${EVENT} merges more stacks than it lists`,
    );
    await page.evaluate(
      ([d, e]) => {
        location.hash = `view=peak&device=${d}&event=${e}`;
      },
      [DEVICE, EVENT],
    );
    await viewShown(page, "peak");
    // The group-by choice starts at "by site".
    assert.equal(await page.inputValue(".view-peak select.group-by"), "site");
    const row = page
      .locator(".view-peak table.groups > tbody > tr")
      .filter({ has: page.locator(".merged") })
      .first();
    const rowBytes = exactBytes(
      await row.locator(":scope > td.num .bytes").first().getAttribute("title"),
    );
    const rowBlocks = Number(
      (await row.locator(":scope > td.num").nth(1).textContent()).replace(
        /[^\d]/g,
        "",
      ),
    );
    assert.equal(rowBytes, merged.bytes);
    assert.equal(rowBlocks, merged.blocks);
    // Closed until its label is clicked.
    assert.equal(await row.locator(".merged").isVisible(), false);
    await row.locator("a.label").first().click();
    const list = row.locator(".merged table.merged-stacks tbody tr");
    await list.first().waitFor();
    const lines = await list.evaluateAll((trs) =>
      trs.map((tr) => ({
        more: tr.classList.contains("more"),
        bytes: tr.querySelector(".bytes").title,
        blocks: tr.children[1].textContent,
        text: tr.children[2].textContent,
      })),
    );
    const listed = lines.filter((l) => !l.more);
    const more = lines.filter((l) => l.more);
    assert.equal(listed.length, merged.merged.stacks.length);
    assert.equal(more.length, 1, "one line for the stacks not listed");
    assert.equal(more[0].text, `… ${merged.merged.more} more stacks`);
    assert.equal(lines.at(-1).more, true, "the rest comes last");
    const sum = (key, f) => lines.reduce((s, l) => s + f(l[key]), 0);
    assert.equal(sum("bytes", exactBytes), rowBytes);
    assert.equal(
      sum("blocks", (t) => Number(t.replace(/[^\d]/g, ""))),
      rowBlocks,
    );
    // Each listed stack is one of the engine's, in its order (largest first).
    listed.forEach((l, i) =>
      assert.equal(exactBytes(l.bytes), merged.merged.stacks[i].bytes),
    );
    await shot(page, "peak-merged-row");
    assert.deepEqual(errors, []);
  },
);
