//! The pickle memo, packed: one `u32` per slot instead of a 16-byte value, because a snapshot
//! pickle memoizes every trace entry and frames list (tens of millions of slots at 1 GB).
//! Containers and strings pack as a 3-bit kind and a 29-bit arena index; anything else (rare:
//! Python never memoizes ints) goes to a side table.

use super::arena::Node;
use crate::fasthash::FastMap;

const INDEX_BITS: u32 = 29;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;
const UNSET: u32 = u32::MAX;
const OTHER: u32 = 7;
/// Out-of-order memo slots kept at most (real pickles write none; each costs a map entry).
const MAX_SPARSE: usize = 1 << 20;

/// Slots are dense from 0 (`slots`, what real pickles write: MEMOIZE numbers them in order); a
/// put beyond the dense end goes to `sparse`, so memory grows with the values stored, never with
/// the index a hostile file names (issue 29: chained far puts once grew the vector 4 MiB per
/// 5-byte opcode). Invariant: every key of `sparse` is at or beyond `slots.len()`.
#[derive(Default)]
pub struct Memo {
    slots: Vec<u32>,
    sparse: FastMap<usize, u32>,
    /// Sparse slots written since the last [`Memo::mark`]: what the recycler must see as new.
    sparse_recent: Vec<usize>,
    others: Vec<Node>,
    /// Counts the times a slot that held a dict was overwritten: anything derived from the
    /// dicts that slot numbers name is stale once it moves. (A fold's rewrites are counted by
    /// the fold, see `DecodeState::frames_folded`.)
    dict_changes: u64,
}

impl Memo {
    /// The packed form of a container, string, interned stack or folded entry.
    pub fn key(n: Node) -> Option<u32> {
        let (kind, index) = match n {
            Node::Str(i) => (0, i),
            Node::List(i) => (1, i),
            Node::Tuple(i) => (2, i),
            Node::Set(i) => (3, i),
            Node::Dict(i) => (4, i),
            // 0 is "no stack"; an id too large to shift goes to the side table.
            Node::Stack(None) => (5, 0),
            Node::Stack(Some(s)) => (5, s.checked_add(1)?),
            // 0 is "folded"; an entry still waiting for its fold is its number + 1.
            Node::Folded => (6, 0),
            Node::Entry(e) => (6, e.checked_add(1)?),
            _ => return None,
        };
        (index <= INDEX_MASK).then_some((kind << INDEX_BITS) | index)
    }

