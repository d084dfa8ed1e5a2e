//! The tools: their descriptions and argument schemas, and each call as the command line it
//! is (run through `crate::run_captured`, so the answer is the CLI's `--json`), paged, bounded
//! and with its provenance.

use super::access::Access;
use super::cache;
use serde_json::{json, Map, Value};
use snapscope::analysis::basis::Counter;
use snapscope::bounds;
use snapscope::codes::ErrorCode;
use snapscope::engine::At;
use snapscope::{Error, Result};
use std::path::PathBuf;

/// One tool: name, description for a model, and its arguments' JSON Schema properties.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: String,
    pub properties: Value,
    pub required: &'static [&'static str],
}

/// A tool's answer: the structured content and its text rendering.
pub struct Answer {
    pub structured: Value,
    pub text: String,
}

fn common(extra: Value) -> Value {
    let mut p = json!({
        "snapshot": {"type": "string", "description": "Path of a snapshot (.pickle, .pickle.gz, .json) or a SnapshotDB (.db); relative paths are from the server's working directory."},
        "max_bytes": {"type": "integer", "minimum": 4096, "description": "Bound of the answer in bytes (default 262144 = 256 KiB); lists beyond it are cut and `bounds.cut` says where."},
    });
    p.as_object_mut().expect("object").extend(extra.as_object().cloned().unwrap_or_default());
    p
}

fn device() -> Value {
    json!({"type": "integer", "description": "Device index (from `overview`); default: every device, or the first one where one is needed."})
}
fn event() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "Event index (0-based position in the device's trace); default: the allocated peak."})
}
fn paging(default_limit: u64) -> Value {
    json!({
        "limit": {"type": "integer", "minimum": 1, "description": format!("Items per page (default {default_limit}).")},
        "cursor": {"type": "integer", "minimum": 0, "description": "Where the page starts: the `next_cursor` of the previous answer (default 0)."},
    })
}
fn merge(a: Value, b: Value) -> Value {
    let mut a = a;
    a.as_object_mut().expect("object").extend(b.as_object().cloned().unwrap_or_default());
    a
}

