//! Recycling arena slots once trace entries are folded into events.
//!
//! Between two folds the VM only appends to the arena, so everything created since the last
//! fold lies above a mark. What is still reachable there — from the VM stack, from memo slots
//! written since the mark, or through older containers that received new items — is kept; the
//! rest (the folded entries, their frames lists, their scalars' containers) is cleared, and the
//! tables are truncated from the end. The mark then moves to the tables' new ends.

use super::arena::{Arena, Node};
use super::decode::DecodeState;
use super::memo::{Memo, Replaced};

#[derive(Default)]
pub struct Recycler {
    pub maps_mark: usize,
    pub seqs_mark: usize,
    pub memo_mark: usize,
    /// Containers older than the mark that received values since (their new children must
    /// live), and values stored since in memo slots older than the mark (they must live).
    pub extra_roots: Vec<Node>,
}

impl Recycler {
    pub fn collect(&mut self, arena: &mut Arena, memo: &mut Memo, stack: &[Node], state: &mut DecodeState, replaced: &Replaced) {
        memo.replace_from(self.memo_mark, replaced);
        if arena.maps.len() <= self.maps_mark && arena.seqs.len() <= self.seqs_mark {
            // Nothing was made since the marks (every entry was read straight): nothing to free.
            self.extra_roots.clear();
            (self.maps_mark, self.seqs_mark, self.memo_mark) = (arena.maps.len(), arena.seqs.len(), memo.len());
            memo.mark();
            return;
        }
        let (maps_mark, seqs_mark) = (self.maps_mark.min(arena.maps.len()), self.seqs_mark.min(arena.seqs.len()));
        let mut live_maps = vec![false; arena.maps.len() - maps_mark];
        let mut live_seqs = vec![false; arena.seqs.len() - seqs_mark];
        let mut work: Vec<Node> = stack.iter().copied().chain(memo.values_from(self.memo_mark)).collect();
        for root in self.extra_roots.drain(..) {
            // A new value stored in an old memo slot lives itself; an old container that
            // received values keeps them (it lies below the mark, so only its children are new).
            work.push(root);
            push_children(arena, root, &mut work);
        }
        while let Some(n) = work.pop() {
            let fresh = match n {
                Node::Dict(i) => mark(&mut live_maps, i as usize, maps_mark),
                Node::List(i) | Node::Tuple(i) | Node::Set(i) => mark(&mut live_seqs, i as usize, seqs_mark),
                _ => false,
            };
            if fresh {
                push_children(arena, n, &mut work);
            }
        }
        for (k, live) in live_maps.iter().enumerate() {
            if !live {
                arena.recycle_map(maps_mark + k);
                state.forget(Some((maps_mark + k) as u32), None);
            }
        }
        for (k, live) in live_seqs.iter().enumerate() {
            if !live {
                arena.recycle_seq(seqs_mark + k);
                state.forget(None, Some((seqs_mark + k) as u32));
            }
        }
        let keep_maps = maps_mark + live_maps.iter().rposition(|&l| l).map_or(0, |p| p + 1);
        let keep_seqs = seqs_mark + live_seqs.iter().rposition(|&l| l).map_or(0, |p| p + 1);
        arena.maps.truncate(keep_maps);
        arena.seqs.truncate(keep_seqs);
        self.maps_mark = arena.maps.len();
        self.seqs_mark = arena.seqs.len();
        self.memo_mark = memo.len();
        memo.mark();
    }
}

/// Marks slot `i` (an index into the whole table) live if it lies above the mark; true when it
/// was not marked before, i.e. its children still need visiting.
fn mark(live: &mut [bool], i: usize, mark: usize) -> bool {
    match i.checked_sub(mark).and_then(|k| live.get_mut(k)) {
        Some(l) if !*l => {
            *l = true;
            true
        }
        _ => false,
    }
}

fn push_children(arena: &Arena, n: Node, work: &mut Vec<Node>) {
    if let Some(items) = arena.as_seq(n) {
        work.extend_from_slice(items);
    } else if let Some(pairs) = arena.as_dict(n) {
        work.extend(pairs.iter().flat_map(|&(k, v)| [k, v]));
    }
}
