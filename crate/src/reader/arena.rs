//! The value arena the pickle VM (and the JSON reader) build. A value is a small `Copy` handle:
//! scalars inline, strings and containers as indices into the arena's tables, so an object that
//! the pickle shares (memo) is stored once however often it is fetched. Strings are interned by
//! content (they are immutable, so identity does not matter). The pickle VM recycles the tables'
//! slots of trace entries once they are folded into events (see `pickle.rs`), so accessors treat
//! an index they cannot resolve as an empty container, never as a panic.

use crate::fasthash::FastMap;
use crate::model::StackId;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Node {
    None,
    Bool(bool),
    Int(i64),
    /// Index into `Arena::bigs`: integers outside i64 (e.g. MAX_UINT64 written as a 9-byte LONG1).
    Big(u32),
    Float(f64),
    Str(u32),
    /// Index into `Arena::bytes` (only the length of a bytes value is kept).
    Bytes(u32),
    List(u32),
    Tuple(u32),
    Set(u32),
    Dict(u32),
    /// An allowed GLOBAL (only `torch.jit._pickle.restore_type_tag`), waiting for its REDUCE.
    TypeTagFn,
    /// A frames list already interned; its storage was recycled after its event was folded.
    Stack(Option<StackId>),
    /// A trace entry already folded into an event; its storage was recycled.
    Folded,
    /// A trace entry read straight into an event (`entry.rs`), waiting for its batch to be
    /// folded (the number counts such entries from the start); it reads as `Folded` afterwards.
    Entry(u32),
}

#[derive(Default)]
pub struct Arena {
    /// Shared with the model: a frame's or annotation's whole text is this very allocation (the
    /// id map holds a second handle, not a second copy).
    pub strs: Vec<Arc<str>>,
    str_ids: FastMap<Arc<str>, u32>,
    pub bytes: Vec<usize>,
    pub seqs: Vec<Vec<Node>>,
    pub maps: Vec<Vec<(Node, Node)>>,
    pub bigs: Vec<i128>,
    /// Emptied containers of recycled slots, reused by the next empty list or dict: a trace
    /// entry and its frames list then cost no allocation.
    spare_seqs: Vec<Vec<Node>>,
    spare_maps: Vec<Vec<(Node, Node)>>,
}

/// Enough spares for a batch of trace entries (pickle appends 1000 at a time).
const MAX_SPARES: usize = 4096;

impl Arena {
    pub fn new_str(&mut self, s: &str) -> Node {
        if let Some(&i) = self.str_ids.get(s) {
            return Node::Str(i);
        }
        let i = self.strs.len() as u32;
        let text: Arc<str> = s.into();
        self.strs.push(text.clone());
        self.str_ids.insert(text, i);
        Node::Str(i)
    }

    /// The string already interned with this text, if any.
    pub fn find_str(&self, s: &str) -> Option<Node> {
        self.str_ids.get(s).map(|&i| Node::Str(i))
    }

    pub fn new_bytes(&mut self, len: usize) -> Node {
        self.bytes.push(len);
        Node::Bytes((self.bytes.len() - 1) as u32)
    }

    pub fn new_seq(&mut self, kind: fn(u32) -> Node, items: Vec<Node>) -> Node {
        self.seqs.push(items);
        kind((self.seqs.len() - 1) as u32)
    }

    pub fn new_empty_seq(&mut self, kind: fn(u32) -> Node) -> Node {
        let items = self.spare_seqs.pop().unwrap_or_default();
        self.new_seq(kind, items)
    }

    pub fn new_empty_dict(&mut self) -> Node {
        let items = self.spare_maps.pop().unwrap_or_default();
        self.new_dict(items)
    }

    /// Empty sequence slot `i`, keeping its buffer for reuse.
    pub fn recycle_seq(&mut self, i: usize) {
        let mut items = std::mem::take(&mut self.seqs[i]);
        if items.capacity() > 0 && self.spare_seqs.len() < MAX_SPARES {
            items.clear();
            self.spare_seqs.push(items);
        }
    }

    /// Empty dict slot `i`, keeping its buffer for reuse.
    pub fn recycle_map(&mut self, i: usize) {
        let mut items = std::mem::take(&mut self.maps[i]);
        if items.capacity() > 0 && self.spare_maps.len() < MAX_SPARES {
            items.clear();
            self.spare_maps.push(items);
        }
    }

    pub fn new_dict(&mut self, items: Vec<(Node, Node)>) -> Node {
        self.maps.push(items);
        Node::Dict((self.maps.len() - 1) as u32)
    }

    pub fn new_int(&mut self, v: i128) -> Node {
        match i64::try_from(v) {
            Ok(small) => Node::Int(small),
            Err(_) => {
                self.bigs.push(v);
                Node::Big((self.bigs.len() - 1) as u32)
            }
        }
    }

