//! `snapscope mcp`: the engine as a Model Context Protocol server on stdin/stdout (rmcp).
//!
//! Every tool runs the same command code as the terminal (`crate::run_captured`), so its
//! `structuredContent` is the command's `--json`; the server adds paging, a byte bound and the
//! provenance, keeps opened snapshots between calls, and checks every path against the client's
//! roots (or the working directory and `--allow`).

use snapscope::codes::ErrorCode;
mod access;
mod cache;
mod prompts;
mod resources;
mod schemas;
mod server;
mod tools;

use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Also allow files under this path (repeatable); by default only the working directory and
    /// the client's roots are readable.
    #[arg(long, value_name = "PATH")]
    allow: Vec<PathBuf>,
    /// Opened snapshots kept between calls (least recently used dropped first).
    #[arg(long, default_value_t = 8)]
    cache_files: usize,
    /// Bound of the kept snapshots' source bytes, in MiB (the replay takes about 1-2x that).
    #[arg(long, default_value_t = 4096)]
    cache_mib: u64,
}

pub fn run(a: Args) -> Result<()> {
    let access = access::Access::new(&a.allow)?;
    cache::init(a.cache_files.max(1), a.cache_mib.saturating_mul(1 << 20));
    crate::rules::set_opener(cache::open);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorCode::McpError, format!("cannot start the runtime: {e}"), "check the system's thread limits"))?;
    rt.block_on(server::serve(access))
}
