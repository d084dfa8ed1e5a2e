//! Analyses over a replayed snapshot. Each returns a typed, serializable result; the CLI prints
//! it and the page renders it, so nothing is computed twice.

pub mod bands;
pub mod compare;
pub mod event;
pub mod findings;
pub mod fragment;
pub mod leak;
pub mod oom;
pub mod overview;
pub mod peak;
pub mod state;
pub mod timeline;
pub mod tree;

/// SQL for the lifetimes of device row `dev` live right after event `event` (allocated or
/// pending free; `event` -1 = the window start), as a subquery. Four plain conjunctions rather
/// than one WHERE with ORs: the virtual `lifetimes` table checks such terms itself while
/// scanning, and answers the NULL tests from short lists (ORs would reach it as millions of
/// column reads).
pub fn live_lifetimes_sql(dev: &str, event: &str) -> String {
    let born = ["alloc_event IS NULL".to_string(), format!("alloc_event <= {event}")];
    let alive = ["free_completed_event IS NULL".to_string(), format!("free_completed_event > {event}")];
    let branches: Vec<String> = born
        .iter()
        .flat_map(|b| alive.iter().map(move |a| format!("SELECT * FROM lifetimes WHERE device_id = {dev} AND orphan = 0 AND {b} AND {a}")))
        .collect();
    format!("({})", branches.join(" UNION ALL "))
}
