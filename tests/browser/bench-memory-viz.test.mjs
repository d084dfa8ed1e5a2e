// scripts/bench_memory_viz.mjs keeps the promises the README makes of it: without a memory_viz
// copy it measures nothing and exits 0; with one, the page's CDN imports resolve to the local
// packages (nothing fetched), the file is dropped on the page and timed to its polygons; a request
// off the local servers is aborted, reported, and voids the pair's ratio. memory_viz itself is
// not in the repository: a stand-in page with its imports, its controls and its drop plays it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, DIST, FIXTURES } from "./harness.mjs";

const SCRIPT = join(ROOT, "scripts/bench_memory_viz.mjs");
const FILE = join(FIXTURES, "cuda_training.pickle");
const PACKAGES = ["d3", "d3-axis", "d3-scale", "d3-zoom", "d3-brush"];

function bench(args, env = {}) {
  const r = spawnSync("node", [SCRIPT, ...args], {
    encoding: "utf8",
    env: { ...process.env, SNAPSCOPE_MEMORY_VIZ_DIR: "", ...env },
    timeout: 300000,
  });
  const rows = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { ...r, rows };
}

/** A stand-in memory_viz: MemoryViz.js importing the five CDN modules memory_viz imports (each
 * a local package; if one did not resolve the module would not run and the script would fail
 * waiting for the page's three <select>s), and on a drop: the file read, then a polygon.
 * `leak`: it also fetches a URL off the machine first. */
function standIn(leak) {
  const dir = mkdtempSync(join(tmpdir(), "memory-viz-stand-in-"));
  for (const p of PACKAGES) {
    mkdirSync(join(dir, "node_modules", p), { recursive: true });
    writeFileSync(
      join(dir, "node_modules", p, "package.json"),
      JSON.stringify({ name: p, version: "0.0.0", module: "index.js" }),
    );
    writeFileSync(
      join(dir, "node_modules", p, "index.js"),
      `export const name = ${JSON.stringify(p)};\n`,
    );
  }
  const imports = PACKAGES.map(
    (p, i) =>
      `import * as m${i} from "https://cdn.skypack.dev/${p}@${p === "d3" ? 5 : 1}";`,
  ).join("\n");
  writeFileSync(
    join(dir, "MemoryViz.js"),
    `${imports}
for (let i = 0; i < 3; i++) document.body.append(document.createElement("select"));
document.body.addEventListener("drop", (e) => {
  const r = new FileReader();
  r.onload = async () => {
    ${leak ? 'await fetch("http://example.invalid/d3.js").catch(() => {});' : ""}
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    const p = document.createElementNS("http://www.w3.org/2000/svg", "polygon");
    p.setAttribute("points", "0,0 10,0 10,10");
    p.dataset.bytes = String(r.result.byteLength);
    svg.append(p);
    document.body.append(svg);
  };
  r.readAsArrayBuffer(e.dataTransfer.files[0]);
});
`,
  );
  return dir;
}

test("without a memory_viz copy: how to get one, nothing measured, exit 0", () => {
  const r = bench(["--files", FILE]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /nothing measured, nothing claimed/);
  assert.match(r.stdout, /npm install d3@5 d3-axis@1/);
  assert.equal(r.rows.length, 0);
  const lacking = bench(["--memory-viz", tmpdir(), "--files", FILE]);
  assert.equal(lacking.status, 0);
  assert.match(lacking.stdout, /lacks MemoryViz\.js/);
});

test("a copy: its CDN imports served locally, the dropped file timed to the polygons", () => {
  const [dir, viz] = [mkdtempSync(join(tmpdir(), "bench-mv-")), standIn(false)];
  const r = bench([
    "--memory-viz",
    viz,
    "--files",
    FILE,
    "--pairs",
    "1",
    "--dist",
    DIST,
    "--out",
    join(dir, "out.json"),
    "--settle-ms",
    "100",
  ]);
  assert.equal(r.status, 0, r.stderr);
  const [row] = r.rows;
  assert.deepEqual(row.memory_viz.errors, []);
  assert.deepEqual(row.memory_viz.refused, []);
  assert.deepEqual(row.snapscope.refused, []);
  assert.equal(row.memory_viz.polygons, 1);
  assert.ok(row.memory_viz.in_page_ms > 0 && row.memory_viz.driver_ms > 0);
  assert.ok(row.snapscope.in_page_ms > 0 && row.snapscope.driver_ms > 0);
  assert.ok(row.memory_viz_over_snapscope_in_page > 0);
  assert.match(r.stdout, /medians of 1 pair/);
  assert.doesNotMatch(r.stdout, /were aborted/);
  // Last, so a failing test keeps its files to look at.
  for (const d of [dir, viz]) rmSync(d, { recursive: true, force: true });
});

test("a request off the machine is aborted, reported, and the pair claims no ratio", () => {
  const [dir, viz] = [mkdtempSync(join(tmpdir(), "bench-mv-")), standIn(true)];
  const r = bench([
    "--memory-viz",
    viz,
    "--files",
    FILE,
    "--pairs",
    "1",
    "--dist",
    DIST,
    "--out",
    join(dir, "out.json"),
    "--settle-ms",
    "100",
  ]);
  assert.equal(r.status, 0, r.stderr);
  const [row] = r.rows;
  assert.ok(
    row.memory_viz.refused.some((u) => u.startsWith("http://example.invalid/")),
    JSON.stringify(row.memory_viz),
  );
  assert.equal(row.memory_viz_over_snapscope_in_page, undefined);
  assert.match(r.stdout, /were aborted .*example\.invalid/);
  for (const d of [dir, viz]) rmSync(d, { recursive: true, force: true });
});
