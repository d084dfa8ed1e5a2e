//! The `snapscope` command line: the same engine as the page, for terminals, scripts and agents.

mod input;
mod output;

use clap::{Parser, Subcommand};
use snapscope::analysis::overview::{overview, Overview};
use snapscope::query::sql;
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
        Cmd::Import { json, .. } | Cmd::Overview { json, .. } | Cmd::Sql { json, .. } => *json,
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
