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
