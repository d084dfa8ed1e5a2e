//! Printing: one JSON object on stdout with `--json` (errors as a JSON envelope on stderr), or
//! text for people. Exit codes: 0 success, 1 error.

use serde::Serialize;
use snapscope::Error;

pub fn json<T: Serialize>(v: &T) {
    println!("{}", serde_json::to_string_pretty(v).expect("serializable"));
}

pub fn fail(e: &Error, as_json: bool) -> ! {
    if as_json {
        let env = serde_json::json!({"ok": false, "schema_version": 1, "error": {"code": e.code, "message": e.message, "hint": e.hint}});
        eprintln!("{env}");
    } else {
        eprintln!("error: {}\n  code: {}\n  hint: {}", e.message, e.code, e.hint);
    }
    std::process::exit(1)
}

/// "1.23 GiB (1 320 702 443 B)"-style rendering for people; JSON keeps plain integers.
pub fn bytes(b: i64) -> String {
    let a = b.unsigned_abs() as f64;
    let (v, unit) = if a >= (1u64 << 30) as f64 {
        (a / (1u64 << 30) as f64, "GiB")
    } else if a >= (1u64 << 20) as f64 {
        (a / (1u64 << 20) as f64, "MiB")
    } else if a >= 1024.0 {
        (a / 1024.0, "KiB")
    } else {
        return format!("{b} B");
    };
    format!("{}{v:.2} {unit}", if b < 0 { "-" } else { "" })
}

pub fn event(e: Option<u32>) -> String {
    e.map(|e| format!("event {e}")).unwrap_or_else(|| "window start".into())
}

/// One result cell as text (NULL for SQL nulls).
pub fn cell(c: &snapscope::query::sql::Cell) -> String {
    use snapscope::query::sql::Cell;
    match c {
        Cell::Null => "NULL".into(),
        Cell::Int(v) => v.to_string(),
        Cell::Real(v) => v.to_string(),
        Cell::Text(s) | Cell::Blob(s) => s.replace('\n', " ⏎ "),
    }
}
