// Screenshots of every view on three real files (not a test: run by hand,
// `node tests/browser/shots-views.mjs`): one with C++ frames, a dump-only one and one with
// annotations, into tests/out/screenshots/views-<file>-<view>.png, to look at as a user would.
import { openPage, showView, CORPUS, SHOTS } from "./harness.mjs";
import { join } from "node:path";

const files = [
  [
    "cpp",
    join(CORPUS, "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"),
  ],
  [
    "dump",
    join(CORPUS, "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle"),
  ],
  [
    "annotations",
    join(CORPUS, "cuda/Constructor-Sun__code_location/memory_snapshot.pickle"),
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
const { page, errors, close } = await openPage(files.map((f) => f[1]));
for (const [i, [name]] of files.entries()) {
  for (const view of views) {
    await showView(page, i, view);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `views-${name}-${view}.png`) });
  }
}
console.log(
  errors.length ? `page errors: ${errors.join("; ")}` : "no page errors",
);
await close();
