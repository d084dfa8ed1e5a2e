// The page's protocol types (www/src/types.ts, written by hand) against the engine's real JSON:
// the native CLI's --json on real snapshots, walked against the declared interfaces. Every key
// in the JSON must be declared, every non-optional declared key present, and each value of the
// declared kind (number, string, boolean, null, array, object; `| null` and `?` honoured).
// Needs target/release/snapscope and ../shared/snapshots (skipped without the corpus).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const ts = createRequire(join(ROOT, "www/package.json"))("typescript");
const CLI = join(ROOT, "target/release/snapscope");
const CORPUS = join(ROOT, "../shared/snapshots");
const SKIP = existsSync(CORPUS)
  ? false
  : `no corpus at ${CORPUS}: the protocol types are checked on real snapshots only`;

/** Snapshots that between them reach every declared shape. */
const FILES = {
  "CUDA with C++ frames":
    "cuda/notHanmin__assignment2-systems/memory_snapshot.pickle",
  "CUDA, three devices and an OOM":
    "cuda/Constructor-Sun__code_location/memory_snapshot.pickle",
  "dump only": "cuda/kkaitlyn111__cs336-a2-systems/memory_snapshot.pickle",
  "no devices": "cuda/angelolmn__HitsBE/my_snapshot.pickle",
  "NPU, two devices": "npu/snapshot_with_multi_devices.pkl",
  "annotations, inconsistent trace": "synthetic/synthetic_mosaic_output.pickle",
};

/** Keys of the CLI's JSON envelope, allowed on a root beside the type's own. */
const ENVELOPE = ["ok", "schema_version"];

/** The CLI's JSON answer; its error envelope in the message when it fails. */
function cli(...args) {
  try {
    const opts = { encoding: "utf8", maxBuffer: 1 << 28, stdio: "pipe" };
    return JSON.parse(execFileSync(CLI, args, opts));
  } catch (e) {
    throw new Error(`snapscope ${args.join(" ")}: ${e.stdout || e.message}`);
  }
}

// ---- the declarations ------------------------------------------------------------------------

const source = ts.createSourceFile(
  "types.ts",
  readFileSync(join(ROOT, "www/src/types.ts"), "utf8"),
  ts.ScriptTarget.ES2022,
  true,
);
const DECLS = new Map();
for (const s of source.statements)
  if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s))
    DECLS.set(s.name.text, s);

const kindOf = (v) =>
  v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
const show = (v) => JSON.stringify(v)?.slice(0, 60);

/** Interfaces a check went through, to see that the corpus reaches them. */
const seen = new Set();

/** Problems of `v` against the type node `t`, each "path: what"; none when it fits. */
function check(v, t, path) {
  const K = ts.SyntaxKind;
  const want = (k) =>
    kindOf(v) === k ? [] : [`${path}: ${kindOf(v)} ${show(v)}, declared ${k}`];
  switch (t.kind) {
    case K.NumberKeyword:
      return want("number");
    case K.StringKeyword:
      return want("string");
    case K.BooleanKeyword:
      return want("boolean");
    case K.NullKeyword:
      return want("null");
    case K.UnknownKeyword:
      return [];
    case K.ParenthesizedType:
      return check(v, t.type, path);
    case K.LiteralType: {
      const lit = t.literal;
      if (lit.kind === K.NullKeyword) return want("null");
      const value =
        lit.kind === K.StringLiteral
          ? lit.text
          : lit.kind === K.NumericLiteral
            ? Number(lit.text)
            : lit.kind === K.TrueKeyword;
      return v === value
        ? []
        : [`${path}: ${show(v)}, declared ${t.getText()}`];
    }
    case K.UnionType: {
      // The member that fits, else the problems of the one that comes closest.
      const tries = t.types.map((m) => check(v, m, path));
      if (tries.some((p) => p.length === 0)) return [];
      const closest = tries.filter(
        (p) => !p.every((m) => m.startsWith(`${path}: `)),
      );
      return closest.length === 1
        ? closest[0]
        : [`${path}: ${kindOf(v)} ${show(v)}, declared ${t.getText()}`];
    }
    case K.ArrayType:
      return kindOf(v) !== "array"
        ? want("array")
        : v.flatMap((x, i) => check(x, t.elementType, `${path}[${i}]`));
    case K.TupleType:
      if (kindOf(v) !== "array") return want("array");
      if (v.length !== t.elements.length)
        return [`${path}: ${v.length} items, declared ${t.getText()}`];
      return v.flatMap((x, i) => check(x, t.elements[i], `${path}[${i}]`));
    case K.TypeLiteral:
      return members(v, t.members, path);
    case K.TypeReference: {
      const name = t.typeName.getText();
      if (name === "Record") {
        if (kindOf(v) !== "object") return want("object");
        return Object.entries(v).flatMap(([k, x]) =>
          check(x, t.typeArguments[1], `${path}.${k}`),
        );
      }
      const d = DECLS.get(name);
      if (!d) return [`${path}: cannot check type ${name} (not in types.ts)`];
      if (ts.isTypeAliasDeclaration(d)) return check(v, d.type, path);
      if (d.heritageClauses)
        return [`${path}: ${name} extends another type; declare its members`];
      if (kindOf(v) === "object") seen.add(name);
      return members(v, d.members, path);
    }
    default:
      return [`${path}: cannot check ${ts.SyntaxKind[t.kind]} ${t.getText()}`];
  }
}

