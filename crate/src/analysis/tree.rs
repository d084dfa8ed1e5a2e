//! The memory tree at an event: every block live right after it (allocated or pending free),
//! grouped along its allocation stack from the outermost frame in. Bytes are conserved at every
//! node (`total = self + Σ children`) and the root equals the device's `active` counter.

use super::live;
use super::stack_labels::StackLabels;
use crate::error::Result;
use crate::replay::StackSource;
use crate::Loaded;
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

/// A stack's frame as a tree needs it: (filename, line, name, kind, shown).
type TreeFrame = (String, i64, String, Kind, String);

/// A stack's frames, innermost first, and the index of the one that names it (`StackLabels`;
/// a SnapshotDB's `call_stacks.label_frame_id`).
type StackFrames = (Vec<TreeFrame>, Option<usize>);

/// Live memory per (stack, before the window without a stack, stack known only from the free):
/// (bytes, requested bytes, blocks). Stacks are few, blocks many: the tree is built from these.
type Key = (Option<i64>, bool, bool);
type PerStack = HashMap<Key, (i64, i64, i64)>;

/// Add one live block (`before`: allocated before the window) to its stack's sums.
fn add_block(per_stack: &mut PerStack, traced: bool, (size, req, stack, before, freed_stack): LiveBlock) {
    // Without trace events there is no window to be before.
    let before = before && traced;
    // `before` is kept for stackless blocks and for those known only by their free.
    let key = (stack, (stack.is_none() || freed_stack) && before, freed_stack && stack.is_some());
    let e = per_stack.entry(key).or_default();
    e.0 += size;
    e.1 += req;
    e.2 += 1;
}

/// The memory tree of device position `pos` right after `event` (None = the window start),
/// from the replay.
pub fn tree(l: &Loaded, pos: usize, event: Option<i64>, opts: TreeOptions) -> MemoryTree {
    let d = &l.devices[pos];
    let mut per_stack = PerStack::new();
    for i in live::live(d, live::event_index(event)) {
        let lt = &d.lifetimes[i];
        if (lt.size as i64) < opts.min_size || (!opts.include_static && lt.before_window()) {
            continue;
        }
        let block =
            (lt.size as i64, lt.requested as i64, lt.stack().map(i64::from), lt.before_window(), lt.stack_source == StackSource::Free);
        add_block(&mut per_stack, d.events > 0, block);
    }
    let interner = &l.snapshot.interner;
    let labels = StackLabels::new(l);
    let frames_of = |stack: i64| -> Result<StackFrames> {
        let st = &interner.stacks[stack as usize];
        let frames: Vec<TreeFrame> = st
            .iter()
            .map(|&fid| {
                let f = &interner.frames[fid as usize];
                (f.filename.clone(), f.line, f.name.clone(), crate::frames::kind(f), labels.display(fid))
            })
            .collect();
        let label = labels.label_frame(stack as u32).and_then(|fid| st.iter().position(|&f| f == fid));
        Ok((frames, label))
    };
    build(d.device, event, per_stack, frames_of, opts).expect("the replay's frames are always there")
}

/// Live blocks after `event` (None = window start) of a SnapshotDB.
fn live_blocks(conn: &Connection, device: i64, event: Option<i64>, opts: TreeOptions) -> Result<Vec<LiveBlock>> {
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

/// `tree` of a SnapshotDB (a .db input, and the `memory_tree` template).
pub fn memory_tree(conn: &Connection, device: i64, event: Option<i64>, opts: TreeOptions) -> Result<MemoryTree> {
    let mut per_stack = PerStack::new();
    let traced: bool = conn.query_row("SELECT events > 0 FROM devices WHERE device_index = ?1", [device], |r| r.get(0))?;
    for block in live_blocks(conn, device, event, opts)? {
        add_block(&mut per_stack, traced, block);
    }
    let mut stmt = conn.prepare_cached(include_str!("../../sql/analysis/tree_stack_frames.sql"))?;
    let frames_of = |stack: i64| -> Result<StackFrames> {
        let rows = stmt.query_map([stack], |r| {
            Ok(((r.get(0)?, r.get(1)?, r.get(2)?, Kind::parse(&r.get::<_, String>(3)?), r.get(4)?), r.get::<_, Option<bool>>(5)?))
        })?;
        let rows: Vec<(TreeFrame, Option<bool>)> = rows.collect::<std::result::Result<_, _>>()?;
        let label = rows.iter().position(|(_, is_label)| *is_label == Some(true));
        Ok((rows.into_iter().map(|(f, _)| f).collect(), label))
    };
    build(device, event, per_stack, frames_of, opts)
}

/// The tree of the per-stack sums; `frames_of` gives a stack's frames, innermost first.
fn build(
    device: i64,
    event: Option<i64>,
    per_stack: PerStack,
    mut frames_of: impl FnMut(i64) -> Result<StackFrames>,
    opts: TreeOptions,
) -> Result<MemoryTree> {
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
    // Long names already in the answer are cut shorter (a hostile file shares one 1 MB name
    // across thousands of frames).
    let mut seen = crate::frames::RepeatCut::default();
    let mut keys: Vec<_> = per_stack.keys().copied().collect();
    keys.sort();
    for key in keys {
        let (bytes, req, count) = per_stack[&key];
        let path: Vec<PathStep> = match key {
            (Some(stack), before, freed) => {
                let (frames, label) = frames_of(stack)?;
                let kinds: Vec<Kind> = frames.iter().map(|f| f.3).collect();
                let keep: Vec<usize> = if opts.all_frames { (0..frames.len()).rev().collect() } else { crate::frames::tree_frames(&kinds) };
                let mut cut = |t: &str| seen.cut(t).into_owned();
                let steps = keep.into_iter().map(|i| {
                    let (f, l, n, _, shown) = &frames[i];
                    (shown.clone(), Some((cut(f), *l, cut(n))))
                });
                if freed {
                    // Known only by where it was freed: under its own group, not as an allocation site.
                    let site = label.map(|i| frames[i].4.clone()).unwrap_or_default();
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

fn add(n: &mut TreeNode, bytes: i64, req: i64, count: i64) {
    n.total_bytes += bytes;
    n.requested_bytes += req;
    n.blocks += count;
}