pub fn defs() -> Vec<ToolDef> {
    let modes = snapscope::engine::ANALYSES.iter().filter(|m| **m != "compare").copied().collect::<Vec<_>>();
    let templates: Vec<String> = snapscope::engine::Engine::catalogue().iter().map(|t| format!("{} ({})", t.name, t.description)).collect();
    let template_names: Vec<&str> = snapscope::engine::Engine::catalogue().iter().map(|t| t.name).collect();
    vec![
        ToolDef {
            name: "overview",
            title: "Snapshot overview",
            description: "Start here. What a PyTorch / torch_npu memory snapshot holds, per device: event count, memory at the dump (allocated, active, reserved), the peak of each counter with the event it happens at, segments, and whether the allocator replay is exact (`consistency.ok`; when false, figures are partial). All sizes are bytes (integers); events are 0-based indices into the device's trace. Same JSON as `snapscope overview FILE --json`. Next: `analyze` (mode oom/peak/leak/fragment) or `holders` at the peak.".into(),
            properties: common(json!({})),
            required: &["snapshot"],
        },
        ToolDef {
            name: "analyze",
            title: "Analyses of a snapshot",
            description: format!("The analyses of `snapscope analyze FILE --mode MODE --json`, per device. Modes: {}. `overview` = figures and prioritized findings (what to fix first); `peak` = who holds memory at the peak (by stack, top frame, category); `oom` = each recorded out-of-memory with its verdict (too little memory vs fragmentation) and suggestions; `leak` = blocks allocated in the window still live at the dump, and whether the floor rises; `fragment` = free bytes inside reserved segments; `categories` = live memory by category (parameters, activations, optimizer state, ...); `steps` = phases and per-step peaks; `streams` = per stream; `tree` = the memory tree (prefer the `tree` tool, it pages); `tune` = allocator settings simulated and ranked; `all` = everything (large: prefer one mode). Bytes are integers. Next: `holders`, `event`, `stack` for the evidence, `simulate` for a fix.", modes.join(", ")),
            properties: common(json!({
                "mode": {"type": "string", "enum": modes, "description": "Which analysis (default all)."},
                "device": device(),
                "event": event(),
                "device_memory": {"type": ["string", "integer"], "description": "Device capacity for simulated OOM verdicts (tune, what_if), e.g. \"80GiB\" or bytes; default: seen at a recorded OOM."},
            })),
            required: &["snapshot"],
        },
        ToolDef {
            name: "holders",
            title: "Who holds memory at an event",
            description: "Who holds the live memory right after one event (default: the allocated peak of the device): `by` = stack (each allocation stack with block count and bytes, summing exactly to the active counter; the `query` template active_memory_callstack_at_event), category (the `query` template categories), or frame (the top frames of `analyze --mode peak`, at most 10). Rows carry `stack_id`: pass it to `stack` for the whole stack. Bytes are block sizes in bytes. Paged: `limit`, `cursor`; `total`, `returned`, `has_more`, `next_cursor` in the answer.".into(),
            properties: common(merge(
                json!({
                    "device": device(),
                    "event": event(),
                    "by": {"type": "string", "enum": ["stack", "frame", "category"], "description": "How to group (default stack)."},
                    "stack_bytes": {"type": "integer", "minimum": 0, "description": "Cut each stack text to this many bytes (default 1024; the stack_id stays whole)."},
                }),
                paging(20),
            )),
            required: &["snapshot"],
        },
        ToolDef {
            name: "tree",
            title: "Memory tree at an event",
            description: "The memory tree right after one event (default: the allocated peak): live bytes per frame path from the outermost frame in, each node with total_bytes (= self_bytes + the children's), blocks and `share` of the root (the root equals the active counter). `depth` and `min_share` prune it (nodes are in depth-first order; a pruned node's bytes stay in its parent's total). Same nodes as `snapscope analyze FILE --mode tree --device D --event E --json`. Paged with `limit`/`cursor`. Next: `holders` by stack for the exact sites, `stack` for a stack.".into(),
            properties: common(merge(
                json!({
                    "device": device(),
                    "event": event(),
                    "depth": {"type": "integer", "minimum": 0, "description": "Deepest node depth kept (default: all)."},
                    "min_share": {"type": "number", "minimum": 0, "maximum": 1, "description": "Drop nodes holding less than this share of the root (default 0)."},
                }),
                paging(300),
            )),
            required: &["snapshot"],
        },
        ToolDef {
            name: "event",
            title: "One event",
            description: "One trace event: its action (alloc, free_requested, free_completed, segment_alloc, oom, ...), address, size (bytes), stream, the counters right after it (allocated, active, reserved, bytes) and its stack text (cut to `stack_bytes`, `stack_id` kept). The `query` template `event` with `id`. Next: `stack` with the `stack_id` for every frame, `holders` at this event.".into(),
            properties: common(json!({
                "device": device(),
                "event": {"type": "integer", "minimum": 0, "description": "Event index (0-based position in the device's trace)."},
                "stack_bytes": {"type": "integer", "minimum": 0, "description": "Cut the stack text to this many bytes (default 2048)."},
            })),
            required: &["snapshot", "event"],
        },
        ToolDef {
            name: "stack",
            title: "One stack's frames",
            description: "The frames of one stack, innermost (the allocation site, position 0) first, each with filename, line and function name. Give `stack_id` (from `holders`, `event` or `query` rows) or `event` (that event's stack). Paged with `limit`/`cursor` (stacks can have 100k frames).".into(),
            properties: common(merge(
                json!({
                    "device": device(),
                    "stack_id": {"type": "integer", "minimum": 0, "description": "A stack_id from another answer."},
                    "event": {"type": "integer", "minimum": 0, "description": "An event whose stack to list (instead of stack_id)."},
                }),
                paging(100),
            )),
            required: &["snapshot"],
        },
        ToolDef {
            name: "compare",
            title: "Compare two snapshots",
            description: "Two snapshots side by side (`snapscope analyze SNAPSHOT --mode compare --ref REF --json`): per device the figures of both (peaks, at the dump, events), the allocated peak's change in bytes, categories that changed, and the stacks at the peaks that appeared, grew, shrank or vanished. Use it for a regression between two runs or steps.".into(),
            properties: common(json!({"ref": {"type": "string", "description": "The other snapshot or SnapshotDB (the reference, side b)."}})),
            required: &["snapshot", "ref"],
        },
        ToolDef {
            name: "diff",
            title: "Diff two runs or two moments",
            description: "What changed, by category and by site (`snapscope diff … --json`), sites matched by meaning (function and file, then callers; a moved line shows as `line_change`, not as a new site). Three forms: `snapshot` and `ref` (two runs at their allocated peaks, mode files); the same with `steps: true` (step N of one run against step N of the other, at each step's allocated peak, mode steps); or `snapshot` with `at: [A, B]` (two moments of one run: what was kept, freed, born and transient between them, mode moments; a moment is an event index, \"peak\", \"start\" or \"end\").".into(),
            properties: common(json!({
                "ref": {"type": "string", "description": "The other snapshot or SnapshotDB (side B); not with `at`."},
                "steps": {"type": "boolean", "description": "With `ref`: compare step by step (default false)."},
                "at": {"type": "array", "items": {"type": ["string", "integer"]}, "minItems": 2, "maxItems": 2, "description": "Two moments of `snapshot`: event indices or \"peak\", \"start\", \"end\"."},
                "device": device(),
                "top": {"type": "integer", "minimum": 1, "description": "Sites per device or per step (default 20)."},
            })),
            required: &["snapshot"],
        },
        ToolDef {
            name: "simulate",
            title: "What if: allocator settings",
            description: "Replay the caching allocator on the recorded requests under other settings (`snapscope simulate FILE --alloc-conf S --json`): reserved and allocated peaks in bytes, free memory at the reserved peak, segment allocations, whether and where it runs out of memory within the device capacity, the recorded OOMs it would have served. Without `alloc_conf`: the recorded settings and the self-check that the simulation reproduces the recording. Pinned host memory is skipped unless `device` names it. For a ranked set of settings use `analyze` mode tune.".into(),
            properties: common(json!({
                "alloc_conf": {"type": "string", "description": "PYTORCH_CUDA_ALLOC_CONF syntax on top of the recorded settings, e.g. \"expandable_segments:True,max_split_size_mb:512\"."},
                "device_memory": {"type": ["string", "integer"], "description": "Device capacity, e.g. \"80GiB\" or bytes (default: seen at a recorded OOM)."},
                "device": device(),
            })),
            required: &["snapshot"],
        },
        ToolDef {
            name: "query",
            title: "Run a query template",
            description: format!("Run a template of the catalogue (`snapscope query FILE -t TEMPLATE --params JSON --json`; typed parameters and output columns with units: `snapscope capabilities --json`). Rows are objects keyed by column; sizes in bytes, events as indices. Templates: {}. Paged with `limit`/`cursor` over the template's rows; `total` counts every row.", templates.join("; ")),
            properties: common(merge(
                json!({
                    "template": {"type": "string", "enum": template_names, "description": "The template's name."},
                    "params": {"type": "object", "description": "The template's parameters, e.g. {\"event_id\": 120, \"top_n\": 5}.", "additionalProperties": true},
                    "device": device(),
                    "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 120, "description": "Stop the query after this many seconds (default 30)."},
                }),
                paging(200),
            )),
            required: &["snapshot", "template"],
        },
        ToolDef {
            name: "sql",
            title: "Read-only SQL",
            description: "Read-only SQL over the snapshot's SnapshotDB (`snapscope sql FILE SQL --json`; tables devices, traces, lifetimes, segments, call_stacks, stack_frames, frames, ...: docs/schema.md). One statement, read-only (no writes, no other databases attached), a time limit; sizes in bytes, events as trace_index. Rows are objects keyed by column. Paged with `limit`/`cursor`; `has_more` says more rows exist. Prefer `query` templates when one fits.".into(),
            properties: common(merge(
                json!({
                    "sql": {"type": "string", "description": "The statement, e.g. `select action, count(*) as n from traces group by action`."},
                    "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 120, "description": "Stop after this many seconds (default 30)."},
                }),
                paging(200),
            )),
            required: &["snapshot", "sql"],
        },
        ToolDef {
            name: "ranks",
            title: "A distributed run's ranks",
            description: "Many snapshots of one distributed run, one per rank (`snapscope ranks FILES_OR_FOLDERS --json`): each rank's peaks and OOMs, the spread (max, median, min), the imbalance, outlier ranks, and why the worst rank differs from the median one (sites and categories with byte deltas). Files are read in parallel and not kept.".into(),
            properties: json!({
                "snapshots": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Snapshot files, or folders of them (searched to the bottom)."},
                "max_bytes": {"type": "integer", "minimum": 4096, "description": "Bound of the answer in bytes (default 262144)."},
            }),
            required: &["snapshots"],
        },
    ]
}

