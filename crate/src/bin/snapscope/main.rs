//! The `snapscope` command line: the same engine as the page, for terminals, scripts and agents.

mod analyze;
mod input;
mod output;

use clap::{Parser, Subcommand};
use snapscope::analysis::overview::{overview, Overview};
use snapscope::query::catalogue::catalogue;
use snapscope::query::{sql, templates};
use snapscope::{store, Error, Result};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "snapscope", version, about = "Where did my GPU memory go? Analyze PyTorch / torch_npu memory snapshots.")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read and replay a snapshot into a SnapshotDB file (written atomically; the input is never modified).
    Import {
        snapshot: PathBuf,
        /// Output database (default: ./<snapshot file name>.db)
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Per-device dump figures, peaks and replay consistency of a snapshot or SnapshotDB.
    Overview {
        input: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Run a query template from the catalogue (list them with --list or `capabilities`).
    Query {
        input: Option<PathBuf>,
        #[arg(short, long)]
        template: Option<String>,
        /// Parameters as a JSON object, e.g. '{"event_id": 120, "top_n": 5}'
        #[arg(long, default_value = "{}")]
        params: String,
        #[arg(long)]
        device: Option<i64>,
        /// Cut stack text to at most N UTF-8 bytes (adds stack_truncated; stack_id stays whole).
        #[arg(long)]
        stack_bytes: Option<i64>,
        #[arg(long, default_value_t = 10_000)]
        max_rows: usize,
        /// Stop the query after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
        /// List the templates instead of running one.
        #[arg(long)]
        list: bool,
        #[arg(long)]
        json: bool,
    },
    /// Analyses per device: overview, peak, fragment, leak, oom, tree, compare (with --ref), or all.
    Analyze {
        input: PathBuf,
        #[arg(long, default_value = "all", value_parser = ["overview", "peak", "fragment", "leak", "oom", "tree", "compare", "all"])]
        mode: String,
        /// The other snapshot or DB for --mode compare.
        #[arg(long = "ref")]
        reference: Option<PathBuf>,
        /// Event for peak/tree (default: the allocated peak).
        #[arg(long)]
        event: Option<i64>,
        #[arg(long)]
        device: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Write the self-contained HTML report (no network, no scripts).
    Report {
        input: PathBuf,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The template catalogue with typed parameters and output columns (for scripts and agents).
    Capabilities {
        #[arg(long)]
        json: bool,
    },
    /// Run read-only SQL on a snapshot or SnapshotDB (schema: docs/schema.md).
    Sql {
        input: PathBuf,
        query: String,
        #[arg(long, default_value_t = 10_000)]
        max_rows: usize,
        /// Stop the query after this many seconds.
        #[arg(long, default_value_t = 30.0)]
        timeout: f64,
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let cli = Cli::parse();
    let as_json = match &cli.cmd {
        Cmd::Import { json, .. }
        | Cmd::Overview { json, .. }
        | Cmd::Sql { json, .. }
        | Cmd::Query { json, .. }
        | Cmd::Analyze { json, .. }
        | Cmd::Report { json, .. }
        | Cmd::Capabilities { json } => *json,
    };
    if let Err(e) = run(cli.cmd) {
        output::fail(&e, as_json);
    }
}

fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Import { snapshot, output, json } => {
            let loaded = input::load_snapshot(&snapshot)?;
            let out = output.unwrap_or_else(|| {
                PathBuf::from(format!(
                    "{}.db",
                    snapshot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "snapshot".into())
                ))
            });
            if out.canonicalize().ok() == snapshot.canonicalize().ok() {
                return Err(Error::new(
                    "INVALID_PARAMETER",
                    "the output path is the input snapshot",
                    "choose another -o path; snapscope never writes to its input",
                ));
            }
            store::write_file(&loaded, &input::source_meta(&snapshot), &out)?;
            let ov = overview(&loaded);
            if json {
                output::json(
                    &serde_json::json!({"ok": true, "schema_version": 1, "db_path": out, "devices": ov.devices.len(), "events": ov.devices.iter().map(|d| d.events).sum::<usize>()}),
                );
            } else {
                println!(
                    "wrote {} ({} devices, {} events)",
                    out.display(),
                    ov.devices.len(),
                    ov.devices.iter().map(|d| d.events).sum::<usize>()
                );
            }
        }
        Cmd::Overview { input, json } => {
            let ov: Overview = match input::open(&input)? {
                input::Input::Snapshot { loaded, .. } => overview(&loaded),
                input::Input::Db { conn, .. } => {
                    let text = store::metadata(&conn, "overview_json")?
                        .ok_or_else(|| Error::new("DATABASE_SCHEMA_INVALID", "the SnapshotDB has no overview", "re-import the snapshot"))?;
                    serde_json::from_str(&text).map_err(|e| {
                        Error::new("DATABASE_SCHEMA_INVALID", format!("stored overview unreadable: {e}"), "re-import the snapshot")
                    })?
                }
            };
            if json {
                output::json(&ov);
            } else {
                print_overview(&ov);
            }
        }
        Cmd::Query { input, template, params, device, stack_bytes, max_rows, timeout, list, json } => {
            if list {
                let list: Vec<_> = catalogue()
                    .into_iter()
                    .map(|t| serde_json::json!({"name": t.name, "category": t.category, "description": t.description}))
                    .collect();
                if json {
                    output::json(&serde_json::json!({"ok": true, "schema_version": 1, "templates": list}));
                } else {
                    for t in catalogue() {
                        println!("{:<36} {:<12} {}", t.name, t.category, t.description);
                    }
                }
                return Ok(());
            }
            let input = input
                .ok_or_else(|| Error::new("INVALID_PARAMETER", "query needs a SNAPSHOT or DB", "snapscope query FILE --template NAME"))?;
            let name = template
                .ok_or_else(|| Error::new("INVALID_PARAMETER", "--template is required", "list them with `snapscope query --list`"))?;
            let mut p: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&params).map_err(|e| {
                Error::new("INVALID_PARAMETER", format!("--params is not a JSON object: {e}"), r#"example: --params '{"event_id": 10}'"#)
            })?;
            if let Some(d) = device {
                p.insert("device".into(), d.into());
            }
            if let Some(n) = stack_bytes {
                p.insert("stack_bytes".into(), n.into());
            }
            let mut conn = input::open(&input)?.into_db()?;
            let r = templates::run(&mut conn, &name, &p, sql::Limits { max_rows, timeout_ms: (timeout * 1000.0) as u64 })?;
            if json {
                output::json(&r);
            } else {
                println!(
                    "{}",
                    r.columns
                        .iter()
                        .map(|c| match c.unit {
                            Some(u) => format!("{} [{u}]", c.name),
                            None => c.name.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join("\t")
                );
                for row in &r.rows {
                    println!("{}", row.iter().map(output::cell).collect::<Vec<_>>().join("\t"));
                }
                eprintln!("({} of {} rows)", r.returned, r.total);
            }
        }
        Cmd::Analyze { input, mode, reference, event, device, json } => {
            let session = input::session(&input)?;
            analyze::run(&session, &mode, reference.as_deref(), event, device, json)?;
        }
        Cmd::Report { input, output, json } => {
            let session = input::session(&input)?;
            let title = input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let html = snapscope::report::html(&session, &title)?;
            input::write_atomic(&output, html.as_bytes())?;
            if json {
                output::json(&serde_json::json!({"ok": true, "schema_version": 1, "report_path": output, "bytes": html.len()}));
            } else {
                println!("wrote {} ({} KiB)", output.display(), html.len() / 1024);
            }
        }
        Cmd::Capabilities { json } => {
            let cat = catalogue();
            if json {
                output::json(&serde_json::json!({"ok": true, "schema_version": 1, "engine_version": snapscope::VERSION, "templates": cat,
                    "analyses": ["overview", "peak", "fragment", "leak", "oom", "tree", "compare", "all"], "formats": ["pickle protocol 0-5", "gzip", "json", "TorchScript type-tagged pickle", "SnapshotDB (.db)"]}));
            } else {
                for t in cat {
                    println!("{} ({}): {}", t.name, t.category, t.description);
                    for p in &t.params {
                        println!(
                            "    --params {}: {:?}{} default {} — {}",
                            p.name,
                            p.ty,
                            if p.required { " (required)" } else { "" },
                            p.default,
                            p.description
                        );
                    }
                }
            }
        }
        Cmd::Sql { input, query, max_rows, timeout, json } => {
            let mut conn = input::open(&input)?.into_db()?;
            let rows = sql::run(&mut conn, &query, &[], sql::Limits { max_rows, timeout_ms: (timeout * 1000.0) as u64 })?;
            if json {
                let mut v = serde_json::to_value(&rows).expect("serializable");
                v["ok"] = true.into();
                v["schema_version"] = 1.into();
                output::json(&v);
            } else {
                println!("{}", rows.columns.join("\t"));
                for r in &rows.rows {
                    println!(
                        "{}",
                        r.iter()
                            .map(|c| serde_json::to_value(c)
                                .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                                .unwrap_or_default())
                            .collect::<Vec<_>>()
                            .join("\t")
                    );
                }
                if rows.has_more {
                    eprintln!("(stopped at --max-rows {max_rows}; more rows exist)");
                }
            }
        }
    }
    Ok(())
}

fn print_overview(ov: &Overview) {
    use output::{bytes, event};
    println!("{} ({}, {} bytes)", ov.format.map(|f| format!("{f:?}")).unwrap_or_default(), ov.encoding, ov.source_bytes);
    if ov.devices.is_empty() {
        println!("no devices: the snapshot has no segments and no trace events");
    }
    for d in &ov.devices {
        println!(
            "\ndevice {}: {} events, {} segments at dump ({} expandable)",
            d.device, d.events, d.segments_at_dump, d.expandable_segments_at_dump
        );
        println!(
            "  at dump     allocated {:>12}  active {:>12}  reserved {:>12}",
            bytes(d.at_dump.allocated as i64),
            bytes(d.at_dump.active as i64),
            bytes(d.at_dump.reserved as i64)
        );
        if d.events > 0 {
            for (name, p) in [
                ("allocated", d.peaks.allocated),
                ("active", d.peaks.active),
                ("reserved", d.peaks.reserved),
                ("requested", d.peaks.requested),
            ] {
                println!("  peak {name:<10} {:>12}  ({} B) at {}", bytes(p.bytes), p.bytes, event(p.event));
            }
        }
        let c = &d.consistency;
        if c.ok {
            println!(
                "  replay: consistent ({}/{} dump blocks reproduced; rules: {})",
                c.dump_blocks_matched[0], c.dump_blocks_matched[1], d.allocator_rules
            );
        } else {
            println!("  replay: INCONSISTENT, {} issues; figures are partial", c.issues.len() as u64 + c.more_issues);
            for i in c.issues.iter().take(5) {
                println!("    event {}: {} {}", i.event.map(|e| e.to_string()).unwrap_or_else(|| "-".into()), i.code, i.message);
            }
        }
        if c.ambiguous_bytes > 0 {
            println!(
                "  note: counters before some frees may be low by up to {} (blocks allocated before the window)",
                bytes(c.ambiguous_bytes as i64)
            );
        }
    }
    for w in &ov.warnings {
        println!("warning: {} {}", w.code, w.message);
    }
}
