// `node tests/python/page_ready.mjs FILE.html [--frame]`: open a page from disk in Debian
// chromium, wait until snapscope (the page itself, or with --frame the page in its first iframe,
// as Jupyter shows it) says ready or error, and print {state, name, overview, errors} as JSON.
import { launch } from "../browser/harness.mjs";
import { pathToFileURL } from "node:url";

const [file, flag] = process.argv.slice(2);
const context = await launch();
const page = await context.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
await page.goto(pathToFileURL(file).href);
let target = page;
if (flag === "--frame") {
  await page.waitForSelector("iframe");
  target = await (await page.$("iframe")).contentFrame();
}
await target.waitForFunction(
  () => ["ready", "error"].includes(document.documentElement.dataset.snapscope),
  null,
  { timeout: 120_000 },
);
const out = await target.evaluate(() => ({
  state: document.documentElement.dataset.snapscope,
  name: document.querySelector("#file-select option")?.textContent ?? null,
  error: document.querySelector("#error:not([hidden])")?.textContent ?? null,
  overview: window.snapscope.overview(),
  // In Jupyter's sandboxed iframe the page must not reach the notebook's page.
  parentReadable: (() => {
    try {
      return (
        window.parent !== window &&
        typeof window.parent.document.title === "string"
      );
    } catch {
      return false;
    }
  })(),
}));
await page.screenshot({ path: file.replace(/\.html$/, ".png") });
console.log(JSON.stringify({ ...out, errors }));
await context.close();
