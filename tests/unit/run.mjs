// Unit tests, no browser: the pure page modules (*.test.ts, bundled by esbuild into a temporary
// folder since node 20 runs no TypeScript) and the plain-JS checks (*.test.mjs), all under
// `node --test`. Exits non-zero when a test fails. Run: node tests/unit/run.mjs
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const { build } = createRequire(join(here, "../../www/package.json"))(
  "esbuild",
);

const out = mkdtempSync(join(tmpdir(), "snapscope-unit-"));
const named = (ext) =>
  readdirSync(here)
    .filter((f) => f.endsWith(ext))
    .sort();
const ts = named(".test.ts");
await build({
  entryPoints: ts.map((f) => join(here, f)),
  outdir: out,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  sourcemap: "inline",
  logLevel: "warning",
});
const files = [
  ...ts.map((f) => join(out, f.replace(/\.ts$/, ".mjs"))),
  ...named(".test.mjs").map((f) => join(here, f)),
];
const run = spawnSync(
  process.execPath,
  ["--enable-source-maps", "--test", ...files],
  { stdio: "inherit" },
);
rmSync(out, { recursive: true, force: true });
process.exit(run.status ?? 1);