// ---- arguments ----------------------------------------------------------------------------------

struct Args<'a> {
    tool: &'static str,
    map: &'a Map<String, Value>,
}

fn bad(tool: &str, what: String) -> Error {
    Error::new(ErrorCode::InvalidParameter, format!("{tool}: {what}"), "see the tool's input schema (tools/list)")
}

impl Args<'_> {
    fn str(&self, k: &str) -> Result<Option<String>> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(bad(self.tool, format!("`{k}` must be a string, not {v}"))),
        }
    }
    fn need_str(&self, k: &str) -> Result<String> {
        self.str(k)?.ok_or_else(|| bad(self.tool, format!("`{k}` is required")))
    }
    fn int(&self, k: &str) -> Result<Option<i64>> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| bad(self.tool, format!("`{k}` must be an integer, not {v}"))),
        }
    }
    fn uint(&self, k: &str) -> Result<Option<u64>> {
        match self.int(k)? {
            Some(v) if v < 0 => Err(bad(self.tool, format!("`{k}` must be 0 or more, not {v}"))),
            v => Ok(v.map(|v| v as u64)),
        }
    }
    fn num(&self, k: &str) -> Result<Option<f64>> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| bad(self.tool, format!("`{k}` must be a number, not {v}"))),
        }
    }
    /// A byte count given as a number or as text ("80GiB").
    fn bytes_text(&self, k: &str) -> Result<Option<String>> {
        match self.map.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) if v.as_u64().is_some() => Ok(Some(v.to_string())),
            Some(v) => Err(bad(self.tool, format!("`{k}` must be bytes or text like \"80GiB\", not {v}"))),
        }
    }
}

