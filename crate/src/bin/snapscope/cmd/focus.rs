use crate::emit::Out;
use crate::focus::{read_focus, write_focus, FOCUS_FILE};
use snapscope::codes::ErrorCode;
use snapscope::{store, Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    db: Option<PathBuf>,
    #[arg(long)]
    device: Option<i64>,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    match a.db {
        Some(db) => {
            store::open_file(&db)?;
            write_focus(&db, a.device)?;
        }
        None if a.device.is_some() => {
            let (db, _) = read_focus()?
                .ok_or_else(|| Error::new(ErrorCode::FocusNotConfigured, "no focus to change", "snapscope focus DB [--device N]"))?;
            write_focus(&db, a.device)?;
        }
        None => {}
    }
    let f = read_focus()?;
    let body = serde_json::json!({"focus_file": FOCUS_FILE, "db_path": f.as_ref().map(|x| x.0.clone()), "device_id": f.as_ref().and_then(|x| x.1)});
    out.answer(body, |_| match &f {
        Some((db, d)) => say!("focus: {} (device {})", db.display(), d.map(|d| d.to_string()).unwrap_or_else(|| "first".into())),
        None => say!("no focus in this folder"),
    });
    Ok(())
}
