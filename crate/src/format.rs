//! Byte counts and event references for people: the one formatter every Rust surface uses (CLI text, report, findings).
//! Units B, KiB, MiB, GiB (the page's `ui/format.ts` uses the same set); JSON keeps exact integers.

const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];

/// "1.23 GiB", "-512.00 MiB", "300 B".
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
    }
}
