use super::query::{cell_text, ResultArgs};
use crate::emit::Out;
use crate::focus::resolve;
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// [INPUT] QUERY: the snapshot or SnapshotDB (default: the folder's focus) and the SQL.
    /// (One list rather than an optional positional before a required one, which clap refuses.)
    #[arg(num_args = 1..=2, required = true, value_names = ["INPUT", "QUERY"])]
    args: Vec<String>,
    #[command(flatten)]
    result: ResultArgs,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let mut args = a.args.into_iter();
    let (input, query) = match (args.next(), args.next()) {
        (Some(input), Some(query)) => (Some(PathBuf::from(input)), query),
        (query, _) => (None, query.unwrap_or_default()),
    };
    let target = resolve(input, None)?;
    let rows = crate::rules::open(&target.path)?.sql(&query, a.result.limits())?;
    out.answer(rows.with_rows(a.result.shape()), |_| {
        say!("{}", rows.columns.join("\t"));
        for r in &rows.rows {
            say!("{}", r.iter().map(cell_text).collect::<Vec<_>>().join("\t"));
        }
        if rows.has_more && rows.returned < a.result.max_rows {
            eprintln!("(stopped at the answer_bytes budget; more rows exist: narrow the query or raise --budget answer_bytes=N)");
        } else if rows.has_more {
            eprintln!("(stopped at --max-rows {}; more rows exist)", a.result.max_rows);
        }
    });
    Ok(())
}
