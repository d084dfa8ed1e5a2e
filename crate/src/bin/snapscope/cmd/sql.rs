use super::query::{cell_text, row_shape};
use crate::emit::Out;
use crate::focus::resolve;
use snapscope::engine::Engine;
use snapscope::query::sql::Limits;
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    query: String,
    #[arg(long, default_value_t = 10_000)]
    max_rows: usize,
    /// Stop the query after this many seconds.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// JSON rows as objects keyed by column name (default) or as arrays in column order.
    #[arg(long, default_value = "objects", value_parser = ["objects", "arrays"])]
    rows: String,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, None)?;
    let limits = Limits { max_rows: a.max_rows, timeout_ms: (a.timeout * 1000.0) as u64 };
    let rows = Engine::open(&target.path)?.sql(&a.query, limits)?;
    out.answer(rows.with_rows(row_shape(&a.rows)), |_| {
        println!("{}", rows.columns.join("\t"));
        for r in &rows.rows {
            println!("{}", r.iter().map(cell_text).collect::<Vec<_>>().join("\t"));
        }
        if rows.has_more {
            eprintln!("(stopped at --max-rows {}; more rows exist)", a.max_rows);
        }
    });
    Ok(())
}
