// Screenshots of every view on real files (not a test: run by hand,
// `node tests/browser/shots-views.mjs`): one with C++ frames, one with annotations over 3 devices
// (one of which ran out of memory: its OOM view is shot on that device too), one plain training
// trace and a dump-only one, into tests/out/screenshots/views-<file>-<view>.png, to look at as a
// user would.
import { openPage, showView, viewShown, CORPUS, SHOTS } from "./harness.mjs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./harness.mjs";

const files = [
  [
    "cpp",
    join(CORPUS, "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"),
  ],
  [
    "annotations",
    join(CORPUS, "cuda/Constructor-Sun__code_location/memory_snapshot.pickle"),
  ],
  ["decomfl", join(CORPUS, "cuda/ZidongLiu__DeComFL/memory.pickle")],
  [
    "dump",
    join(CORPUS, "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle"),
  ],
];
const views = [
  "overview",
  "timeline",
  "allocations",
  "peak",
  "categories",
  "steps",
  "tree",
  "state",
  "leaks",
  "oom",
  "whatif",
  "queries",
  "compare",
];
/** The devices of `file` whose trace has an OOM event (the engine's overview says). */
const oomDevices = (file) =>
  JSON.parse(
    execFileSync(join(ROOT, "target/release/snapscope"), [
      "overview",
      file,
      "--json",
    ]),
  )
    .devices.filter((d) => d.window.oom_events > 0)
    .map((d) => d.device);

const { page, errors, close } = await openPage(files.map((f) => f[1]));
for (const [i, [name, file]] of files.entries()) {
  for (const view of views) {
    await showView(page, i, view);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `views-${name}-${view}.png`) });
  }
  for (const device of oomDevices(file)) {
    await showView(page, i, "oom");
    await page.selectOption("#device-select", String(device));
    await viewShown(page, "oom");
    await page.waitForTimeout(300);
    await page.screenshot({
      path: join(SHOTS, `views-${name}-oom-device${device}.png`),
      fullPage: true,
    });
  }
}
console.log(
  errors.length ? `page errors: ${errors.join("; ")}` : "no page errors",
);
await close();
