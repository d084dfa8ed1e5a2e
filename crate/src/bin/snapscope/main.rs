//! The `snapscope` command line: the same engine as the page, for terminals, scripts and agents.
//! This file parses and dispatches; each subcommand lives in `cmd/` and answers through `emit`.

use snapscope::codes::ErrorCode;
#[macro_use]
mod emit;
mod cmd;
mod focus;
mod rules;
mod schemas;
mod skills;
mod typescript;

use clap::{Parser, Subcommand};
use emit::Out;

#[derive(Parser)]
#[command(name = "snapscope", version, about = "Where did my GPU memory go? Analyze PyTorch / torch_npu memory snapshots.")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// Answer with one JSON object on stdout (errors as JSON on stderr).
    #[arg(long, global = true)]
    json: bool,
    /// Category rules (TOML) to use instead of / before the defaults (docs/categories.md).
    #[arg(long, global = true, value_name = "RULES.toml")]
    categories: Option<std::path::PathBuf>,
    /// Raise (or lower) one resource budget: NAME=N, repeatable. Budgets: decompressed_bytes
    /// (a gzip input inflated, all members), rules_bytes (the --categories file), answer_bytes
    /// (cell bytes of one sql/query answer), dump_blocks (segments and blocks, shared ones
    /// counted per use), frame_text_bytes (names of the distinct stack frames, as shown),
    /// text_bytes (distinct names over 4,096 bytes, held whole once), annotation_bytes
    /// (external_annotations), db_statement_ms (one statement over an input .db). An input over a
    /// budget fails with BUDGET_EXCEEDED.
    #[arg(long, global = true, value_name = "NAME=N")]
    budget: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read and replay a snapshot into a SnapshotDB file (written atomically; the input is never modified).
    Import(cmd::import::Args),
    /// Print a SnapshotDB's metadata (source, hash, engine version, device selection).
    Metadata(cmd::metadata::Args),
    /// Remember a database (and device) for this folder: later commands may omit the file.
    Focus(cmd::focus::Args),
    /// Cut a snapshot down: events A..B (or a time_us range) of one device, with the segments and
    /// blocks as they stand after B, as a valid pickle; or one file per device.
    Slice(cmd::slice::Args),
    /// Agent playbooks (markdown skills): list them, or install them into .claude/.codex/.agents.
    Skill(cmd::skill::Args),
    /// Export for other tools: --format pt-snap writes pt-snap-cli's SnapshotDB layout.
    Export(cmd::export::Args),
    /// Per-device dump figures, peaks and replay consistency of a snapshot or SnapshotDB.
    Overview(cmd::overview::Args),
    /// Run a query template from the catalogue (list them with --list or `capabilities`).
    Query(cmd::query::Args),
    /// Analyses per device: overview, peak, fragment, leak, oom, tree, categories, steps, streams, tune (allocator settings simulated), compare (with --ref), or all.
    Analyze(cmd::analyze::Args),
    /// Write the self-contained HTML report (no network, no scripts).
    Report(cmd::report::Args),
    /// The template catalogue with typed parameters and output columns, and every answer's JSON
    /// Schema (for scripts and agents).
    Capabilities {
        /// Print the answer types as TypeScript declarations instead (what the page is built with).
        #[arg(long)]
        typescript: bool,
    },
    /// What if: replay the allocator on the recorded requests under other settings
    /// (--alloc-conf "expandable_segments:True"); without settings, check it reproduces the recording.
    Simulate(cmd::simulate::Args),
    /// Two runs by category and by site (sites matched by function and file, lines moved shown),
    /// step by step (--steps), or two moments of one run (--at A --at B: kept, freed, born).
    Diff(cmd::diff::Args),
    /// A whole distributed run: every rank's snapshot read in parallel, the spread of the peaks,
    /// outlier ranks, and why the worst rank differs from the median one.
    Ranks(cmd::ranks::Args),
    /// Run read-only SQL on a snapshot or SnapshotDB (schema: docs/schema.md).
    Sql(cmd::sql::Args),
    /// Serve the engine to coding agents: a Model Context Protocol server on stdin/stdout.
    Mcp(cmd::mcp::Args),
}

fn main() {
    // Like other Unix tools: a closed pipe (`| head`) ends the program quietly.
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A temporary output file is removed when the command is interrupted or killed.
    snapscope::outfile::remove_on_signal();
    let cli = Cli::parse();
    emit::JSON.store(cli.json, std::sync::atomic::Ordering::Relaxed);
    let out = Out { json: cli.json, from_focus: false };
    for spec in &cli.budget {
        if let Err(e) = snapscope::budget::set(spec) {
            emit::fail(&e, cli.json);
        }
    }
    rules::set(cli.categories);
    if let Err(e) = dispatch(cli.cmd, out) {
        emit::fail(&e, cli.json);
    }
}

/// Run one parsed subcommand (the MCP server runs the read-only ones the same way).
fn dispatch(cmd: Cmd, out: Out) -> snapscope::Result<()> {
    match cmd {
        Cmd::Import(a) => cmd::import::run(a, out),
        Cmd::Metadata(a) => cmd::metadata::run(a, out),
        Cmd::Focus(a) => cmd::focus::run(a, out),
        Cmd::Slice(a) => cmd::slice::run(a, out),
        Cmd::Skill(a) => cmd::skill::run(a, out),
        Cmd::Export(a) => cmd::export::run(a, out),
        Cmd::Overview(a) => cmd::overview::run(a, out),
        Cmd::Query(a) => cmd::query::run(a, out),
        Cmd::Analyze(a) => cmd::analyze::run(a, out),
        Cmd::Report(a) => cmd::report::run(a, out),
        Cmd::Capabilities { typescript } => cmd::capabilities::run(typescript, out),
        Cmd::Sql(a) => cmd::sql::run(a, out),
        Cmd::Simulate(a) => cmd::simulate::run(a, out),
        Cmd::Ranks(a) => cmd::ranks::run(a, out),
        Cmd::Diff(a) => cmd::diff::run(a, out),
        Cmd::Mcp(a) => cmd::mcp::run(a),
    }
}

/// Parse `argv` (without the program name) as the command line and run it with its answer
/// kept: the `--json` envelope and (with `text`) the text, exactly as the terminal would get them.
pub fn run_captured(argv: &[String], text: bool) -> snapscope::Result<emit::Captured> {
    let cli = Cli::try_parse_from(std::iter::once("snapscope".to_string()).chain(argv.iter().cloned()))
        .map_err(|e| snapscope::Error::new(ErrorCode::InvalidParameter, e.to_string().trim().to_string(), "check the tool's arguments"))?;
    if matches!(cli.cmd, Cmd::Mcp(_)) {
        return Err(snapscope::Error::new(ErrorCode::InvalidParameter, "not from inside the server", "call a tool"));
    }
    // Text mode when the text is wanted, so the commands print it too; `Out::answer` keeps the JSON.
    let (r, captured) = emit::capture(text, || dispatch(cli.cmd, Out { json: !text, from_focus: false }));
    r.map(|_| captured)
}
