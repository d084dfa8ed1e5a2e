use crate::emit::Out;
use crate::focus::resolve;
use snapscope::engine::write_atomic;
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    #[arg(short, long)]
    output: PathBuf,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, None)?;
    let title = target.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let html = crate::rules::open(&target.path)?.report(&title)?;
    write_atomic(&a.output, html.as_bytes())?;
    out.answer(serde_json::json!({"report_path": a.output, "bytes": html.len()}), |_| {
        say!("wrote {} ({} KiB)", a.output.display(), html.len() / 1024)
    });
    Ok(())
}
