//! The `snapscope` command line: the same engine as the page, for terminals, scripts and agents.

mod analyze;
mod input;
mod output;
mod skills;
mod slice;
mod workflow;

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
        /// Import only this device.
        #[arg(long)]
        device: Option<i64>,
        /// Rebuild even if the database is up to date.
        #[arg(long)]
        force: bool,
        /// Do not make the new database this folder's focus.
        #[arg(long)]
        no_focus: bool,
        #[arg(long)]
        json: bool,
    },
    /// Print a SnapshotDB's metadata (source, hash, engine version, device selection).
    Metadata {
        db: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Remember a database (and device) for this folder: later commands may omit the file.
    Focus {
        db: Option<PathBuf>,
        #[arg(long)]
        device: Option<i64>,
        #[arg(long)]
        json: bool,
    },
    /// Cut a snapshot down: events A..B (or a time_us range) of one device, with the segments and
    /// blocks as they stand after B, as a valid pickle; or one file per device.
    Slice {
        snapshot: PathBuf,
        /// Event range A..B, both ends included.
        #[arg(long)]
        events: Option<String>,
        /// time_us range T0..T1 (both ends included).
        #[arg(long = "time-us")]
        time_us: Option<String>,
        #[arg(long)]
        device: Option<i64>,
        /// Write OUT-dev<N>.pickle for every device instead of one range.
        #[arg(long)]
        split_devices: bool,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Agent playbooks (markdown skills): list them, or install them into .claude/.codex/.agents.
    Skill {
        #[arg(value_parser = ["list", "install"])]
        action: String,
        #[arg(long, default_value = "project", value_parser = ["project", "user"])]
        scope: String,
        #[arg(long, default_value = "all", value_parser = ["claude", "codex", "agents", "all"])]
        host: String,
        #[arg(long)]
        json: bool,
    },
    /// Export for other tools: --format pt-snap writes pt-snap-cli's SnapshotDB layout.
    Export {
        input: Option<PathBuf>,
        #[arg(long, default_value = "pt-snap", value_parser = ["pt-snap"])]
        format: String,
        #[arg(short, long)]
        output: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Per-device dump figures, peaks and replay consistency of a snapshot or SnapshotDB.
    Overview {
        input: Option<PathBuf>,
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
        input: Option<PathBuf>,
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
        input: Option<PathBuf>,
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
        input: Option<PathBuf>,
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
    // Like other Unix tools: a closed pipe (`| head`) ends the program quietly.
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let as_json = match &cli.cmd {
        Cmd::Import { json, .. }
        | Cmd::Overview { json, .. }
        | Cmd::Sql { json, .. }
        | Cmd::Query { json, .. }
        | Cmd::Analyze { json, .. }
        | Cmd::Report { json, .. }
        | Cmd::Metadata { json, .. }
        | Cmd::Focus { json, .. }
        | Cmd::Export { json, .. }
        | Cmd::Slice { json, .. }
        | Cmd::Skill { json, .. }
        | Cmd::Capabilities { json } => *json,
    };
    if let Err(e) = run(cli.cmd) {
        output::fail(&e, as_json);
    }
}

fn run(cmd: Cmd) -> Result<()> {
    match cmd {
        Cmd::Import { snapshot, output, device, force, no_focus, json } => {
            let out = output.unwrap_or_else(|| {
                PathBuf::from(format!(
                    "{}.db",
                    snapshot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "snapshot".into())
                ))
            });
            if out.canonicalize().ok().is_some() && out.canonicalize().ok() == snapshot.canonicalize().ok() {
                return Err(Error::new(
                    "INVALID_PARAMETER",
                    "the output path is the input snapshot",
                    "choose another -o path; snapscope never writes to its input",
                ));
            }
            workflow::import(&snapshot, &out, device, force, no_focus, json)?;
        }
        Cmd::Metadata { db, json } => {
            let (path, _, from_focus) = workflow::resolve(db, None)?;
            let conn = store::open_file(&path)?;
            let mut m = workflow::metadata_object(&conn)?;
            if json {
                m["ok"] = true.into();
                m["schema_version"] = 1.into();
                m["db_path"] = path.display().to_string().into();
                if from_focus {
                    m["focus_source"] = "project".into();
                }
                output::json(&m);
            } else {
                for (k, v) in m.as_object().unwrap() {
                    println!("{k:<20} {}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
                }
            }
        }
        Cmd::Focus { db, device, json } => {
            match db {
                Some(db) => {
                    store::open_file(&db)?;
                    workflow::write_focus(&db, device)?;
                }
                None if device.is_some() => {
                    let (db, _) = workflow::read_focus()?
                        .ok_or_else(|| Error::new("FOCUS_NOT_CONFIGURED", "no focus to change", "snapscope focus DB [--device N]"))?;
                    workflow::write_focus(&db, device)?;
                }
                None => {}
            }
            let f = workflow::read_focus()?;
            if json {
                output::json(&serde_json::json!({"ok": true, "schema_version": 1, "focus_file": workflow::FOCUS_FILE,
                    "db_path": f.as_ref().map(|x| x.0.clone()), "device_id": f.as_ref().and_then(|x| x.1)}));
            } else {
                match f {
                    Some((db, d)) => {
                        println!("focus: {} (device {})", db.display(), d.map(|d| d.to_string()).unwrap_or_else(|| "first".into()))
                    }
                    None => println!("no focus in this folder"),
                }
            }
        }
        Cmd::Slice { snapshot, events, time_us, device, split_devices, output, json } => {
            let session = input::session(&snapshot)?;
            let mut written = Vec::new();
            if split_devices {
                let stem = output.with_extension("");
                for d in session.devices()? {
                    let n = session.loaded.as_ref().and_then(|l| l.snapshot.trace(d)).map(|t| t.events.len() as i64).unwrap_or(0);
                    let path = PathBuf::from(format!("{}-dev{d}.pickle", stem.display()));
                    let count = if n > 0 { slice::write(&session, d, 0, n - 1, &path)? } else { 0 };
                    if n == 0 {
                        continue;
                    }
                    written.push(serde_json::json!({"device": d, "path": path, "events": count}));
                }
            } else {
                let d = templates::resolve_device(&session.conn, device)?;
                let (a, b) = match (&events, &time_us) {
                    (Some(r), None) => slice::parse_range(r)?,
                    (None, Some(r)) => {
                        let (t0, t1) = slice::parse_range(r)?;
                        slice::time_range(&session.loaded.as_ref().unwrap().snapshot, d, t0, t1)?
                    }
                    _ => {
                        return Err(Error::new(
                            "INVALID_PARAMETER",
                            "give exactly one of --events A..B, --time-us T0..T1, --split-devices",
                            "snapscope slice SNAP --events 100..200 -o out.pickle",
                        ))
                    }
                };
                let count = slice::write(&session, d, a, b, &output)?;
                written.push(serde_json::json!({"device": d, "path": output, "events": count, "first_event": a, "last_event": b}));
            }
            if json {
                output::json(&serde_json::json!({"ok": true, "schema_version": 1, "written": written}));
            } else {
                for w in &written {
                    println!("wrote {} ({} events of device {})", w["path"].as_str().unwrap_or(""), w["events"], w["device"]);
                }
            }
        }
        Cmd::Skill { action, scope, host, json } => match action.as_str() {
            "install" => skills::install(&scope, &host, json)?,
            _ => skills::list(&scope, json)?,
        },
        Cmd::Export { input, format: _, output, json } => {
            let (path, _, _) = workflow::resolve(input, None)?;
            let conn = match input::open(&path)? {
                input::Input::Db { .. } => {
                    // Read the DB through a writable in-memory connection; the file stays read-only.
                    let c = rusqlite::Connection::open_in_memory()?;
                    c.execute("ATTACH DATABASE ?1 AS src", [format!("file:{}?mode=ro", path.display())])
                        .or_else(|_| c.execute("ATTACH DATABASE ?1 AS src", [path.display().to_string()]))?;
                    c
                }
                input::Input::Snapshot { loaded, path } => {
                    let mut meta = input::source_meta(&path);
                    meta.push(("source_sha256", workflow::sha256_hex(&input::read_file(&path)?)));
                    store::to_memory(&std::sync::Arc::new(*loaded), &meta)?
                }
            };
            snapscope::export::ptsnap::export(&conn, &output, &workflow::now_iso())?;
            if json {
                output::json(&serde_json::json!({"ok": true, "schema_version": 1, "format": "pt-snap", "output": output}));
            } else {
                println!("wrote {} (pt-snap-cli SnapshotDB layout)", output.display());
            }
        }
        Cmd::Overview { input, json } => {
            let (input, _, from_focus) = workflow::resolve(input, None)?;
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
            if json && from_focus {
                let mut v = serde_json::to_value(&ov).expect("serializable");
                v["focus_source"] = "project".into();
                output::json(&v);
            } else if json {
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
            let (input, device, from_focus) = workflow::resolve(input, device)?;
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
                let mut v = serde_json::to_value(&r).expect("serializable");
                if from_focus {
                    v["focus_source"] = "project".into();
                }
                output::json(&v);
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
            let (input, device, _) = workflow::resolve(input, device)?;
            let session = input::session(&input)?;
            analyze::run(&session, &mode, reference.as_deref(), event, device, json)?;
        }
        Cmd::Report { input, output, json } => {
            let (input, _, _) = workflow::resolve(input, None)?;
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
            let (input, _, _) = workflow::resolve(input, None)?;
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