    /// The string's own allocation, shared (None if `id` is not a string).
    pub fn shared_str(&self, id: Node) -> Option<&Arc<str>> {
        match id {
            Node::Str(i) => self.strs.get(i as usize),
            _ => None,
        }
    }

    pub fn as_str(&self, id: Node) -> Option<&str> {
        match id {
            Node::Str(i) => self.strs.get(i as usize).map(|s| &**s),
            _ => None,
        }
    }

    /// Exact integer value (bools count as 0/1, as in Python).
    pub fn as_int(&self, id: Node) -> Option<i128> {
        match id {
            Node::Int(v) => Some(v as i128),
            Node::Big(i) => self.bigs.get(i as usize).copied(),
            Node::Bool(b) => Some(b as i128),
            _ => None,
        }
    }

    pub fn as_f64(&self, id: Node) -> Option<f64> {
        match id {
            Node::Float(f) => Some(f),
            _ => self.as_int(id).map(|v| v as f64),
        }
    }

    pub fn as_bool(&self, id: Node) -> Option<bool> {
        match id {
            Node::Bool(b) => Some(b),
            Node::Int(v) => Some(v != 0),
            _ => None,
        }
    }

    /// Items of a list, tuple or set.
    pub fn as_seq(&self, id: Node) -> Option<&[Node]> {
        match id {
            Node::List(i) | Node::Tuple(i) | Node::Set(i) => Some(self.seqs.get(i as usize).map(|v| v.as_slice()).unwrap_or(&[])),
            _ => None,
        }
    }

    pub fn as_dict(&self, id: Node) -> Option<&[(Node, Node)]> {
        match id {
            Node::Dict(i) => Some(self.maps.get(i as usize).map(|v| v.as_slice()).unwrap_or(&[])),
            _ => None,
        }
    }

    /// Value of a string key in a dict (the last one wins, as in Python).
    pub fn get(&self, dict: Node, key: &str) -> Option<Node> {
        self.as_dict(dict)?.iter().rev().find(|(k, _)| self.as_str(*k) == Some(key)).map(|&(_, v)| v)
    }

    pub fn type_name(&self, id: Node) -> &'static str {
        match id {
            Node::None => "None",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::Big(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::List(_) | Node::Stack(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Set(_) => "set",
            Node::Dict(_) | Node::Folded | Node::Entry(_) => "dict",
            Node::TypeTagFn => "function",
        }
    }

    /// A JSON rendering of a small value (settings, unknown keys). Bounded in depth and in total
    /// nodes rendered: shared objects repeat, so a small pickle can describe an exponentially
    /// large tree (or a cycle), and this must stay cheap whatever the file says.
    pub fn to_json(&self, id: Node, depth: u32) -> serde_json::Value {
        let mut budget: u32 = 20_000;
        self.to_json_bounded(id, depth, &mut budget)
    }

    fn to_json_bounded(&self, id: Node, depth: u32, budget: &mut u32) -> serde_json::Value {
        use serde_json::Value as J;
        if depth > 32 || *budget == 0 {
            return J::String("…".into());
        }
        *budget -= 1;
        match id {
            Node::None | Node::TypeTagFn | Node::Folded | Node::Entry(_) | Node::Stack(_) => J::Null,
            Node::Bool(b) => J::Bool(b),
            Node::Int(v) => J::from(v),
            Node::Big(_) => {
                let v = self.as_int(id).unwrap_or(0);
                u64::try_from(v).map(J::from).unwrap_or_else(|_| J::String(v.to_string()))
            }
            Node::Float(f) => serde_json::Number::from_f64(f).map(J::Number).unwrap_or(J::Null),
            Node::Str(_) => {
                let text = self.as_str(id).unwrap_or("");
                // Long strings spend the budget too (a shared string may repeat many times).
                *budget = budget.saturating_sub((text.len() / 256) as u32);
                J::String(text.chars().take(10_000).collect())
            }
            Node::Bytes(i) => J::String(format!("<{} bytes>", self.bytes.get(i as usize).copied().unwrap_or(0))),
            Node::List(_) | Node::Tuple(_) | Node::Set(_) => {
                let mut out = Vec::new();
                for &c in self.as_seq(id).unwrap_or(&[]) {
                    if *budget == 0 {
                        break;
                    }
                    out.push(self.to_json_bounded(c, depth + 1, budget));
                }
                J::Array(out)
            }
            Node::Dict(_) => {
                let mut m = serde_json::Map::new();
                for &(k, v) in self.as_dict(id).unwrap_or(&[]) {
                    if *budget == 0 {
                        break;
                    }
                    // Keys stay scalar: rendering a container key as text could grow without bound.
                    let key = match (self.as_str(k), self.as_int(k)) {
                        (Some(s), _) => s.to_string(),
                        (None, Some(v)) => v.to_string(),
                        _ => format!("<{}>", self.type_name(k)),
                    };
                    m.insert(key, self.to_json_bounded(v, depth + 1, budget));
                }
                J::Object(m)
            }
        }
    }
}