/// What every call has: the arguments, and where files may be read from.
pub struct Ctx<'a> {
    pub access: &'a Access,
    pub bases: &'a [PathBuf],
}

impl Ctx<'_> {
    fn file(&self, path: &str) -> Result<PathBuf> {
        self.access.check(path, self.bases)
    }
}

/// Run a command line, keeping its JSON and its text.
fn run(argv: Vec<String>) -> Result<crate::emit::Captured> {
    run_as(argv, true)
}

/// Run a command line, keeping its JSON only (the server writes the text of this answer).
fn run_json(argv: Vec<String>) -> Result<crate::emit::Captured> {
    run_as(argv, false)
}

fn run_as(argv: Vec<String>, text: bool) -> Result<crate::emit::Captured> {
    let r = crate::run_captured(&argv, text);
    cache::release_held();
    r
}

fn provenance(info: &cache::FileInfo, hit: bool, device: Option<i64>, event: Option<i64>) -> Value {
    json!({
        "file": info.path,
        "size": info.size,
        "sha256": info.sha256,
        "engine_version": snapscope::VERSION,
        "device": device,
        "event": event,
        "cache": if hit { "hit" } else { "miss" },
    })
}

/// The kept engine of a file (opened now on a miss), and whether it was kept already.
fn opened(path: &std::path::Path) -> Result<(cache::FileInfo, std::sync::Arc<tokio::sync::Mutex<snapscope::engine::Engine>>, bool)> {
    let before = cache::opens();
    let (info, engine) = cache::get(path)?;
    Ok((info, engine, cache::opens() == before))
}

/// The device a one-device question is about (checked), and the event (default: the allocated peak).
fn resolve(path: &std::path::Path, device: Option<i64>, event: Option<i64>) -> Result<(i64, Option<i64>)> {
    let (_, engine, _) = opened(path)?;
    let e = engine.blocking_lock();
    let d = match device {
        Some(d) => e.devices_or(Some(d))?[0],
        None => *e.devices()?.first().ok_or_else(|| {
            Error::new(ErrorCode::NoDevice, "the snapshot has no devices (no segments, no trace events)", "nothing to ask about this file")
        })?,
    };
    let ev = match event {
        Some(x) => e.resolve(d, At::Event(x))?,
        None => e.resolve(d, At::Peak(Counter::Allocated))?,
    };
    Ok((d, ev))
}

