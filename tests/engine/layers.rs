//! The crate's layering, checked on its source: surfaces hold no SQL, analyses do not import the
//! engine, the store does not call analyses, the foundation imports nothing above it, one byte
//! formatter (docs/architecture.md).

use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// Files under `dirs` (relative to crate/src) with a line containing `needle`.
fn offenders(dirs: &[&str], needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    for d in dirs {
        let path = src().join(d);
        let files = if path.is_dir() { rust_files(&path) } else { vec![path] };
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (i, line) in text.lines().enumerate() {
                if line.contains(needle) && !line.trim_start().starts_with("//") {
                    hits.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    hits
}

#[test]
fn surfaces_hold_no_sql() {
    for needle in ["SELECT", "ATTACH", "rusqlite"] {
        let hits = offenders(&["bin", "wasm.rs"], needle);
        assert!(hits.is_empty(), "the CLI and wasm.rs go through the engine API:\n{}", hits.join("\n"));
    }
}

#[test]
fn lower_layers_do_not_import_higher_ones() {
    for (dirs, needle) in [
        (&["analysis", "store", "query", "report", "export", "replay", "reader"][..], "crate::engine"),
        (&["store", "replay", "reader"][..], "analysis::"),
        (&["replay", "reader", "model.rs"][..], "crate::store"),
        // The foundation (codes, errors, the model, frames) stands on nothing above it: the
        // circles between them were cut by `codes_doc.rs`, `sqlite_error.rs` and `clock.rs`.
        (&["store", "replay", "reader", "model.rs", "error.rs"][..], "crate::query"),
        (&["error.rs", "codes.rs"][..], "crate::budget"),
        (&["codes.rs"][..], "crate::model"),
        (&["codes.rs", "model.rs"][..], "crate::frames"),
    ] {
        let hits = offenders(dirs, needle);
        assert!(hits.is_empty(), "{needle} against the flow:\n{}", hits.join("\n"));
    }
}

#[test]
fn one_byte_formatter() {
    // A formatter pairs a divisor with the unit's name, or writes the unit into a format string.
    let hits: Vec<String> =
        [", \"GiB\")", " GiB\""].iter().flat_map(|n| offenders(&["."], n)).filter(|h| !h.contains("src/./format.rs")).collect();
    assert!(hits.is_empty(), "bytes are formatted by crate::format only:\n{}", hits.join("\n"));
}

/// Every string literal of a Rust source (`"…"`, `r"…"`, `r#"…"#`, byte strings too), with the
/// line it starts on and the number of lines it spans; comments and char literals skipped.
fn string_literals(text: &str) -> Vec<(usize, usize, String)> {
    let b = text.as_bytes();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    line += (b[i] == b'\n') as usize;
                    i += 1;
                }
                i += 2;
                continue;
            }
            // A char literal ('"', '\'', 'x'), not a lifetime ('a).
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'r' if !b[i.saturating_sub(1)].is_ascii_alphanumeric() && matches!(b.get(i + 1), Some(b'"' | b'#')) => {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) == Some(&b'"') {
                    let start = i + 2 + hashes;
                    let close = format!("\"{}", "#".repeat(hashes));
                    let end = text[start..].find(&close).map_or(b.len(), |e| start + e);
                    let body = &text[start..end];
                    out.push((line, body.matches('\n').count() + 1, body.to_string()));
                    line += body.matches('\n').count();
                    i = end + close.len();
                    continue;
                }
            }
            b'"' => {
                let (start, mut j) = (i + 1, i + 1);
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let body = &text[start..j.min(b.len())];
                out.push((line, body.matches('\n').count() + 1, body.to_string()));
                line += body.matches('\n').count();
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

#[test]
fn no_sql_literal_over_a_line_long() {
    let sql = ["SELECT", "INSERT", "CREATE", "UPDATE", "DELETE", "DROP", "ALTER", "PRAGMA"];
    let mut hits = Vec::new();
    for f in rust_files(&src()) {
        for (line, lines, body) in string_literals(&std::fs::read_to_string(&f).unwrap()) {
            if lines > 1 && sql.iter().any(|w| body.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|t| t == *w)) {
                hits.push(format!("{}:{line}: {} lines: {}", f.display(), lines, body.lines().next().unwrap_or("").trim()));
            }
        }
    }
    assert!(hits.is_empty(), "SQL over a line long belongs in crate/sql/*.sql (include_str!):\n{}", hits.join("\n"));
}

#[test]
fn the_literal_scanner_sees_what_it_must() {
    let text = "let a = \"SELECT 1\nFROM t\"; // \"not this\"\nlet c = '\"'; let r = r#\"INSERT\ninto\"#; let s = \"one line\";";
    let found: Vec<(usize, usize)> = string_literals(text).iter().map(|(l, n, _)| (*l, *n)).collect();
    assert_eq!(found, vec![(1, 2), (3, 2), (4, 1)]);
}