function members(v, list, path, allowed = []) {
  if (kindOf(v) !== "object")
    return [`${path}: ${kindOf(v)} ${show(v)}, declared an object`];
  const declared = new Map(
    list.filter(ts.isPropertySignature).map((m) => [m.name.getText(), m]),
  );
  const out = [];
  for (const k of Object.keys(v))
    if (!declared.has(k) && !allowed.includes(k))
      out.push(`${path}.${k}: not declared (${kindOf(v[k])} ${show(v[k])})`);
  for (const [k, m] of declared) {
    if (k in v) out.push(...check(v[k], m.type, `${path}.${k}`));
    else if (!m.questionToken) out.push(`${path}.${k}: declared, missing`);
  }
  return out;
}

/** Problems of a root value of type `name` (an interface, with the envelope keys allowed or not). */
function checkRoot(v, name, path, envelope) {
  const d = DECLS.get(name);
  assert.ok(
    d && ts.isInterfaceDeclaration(d),
    `types.ts declares no interface ${name}`,
  );
  seen.add(name);
  return members(v, d.members, path, envelope ? ENVELOPE : []);
}

/**
 * The first problem at each path, array indices and template names dropped: one drift in 10 000
 * tree nodes or in every template's answer reads as one line.
 */
function report(problems) {
  const first = new Map();
  for (const p of problems) {
    const general = p
      .replace(/\[\d+\]/g, "[]")
      .replace(/^query\([^)]*\)/, "query(T)");
    const path = general.slice(0, general.indexOf(": "));
    if (!first.has(path)) first.set(path, p);
  }
  return [...first.values()].slice(0, 40).join("\n");
}

// ---- CLI outputs → root types ----------------------------------------------------------------

const templates = SKIP ? [] : cli("capabilities", "--json").templates;
// Since the JSON-rows change, `query` and `sql` answer object rows unless asked for the array
// form, which is what the page reads (and all an older CLI has).
const arrayRows = (command) =>
  !SKIP &&
  execFileSync(CLI, [command, "--help"], { encoding: "utf8" }).includes(
    "--rows",
  )
    ? ["--rows", "arrays"]
    : [];
const SQL_ROWS = arrayRows("sql");
const QUERY_ROWS = arrayRows("query");

/**
 * Each CLI command and the declared type of (parts of) its answer: [type, value, path, envelope].
 * The page asks the wasm engine the same questions (overview, analyze, tree, sql, query).
 */
const ROOTS = {
  "overview --json → Overview": (f) => [
    ["Overview", cli("overview", f, "--json"), "overview", true],
  ],
  "analyze --mode all → devices[i]: DeviceAnalysis": (f) =>
    cli("analyze", f, "--mode", "all", "--json").devices.map((d, i) => [
      "DeviceAnalysis",
      d,
      `devices[${i}]`,
      false,
    ]),
  "analyze --mode tree → devices[i].tree: MemoryTree": (f) =>
    cli("analyze", f, "--mode", "tree", "--json").devices.map((d, i) => [
      "MemoryTree",
      d.tree,
      `devices[${i}].tree`,
      false,
    ]),
  "analyze --mode categories → devices[i]: CategoryBreakdown, rules: RuleInfo[]":
    (f) => {
      const a = cli("analyze", f, "--mode", "categories", "--json");
      return [
        ...a.devices.map((d, i) => [
          "CategoryBreakdown",
          d,
          `devices[${i}]`,
          false,
        ]),
        ...a.rules.map((r, i) => ["RuleInfo", r, `rules[${i}]`, false]),
      ];
    },
  "analyze --mode steps → devices[i]: StepsAnalysis": (f) =>
    cli("analyze", f, "--mode", "steps", "--json").devices.map((d, i) => [
      "StepsAnalysis",
      d,
      `devices[${i}]`,
      false,
    ]),
  "analyze --mode streams → devices[i]: StreamsAnalysis": (f) =>
    cli("analyze", f, "--mode", "streams", "--json").devices.map((d, i) => [
      "StreamsAnalysis",
      d,
      `devices[${i}]`,
      false,
    ]),
  "simulate → devices[i]: Simulation": (f) =>
    cli("simulate", f, "--json").devices.map((d, i) => [
      "Simulation",
      d,
      `devices[${i}]`,
      false,
    ]),
  "sql → Rows": (f) => [
    [
      "Rows",
      cli(
        "sql",
        f,
        "SELECT action, COUNT(*) AS n, NULL AS empty, MAX(time_us) AS t FROM traces GROUP BY action",
        ...SQL_ROWS,
        "--json",
      ),
      "sql",
      true,
    ],
  ],
  "query --template T → TemplateRows (every template)": (f) => {
    const ov = cli("overview", f, "--json");
    const traced = ov.devices.find((d) => d.events > 0);
    if (!ov.devices.length) return []; // nothing to query
    return templates.flatMap((t) => {
      const params = {};
      for (const p of t.params.filter((p) => p.required)) {
        if (p.name !== "event_id" || !traced) return [];
        params.event_id = traced.peaks.allocated.event ?? 0;
      }
      if (traced) params.device = traced.device;
      const args = [
        "query",
        f,
        "-t",
        t.name,
        "--params",
        JSON.stringify(params),
      ];
      const answer = cli(...args, ...QUERY_ROWS, "--json");
      return [["TemplateRows", answer, `query(${t.name})`, true]];
    });
  },
};