fn rows_text(v: &Value, key: &str) -> String {
    let mut t = String::new();
    let rows = v[key].as_array().cloned().unwrap_or_default();
    // Columns in the answer's order (`columns`: names, or objects with a name), else the row's keys.
    let mut names: Vec<String> = v["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().or_else(|| c["name"].as_str()).map(str::to_string))
        .collect();
    if let Some(first) = rows.first().and_then(Value::as_object) {
        names.extend(first.keys().filter(|k| !names.contains(k)).cloned().collect::<Vec<_>>());
        t.push_str(&names.join("\t"));
        t.push('\n');
    }
    for r in &rows {
        let cells: Vec<String> = match r {
            Value::Object(o) => names.iter().map(|n| o.get(n).map_or(String::new(), cell)).collect(),
            Value::Array(a) => a.iter().map(cell).collect(),
            x => vec![cell(x)],
        };
        t.push_str(&crate::emit::clean(&cells.join("\t")));
        t.push('\n');
    }
    let total = v.get("total").map(|x| format!(" of {x}")).unwrap_or_default();
    let more = if v["has_more"] == true { format!("; more from cursor {}", v["next_cursor"]) } else { String::new() };
    t.push_str(&format!("({} rows{total}{more})\n", rows.len()));
    t
}

/// Holders by stack as text: bytes, share, blocks and the frame that names each stack (the
/// stack text itself, root first, is in the structured content).
fn stack_rows_text(path: &std::path::Path, v: &Value) -> Result<String> {
    let (_, engine, _) = opened(path)?;
    let e = engine.blocking_lock();
    let mut t = String::new();
    for r in v["rows"].as_array().into_iter().flatten() {
        let label = match r["stack_id"].as_i64() {
            Some(id) => e.stack(id, 0, 0).ok().and_then(|p| p.label).map_or(format!("stack {id}"), |l| format!("stack {id}: {l}")),
            None => r["callstack"].as_str().unwrap_or("").to_string(),
        };
        t.push_str(&format!(
            "{:>16} B {:>7.2}% {:>6} blocks  {}  {}\n",
            r["size_bytes"],
            r["percent_of_active_blocks"].as_f64().unwrap_or(0.0),
            r["block_count"],
            r["category"].as_str().unwrap_or(""),
            crate::emit::clean(&label)
        ));
    }
    let more = if v["has_more"] == true { format!("; more from cursor {}", v["next_cursor"]) } else { String::new() };
    t.push_str(&format!("({} of {} stack groups{more})\n", v["returned"], v["total"]));
    Ok(t)
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::String(s) => s.replace('\n', " ⏎ "),
        x => x.to_string(),
    }
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Run tool `name` with `map` as its arguments.
pub fn call(name: &str, map: &Map<String, Value>, ctx: &Ctx) -> Result<Answer> {
    let def = defs()
        .into_iter()
        .find(|d| d.name == name)
        .ok_or_else(|| Error::new(ErrorCode::InvalidParameter, format!("no tool named {name:?}"), "list the tools with tools/list"))?;
    let known = def.properties.as_object().expect("object");
    if let Some(k) = map.keys().find(|k| !known.contains_key(*k)) {
        let names: Vec<&String> = known.keys().collect();
        return Err(bad(def.name, format!("unknown argument `{k}` (arguments: {names:?})")));
    }
    let a = Args { tool: def.name, map };
    let max_bytes = a.uint("max_bytes")?.map_or(bounds::DEFAULT_MAX_BYTES, |b| (b as usize).max(4096));
    let limit = |d: usize| -> Result<usize> { Ok(a.uint("limit")?.map_or(d, |l| (l as usize).max(1))) };
    let cursor = a.uint("cursor")?.unwrap_or(0) as usize;
    if name == "ranks" {
        return ranks(&a, ctx, max_bytes);
    }
    let path = ctx.file(&a.need_str("snapshot")?)?;
    let p = path.display().to_string();
    let (info, _, hit) = opened(&path)?;
    let device = a.int("device")?;
    let mut rows_key: Option<&str> = None;
    let mut prov_event = a.int("event")?;
    let mut prov_device = device;
    let (mut v, mut text) = match name {
        "overview" => {
            let c = run(argv(&["overview", &p]))?;
            (c.json.unwrap_or_default(), c.text)
        }
        "analyze" | "compare" => {
            let mode = if name == "compare" { "compare".to_string() } else { a.str("mode")?.unwrap_or_else(|| "all".into()) };
            if name == "analyze" && mode == "compare" {
                return Err(bad(name, "mode compare is the `compare` tool".into()));
            }
            let mut v = argv(&["analyze", &p, "--mode", &mode]);
            if name == "compare" {
                let other = ctx.file(&a.need_str("ref")?)?;
                v.extend(["--ref".into(), other.display().to_string()]);
            } else {
                if let Some(d) = device {
                    v.extend(["--device".into(), d.to_string()]);
                }
                if let Some(e) = a.int("event")? {
                    v.extend(["--event".into(), e.to_string()]);
                }
                if let Some(m) = a.bytes_text("device_memory")? {
                    v.extend(["--device-memory".into(), m]);
                }
            }
            // The tree's text (one indented line per node) grows with the square of a deep
            // stack: the tree tool pages it; here the text says so.
            if mode == "tree" {
                let c = run_json(v)?;
                (
                    c.json.unwrap_or_default(),
                    "the memory tree is in the structured content; the `tree` tool prunes and pages it\n".to_string(),
                )
            } else {
                let c = run(v)?;
                (c.json.unwrap_or_default(), c.text)
            }
        }
        "diff" => {
            let mut v = argv(&["diff", &p]);
            let at: Vec<String> = match map.get("at") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(xs)) if xs.len() == 2 => xs
                    .iter()
                    .map(|x| match x {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) if n.as_u64().is_some() => Ok(n.to_string()),
                        x => Err(bad(name, format!("each `at` is an event index or \"peak\", \"start\", \"end\", not {x}"))),
                    })
                    .collect::<Result<_>>()?,
                Some(x) => return Err(bad(name, format!("`at` takes two moments, not {x}"))),
            };
            let steps = match map.get("steps") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(x) => return Err(bad(name, format!("`steps` must be true or false, not {x}"))),
            };
            match (a.str("ref")?, at.is_empty()) {
                (Some(r), true) => v.push(ctx.file(&r)?.display().to_string()),
                (None, false) if !steps => {
                    for m in &at {
                        v.extend(["--at".into(), m.clone()]);
                    }
                }
                (Some(_), false) => return Err(bad(name, "give `ref` (two runs) or `at` (two moments of one run), not both".into())),
                _ => return Err(bad(name, "give `ref` (another run, optionally with `steps`) or `at` (two moments of this one)".into())),
            }
            if steps {
                v.push("--steps".into());
            }
            if let Some(d) = device {
                v.extend(["--device".into(), d.to_string()]);
            }
            if let Some(t) = a.uint("top")? {
                v.extend(["--top".into(), t.max(1).to_string()]);
            }
            let c = run(v)?;
            (c.json.unwrap_or_default(), c.text)
        }
        "simulate" => {
            let mut v = argv(&["simulate", &p]);
            if let Some(s) = a.str("alloc_conf")? {
                v.extend(["--alloc-conf".into(), s]);
            }
            if let Some(m) = a.bytes_text("device_memory")? {
                v.extend(["--device-memory".into(), m]);
            }
            if let Some(d) = device {
                v.extend(["--device".into(), d.to_string()]);
            }
            let c = run(v)?;
            (c.json.unwrap_or_default(), c.text)
        }
        "query" | "sql" => {
            // No row takes less than 16 bytes of JSON: more would be cut by the bound anyway.
            let lim = limit(200)?.min(max_bytes / 16 + 1);
            let timeout = a.num("timeout_s")?.unwrap_or(30.0).clamp(0.001, 120.0);
            let mut v = if name == "query" {
                let mut params = match map.get("params") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(o)) => o.clone(),
                    Some(x) => return Err(bad(name, format!("`params` must be an object, not {x}"))),
                };
                if !params.contains_key("stack_bytes") {
                    let takes = snapscope::engine::Engine::catalogue().iter().any(|t| {
                        Some(t.name) == map.get("template").and_then(Value::as_str) && t.params.iter().any(|p| p.name == "stack_bytes")
                    });
                    if takes {
                        params.insert("stack_bytes".into(), 1024.into());
                    }
                }
                let mut v = argv(&["query", &p, "-t", &a.need_str("template")?, "--params", &Value::Object(params).to_string()]);
                if let Some(d) = device {
                    v.extend(["--device".into(), d.to_string()]);
                }
                v
            } else {
                argv(&["sql", &p, &a.need_str("sql")?])
            };
            v.extend(["--max-rows".into(), (cursor + lim).to_string(), "--timeout".into(), timeout.to_string()]);
            let c = run_json(v)?;
            let mut j = c.json.unwrap_or_default();
            bounds::page_rows(&mut j, "rows", cursor);
            rows_key = Some("rows");
            let t = rows_text(&j, "rows");
            (j, t)
        }
        "event" => {
            let e = a.int("event")?.ok_or_else(|| bad(name, "`event` is required".into()))?;
            let (d, _) = resolve(&path, device, Some(e))?;
            prov_device = Some(d);
            let sb = a.uint("stack_bytes")?.unwrap_or(2048);
            let params = json!({"id": e, "stack_bytes": sb}).to_string();
            let c = run_json(argv(&["query", &p, "-t", "event", "--params", &params, "--device", &d.to_string()]))?;
            let j = c.json.unwrap_or_default();
            let t = rows_text(&j, "rows");
            (j, t)
        }
        "stack" => {
            let lim = limit(100)?.min(max_bytes / 16 + 1);
            match (a.uint("stack_id")?, a.int("event")?) {
                (Some(id), None) => {
                    // The engine's stack page (no CLI command lists a stack by id).
                    let (_, engine, _) = opened(&path)?;
                    let page = engine.blocking_lock().stack(id as i64, cursor as i64, lim as i64)?;
                    let mut j = serde_json::to_value(snapscope::engine::envelope(&page)).expect("serializable");
                    let n = page.frames.len();
                    let has_more = (cursor + n) < page.total as usize;
                    j["returned"] = n.into();
                    j["has_more"] = has_more.into();
                    j["cursor"] = cursor.into();
                    if has_more {
                        j["next_cursor"] = (cursor + n).into();
                    }
                    rows_key = Some("frames");
                    let mut t = format!(
                        "stack {id}: {} frames{}\n",
                        page.total,
                        page.label.as_ref().map(|l| format!(", named by {l}")).unwrap_or_default()
                    );
                    for (i, f) in page.frames.iter().enumerate() {
                        t.push_str(&format!("{:>6}  {}\n", cursor + i, crate::emit::clean(&f.display)));
                    }
                    (j, t)
                }
                (None, Some(e)) => {
                    let (d, _) = resolve(&path, device, Some(e))?;
                    prov_device = Some(d);
                    let params = json!({"event_id": e}).to_string();
                    let argv = argv(&[
                        "query",
                        &p,
                        "-t",
                        "event_frames",
                        "--params",
                        &params,
                        "--device",
                        &d.to_string(),
                        "--max-rows",
                        &(cursor + lim).to_string(),
                    ]);
                    let c = run_json(argv)?;
                    let mut j = c.json.unwrap_or_default();
                    bounds::page_rows(&mut j, "rows", cursor);
                    rows_key = Some("rows");
                    let t = rows_text(&j, "rows");
                    (j, t)
                }
                _ => return Err(bad(name, "give exactly one of `stack_id` and `event`".into())),
            }
        }
        "holders" => {
            holders(&a, &path, device, limit(20)?.min(max_bytes / 16 + 1), cursor, &mut prov_device, &mut prov_event, &mut rows_key)?
        }
        "tree" => tree(&a, &path, device, limit(300)?, cursor, &mut prov_device, &mut prov_event)?,
        _ => return Err(bad(name, "not a tool".into())),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("provenance".into(), provenance(&info, hit, prov_device, prov_event));
    }
    text = bounds::cut_text(&text, (max_bytes / 8).min(32 << 10));
    text.push_str(&format!(
        "[{} · {} bytes · sha256 {}… · snapscope {}]\n",
        info.path.display(),
        info.size,
        &info.sha256.get(..12).unwrap_or(""),
        snapscope::VERSION
    ));
    bounds::fit(&mut v, max_bytes, text.len(), rows_key, cursor);
    Ok(Answer { structured: v, text })
}

