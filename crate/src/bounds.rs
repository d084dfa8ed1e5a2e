//! Bounded answers: rows paged by a cursor, and every answer cut to a byte bound, saying what
//! was cut (`bounds.cut`: where, how many kept of how many) so the caller can ask for the rest.
//! The MCP server's (`snapscope mcp`); it lives in the library so its tests need no test build
//! of the binary.

use serde_json::{json, Value};

/// Default bound of one answer (structured content and text together).
pub const DEFAULT_MAX_BYTES: usize = 256 << 10;

/// Keep the rows from `cursor` on of an answer computed with `max_rows = cursor + limit`:
/// `returned` counts the rows kept, `next_cursor` names the next page when there is one.
pub fn page_rows(v: &mut Value, key: &str, cursor: usize) {
    let Some(rows) = v.get_mut(key).and_then(Value::as_array_mut) else { return };
    rows.drain(..cursor.min(rows.len()));
    let n = rows.len();
    v["returned"] = n.into();
    v["cursor"] = cursor.into();
    if v["has_more"].as_bool().unwrap_or(false) {
        v["next_cursor"] = (cursor + n).into();
    }
}

/// Page a list an answer holds whole: items `cursor..cursor + limit` of `v[key]`, with `total`,
/// `returned`, `has_more`, `cursor` and `next_cursor` beside it.
pub fn page_list(v: &mut Value, key: &str, cursor: usize, limit: usize) {
    let Some(items) = v.get_mut(key).and_then(Value::as_array_mut) else { return };
    let total = items.len();
    items.drain(..cursor.min(total));
    items.truncate(limit);
    let n = items.len();
    let has_more = cursor + n < total;
    let o = v.as_object_mut().expect("an object");
    o.insert("total".into(), total.into());
    o.insert("returned".into(), n.into());
    o.insert("has_more".into(), has_more.into());
    o.insert("cursor".into(), cursor.into());
    if has_more {
        o.insert("next_cursor".into(), (cursor + n).into());
    }
}

/// The serialized length of a JSON value (as `serde_json::to_vec` writes it).
pub fn size(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => 4 + usize::from(!b),
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => serde_json::to_string(s).map_or(s.len() + 2, |t| t.len()),
        Value::Array(a) => 2 + a.iter().map(size).sum::<usize>() + a.len().saturating_sub(1),
        Value::Object(o) => {
            2 + o.iter().map(|(k, x)| serde_json::to_string(k).map_or(k.len() + 2, |t| t.len()) + 1 + size(x)).sum::<usize>()
                + o.len().saturating_sub(1)
        }
    }
}

/// The value `weigh` weighs most (its weight and JSON pointer), searched through the whole tree;
/// values it gives no weight are skipped.
fn heaviest(v: &Value, weigh: fn(&Value) -> Option<usize>, path: &mut String, best: &mut Option<(usize, String)>) {
    if let Some(w) = weigh(v) {
        if best.as_ref().is_none_or(|(b, _)| w > *b) {
            *best = Some((w, path.clone()));
        }
    }
    let mut visit = |x: &Value, step: &str, path: &mut String| {
        let n = path.len();
        path.push('/');
        path.push_str(step);
        heaviest(x, weigh, path, best);
        path.truncate(n);
    };
    match v {
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| visit(x, &i.to_string(), path)),
        Value::Object(o) => o.iter().for_each(|(k, x)| visit(x, &k.replace('~', "~0").replace('/', "~1"), path)),
        _ => {}
    }
}

/// An array with more than one item, by its serialized size.
fn array_weight(v: &Value) -> Option<usize> {
    v.as_array().filter(|a| a.len() > 1).map(|_| size(v))
}

/// A string over 256 bytes, by its length.
fn string_weight(v: &Value) -> Option<usize> {
    v.as_str().map(str::len).filter(|&n| n > 256)
}

