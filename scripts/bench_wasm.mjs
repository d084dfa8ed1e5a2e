#!/usr/bin/env node
// The page's engine (the wasm of www/pkg, as scripts/build.sh wrote it) in Node, without the
// browser: the read (chunks copied into wasm memory as the worker does, decoded as they come)
// and the replay of one file, N times in one process after the page's warm-up. Prints the first
// run (what a page's first load meets: fresh memory) and the min and median of the others. For
// A/B of engine changes, alternate two builds' pkg folders (not a test; V8 in Node is the same
// engine as the page's, minus the browser's other threads).
//
// usage: node scripts/bench_wasm.mjs FILE [--runs 8] [--pkg www/pkg] [--chunk-bytes 1048576] [--settle-ms 1000]
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { arg } from "./bench_page.mjs";

const file = process.argv[2];
if (!file || file.startsWith("--")) {
  console.error(
    "usage: node scripts/bench_wasm.mjs FILE [--runs 8] [--pkg www/pkg]",
  );
  process.exit(2);
}
const ROOT = new URL("../", import.meta.url).pathname;
const pkg = resolve(ROOT, arg("--pkg", "www/pkg"));
const runs = Number(arg("--runs", "8"));
const chunk = Number(arg("--chunk-bytes", String(1 << 20)));
const mod = await import(`${pkg}/snapscope.js`);
mod.initSync({ module: readFileSync(`${pkg}/snapscope_bg.wasm`) });
const { Engine, wasmMemory } = mod;
Engine.warmUp(true);
// As the page's benchmark does after the engine is ready: V8's background compiles of the
// warm-up's hot functions finish meanwhile (without it the first run meets baseline code).
await new Promise((done) =>
  setTimeout(done, Number(arg("--settle-ms", "1000"))),
);
const bytes = readFileSync(file);

const read = [];
const replay = [];
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const e = new Engine();
  e.begin("bench", bytes.length, 0);
  for (let o = 0; o < bytes.length; o += chunk) {
    const c = bytes.subarray(o, Math.min(bytes.length, o + chunk));
    const at = e.pushRoom(c.length);
    new Uint8Array(wasmMemory().buffer, at, c.length).set(c);
    e.pushed(c.length);
  }
  e.parse();
  const t1 = performance.now();
  e.replay();
  read.push(t1 - t0);
  replay.push(performance.now() - t1);
  e.free();
}
const ms = (x) => `${x.toFixed(0)} ms`;
const stats = (xs) => {
  const rest = xs.slice(1).sort((a, b) => a - b);
  return rest.length
    ? `first ${ms(xs[0])}, then min ${ms(rest[0])} median ${ms(rest[rest.length >> 1])}`
    : `first ${ms(xs[0])}`;
};
console.log(`read + decode: ${stats(read)}`);
console.log(`replay:        ${stats(replay)}`);
console.log(`both:          ${stats(read.map((x, i) => x + replay[i]))}`);