test("capabilities --json: templates are Template[]", { skip: SKIP }, () => {
  const problems = templates.flatMap((t, i) =>
    checkRoot(t, "Template", `templates[${i}]`, false),
  );
  assert.equal(problems.length, 0, report(problems));
});

for (const [label, rel] of Object.entries(FILES)) {
  for (const [root, answers] of Object.entries(ROOTS)) {
    test(`${label}: ${root}`, { skip: SKIP }, () => {
      const problems = answers(join(CORPUS, rel)).flatMap(
        ([name, v, path, envelope]) => checkRoot(v, name, path, envelope),
      );
      assert.equal(problems.length, 0, `${rel}\n${report(problems)}`);
    });
  }
}

test(
  "analyze --mode compare --ref → comparison: Comparison",
  { skip: SKIP },
  (t) => {
    // Devices 0 vs 0 and 1: the union has a device on one side only.
    const [a, b] = [FILES["CUDA with C++ frames"], FILES["NPU, two devices"]];
    const args = ["analyze", join(CORPUS, a), "--mode", "compare"];
    const { comparison } = cli(...args, "--ref", join(CORPUS, b), "--json");
    if (comparison.devices.every((d) => !("figures" in d)))
      return t.skip("this engine predates DeviceComparison.figures (issue 13)");
    const problems = checkRoot(comparison, "Comparison", "comparison", false);
    assert.equal(problems.length, 0, report(problems));
  },
);

test(
  "ranks --json → RanksReport, --summary-out → FileSummary (the page's Ranks view)",
  { skip: SKIP },
  () => {
    // Every file of FILES (a worst rank, outliers, several devices) and one that fails (errors).
    const files = [
      ...Object.values(FILES).map((f) => join(CORPUS, f)),
      join(ROOT, "fixtures/bad/truncated.pickle"),
    ];
    const dir = mkdtempSync(join(tmpdir(), "snapscope-summaries-"));
    try {
      const ranks = cli("ranks", ...files, "--summary-out", dir, "--json");
      assert.ok(ranks.summary.worst && ranks.errors.length === 1);
      const problems = checkRoot(ranks, "RanksReport", "ranks", true);
      // One summary per file name: the three memory_snapshot.pickle of FILES share one (the CLI
      // names a summary after its file's name only).
      const summaries = readdirSync(dir);
      assert.ok(summaries.length >= 3, summaries.join(", "));
      for (const f of summaries)
        problems.push(
          ...checkRoot(
            JSON.parse(readFileSync(join(dir, f), "utf8")),
            "FileSummary",
            f,
            false,
          ),
        );
      assert.equal(problems.length, 0, report(problems));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  "the corpus reaches every interface the CLI answers contain",
  { skip: SKIP },
  () => {
    // Interfaces reachable from the roots' declarations, by name.
    const reach = new Set();
    const walk = (node) => {
      if (ts.isTypeReferenceNode(node)) {
        const name = node.typeName.getText();
        const d = DECLS.get(name);
        if (d && !reach.has(name)) {
          reach.add(name);
          walk(d);
        }
      }
      ts.forEachChild(node, walk);
    };
    for (const name of [
      "Overview",
      "DeviceAnalysis",
      "MemoryTree",
      "Rows",
      "TemplateRows",
      "Template",
      "CategoryBreakdown",
      "RuleInfo",
      "StepsAnalysis",
      "StreamsAnalysis",
      "Simulation",
      "RanksReport",
      "FileSummary",
    ]) {
      reach.add(name);
      walk(DECLS.get(name));
    }
    const missed = [...reach].filter((n) => !seen.has(n));
    assert.deepEqual(
      missed,
      [],
      "declared but never met in the corpus: add a snapshot that has them",
    );
  },
);
