use crate::emit::Out;
use crate::focus::resolve;
use snapscope::engine::{refuse_input_as_output, write_atomic};
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A snapshot or SnapshotDB; several snapshots (or a folder of them) make one report for the
    /// set, rank by rank (as `snapscope ranks`).
    inputs: Vec<PathBuf>,
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let many = a.inputs.len() > 1 || a.inputs.first().is_some_and(|p| p.is_dir());
    let html = if many {
        let files = crate::cmd::ranks::snapshot_files(&a.inputs)?;
        refuse_input_as_output(&a.output, &files.iter().map(|f| f.as_path()).collect::<Vec<_>>())?;
        let report = crate::cmd::ranks::read_all(&a.inputs, None, None)?;
        snapscope::report::ranks_html(&format!("{} files", report.files.len()), &report)
    } else {
        let target = resolve(a.inputs.into_iter().next(), None)?;
        refuse_input_as_output(&a.output, &[&target.path])?;
        let title = target.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        crate::rules::open(&target.path)?.report(&title)?
    };
    write_atomic(&a.output, html.as_bytes())?;
    out.answer(serde_json::json!({"report_path": a.output, "bytes": html.len()}), |_| {
        say!("wrote {} ({} KiB)", a.output.display(), html.len() / 1024)
    });
    Ok(())
}
