use crate::emit::Out;
use crate::focus::resolve;
use snapscope::{store, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    db: Option<PathBuf>,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.db, None)?;
    let mut m = store::metadata_summary(&store::open_file(&target.path)?)?;
    m["db_path"] = target.path.display().to_string().into();
    Out { from_focus: target.from_focus, ..out }.answer(m, |m| {
        for (k, v) in m.as_object().into_iter().flatten() {
            say!("{k:<20} {}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
        }
    });
    Ok(())
}