#[allow(clippy::too_many_arguments)]
fn holders(
    a: &Args,
    path: &std::path::Path,
    device: Option<i64>,
    limit: usize,
    cursor: usize,
    prov_device: &mut Option<i64>,
    prov_event: &mut Option<i64>,
    rows_key: &mut Option<&'static str>,
) -> Result<(Value, String)> {
    let p = path.display().to_string();
    let (d, e) = resolve(path, device, a.int("event")?)?;
    *prov_device = Some(d);
    *prov_event = e;
    let by = a.str("by")?.unwrap_or_else(|| "stack".into());
    let sb = a.uint("stack_bytes")?.unwrap_or(1024);
    let Some(e) = e else {
        return Err(Error::new(
            ErrorCode::NoEvents,
            format!("device {d} has no trace events: no event to ask about"),
            "use `analyze` with mode peak for the memory at the dump",
        ));
    };
    let dev = d.to_string();
    match by.as_str() {
        "stack" | "category" => {
            let (t, params) = if by == "stack" {
                ("active_memory_callstack_at_event", json!({"event_id": e, "top_n": -1, "stack_bytes": sb}))
            } else {
                ("categories", json!({"event_id": e, "group_by": "category"}))
            };
            let c = run_json(argv(&[
                "query",
                &p,
                "-t",
                t,
                "--params",
                &params.to_string(),
                "--device",
                &dev,
                "--max-rows",
                &(cursor + limit).to_string(),
            ]))?;
            let mut j = c.json.unwrap_or_default();
            bounds::page_rows(&mut j, "rows", cursor);
            *rows_key = Some("rows");
            let t = if by == "stack" { stack_rows_text(path, &j)? } else { rows_text(&j, "rows") };
            Ok((j, t))
        }
        "frame" => {
            let c = run_json(argv(&["analyze", &p, "--mode", "peak", "--device", &dev, "--event", &e.to_string()]))?;
            let j = c.json.unwrap_or_default();
            let peak = &j["devices"][0]["peak"];
            let mut out = json!({
                "ok": true, "schema_version": j["schema_version"], "mode": "peak", "by": "frame", "device": d, "event": e,
                "live_bytes": peak["live_bytes"], "live_blocks": peak["live_blocks"], "groups": peak["by_top_frame"],
            });
            bounds::page_list(&mut out, "groups", cursor, limit);
            let mut t = String::new();
            for g in out["groups"].as_array().into_iter().flatten() {
                t.push_str(&format!(
                    "{:>14} B {:>6} blocks  {}\n",
                    g["bytes"],
                    g["blocks"],
                    crate::emit::clean(g["label"].as_str().unwrap_or(""))
                ));
            }
            Ok((out, t))
        }
        other => Err(bad("holders", format!("`by` must be stack, frame or category, not {other:?}"))),
    }
}

