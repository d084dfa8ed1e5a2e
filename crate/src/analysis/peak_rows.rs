//! The Peak view's rows: the live memory by site, stacks named by the same frame merged into one
//! row (ten stacks that one notebook line allocates are one row, not ten identical ones), and how
//! much of the live memory the rows listed hold, in a sentence the page and the CLI both show.

use super::basis::{top_groups, Group};
use crate::format::count;
use serde::{Deserialize, Serialize};

/// What a list of groups leaves out: the rows it lists and the share of the live memory they hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Shown {
    /// Rows listed, the "[N other groups]" row not counted.
    pub rows: i64,
    /// Their bytes and share of the live bytes.
    pub bytes: i64,
    pub share: f64,
    /// Groups summed in the "[N other groups]" row (0 without one).
    pub other_groups: i64,
    /// "These 10 rows hold 87.3% of the memory live at the allocated peak; 1,076 other groups 12.7%."
    pub text: String,
}

/// `all` (every group by stack, largest first) merged by label: one row per naming frame (and
/// origin), its bytes and blocks summed; the row keeps its largest stack (to expand) and says
/// how many stacks it holds. The `limit` largest rows and one for the rest.
pub fn by_site(all: &[Group], limit: usize) -> (Vec<Group>, usize) {
    let mut rows: Vec<(Group, i64)> = Vec::new();
    for g in all {
        // Synthetic and freed-only rows are not sites: each stays as it is.
        let site = g.stack_id.is_some() && g.origin == "dynamic";
        match rows.iter_mut().find(|(r, _)| site && r.stack_id.is_some() && r.origin == "dynamic" && r.label == g.label) {
            Some((r, n)) => {
                r.bytes += g.bytes;
                r.blocks += g.blocks;
                r.requested_bytes += g.requested_bytes;
                *n += 1;
            }
            None => rows.push((g.clone(), 1)),
        }
    }
    let mut merged: Vec<Group> = rows
        .into_iter()
        .map(|(mut r, n)| {
            if n > 1 {
                // The callers of the largest stack do not speak for the others.
                r.detail = Some(format!("{} stacks merged", count(n)));
            }
            r
        })
        .collect();
    merged.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
    let total = merged.len();
    (top_groups(merged, limit).0, total)
}

/// How much of `live_bytes` the rows of `groups` (the largest of `total` groups) hold, `place`
/// saying where ("at the allocated peak", "at the dump", "after event 120").
pub fn shown(groups: &[Group], total: usize, live_bytes: i64, place: &str) -> Shown {
    let (listed, rest): (Vec<&Group>, Vec<&Group>) = groups.iter().partition(|g| g.origin != "other");
    let bytes: i64 = listed.iter().map(|g| g.bytes).sum();
    let share = if live_bytes > 0 { bytes as f64 / live_bytes as f64 } else { 1.0 };
    let rows = listed.len() as i64;
    let other_groups = (total as i64 - rows).max(0);
    let what = if rows == 1 { "This row holds".to_string() } else { format!("These {} rows hold", count(rows)) };
    let mut text = format!("{what} {} of the memory live {place}", percent(share));
    if other_groups > 0 {
        let rest_bytes: i64 = rest.iter().map(|g| g.bytes).sum();
        let rest_share = if live_bytes > 0 { rest_bytes as f64 / live_bytes as f64 } else { 0.0 };
        text.push_str(&format!("; {} other groups hold {}", count(other_groups), percent(rest_share)));
    }
    text.push('.');
    Shown { rows, bytes, share, other_groups, text }
}

fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p > 0.0 && p < 0.1 {
        "under 0.1%".into()
    } else {
        format!("{p:.1}%")
    }
}
