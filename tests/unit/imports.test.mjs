// Imports of the page flow one way, main → views → ui, with no circle: read every import of
// www/src (type-only ones too) and look for a cycle and for arrows against the flow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const SRC = new URL("../../www/src/", import.meta.url).pathname;

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** module (path under www/src, no extension) → the modules of www/src it imports. */
function graph() {
  const g = new Map();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, "utf8");
    const deps = [...text.matchAll(/(?:from|import)\s+'(\.[^']*)'/g)]
      .map(([, spec]) => join(dirname(file), spec))
      .map((p) =>
        existsSync(p + ".ts")
          ? p
          : existsSync(join(p, "index.ts"))
            ? join(p, "index")
            : null,
      )
      .filter((p) => p !== null)
      .map((p) => relative(SRC, p));
    g.set(relative(SRC, file).replace(/\.ts$/, ""), deps);
  }
  return g;
}

test("no import cycle in www/src", () => {
  const g = graph();
  assert.ok(g.size > 20, `read ${g.size} modules`);
  const state = new Map(); // 1 = on the current path, 2 = done
  const cycles = [];
  const visit = (m, path) => {
    if (state.get(m) === 2) return;
    if (state.get(m) === 1) {
      cycles.push([...path.slice(path.indexOf(m)), m].join(" → "));
      return;
    }
    state.set(m, 1);
    for (const d of g.get(m) ?? []) visit(d, [...path, m]);
    state.set(m, 2);
  };
  for (const m of g.keys()) visit(m, []);
  assert.deepEqual(cycles, []);
});

test("imports flow main → views → ui", () => {
  const against = [];
  for (const [m, deps] of graph())
    for (const d of deps) {
      const wrong =
        d === "main" ||
        (m.startsWith("ui/") && d.startsWith("views/")) ||
        (m === "app-types" && !["client", "generated/answers"].includes(d)) ||
        (m.startsWith("generated/") && d !== m);
      if (wrong) against.push(`${m} → ${d}`);
    }
  assert.deepEqual(against, []);
});
