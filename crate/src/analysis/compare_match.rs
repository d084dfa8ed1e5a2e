//! Allocation sites of two runs matched by what survives an edit: the same stack first, then the
//! same functions in the same files (lines moved), then the same naming function with other
//! callers (the most callers in common, nearest line first). A line shifted by an edit is one
//! site that moved, not one that vanished and one that appeared.

use std::collections::{BTreeMap, BTreeSet};

/// How two sites were matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The same stack, frame for frame.
    Stack,
    /// The same functions in the same files, outermost to innermost; only lines differ.
    Code,
    /// The same naming function in the same file, reached from other callers.
    Function,
}

impl How {
    pub fn name(self) -> &'static str {
        match self {
            How::Stack => "stack",
            How::Code => "code",
            How::Function => "function",
        }
    }
}

/// One side's stacks: key (stack text or a synthetic label) → (bytes, naming frame text).
pub type Sites<'a> = BTreeMap<&'a str, (i64, Option<&'a str>)>;

/// A group of stacks of A matched with a group of B (either may be empty: new or vanished).
#[derive(Debug, Clone)]
pub struct Pair<'a> {
    pub a: Vec<&'a str>,
    pub b: Vec<&'a str>,
    pub how: Option<How>,
}

/// `path:line name` (a stack text line) as (path, line, name).
pub fn parse_frame(text: &str) -> Option<(&str, u64, &str)> {
    let (at, name) = text.split_once(' ')?;
    let (path, line) = at.rsplit_once(':')?;
    Some((path, line.parse().ok()?, name))
}

fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.starts_with('<')
}

/// The naming frame's function and file, without its line.
fn naming(site: Option<&str>) -> Option<String> {
    site.and_then(parse_frame).map(|(p, _, n)| format!("{p} {n}"))
}

/// The Python frames of a stack text (outermost first, one a line) as `file function`,
/// innermost first: what stays when lines move.
fn chain(key: &str) -> Vec<String> {
    key.lines().rev().filter_map(parse_frame).filter(|(p, _, _)| is_python(p)).map(|(p, _, n)| format!("{p} {n}")).collect()
}

/// The naming frame's line (the tie-breaker).
fn line_of(site: Option<&str>) -> u64 {
    site.and_then(parse_frame).map_or(0, |(_, l, _)| l)
}

