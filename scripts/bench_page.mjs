// What the page benchmarks share (scripts/bench_browser.mjs, scripts/bench_memory_viz.mjs): the
// browser's memory as the kernel sees it, and snapscope's figures on screen for one file.
import { readFileSync, readdirSync } from "node:fs";

/** Sum of RSS of the processes whose command line names this browser's profile directory
 * (and, with `only`, also contains that text: "--type=renderer" is the tab, worker included). */
export function browserRss(profile, only = "") {
  return rssOf(browserPids(profile, only));
}

/** Sum of RSS of `pids` (those that ended count nothing). */
function rssOf(pids) {
  let sum = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(
        readFileSync(`/proc/${pid}/status`, "utf8"),
      );
      if (m) sum += Number(m[1]) * 1024;
    } catch {
      /* process ended */
    }
  }
  return sum;
}

/** The pids of the processes whose command line names this browser's profile directory and
 * contains `only`. */
function browserPids(profile, only) {
  const pids = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(profile) && cmd.includes(only)) pids.push(pid);
    } catch {
      /* process ended */
    }
  }
  return pids;
}

/** Samples the RSS of the browser's processes whose command line contains `only` (by default
 * the tab's: its renderer processes) every `everyMs` until `stop()`, which returns the peak in
 * MiB. The processes are found once: a scan of every process's command line each time took a
 * few ms of a core the page shares on a 2-core machine. */
export function tabRssSampler(profile, everyMs = 50, only = "--type=renderer") {
  let peak = 0;
  const pids = browserPids(profile, only);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pids));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.round(peak / 2 ** 20);
    },
  };
}

/** Opens snapscope's page and waits until it is ready for a file (engine started and warmed
 * up), then `settleMs` more: a person takes longer than that to choose a file. */
export async function snapscopeReady(page, origin, settleMs) {
  await page.goto(origin + "/");
  await page.waitForFunction(
    () =>
      document.documentElement.dataset.snapscope === "empty" &&
      document.documentElement.dataset.engine === "ready",
  );
  await page.waitForTimeout(settleMs);
}

/** Chooses `file` in snapscope's file input and waits for the Overview's peak figures on
 * screen: as the test driver sees them (a card's figure, a number with its unit, polled every
 * 5 ms; a dump-only file's cards are its dump figures), and the page's own
 * `snapscope:peak-figures` mark (the task after the frame that paints the cards) from
 * `snapscope:file-chosen`. */
export async function snapscopeFigures(page, file, timeoutMs = 600000) {
  // One epoch clock on both sides. The driver's figure runs from the file input's change event
  // (Playwright's delivery of the file before it takes 40-200 ms and is reported apart), and its
  // poll (every 5 ms) starts before the file is set, so it never waits for setInputFiles to return.
  const epoch = () => performance.timeOrigin + performance.now();
  await page.evaluate(() => {
    window.__changeAt = undefined;
    document.addEventListener(
      "change",
      () => (window.__changeAt ??= performance.timeOrigin + performance.now()),
      { capture: true, once: true },
    );
  });
  const t0 = epoch();
  const figuresSeen = page
    .waitForFunction(
      () =>
        /\d/.test(
          document.querySelector(".view-overview .cards .card .card-value")
            ?.textContent ?? "",
        ),
      null,
      { timeout: timeoutMs, polling: 5 },
    )
    .then(epoch);
  await page.setInputFiles("#file-input", file);
  const tSeen = await figuresSeen;
  const changeAt = await page.evaluate(() => window.__changeAt);
  await page.waitForFunction(
    () => performance.getEntriesByName("snapscope:peak-figures").length > 0,
  );
  const markMs = await page.evaluate(() => {
    const at = (n) => performance.getEntriesByName(n)[0]?.startTime ?? NaN;
    return at("snapscope:peak-figures") - at("snapscope:file-chosen");
  });
  return { driverMs: tSeen - changeAt, setInputFilesMs: changeAt - t0, markMs };
}

/** The value after option `k` on the command line, or `d`. */
export const arg = (k, d) => {
  const i = process.argv.indexOf(k);
  return i > 0 ? process.argv[i + 1] : d;
};
