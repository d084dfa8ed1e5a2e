use crate::emit::Out;
use crate::focus::write_focus;
use snapscope::engine::{import_file, now_iso};
use snapscope::{store, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let db = a.output.unwrap_or_else(|| {
        let name = a.snapshot.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "snapshot".into());
        PathBuf::from(format!("{name}.db"))
    });
    let outcome = import_file(&a.snapshot, &db, a.device, a.force, &now_iso())?;
    let focus = if a.no_focus { None } else { Some(write_focus(&db, a.device)?) };
    let metadata = store::metadata_summary(&store::open_file(&db)?)?;
    let body = serde_json::json!({"db_path": db, "reused": outcome.reused,
        "cache_miss_reason": if outcome.reused { None } else { Some(outcome.reason) },
        "metadata": metadata, "focus_state": if focus.is_some() { "updated" } else { "unchanged" }});
    out.answer(body, |_| {
        if outcome.reused {
            say!("{} is up to date (reused; --force rebuilds)", db.display());
        } else {
            say!("wrote {} ({} device(s), {} events)", db.display(), metadata["devices"], metadata["events"]);
        }
    });
    Ok(())
}
