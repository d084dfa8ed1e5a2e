// Screenshots for reading the engine's conclusions as a user would (not a test: run by hand,
// `node tests/browser/shots-meaning.mjs`): Overview, Categories, Steps and Leaks of a training
// run with several steps, a forward-only run, a dump-only file, one with C++ frames and one with
// annotations, full page, into
// tests/out/screenshots/meaning-*.png.
import { openPage, showView, CORPUS, SHOTS } from "./harness.mjs";
import { join } from "node:path";

const files = [
  ["training", join(CORPUS, "npu/snapshot_expandable.pkl")],
  [
    "forward",
    join(
      CORPUS,
      "cuda/NiuHuangxiaozi__assignment2-systems/forward_memory_snapshot_100.pickle",
    ),
  ],
  [
    "dump",
    join(CORPUS, "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle"),
  ],
  [
    "cpp",
    join(CORPUS, "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle"),
  ],
  [
    "annotations",
    join(CORPUS, "cuda/Constructor-Sun__code_location/memory_snapshot.pickle"),
  ],
];
const { page, errors, close } = await openPage(files.map((f) => f[1]));
for (const [i, [name]] of files.entries()) {
  for (const view of ["overview", "categories", "steps", "leaks"]) {
    await showView(page, i, view);
    await page.waitForTimeout(300);
    await page.screenshot({
      path: join(SHOTS, `meaning-${name}-${view}.png`),
      fullPage: true,
    });
  }
}
console.log(
  errors.length ? `page errors: ${errors.join("; ")}` : "no page errors",
);
await close();
