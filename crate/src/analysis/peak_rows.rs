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

/// The stacks a merged row holds, largest first: the first [`MERGED_LISTED`] one by one, the
/// rest summed, so the listed stacks and the rest add up to the row.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Merged {
    pub stacks: Vec<MergedStack>,
    /// Stacks of the row not listed, and their bytes and blocks.
    pub more: i64,
    pub more_bytes: i64,
    pub more_blocks: i64,
}

/// One stack of a merged row: how it is called (the group's own second line, which tells it
/// apart from the others) and what it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct MergedStack {
    pub stack_id: Option<i64>,
    pub detail: Option<String>,
    pub blocks: i64,
    pub bytes: i64,
}

/// Stacks of a merged row listed one by one (the rest summed in one line).
pub const MERGED_LISTED: usize = 8;

/// `all` (every group by stack, largest first) merged by label: one row per naming frame (and
/// origin), its bytes and blocks summed; the row keeps its largest stack (to expand), says how
/// many stacks it holds and lists them. The `limit` largest rows and one for the rest.
pub fn by_site(all: &[Group], limit: usize) -> (Vec<Group>, usize) {
    // Per row: the group it became, its stacks (largest first) and the callers they come through.
    let mut rows: Vec<(Group, Vec<&Group>, Vec<String>)> = Vec::new();
    let mut row_of_label: crate::fasthash::FastMap<&str, usize> = Default::default();
    for g in all {
        // Synthetic and freed-only rows are not sites: each stays as it is.
        let site = g.stack_id.is_some() && g.origin == "dynamic";
        match row_of_label.get(g.label.as_str()).filter(|_| site) {
            Some(&i) => {
                let (r, stacks, via) = &mut rows[i];
                r.bytes += g.bytes;
                r.blocks += g.blocks;
                r.requested_bytes += g.requested_bytes;
                stacks.push(g);
                if let Some(d) = caller(g).filter(|d| !via.iter().any(|v| v == d)) {
                    via.push(d.to_string());
                }
            }
            None => {
                if site {
                    row_of_label.insert(g.label.as_str(), rows.len());
                }
                rows.push((g.clone(), vec![g], caller(g).map(str::to_string).into_iter().collect()));
            }
        }
    }
    let mut merged: Vec<Group> = rows
        .into_iter()
        .map(|(mut r, stacks, via)| {
            let n = stacks.len() as i64;
            if n > 1 {
                r.merged = Some(merged_stacks(&stacks));
                // The callers of the largest stack do not speak for the others: name the callers
                // the merged stacks come from (the two largest), so the row says what it holds.
                r.detail = Some(match via.len() {
                    0 => format!("{} stacks merged", count(n)),
                    1 | 2 => format!("{} stacks merged, called from {}", count(n), via.join("; ")),
                    k => format!("{} stacks merged, called from {}; {}; {} more", count(n), via[0], via[1], count(k as i64 - 2)),
                });
            }
            r
        })
        .collect();
    merged.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
    let total = merged.len();
    (top_groups(merged, limit).0, total)
}

/// `stacks` (largest first) as a row lists them: the first [`MERGED_LISTED`], the rest summed.
fn merged_stacks(stacks: &[&Group]) -> Merged {
    let mut stacks = stacks.to_vec();
    stacks.sort_by_key(|g| std::cmp::Reverse(g.bytes));
    let listed = stacks.len().min(MERGED_LISTED);
    let rest = &stacks[listed..];
    Merged {
        stacks: stacks[..listed]
            .iter()
            .map(|g| MergedStack { stack_id: g.stack_id, detail: g.detail.clone(), blocks: g.blocks, bytes: g.bytes })
            .collect(),
        more: rest.len() as i64,
        more_bytes: rest.iter().map(|g| g.bytes).sum(),
        more_blocks: rest.iter().map(|g| g.blocks).sum(),
    }
}

/// The calling frame a group's detail names, without what `basis::disambiguate` added to tell
/// stacks of the same label apart (` · via …`, ` · native path 2 of 3`): merged, they need not be.
fn caller(g: &Group) -> Option<&str> {
    g.detail
        .as_deref()
        .and_then(|d| d.split(" · ").next())
        .filter(|d| !d.is_empty() && !d.starts_with("via ") && !d.starts_with("native path"))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn group(label: &str, detail: Option<&str>, bytes: i64, stack_id: i64) -> Group {
        Group {
            label: label.into(),
            detail: detail.map(str::to_string),
            site: None,
            stack: None,
            stack_id: Some(stack_id),
            origin: "dynamic".into(),
            blocks: 1,
            bytes,
            requested_bytes: bytes,
            share: 0.0,
            merged: None,
        }
    }

    /// Stacks of one label merge wherever they stand in the list, and the row names the callers
    /// they come from without the marks that told the stacks apart.
    #[test]
    fn merged_rows_name_their_callers() {
        let all = [
            group("forward (m.py:5)", Some("_call_impl (module.py:1750) · native path 1 of 2"), 40, 1),
            group("step (o.py:9)", None, 30, 2),
            group("forward (m.py:5)", Some("_call_impl (module.py:1750) · native path 2 of 2"), 20, 3),
            group("forward (m.py:5)", Some("run (r.py:3) · via main (r.py:1)"), 10, 4),
        ];
        let (rows, total) = by_site(&all, 10);
        assert_eq!(total, 2);
        assert_eq!((rows[0].label.as_str(), rows[0].bytes), ("forward (m.py:5)", 70));
        assert_eq!(rows[0].detail.as_deref(), Some("3 stacks merged, called from _call_impl (module.py:1750); run (r.py:3)"));
        assert_eq!((rows[1].label.as_str(), rows[1].detail.as_deref()), ("step (o.py:9)", None));
        // The merged row lists its stacks, largest first, with what told them apart.
        let m = rows[0].merged.as_ref().expect("a merged row lists its stacks");
        let listed: Vec<(i64, Option<&str>)> = m.stacks.iter().map(|s| (s.bytes, s.detail.as_deref())).collect();
        assert_eq!(
            listed,
            [
                (40, Some("_call_impl (module.py:1750) · native path 1 of 2")),
                (20, Some("_call_impl (module.py:1750) · native path 2 of 2")),
                (10, Some("run (r.py:3) · via main (r.py:1)")),
            ]
        );
        assert_eq!((m.more, m.more_bytes), (0, 0));
        assert!(rows[1].merged.is_none());
    }

    /// A row of more stacks than it lists sums the rest: listed and rest add up to the row.
    #[test]
    fn merged_rows_sum_the_stacks_they_do_not_list() {
        let all: Vec<Group> = (0..12).map(|i| group("f (a.py:1)", Some(&format!("c{i} (b.py:{i})")), 100 - i, i)).collect();
        let (rows, _) = by_site(&all, 10);
        let m = rows[0].merged.as_ref().unwrap();
        assert_eq!((m.stacks.len(), m.more), (MERGED_LISTED, 12 - MERGED_LISTED as i64));
        assert_eq!(m.stacks.iter().map(|s| s.bytes).sum::<i64>() + m.more_bytes, rows[0].bytes);
        assert_eq!(m.stacks.iter().map(|s| s.blocks).sum::<i64>() + m.more_blocks, rows[0].blocks);
        assert!(m.stacks.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
}