fn cut_at(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Cut `v` to at most `max` bytes with `text_len` bytes of text beside it. A row answer (`rows_key`) keeps its first rows and pages on
/// from `cursor`; any other answer halves its largest lists (then its longest strings) until it
/// fits. Adds `bounds` (the bound, the size, what was cut) to the answer.
pub fn fit(v: &mut Value, max: usize, text_len: usize, rows_key: Option<&str>, cursor: usize) {
    // Room for the text, the `bounds` object and the paging fields.
    let budget = max.saturating_sub(640 + text_len);
    let mut cut: Vec<Value> = Vec::new();
    if let Some(key) = rows_key.filter(|k| v.get(*k).is_some_and(Value::is_array) && size(v) > budget) {
        let rows = v[key].as_array().cloned().unwrap_or_default();
        let (mut lo, mut hi) = (0usize, rows.len());
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            v[key] = Value::Array(rows[..mid].to_vec());
            if size(v) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        v[key] = Value::Array(rows[..lo].to_vec());
        v["returned"] = lo.into();
        v["has_more"] = true.into();
        v["truncated"] = true.into();
        v["next_cursor"] = (cursor + lo).into();
        cut.push(json!({"path": format!("/{key}"), "kept": lo, "of": rows.len()}));
    }
    let mut guard = 0;
    while size(v) > budget && guard < 200 {
        guard += 1;
        let mut best = None;
        heaviest(v, array_weight, &mut String::new(), &mut best);
        if let Some((_, p)) = best {
            let a = v.pointer_mut(&p).and_then(Value::as_array_mut).expect("found above");
            let before = a.len();
            a.truncate((before / 2).max(1));
            let kept = a.len();
            match cut.iter_mut().find(|c| c["path"] == p) {
                Some(c) => c["kept"] = kept.into(),
                None => cut.push(json!({"path": p, "kept": kept, "of": before})),
            }
            continue;
        }
        let mut best = None;
        heaviest(v, string_weight, &mut String::new(), &mut best);
        let Some((len, p)) = best else { break };
        let s = v.pointer_mut(&p).expect("found above");
        let short = format!("{}…[cut: {len} bytes]", cut_at(s.as_str().unwrap_or(""), len / 2));
        *s = Value::String(short);
        cut.push(json!({"path": p, "kept_bytes": len / 2, "of_bytes": len}));
    }
    // The rows may have been halved again above: the page says what it holds.
    if let Some(key) = rows_key {
        let kept = v.get(key).and_then(Value::as_array).map(Vec::len);
        if let (Some(n), true) = (kept, cut.iter().any(|c| c["path"] == format!("/{key}"))) {
            v["returned"] = n.into();
            v["has_more"] = true.into();
            v["truncated"] = true.into();
            v["next_cursor"] = (cursor + n).into();
        }
    }
    let bytes = size(v) + text_len;
    if let Some(o) = v.as_object_mut() {
        // `bytes`: the structured content (before this object) and the text together.
        o.insert("bounds".into(), json!({"max_bytes": max, "bytes": bytes, "truncated": !cut.is_empty(), "cut": cut}));
    }
}

/// Text cut to `max` bytes with a note saying so.
pub fn cut_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}\n… [text cut at {max} of {} bytes; the whole answer is the structured content]", cut_at(text, max), text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_the_serialized_length() {
        let v = json!({"a": [1, 2.5, "x\"y", null, true, false], "b": {"c": "é"}});
        assert_eq!(size(&v), serde_json::to_vec(&v).unwrap().len());
    }

    #[test]
    fn rows_are_cut_to_the_bound_and_page_on() {
        let rows: Vec<Value> = (0..10_000).map(|i| json!({"id": i, "text": "some text of a row"})).collect();
        let mut v = json!({"ok": true, "rows": rows, "returned": 10_000, "has_more": false});
        fit(&mut v, 8192, 100, Some("rows"), 40);
        assert!(size(&v) + 100 <= 8192);
        let n = v["returned"].as_u64().unwrap();
        assert_eq!(v["rows"].as_array().unwrap().len() as u64, n);
        assert_eq!(v["next_cursor"], json!(40 + n));
        assert!(v["has_more"] == true && v["truncated"] == true && v["bounds"]["truncated"] == true);
    }

    #[test]
    fn other_answers_halve_their_largest_list_and_say_where() {
        let mut v = json!({"ok": true, "devices": [{"nodes": (0..5000).collect::<Vec<_>>(), "small": [1, 2]}]});
        fit(&mut v, 4096, 0, None, 0);
        assert!(size(&v) <= 4096);
        let cut = &v["bounds"]["cut"][0];
        assert_eq!(cut["path"], "/devices/0/nodes");
        assert_eq!(cut["of"], 5000);
        assert_eq!(v["devices"][0]["small"], json!([1, 2]));
    }

    #[test]
    fn pages_of_a_whole_list() {
        let mut v = json!({"nodes": (0..25).collect::<Vec<_>>()});
        page_list(&mut v, "nodes", 20, 10);
        assert_eq!(v["nodes"], json!([20, 21, 22, 23, 24]));
        assert_eq!((v["total"].as_u64(), v["returned"].as_u64(), v["has_more"].as_bool()), (Some(25), Some(5), Some(false)));
        assert!(v.get("next_cursor").is_none());
    }
}
