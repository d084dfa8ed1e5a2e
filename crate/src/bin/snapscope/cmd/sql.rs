use super::query::{cell_text, ResultArgs};
use crate::emit::Out;
use crate::focus::resolve;
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
// `sql [INPUT] QUERY`: one positional is the query (the input comes from the focus). Without
// this, clap's debug assertions reject the optional positional before the required one.
#[command(allow_missing_positional = true)]
pub struct Args {
    input: Option<PathBuf>,
    query: String,
    #[command(flatten)]
    result: ResultArgs,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, None)?;
    let rows = crate::rules::open(&target.path)?.sql(&a.query, a.result.limits())?;
    out.answer(rows.with_rows(a.result.shape()), |_| {
        say!("{}", rows.columns.join("\t"));
        for r in &rows.rows {
            say!("{}", r.iter().map(cell_text).collect::<Vec<_>>().join("\t"));
        }
        if rows.has_more {
            eprintln!("(stopped at --max-rows {}; more rows exist)", a.result.max_rows);
        }
    });
    Ok(())
}
