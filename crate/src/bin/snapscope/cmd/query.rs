use crate::emit::Out;
use crate::focus::resolve;
use snapscope::codes::ErrorCode;
use snapscope::engine::Engine;
use snapscope::query::sql::{Cell, Limits, RowShape};
use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    #[arg(short, long)]
    template: Option<String>,
    /// Parameters as a JSON object, e.g. '{"event_id": 120, "top_n": 5}'
    #[arg(long, default_value = "{}")]
    params: String,
    #[arg(long)]
    device: Option<i64>,
    /// Cut stack text to at most N UTF-8 bytes (adds stack_truncated; stack_id stays whole).
    #[arg(long)]
    stack_bytes: Option<i64>,
    #[command(flatten)]
    result: ResultArgs,
    /// List the templates instead of running one.
    #[arg(long)]
    list: bool,
}

/// How much of a result to compute and how to write its rows (`query` and `sql`).
#[derive(clap::Args)]
pub struct ResultArgs {
    #[arg(long, default_value_t = 10_000)]
    pub max_rows: usize,
    /// Stop the query after this many seconds.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// JSON rows as objects keyed by column name (default) or as arrays in column order.
    #[arg(long, default_value = "objects", value_parser = ["objects", "arrays"])]
    pub rows: String,
}

impl ResultArgs {
    pub fn limits(&self) -> Limits {
        Limits { max_rows: self.max_rows, timeout_ms: (self.timeout * 1000.0) as u64 }
    }

    pub fn shape(&self) -> RowShape {
        if self.rows == "arrays" {
            RowShape::Arrays
        } else {
            RowShape::Objects
        }
    }
}

/// One result cell as text (NULL for SQL nulls).
pub fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".into(),
        Cell::Int(v) => v.to_string(),
        Cell::Real(v) => v.to_string(),
        Cell::Text(s) | Cell::Blob(s) => s.replace('\n', " ⏎ "),
    }
}

pub fn run(a: Args, out: Out) -> Result<()> {
    if a.list {
        let list: Vec<_> = Engine::catalogue()
            .into_iter()
            .map(|t| serde_json::json!({"name": t.name, "category": t.category, "description": t.description}))
            .collect();
        out.answer(serde_json::json!({ "templates": list }), |_| {
            for t in Engine::catalogue() {
                say!("{:<36} {:<12} {}", t.name, t.category, t.description);
            }
        });
        return Ok(());
    }
    let target = resolve(a.input, a.device)?;
    let name = a
        .template
        .ok_or_else(|| Error::new(ErrorCode::InvalidParameter, "--template is required", "list them with `snapscope query --list`"))?;
    let mut p: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&a.params).map_err(|e| {
        Error::new(ErrorCode::InvalidParameter, format!("--params is not a JSON object: {e}"), r#"example: --params '{"event_id": 10}'"#)
    })?;
    if let Some(d) = target.device {
        p.insert("device".into(), d.into());
    }
    if let Some(n) = a.stack_bytes {
        p.insert("stack_bytes".into(), n.into());
    }
    let r = crate::rules::open(&target.path)?.query(&name, &p, a.result.limits())?;
    Out { from_focus: target.from_focus, ..out }.answer(r.with_rows(a.result.shape()), |_| {
        let header: Vec<String> = r.columns.iter().map(|c| c.unit.map_or(c.name.to_string(), |u| format!("{} [{u}]", c.name))).collect();
        say!("{}", header.join("\t"));
        for row in &r.rows {
            say!("{}", row.iter().map(cell_text).collect::<Vec<_>>().join("\t"));
        }
        eprintln!("({} of {} rows)", r.returned, r.total);
    });
    Ok(())
}