    #[inline(always)]
    fn unpack(&self, v: u32) -> Option<Node> {
        let (kind, i) = (v >> INDEX_BITS, v & INDEX_MASK);
        Some(match kind {
            0 => Node::Str(i),
            1 => Node::List(i),
            2 => Node::Tuple(i),
            3 => Node::Set(i),
            4 => Node::Dict(i),
            5 => Node::Stack(i.checked_sub(1)),
            6 => i.checked_sub(1).map_or(Node::Folded, Node::Entry),
            _ if v == UNSET => return None,
            _ => *self.others.get(i as usize)?,
        })
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    #[inline(always)]
    pub fn put(&mut self, idx: usize, v: Node) -> Result<(), String> {
        if let (true, Some(k), true) = (idx == self.slots.len(), Memo::key(v), self.sparse.is_empty()) {
            // MEMOIZE of a container or string: the common case.
            self.slots.push(k);
            return Ok(());
        }
        self.put_other(idx, v)
    }

    /// A put to another slot than the next, or of a value kept in the side table.
    fn put_other(&mut self, idx: usize, v: Node) -> Result<(), String> {
        if matches!(self.get(idx), Some(Node::Dict(_))) {
            self.dict_changes += 1;
        }
        let packed = match Memo::key(v) {
            Some(k) => k,
            None if self.others.len() < INDEX_MASK as usize => {
                self.others.push(v);
                (OTHER << INDEX_BITS) | (self.others.len() - 1) as u32
            }
            None => return Err("more memoized values than this reader supports".into()),
        };
        match idx.cmp(&self.slots.len()) {
            std::cmp::Ordering::Less => self.slots[idx] = packed,
            std::cmp::Ordering::Equal => {
                self.sparse.remove(&idx);
                self.slots.push(packed);
            }
            std::cmp::Ordering::Greater => {
                if self.sparse.insert(idx, packed).is_none() && self.sparse.len() > MAX_SPARSE {
                    return Err(format!("more than {MAX_SPARSE} memo slots numbered out of order (memo index {idx})"));
                }
                self.sparse_recent.push(idx);
                if self.sparse_recent.len() > 2 * MAX_SPARSE {
                    self.sparse_recent.sort_unstable();
                    self.sparse_recent.dedup();
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    pub fn get(&self, idx: usize) -> Option<Node> {
        match self.slots.get(idx) {
            Some(&v) => self.unpack(v),
            None if self.sparse.is_empty() => None,
            None => self.unpack(*self.sparse.get(&idx)?),
        }
    }

    /// Values of the slots from `from` on, and of the out-of-order slots written since the last
    /// [`Memo::mark`].
    pub fn values_from(&self, from: usize) -> impl Iterator<Item = Node> + '_ {
        let recent = self.sparse_recent.iter().filter_map(|i| self.sparse.get(i).copied());
        self.slots.get(from..).unwrap_or(&[]).iter().copied().chain(recent).filter_map(|v| self.unpack(v))
    }

    /// Rewrite the slots from `from` on (and the out-of-order slots written since the last
    /// [`Memo::mark`]) whose value `replaced` replaced.
    pub fn replace_from(&mut self, from: usize, replaced: &Replaced) {
        for i in from..self.slots.len() {
            let now = self.unpack(self.slots[i]).and_then(|was| replaced.get(was)).and_then(Memo::key);
            if let Some(k) = now {
                self.slots[i] = k;
            }
        }
        for i in 0..self.sparse_recent.len() {
            let idx = self.sparse_recent[i];
            let now = self.sparse.get(&idx).and_then(|&v| self.unpack(v)).and_then(|was| replaced.get(was)).and_then(Memo::key);
            if let Some(k) = now {
                self.sparse.insert(idx, k);
            }
        }
    }

    /// The recycler has seen every slot written so far: later calls of [`Memo::values_from`] and
    /// [`Memo::replace_from`] cover only out-of-order slots written after this.
    pub fn mark(&mut self) {
        self.sparse_recent.clear();
    }

    /// See `dict_changes`.
    pub fn dict_changes(&self) -> u64 {
        self.dict_changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut m = Memo::default();
        let values = [
            Node::Str(3),
            Node::Dict(7),
            Node::Stack(None),
            Node::Stack(Some(0)),
            Node::Stack(Some(9)),
            Node::Folded,
            Node::Entry(0),
            Node::Entry(41),
            Node::Int(-5),
            Node::Float(1.5),
        ];
        for (i, &v) in values.iter().enumerate() {
            m.put(i, v).unwrap();
        }
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(m.get(i), Some(v));
        }
        assert_eq!(m.get(values.len()), None);
        m.put(20, Node::None).unwrap();
        assert_eq!(m.get(15), None, "a gap is unset");
        assert_eq!(m.get(20), Some(Node::None));
    }

    /// Issue 29: far puts cost a map entry each, not a slot per index skipped.
    #[test]
    fn far_puts_cost_memory_per_value_not_per_index() {
        let mut m = Memo::default();
        m.put(0, Node::Dict(0)).unwrap();
        for k in 1..1001usize {
            m.put(k << 20, Node::None).unwrap();
        }
        assert_eq!(m.len(), 1, "the dense slots do not grow");
        assert_eq!(m.get(5 << 20), Some(Node::None));
        assert_eq!(m.get((5 << 20) + 1), None);
        // Filling up to a sparse slot keeps both right: a dense put overrides the sparse value.
        m.put(2, Node::Str(1)).unwrap();
        m.put(1, Node::Str(2)).unwrap();
        assert_eq!((m.get(1), m.get(2)), (Some(Node::Str(2)), Some(Node::Str(1))));
        m.put(2, Node::Str(3)).unwrap();
        assert_eq!(m.get(2), Some(Node::Str(3)));
        m.put(m.len(), Node::Str(4)).unwrap();
        assert_eq!(m.get(3), Some(Node::Str(4)));
        assert_eq!(m.values_from(0).count(), 4 + 1000, "dense slots and the recent sparse ones");
        m.mark();
        assert_eq!(m.values_from(4).count(), 0);
    }
}

/// What a fold turned values into, for rewriting the memo slots that name them: each folded
/// entry becomes `Node::Folded` (an entry read straight into an event, `Node::Entry`, always
/// does: a fold takes every one waiting), its frames list `Node::Stack`. The entries and lists of a
/// batch lie above the recycler's marks, so they are looked up in dense tables; anything else
/// (only odd files) goes through a map keyed by the packed memo value (see [`Memo::key`]).
#[derive(Default)]
pub struct Replaced {
    maps_from: usize,
    seqs_from: usize,
    /// Per dict slot from `maps_from` on: folded?
    dicts: Vec<bool>,
    /// Per sequence slot from `seqs_from` on: the stack it became.
    lists: Vec<Option<Node>>,
    others: FastMap<u32, Node>,
}

impl Replaced {
    /// Start a fold: the dense tables cover the arena slots from these marks on.
    pub fn reset(&mut self, maps_from: usize, seqs_from: usize) {
        self.maps_from = maps_from;
        self.seqs_from = seqs_from;
        self.dicts.clear();
        self.lists.clear();
        self.others.clear();
    }

    pub fn set(&mut self, was: Node, now: Node) {
        match was {
            Node::Dict(i) if now == Node::Folded && i as usize >= self.maps_from => {
                let k = i as usize - self.maps_from;
                if self.dicts.len() <= k {
                    self.dicts.resize(k + 1, false);
                }
                self.dicts[k] = true;
            }
            Node::List(i) if i as usize >= self.seqs_from => {
                let k = i as usize - self.seqs_from;
                if self.lists.len() <= k {
                    self.lists.resize(k + 1, None);
                }
                self.lists[k] = Some(now);
            }
            _ => {
                if let Some(key) = Memo::key(was) {
                    self.others.insert(key, now);
                }
            }
        }
    }

    pub fn get(&self, was: Node) -> Option<Node> {
        let dense = match was {
            Node::Dict(i) => {
                i.checked_sub(self.maps_from as u32).and_then(|k| self.dicts.get(k as usize)).filter(|&&f| f).map(|_| Node::Folded)
            }
            Node::List(i) => i.checked_sub(self.seqs_from as u32).and_then(|k| self.lists.get(k as usize).copied().flatten()),
            Node::Entry(_) => Some(Node::Folded),
            _ => None,
        };
        if dense.is_some() || self.others.is_empty() {
            return dense;
        }
        Memo::key(was).and_then(|k| self.others.get(&k).copied())
    }
}
