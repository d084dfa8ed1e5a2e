// The page's engine is the CLI's engine compiled to wasm32, where `usize` is 32 bits: a size or an
// address past 2^32 that the native build (64 bits) handles must not wrap, trap or answer
// differently there. Snapshots with hostile values (scripts/gen_hostile_values.py, seeded) go
// through the wasm engine in Node (www/pkg) and through the CLI: each gets the same overview and
// the same `analyze --mode all` answer for every device, to the digit, or the same refusal.
// Needs target/release/snapscope and www/pkg (scripts/build.sh).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const CLI = join(ROOT, "target/release/snapscope");
const FILES = 60;
const SEED = 20261207;

/** JSON with every number kept as its text (u64 figures exceed a double's 53 bits). */
function exact(text) {
  return JSON.parse(
    text.replace(
      /("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
      (_, string, number) => string ?? `"#${number}"`,
    ),
  );
}

/** The engine's error code in a thrown wasm error (JSON text), or the thrown value itself. */
function codeOf(thrown) {
  if (typeof thrown !== "string") throw thrown; // a trap: a bug, never an answer
  return JSON.parse(thrown).code;
}

/** Overview and per-device `analyze all` from the wasm engine, as exact JSON; or its refusal. */
function wasmAnswers({ Engine, wasmMemory }, path) {
  const bytes = readFileSync(path);
  const engine = new Engine();
  try {
    engine.begin(path, bytes.length, 0);
    const at = engine.pushRoom(bytes.length);
    new Uint8Array(wasmMemory().buffer, at, bytes.length).set(bytes);
    engine.pushed(bytes.length);
    engine.parse();
    const overview = engine.replay();
    const devices = {};
    for (const d of JSON.parse(overview).devices) {
      try {
        devices[d.device] = exact(
          engine.analyze("all", d.device, '"allocated_peak"'),
        );
      } catch (e) {
        devices[d.device] = { refused: codeOf(e) };
      }
    }
    return { overview: exact(overview), devices };
  } catch (e) {
    return { refused: codeOf(e) };
  } finally {
    engine.free();
  }
}

/** The same from the CLI. */
function cliAnswers(path) {
  const run = (...args) =>
    spawnSync(CLI, [...args, path, "--json"], { encoding: "utf8" });
  const overview = run("overview");
  if (overview.status !== 0)
    return { refused: JSON.parse(overview.stderr).error.code };
  const analyze = run("analyze", "--mode", "all");
  const devices = {};
  if (analyze.status === 0) {
    for (const d of exact(analyze.stdout).devices)
      devices[d.device.slice(1)] = d;
  } else {
    const code = JSON.parse(analyze.stderr).error.code;
    for (const d of JSON.parse(overview.stdout).devices)
      devices[d.device] = { refused: code };
  }
  return { overview: exact(overview.stdout), devices };
}

test("hostile values: the wasm engine answers exactly as the native CLI, or refuses the same way", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "snapscope-hostile-values-"));
  try {
    execFileSync("python3", [
      join(ROOT, "scripts/gen_hostile_values.py"),
      String(SEED),
      String(FILES),
      dir,
    ]);
    const pkg = join(ROOT, "www/pkg");
    const engine = await import(join(pkg, "snapscope.js"));
    engine.initSync({ module: readFileSync(join(pkg, "snapscope_bg.wasm")) });
    const info = console.info;
    console.info = () => {}; // the engine's load line per file
    let answered = 0;
    try {
      for (const f of readdirSync(dir).sort()) {
        const path = join(dir, f);
        const wasm = wasmAnswers(engine, path);
        const cli = cliAnswers(path);
        // The overview names its source by path in both; the figures are what must agree.
        assert.deepEqual(wasm, cli, f);
        if (!wasm.refused) answered += 1;
      }
    } finally {
      console.info = info;
    }
    // Most changes leave a snapshot the engine reads: the comparison is of answers, not errors.
    t.diagnostic(`${answered} of ${FILES} answered, the rest refused alike`);
    assert.ok(
      answered >= FILES / 2,
      `only ${answered} of ${FILES} were answered`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