fn tree(
    a: &Args,
    path: &std::path::Path,
    device: Option<i64>,
    limit: usize,
    cursor: usize,
    prov_device: &mut Option<i64>,
    prov_event: &mut Option<i64>,
) -> Result<(Value, String)> {
    let p = path.display().to_string();
    let (d, e) = resolve(path, device, a.int("event")?)?;
    *prov_device = Some(d);
    *prov_event = e;
    let mut v = argv(&["analyze", &p, "--mode", "tree", "--device", &d.to_string()]);
    if let Some(e) = a.int("event")? {
        v.extend(["--event".into(), e.to_string()]);
    }
    let c = run_json(v)?;
    let mut j = c.json.unwrap_or_default();
    let depth = a.uint("depth")?;
    let min_share = a.num("min_share")?.unwrap_or(0.0);
    let tree = &mut j["devices"][0]["tree"];
    if let Some(nodes) = tree.get_mut("nodes").and_then(Value::as_array_mut) {
        nodes.retain(|n| depth.is_none_or(|dd| n["depth"].as_u64().unwrap_or(0) <= dd) && n["share"].as_f64().unwrap_or(1.0) >= min_share);
    }
    bounds::page_list(tree, "nodes", cursor, limit);
    let mut t = String::new();
    for n in tree["nodes"].as_array().into_iter().flatten() {
        t.push_str(&format!(
            "{}{}: {} B / self {} B / {} blocks ({:.1}%)\n",
            depth_mark(n["depth"].as_u64().unwrap_or(0) as usize),
            crate::emit::clean(n["label"].as_str().unwrap_or("")),
            n["total_bytes"],
            n["self_bytes"],
            n["blocks"],
            n["share"].as_f64().unwrap_or(0.0) * 100.0
        ));
    }
    if tree["has_more"] == true {
        t.push_str(&format!("({} of {} nodes; more from cursor {})\n", tree["returned"], tree["total"], tree["next_cursor"]));
    }
    Ok((j, t))
}

