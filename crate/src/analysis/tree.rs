//! The memory tree at an event: every block live right after it (allocated or pending free),
//! grouped along its allocation stack from the outermost frame in. Bytes are conserved at every
//! node (`total = self + Σ children`) and the root equals the device's `active` counter.

use crate::error::Result;
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Labels of the synthetic groups, one spelling everywhere.
pub use super::basis::{BEFORE_WINDOW, BEFORE_WINDOW_NO_STACK, NO_STACK};
use crate::frames::Kind;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct TreeNode {
    pub id: u32,
    pub parent: Option<u32>,
    pub depth: u32,
    pub label: String,
    pub filename: Option<String>,
    pub line: Option<i64>,
    pub name: Option<String>,
    /// Inclusive bytes (block sizes) of the live blocks under this node.
    pub total_bytes: i64,
    pub self_bytes: i64,
    pub requested_bytes: i64,
    pub blocks: i64,
    pub self_blocks: i64,
    /// `total_bytes` / the root's.
    pub share: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct MemoryTree {
    pub device: i64,
    /// None = before the first event.
    pub event: Option<i64>,
    pub nodes: Vec<TreeNode>,
}

/// Which live blocks a tree covers.
#[derive(Debug, Clone, Copy)]
pub struct TreeOptions {
    /// Include blocks allocated before the window.
    pub include_static: bool,
    pub min_size: i64,
    /// Every frame of each stack, instead of its Python frames from the user's code on.
    pub all_frames: bool,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions { include_static: true, min_size: 0, all_frames: false }
    }
}

/// A live block: block bytes, requested bytes, stack, allocated before the window, and whether
/// its stack is only the one of its free (all that is known of a block from before the window).
pub type LiveBlock = (i64, i64, Option<i64>, bool, bool);

/// A frame on a tree path: its label and (filename, line, name) unless synthetic.
type PathStep = (String, Option<(String, i64, String)>);

/// Live blocks after `event` (None = window start).
pub fn live_blocks(conn: &Connection, device: i64, event: Option<i64>, opts: TreeOptions) -> Result<Vec<LiveBlock>> {
    let e = event.unwrap_or(-1);
    let sql = super::basis::with_live(
        include_str!("../../sql/analysis/tree_live_blocks.sql"),
        "(SELECT id FROM devices WHERE device_index = ?1)",
        "?2",
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![device, e, opts.min_size, opts.include_static], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })?;
    Ok(rows.collect::<std::result::Result<_, _>>()?)
}

pub fn memory_tree(conn: &Connection, device: i64, event: Option<i64>, opts: TreeOptions) -> Result<MemoryTree> {
    // Aggregate per stack first: stacks are few, blocks many.
    // (stack, before the window without a stack, stack known only from the free) →
    // (bytes, requested bytes, blocks).
    type Key = (Option<i64>, bool, bool);
    let mut per_stack: HashMap<Key, (i64, i64, i64)> = HashMap::new();
    // Without trace events there is no window to be before.
    let traced: bool = conn.query_row("SELECT events > 0 FROM devices WHERE device_index = ?1", [device], |r| r.get(0))?;
    for (size, req, stack, before, freed_stack) in live_blocks(conn, device, event, opts)? {
        let before = before && traced;
        // `before` is kept for stackless blocks and for those known only by their free.
        let key = (stack, (stack.is_none() || freed_stack) && before, freed_stack && stack.is_some());
        let e = per_stack.entry(key).or_default();
        e.0 += size;
        e.1 += req;
        e.2 += 1;
    }
    let mut nodes = vec![TreeNode {
        id: 0,
        parent: None,
        depth: 0,
        label: "all live memory".into(),
        filename: None,
        line: None,
        name: None,
        total_bytes: 0,
        self_bytes: 0,
        requested_bytes: 0,
        blocks: 0,
        self_blocks: 0,
        share: 1.0,
    }];
    let mut child: HashMap<(u32, String), u32> = HashMap::new();
    let mut frames_of = conn.prepare_cached(
        "SELECT f.filename, f.line, f.name, f.kind, f.display FROM stack_frames sf JOIN frames f ON f.id = sf.frame_id WHERE sf.stack_id = ?1 ORDER BY sf.position",
    )?;
    let mut keys: Vec<_> = per_stack.keys().copied().collect();
    keys.sort();
    for key in keys {
        let (bytes, req, count) = per_stack[&key];
        let path: Vec<PathStep> = match key {
            (Some(stack), before, freed) => {
                // Innermost first, as stored.
                let frames: Vec<(String, i64, String, String, String)> = frames_of
                    .query_map([stack], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
                    .collect::<std::result::Result<_, _>>()?;
                let kinds: Vec<Kind> = frames.iter().map(|f| Kind::parse(&f.3)).collect();
                let keep: Vec<usize> = if opts.all_frames { (0..frames.len()).rev().collect() } else { crate::frames::tree_frames(&kinds) };
                let steps = keep.into_iter().map(|i| {
                    let (f, l, n, _, shown) = &frames[i];
                    let cut = |t: &str| crate::frames::cut(t, crate::frames::ANSWER_NAME_CHARS).into_owned();
                    (shown.clone(), Some((cut(f), *l, cut(n))))
                });
                if freed {
                    // Known only by where it was freed: under its own group, not as an allocation site.
                    let site = frames_of_label(&frames, &kinds);
                    vec![(super::basis::freed_only_label(before).to_string(), None), (format!("freed at {site}"), None)]
                } else {
                    steps.collect()
                }
            }
            (None, true, _) => vec![(BEFORE_WINDOW_NO_STACK.to_string(), None)],
            (None, false, _) => vec![(NO_STACK.to_string(), None)],
        };
        let mut at = 0u32;
        add(&mut nodes[0], bytes, req, count);
        for (label, frame) in path {
            let next = match child.get(&(at, label.clone())) {
                Some(&n) => n,
                None => {
                    let id = nodes.len() as u32;
                    let depth = nodes[at as usize].depth + 1;
                    let (filename, line, name) = match frame {
                        Some((f, l, n)) => (Some(f), Some(l), Some(n)),
                        None => (None, None, None),
                    };
                    nodes.push(TreeNode {
                        id,
                        parent: Some(at),
                        depth,
                        label: label.clone(),
                        filename,
                        line,
                        name,
                        total_bytes: 0,
                        self_bytes: 0,
                        requested_bytes: 0,
                        blocks: 0,
                        self_blocks: 0,
                        share: 0.0,
                    });
                    child.insert((at, label), id);
                    id
                }
            };
            add(&mut nodes[next as usize], bytes, req, count);
            at = next;
        }
        nodes[at as usize].self_bytes += bytes;
        nodes[at as usize].self_blocks += count;
    }
    let root = nodes.first().map_or(0, |n| n.total_bytes);
    for n in &mut nodes {
        n.share = super::state::share(n.total_bytes, root);
    }
    Ok(MemoryTree { device, event, nodes })
}

/// How a stack's labelling frame is shown.
fn frames_of_label(frames: &[(String, i64, String, String, String)], kinds: &[Kind]) -> String {
    crate::frames::label_index(kinds).map(|i| frames[i].4.clone()).unwrap_or_default()
}

fn add(n: &mut TreeNode, bytes: i64, req: i64, count: i64) {
    n.total_bytes += bytes;
    n.requested_bytes += req;
    n.blocks += count;
}
