//! The value arena the pickle VM (and the JSON reader) build: one flat `Vec<Node>`, memo entries
//! are node ids, so an object that the pickle shares is stored once however often it is fetched.
//! Strings borrow from the input when they can.

use std::borrow::Cow;

pub type NodeId = u32;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Node {
    None,
    Bool(bool),
    Int(i64),
    /// Index into `Arena::bigs`: integers outside i64 (e.g. MAX_UINT64 written as a 9-byte LONG1).
    Big(u32),
    Float(f64),
    Str(u32),
    Bytes(u32),
    List(u32),
    Tuple(u32),
    Set(u32),
    Dict(u32),
    /// An allowed GLOBAL (only `torch.jit._pickle.restore_type_tag`), waiting for its REDUCE.
    TypeTagFn,
}

#[derive(Default)]
pub struct Arena<'a> {
    pub nodes: Vec<Node>,
    pub strs: Vec<Cow<'a, str>>,
    pub bytes: Vec<&'a [u8]>,
    pub seqs: Vec<Vec<NodeId>>,
    pub maps: Vec<Vec<(NodeId, NodeId)>>,
    pub bigs: Vec<i128>,
}

impl<'a> Arena<'a> {
    pub fn push(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        (self.nodes.len() - 1) as NodeId
    }

    pub fn new_str(&mut self, s: Cow<'a, str>) -> NodeId {
        self.strs.push(s);
        self.push(Node::Str((self.strs.len() - 1) as u32))
    }

    pub fn new_seq(&mut self, kind: fn(u32) -> Node, items: Vec<NodeId>) -> NodeId {
        self.seqs.push(items);
        self.push(kind((self.seqs.len() - 1) as u32))
    }

    pub fn new_dict(&mut self, items: Vec<(NodeId, NodeId)>) -> NodeId {
        self.maps.push(items);
        self.push(Node::Dict((self.maps.len() - 1) as u32))
    }

    pub fn new_int(&mut self, v: i128) -> NodeId {
        match i64::try_from(v) {
            Ok(small) => self.push(Node::Int(small)),
            Err(_) => {
                self.bigs.push(v);
                self.push(Node::Big((self.bigs.len() - 1) as u32))
            }
        }
    }

    pub fn node(&self, id: NodeId) -> Node {
        self.nodes[id as usize]
    }

    pub fn as_str(&self, id: NodeId) -> Option<&str> {
        match self.node(id) {
            Node::Str(i) => Some(&self.strs[i as usize]),
            _ => None,
        }
    }

    /// Exact integer value (bools count as 0/1, as in Python).
    pub fn as_int(&self, id: NodeId) -> Option<i128> {
        match self.node(id) {
            Node::Int(v) => Some(v as i128),
            Node::Big(i) => Some(self.bigs[i as usize]),
            Node::Bool(b) => Some(b as i128),
            _ => None,
        }
    }

    pub fn as_f64(&self, id: NodeId) -> Option<f64> {
        match self.node(id) {
            Node::Float(f) => Some(f),
            _ => self.as_int(id).map(|v| v as f64),
        }
    }

    pub fn as_bool(&self, id: NodeId) -> Option<bool> {
        match self.node(id) {
            Node::Bool(b) => Some(b),
            Node::Int(v) => Some(v != 0),
            _ => None,
        }
    }

    /// Items of a list, tuple or set.
    pub fn as_seq(&self, id: NodeId) -> Option<&[NodeId]> {
        match self.node(id) {
            Node::List(i) | Node::Tuple(i) | Node::Set(i) => Some(&self.seqs[i as usize]),
            _ => None,
        }
    }

    pub fn as_dict(&self, id: NodeId) -> Option<&[(NodeId, NodeId)]> {
        match self.node(id) {
            Node::Dict(i) => Some(&self.maps[i as usize]),
            _ => None,
        }
    }

    /// Value of a string key in a dict (the last one wins, as in Python).
    pub fn get(&self, dict: NodeId, key: &str) -> Option<NodeId> {
        self.as_dict(dict)?.iter().rev().find(|(k, _)| self.as_str(*k) == Some(key)).map(|&(_, v)| v)
    }

    pub fn type_name(&self, id: NodeId) -> &'static str {
        match self.node(id) {
            Node::None => "None",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::Big(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::List(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Set(_) => "set",
            Node::Dict(_) => "dict",
            Node::TypeTagFn => "function",
        }
    }

    /// A JSON rendering of a small value (settings, unknown keys). Bounded in depth and in total
    /// nodes rendered: shared objects repeat, so a small pickle can describe an exponentially
    /// large tree (or a cycle), and this must stay cheap whatever the file says.
    pub fn to_json(&self, id: NodeId, depth: u32) -> serde_json::Value {
        let mut budget: u32 = 20_000;
        self.to_json_bounded(id, depth, &mut budget)
    }

    fn to_json_bounded(&self, id: NodeId, depth: u32, budget: &mut u32) -> serde_json::Value {
        use serde_json::Value as J;
        if depth > 32 || *budget == 0 {
            return J::String("…".into());
        }
        *budget -= 1;
        match self.node(id) {
            Node::None | Node::TypeTagFn => J::Null,
            Node::Bool(b) => J::Bool(b),
            Node::Int(v) => J::from(v),
            Node::Big(i) => {
                let v = self.bigs[i as usize];
                u64::try_from(v).map(J::from).unwrap_or_else(|_| J::String(v.to_string()))
            }
            Node::Float(f) => serde_json::Number::from_f64(f).map(J::Number).unwrap_or(J::Null),
            Node::Str(i) => {
                let text = &self.strs[i as usize];
                // Long strings spend the budget too (a shared string may repeat many times).
                *budget = budget.saturating_sub((text.len() / 256) as u32);
                J::String(text.chars().take(10_000).collect())
            }
            Node::Bytes(i) => J::String(format!("<{} bytes>", self.bytes[i as usize].len())),
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
