use crate::emit::Out;
use crate::focus::resolve;
use snapscope::engine::{now_iso, Engine};
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    #[arg(long, default_value = "pt-snap", value_parser = ["pt-snap"])]
    format: String,
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, None)?;
    snapscope::engine::refuse_input_as_output(&a.output, &[&target.path])?;
    Engine::open_hashed(&target.path)?.export_ptsnap(&a.output, &now_iso())?;
    out.answer(serde_json::json!({"format": a.format, "output": a.output}), |_| {
        say!("wrote {} (pt-snap-cli SnapshotDB layout)", a.output.display())
    });
    Ok(())
}
