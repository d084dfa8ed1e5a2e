//! Byte counts and event references for people: the one formatter every Rust surface uses (CLI text, report, findings).
//! Units B, KiB, MiB, GiB (the page's `ui/format.ts` uses the same set); JSON keeps exact integers.

const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];

/// "1.23 GiB", "-512.00 MiB", "300 B".
/// Bidirectional controls: overrides and isolates reorder what is shown around them (U+202E makes
/// `gpj.exe` read `exe.jpg`).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A name from a snapshot as shown to a reader: control characters (newlines included) and
/// bidirectional controls written escaped (`\u{202e}`), so a name can neither reorder nor break
/// the text around it.
pub fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() || is_bidi_control(c);
    if !s.chars().any(bad) {
        return s.into();
    }
    s.chars().map(|c| if bad(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect::<String>().into()
}

pub fn bytes(b: i64) -> String {
    let a = b.unsigned_abs();
    match UNITS.iter().find(|(u, _)| a >= *u) {
        Some((u, name)) => format!("{}{:.2} {name}", if b < 0 { "-" } else { "" }, a as f64 / *u as f64),
        None => format!("{b} B"),
    }
}

/// "93.09 MiB (97,606,738 B)": human units with the exact count, for messages about one value.
pub fn exact_bytes(b: i64) -> String {
    if b.unsigned_abs() < 1024 {
        return bytes(b);
    }
    format!("{} ({} B)", bytes(b), count(b))
}

/// "1,313": a count with thousands separators, as sentences print them.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// "event 5317", or "the window start" for the state before the first event.
pub fn event(e: Option<i64>) -> String {
    e.map(|e| format!("event {e}")).unwrap_or_else(|| "the window start".into())
}

/// "80GiB", "80 GB", "512MiB", "85899345920": a byte count as people type it (GB = 10^9,
/// GiB = 2^30). None for anything else.
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => (1u64 << 30) as f64,
        "gb" => 1e9,
        "t" | "tib" => (1u64 << 40) as f64,
        "tb" => 1e12,
        _ => return None,
    };
    let v = n * scale;
    // Above 2^63 bytes is no memory size: refused, not saturated.
    (v.is_finite() && (1.0..9.2e18).contains(&v)).then_some(v.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn units_and_signs() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.00 KiB");
        assert_eq!(bytes(-3 << 20), "-3.00 MiB");
        assert_eq!(bytes(1536 << 30), "1536.00 GiB");
        assert_eq!(bytes(i64::MIN), "-8589934592.00 GiB");
        assert_eq!(super::count(1313), "1,313");
        assert_eq!(super::count(-1_000_000), "-1,000,000");
        assert_eq!(super::count(999), "999");
        assert_eq!(super::parse_bytes("80GiB"), Some(80 << 30));
        assert_eq!(super::parse_bytes("80 GB"), Some(80_000_000_000));
        assert_eq!(super::parse_bytes("1024"), Some(1024));
        assert_eq!(super::parse_bytes("lots"), None);
    }
}