/// Pair the stacks of `a` and `b`. Every key of either side is in exactly one pair.
pub fn pair<'a>(a: &Sites<'a>, b: &Sites<'a>) -> Vec<Pair<'a>> {
    let mut out = Vec::new();
    // 1. The same stack.
    let mut left_a: BTreeSet<&str> = a.keys().copied().collect();
    let mut left_b: BTreeSet<&str> = b.keys().copied().collect();
    for k in a.keys().filter(|k| b.contains_key(*k)) {
        out.push(Pair { a: vec![k], b: vec![k], how: Some(How::Stack) });
        left_a.remove(k);
        left_b.remove(k);
    }
    // 2. The same code: naming function and Python chain without lines. Stacks of one side
    // that differ only in lines or native frames go together.
    let code = |s: &Sites<'a>, k: &str| naming(s[k].1).map(|n| format!("{n}\n{}", chain(k).join("\n")));
    let group = |s: &Sites<'a>, left: &BTreeSet<&'a str>| {
        let mut m: BTreeMap<String, Vec<&'a str>> = BTreeMap::new();
        for &k in left {
            if let Some(c) = code(s, k) {
                m.entry(c).or_default().push(k);
            }
        }
        m
    };
    let (ga, gb) = (group(a, &left_a), group(b, &left_b));
    for (c, ka) in &ga {
        if let Some(kb) = gb.get(c) {
            left_a.retain(|k| !ka.contains(k));
            left_b.retain(|k| !kb.contains(k));
            out.push(Pair { a: ka.clone(), b: kb.clone(), how: Some(How::Code) });
        }
    }
    // 3. The same naming function: the pair with the most callers in common first, then the
    // nearest line, each code group used once.
    let (ga, gb) = (group(a, &left_a), group(b, &left_b));
    let name_of = |c: &str| c.lines().next().unwrap_or("").to_string();
    let mut candidates = Vec::new();
    for (ca, ka) in &ga {
        for (cb, kb) in gb.iter().filter(|(cb, _)| name_of(cb) == name_of(ca)) {
            let (xa, xb) = (chain(ka[0]), chain(kb[0]));
            let common = xa.iter().zip(&xb).take_while(|(x, y)| x == y).count();
            let distance = line_of(a[ka[0]].1).abs_diff(line_of(b[kb[0]].1));
            candidates.push((std::cmp::Reverse(common), distance, ca.clone(), cb.clone()));
        }
    }
    candidates.sort();
    let (mut used_a, mut used_b) = (BTreeSet::new(), BTreeSet::new());
    for (_, _, ca, cb) in candidates {
        if used_a.contains(&ca) || used_b.contains(&cb) {
            continue;
        }
        let (ka, kb) = (&ga[&ca], &gb[&cb]);
        left_a.retain(|k| !ka.contains(k));
        left_b.retain(|k| !kb.contains(k));
        out.push(Pair { a: ka.clone(), b: kb.clone(), how: Some(How::Function) });
        used_a.insert(ca);
        used_b.insert(cb);
    }
    out.extend(left_a.into_iter().map(|k| Pair { a: vec![k], b: vec![], how: None }));
    out.extend(left_b.into_iter().map(|k| Pair { a: vec![], b: vec![k], how: None }));
    out
}

/// "model.py:20 → 23" (or "a.py:20 → b.py:23" across files) when the naming line moved.
pub fn line_change(site_a: Option<&str>, site_b: Option<&str>) -> Option<String> {
    let (pa, la, _) = parse_frame(site_a?)?;
    let (pb, lb, _) = parse_frame(site_b?)?;
    let base = |p: &str| crate::frames::posix_path(p).rsplit('/').next().unwrap_or(p).to_string();
    match (pa == pb, la == lb) {
        (true, true) => None,
        (true, false) => Some(format!("{}:{la} → {lb}", base(pa))),
        (false, _) => Some(format!("{}:{la} → {}:{lb}", base(pa), base(pb))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites<'a>(rows: &[(&'a str, i64, &'a str)]) -> Sites<'a> {
        rows.iter().map(|&(k, b, s)| (k, (b, Some(s)))).collect()
    }

    #[test]
    fn a_moved_line_is_one_site() {
        let a = sites(&[("/w/run.py:30 main\n/w/model.py:20 forward", 10, "/w/model.py:20 forward")]);
        let b = sites(&[("/w/run.py:30 main\n/w/model.py:23 forward", 10, "/w/model.py:23 forward")]);
        let p = pair(&a, &b);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].how, Some(How::Code));
        assert_eq!(line_change(Some("/w/model.py:20 forward"), Some("/w/model.py:23 forward")).as_deref(), Some("model.py:20 → 23"));
    }

    #[test]
    fn other_callers_match_by_function_nearest_first() {
        let a = sites(&[("/w/train.py:5 main\n/w/model.py:20 forward", 10, "/w/model.py:20 forward")]);
        let b = sites(&[
            ("/w/infer.py:9 main\n/w/model.py:20 forward", 4, "/w/model.py:20 forward"),
            ("/w/infer.py:9 main\n/w/x.py:1 helper\n/w/model.py:90 forward", 4, "/w/model.py:90 forward"),
        ]);
        let p = pair(&a, &b);
        let f: Vec<_> = p.iter().filter(|x| x.how == Some(How::Function)).collect();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].b, vec!["/w/infer.py:9 main\n/w/model.py:20 forward"]);
        assert_eq!(p.iter().filter(|x| x.how.is_none()).count(), 1);
    }
}
