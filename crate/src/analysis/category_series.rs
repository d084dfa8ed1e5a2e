//! The active memory by category over time, for a stacked chart: in each column the event with
//! the most active memory, and the categories' bytes right after it (they sum to the active
//! counter there, so the stack's top is the active line and no peak is lost).

use crate::replay::{first_max, DeviceReplay};
use crate::semantics::DeviceCategories;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CategorySeries {
    pub device: i64,
    /// Category names; `values[k][c]` is category c's bytes at `events[k]`.
    pub categories: Vec<String>,
    pub events: Vec<u32>,
    pub values: Vec<Vec<i64>>,
}

/// The event with the most active memory in each of `columns` equal parts of `from..=to`.
pub fn sample_events(d: &DeviceReplay, from: u32, to: u32, columns: u32) -> Vec<u32> {
    if d.events == 0 || from > to {
        return Vec::new();
    }
    let to = to.min(d.events as u32 - 1);
    let n = (to - from + 1) as u64;
    let columns = (columns.max(1) as u64).min(n);
    (0..columns)
        .filter_map(|k| {
            let a = from as u64 + n * k / columns;
            let b = from as u64 + n * (k + 1) / columns;
            first_max(d.series.active.range(a as usize..b as usize)).map(|(_, i)| (a + i as u64) as u32)
        })
        .collect()
}

pub fn category_series(d: &DeviceReplay, cats: &DeviceCategories, names: &[String], from: u32, to: u32, columns: u32) -> CategorySeries {
    let events = sample_events(d, from, to, columns);
    // +size where a block starts being active, -size where it stops, as (event, category, delta).
    let mut running = vec![0i64; names.len()];
    let mut changes: Vec<(u32, u8, i64)> = Vec::new();
    for (i, l) in d.lifetimes.iter().enumerate().filter(|(_, l)| !l.orphan) {
        let c = cats.category[i];
        let size = l.size as i64;
        match l.alloc_event() {
            Some(e) => changes.push((e, c, size)),
            None => running[c as usize] += size,
        }
        if let Some(e) = l.free_completed_event() {
            changes.push((e, c, -size));
        }
    }
    changes.sort_unstable_by_key(|x| x.0);
    let mut values = Vec::with_capacity(events.len());
    let mut next = 0;
    for &e in &events {
        while next < changes.len() && changes[next].0 <= e {
            running[changes[next].1 as usize] += changes[next].2;
            next += 1;
        }
        values.push(running.clone());
    }
    // Drop categories that are empty in every column.
    let used: Vec<usize> = (0..names.len()).filter(|&c| values.iter().any(|v| v[c] != 0)).collect();
    CategorySeries {
        device: d.device,
        categories: used.iter().map(|&c| names[c].clone()).collect(),
        values: values.into_iter().map(|v| used.iter().map(|&c| v[c]).collect()).collect(),
        events,
    }
}