/// Indentation for a node's depth, bounded (a stack can be 100k frames deep).
fn depth_mark(depth: usize) -> String {
    if depth <= 32 {
        "  ".repeat(depth)
    } else {
        format!("{}[{depth}] ", "  ".repeat(32))
    }
}

fn ranks(a: &Args, ctx: &Ctx, max_bytes: usize) -> Result<Answer> {
    let list = match a.map.get("snapshots") {
        Some(Value::Array(v)) if !v.is_empty() => v.clone(),
        _ => return Err(bad("ranks", "`snapshots` must be a non-empty list of paths".into())),
    };
    let mut v = argv(&["ranks", "-j", "2"]);
    let mut files = Vec::new();
    for x in list {
        let s = x.as_str().ok_or_else(|| bad("ranks", format!("`snapshots` items must be strings, not {x}")))?;
        let p = ctx.file(s)?;
        files.push(p.display().to_string());
        v.push(p.display().to_string());
    }
    let c = run(v)?;
    let mut j = c.json.unwrap_or_default();
    if let Some(o) = j.as_object_mut() {
        o.insert("provenance".into(), json!({"files": files, "engine_version": snapscope::VERSION, "cache": "not kept"}));
    }
    let text = bounds::cut_text(&c.text, (max_bytes / 8).min(32 << 10));
    bounds::fit(&mut j, max_bytes, text.len(), None, 0);
    Ok(Answer { structured: j, text })
}
