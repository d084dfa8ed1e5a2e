//! The Peak rows on a fixture with a known answer (scripts/gen_fixtures.py, `peak_rows`): stacks
//! named by one line merged into one row, the rows' coverage stated, and SQL rows naming a stack
//! by its most informative frame, not by libc's thread start.

use crate::common;
use snapscope::analysis::basis::Counter;
use snapscope::engine::At;
use snapscope::query::sql::{Cell, Limits};

fn expected() -> serde_json::Value {
    let all: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(common::fixtures().join("expected.json")).unwrap()).unwrap();
    all["peak_rows.pickle"]["peak_rows"].clone()
}

#[test]
fn peak_rows_merge_the_stacks_of_one_line_and_say_what_they_cover() {
    let want = expected();
    let e = common::open(&common::fixtures().join("peak_rows.pickle"));
    let p = e.peak(0, At::Peak(Counter::Allocated)).unwrap();
    assert_eq!(p.live_bytes, want["live_bytes"].as_i64().unwrap());
    // One row a stack: five; one row a site: three, the first the cell line's three stacks.
    assert_eq!(p.by_stack.len() as i64, want["stack_rows"].as_i64().unwrap());
    assert_eq!(p.by_site.len() as i64, want["site_rows"].as_i64().unwrap());
    let first = &p.by_site[0];
    assert_eq!(first.label, "<module> (cell.py:21)");
    assert_eq!(first.bytes, want["site_first_bytes"].as_i64().unwrap());
    assert_eq!(first.detail.as_deref(), Some("3 stacks merged"));
    assert_eq!(p.by_site.iter().map(|g| g.bytes).sum::<i64>(), p.live_bytes);
    // No two site rows share a label; the stack rows had three that did.
    let labels: std::collections::HashSet<&str> = p.by_site.iter().map(|g| g.label.as_str()).collect();
    assert_eq!(labels.len(), p.by_site.len());
    assert_eq!(p.by_stack.iter().filter(|g| g.label == first.label).count(), 3);
    assert_eq!((p.site_rows.rows, p.site_rows.other_groups, p.site_rows.bytes), (3, 0, p.live_bytes));
    assert_eq!(p.site_rows.text, "These 3 rows hold 100.0% of the memory live at the allocated peak.");
    // Two rows of five: the sentence counts what is left out.
    let q = snapscope::analysis::peak_rows::by_site(&p.by_stack, 1);
    let shown = snapscope::analysis::peak_rows::shown(&q.0, q.1, p.live_bytes, "at the allocated peak");
    assert_eq!((shown.rows, shown.other_groups), (1, 2));
    assert_eq!(shown.text, "This row holds 80.0% of the memory live at the allocated peak; 2 other groups hold 20.0%.");
}

#[test]
fn peak_text_states_the_rows_coverage() {
    let f = common::fixtures().join("peak_rows.pickle");
    let (rc, out, err) = common::cli_in(&common::repo(), &["analyze", f.to_str().unwrap(), "--mode", "peak"]);
    assert_eq!(rc, 0, "{err}");
    assert!(out.contains("<module> (cell.py:21) ← 3 stacks merged"), "{out}");
    assert!(out.contains("These 3 rows hold 100.0% of the memory live at the allocated peak."), "{out}");
}

#[test]
fn sql_rows_name_a_native_stack_by_its_most_informative_frame() {
    let want = expected();
    let mut e = common::open(&common::fixtures().join("peak_rows.pickle"));
    let params = serde_json::json!({"min_count": 1});
    let r = e.query("callstack_analysis", params.as_object().unwrap(), Limits::default()).unwrap();
    let col = |name: &str| r.columns.iter().position(|c| c.name == name).unwrap();
    let (label, text) = (col("label"), col("callstack"));
    assert_eq!(label, 0, "the label is the first column");
    let cell = |row: &Vec<Cell>, i: usize| match &row[i] {
        Cell::Text(t) => t.clone(),
        c => panic!("not text: {c:?}"),
    };
    let autograd = r.rows.iter().find(|row| cell(row, text).starts_with(want["autograd_stack_starts"].as_str().unwrap())).unwrap();
    let name = cell(autograd, label);
    assert!(name.contains(want["autograd_label_has"].as_str().unwrap()), "{name}");
    for row in &r.rows {
        let name = cell(row, label);
        assert!(!name.starts_with("??") && !name.contains("__clone") && !name.contains("pthread"), "{name}");
    }
    // The same label in the other templates that list stacks.
    for (template, params) in [
        ("active_memory_callstack_at_event", serde_json::json!({"event_id": 5})),
        ("leak_detection", serde_json::json!({})),
        ("event", serde_json::json!({"action": "alloc"})),
    ] {
        let r = e.query(template, params.as_object().unwrap(), Limits::default()).unwrap();
        let at = r.columns.iter().position(|c| c.name == "label").unwrap_or_else(|| panic!("{template}: no label column"));
        assert!(r.rows.iter().any(|row| cell(row, at).contains("DivBackward0")), "{template}");
        assert!(r.rows.iter().all(|row| !cell(row, at).starts_with("??")), "{template}");
    }
}
