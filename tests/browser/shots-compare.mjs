// Screenshots of Compare by meaning (not a test: run by hand, `node tests/browser/shots-compare.mjs`):
// a training run against the same model without gradients, and the two-moment diff of it, full
// page, into tests/out/screenshots/compare-*.png.
import { openPage, showView, CORPUS, SHOTS } from "./harness.mjs";
import { join } from "node:path";

const pairs = [
  [
    "grad-vs-no-grad",
    join(CORPUS, "cuda/shreyansh26__MLSys-Experiments/profile_grad.pkl"),
    join(CORPUS, "cuda/shreyansh26__MLSys-Experiments/profile_no_grad.pkl"),
  ],
  [
    "step-vs-inference",
    join(
      CORPUS,
      "cuda/HugePandaCoder__octree-nca-groupeq/cuda_single_step.pickle",
    ),
    join(
      CORPUS,
      "cuda/HugePandaCoder__octree-nca-groupeq/inference2_peso_oct.pickle",
    ),
  ],
];
for (const [name, a, b] of pairs) {
  const { page, errors, close } = await openPage([a, b]);
  await showView(page, 0, "compare");
  await page.waitForSelector(".moments-summary", { timeout: 60000 });
  await page.waitForTimeout(300);
  await page.screenshot({
    path: join(SHOTS, `compare-${name}.png`),
    fullPage: true,
  });
  if (errors.length) console.error(name, errors);
  await close();
}
