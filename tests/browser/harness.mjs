// Test harness: a static server on 127.0.0.1 for www/dist (and fixtures/ under /fixtures/, for
// ?src=), Debian chromium through playwright-core, and a recorder of every request the page makes.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import {
  mkdtempSync,
  readFileSync,
  existsSync,
  mkdirSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, extname, normalize } from "node:path";

const require = createRequire(
  new URL("../../www/package.json", import.meta.url),
);
const { chromium } = require("playwright-core");

export const ROOT = new URL("../../", import.meta.url).pathname;
export const DIST = join(ROOT, "www/dist");
export const FIXTURES = join(ROOT, "fixtures");
export const CORPUS = join(ROOT, "../shared/snapshots");
export const SHOTS = join(ROOT, "tests/out/screenshots");
mkdirSync(SHOTS, { recursive: true });

const TYPES = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".wasm": "application/wasm",
  ".json": "application/json",
};

/** Serve `root` (www/dist by default) and fixtures/ under /fixtures/ on 127.0.0.1. */
export function serve(root = DIST) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    // A same-origin link that sends the page elsewhere (?src= must refuse to follow it).
    if (url.pathname === "/redirect-away")
      return res
        .writeHead(302, { location: "http://example.invalid/snap.pickle" })
        .end();
    let path;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return res.writeHead(400).end(); // a malformed % escape
    }
    const file = path.startsWith("/fixtures/")
      ? join(FIXTURES, normalize(path.slice("/fixtures/".length)))
      : join(root, normalize(path === "/" ? "index.html" : path.slice(1)));
    if (!file.startsWith(root) && !file.startsWith(FIXTURES))
      return res.writeHead(403).end();
    if (!existsSync(file) || statSync(file).isDirectory())
      return res.writeHead(404).end();
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
    });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }),
    ),
  );
}

export async function launch() {
  const profileDir = mkdtempSync(join(tmpdir(), "snapscope-chromium-"));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--allow-file-access-from-files",
      // Extra flags for experiments, e.g. CHROMIUM_EXTRA_ARGS="--js-flags=--no-liftoff".
      ...(process.env.CHROMIUM_EXTRA_ARGS ?? "").split(" ").filter(Boolean),
    ],
  });
  context.profileDir = profileDir;
  // The profile (16 MB) is of no use once the browser is gone: closing removes it.
  const close = context.close.bind(context);
  context.close = async (...args) => {
    await close(...args);
    rmSync(profileDir, { recursive: true, force: true, maxRetries: 3 });
  };
  return context;
}

/** Record every request: its URL, method and whether it carries a body. */
export function recordRequests(page) {
  const seen = [];
  page.on("request", (r) =>
    seen.push({
      url: r.url(),
      method: r.method(),
      body: r.postDataBuffer()?.length ?? 0,
    }),
  );
  return seen;
}

export async function waitReady(page, timeout = 60000) {
  await page.waitForFunction(
    () =>
      ["ready", "error"].includes(document.documentElement.dataset.snapscope),
    null,
    { timeout },
  );
  return page.evaluate(() => document.documentElement.dataset.snapscope);
}

/**
 * Opens `paths` as files side by side: one pick of the file input each (several files picked at
 * once are the ranks of a run, see `openRun`). The state after the last, or the first "error".
 */
export async function openFiles(page, paths) {
  let state;
  for (const p of Array.isArray(paths) ? paths : [paths]) {
    await page.setInputFiles("#file-input", p);
    state = await waitReady(page);
    if (state !== "ready") break;
  }
  return state;
}

/**
 * Picks `paths` at once (or a folder, with `{ folder: true }`) and waits for the Ranks view: the
 * run is summarized, combined and drawn. Answers the page's state.
 */
export async function openRun(
  page,
  paths,
  { folder = false, timeout = 180000 } = {},
) {
  await page.setInputFiles(folder ? "#folder-input" : "#file-input", paths);
  await page.waitForFunction(
    () =>
      document.documentElement.dataset.snapscope === "error" ||
      (document.documentElement.dataset.snapscope === "ready" &&
        document.querySelector("#view > .view-ranks") !== null &&
        document.documentElement.dataset.view === "done"),
    null,
    { timeout },
  );
  return page.evaluate(() => document.documentElement.dataset.snapscope);
}

/**
 * A served page in its own browser with `files` opened and ready; page errors are collected in
 * `errors`. `close()` ends both.
 */
export async function openPage(files) {
  const { server, origin } = await serve();
  const ctx = await launch();
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(origin + "/");
  const state = await openFiles(page, files);
  const close = async () => {
    await ctx.close();
    server.close();
  };
  return { page, errors, state, close };
}

/** Resolves once the current view says it is drawn. */
export function viewDone(page, timeout = 60000) {
  return page.waitForFunction(
    () => document.documentElement.dataset.view === "done",
    null,
    { timeout },
  );
}

/**
 * Resolves once view `view` is the one on screen and says it is drawn: a "done" left over from
 * the previous view does not count (the new render may not have started yet).
 */
export function viewShown(page, view, timeout = 60000) {
  return page.waitForFunction(
    (v) =>
      document.querySelector(`#view > .view-${v}`) !== null &&
      document.documentElement.dataset.view === "done",
    view,
    { timeout },
  );
}

/**
 * Resolves once the text of `selector` matches `re` (instead of a fixed sleep before asserting
 * it: as fast as the page, and no flake when the page is slower than the sleep).
 */
export function textMatches(page, selector, re, timeout = 30000) {
  return page.waitForFunction(
    ([sel, src, flags]) =>
      new RegExp(src, flags).test(
        document.querySelector(sel)?.textContent ?? "",
      ),
    [selector, re.source, re.flags],
    { timeout },
  );
}

/** Selects file `file` (its index) and view `view`, and waits until it is drawn. */
export async function showView(page, file, view) {
  await page.selectOption("#file-select", String(file));
  await viewDone(page);
  await page.click(`[data-view=${view}]`);
  await viewShown(page, view);
}

/**
 * A screenshot for people to look at (no test reads it). Callers have waited for what they
 * assert; two animation frames let the last draw reach the screen (250 ms at most, the fixed wait
 * this replaces, which cost 14 s over the 57 shots of a run).
 */
export async function shot(page, name) {
  await page.evaluate(
    () =>
      new Promise((r) => {
        requestAnimationFrame(() => requestAnimationFrame(r));
        setTimeout(r, 250);
      }),
  );
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}
