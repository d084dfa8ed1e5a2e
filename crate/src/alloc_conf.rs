//! The one parser of allocator settings (`PYTORCH_CUDA_ALLOC_CONF` strings and the values a
//! snapshot's `allocator_settings` records), shared by the replay's inferred rules, the
//! simulator's recorded settings and `--alloc-conf`. Every value is validated here: its range,
//! and sizes in MiB converted to bytes with checked arithmetic, never wrapped (issue 29: a
//! recorded `large_segment_size_mb:0`, or `2^44` MiB wrapping to 0, divided by zero in the
//! simulator). An error names the setting and what it takes.

use crate::codes::ErrorCode;
use crate::error::{Error, Result};

const MIB: u64 = 1 << 20;
/// The largest size in MiB a setting takes (1 TiB): larger ones describe no device, and bounding
/// them keeps the simulator's address arithmetic far from overflow.
pub const MAX_MIB: u64 = 1 << 20;
/// The largest `roundup_power2_divisions` value (PyTorch's own limit is the number of bits).
pub const MAX_DIVISIONS: u64 = 1 << 16;

/// One validated setting.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    Expandable(bool),
    /// Bytes; `u64::MAX` = unlimited (`-1`).
    MaxSplitSize(u64),
    /// Bytes.
    MaxNonSplitRounding(u64),
    /// `large_segment_size_mb` (CUDA) or `segment_size_mb` (torch_npu), in bytes.
    LargeSegmentSize(u64),
    Divisions([u64; 16]),
    /// Strictly between 0 and 1.
    GcThreshold(f64),
    /// torch_npu `page_size:1g`.
    HugePages(bool),
    /// torch_npu `base_addr_aligned_kb`, in bytes.
    NpuAlign(u64),
    /// `backend:native`, or a key that changes nothing in the device layout.
    NoEffect,
}

/// Keys that change the simulated layout.
pub const EFFECTIVE_KEYS: &[&str] = &[
    "expandable_segments",
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "roundup_power2_divisions",
    "garbage_collection_threshold",
    "large_segment_size_mb",
    "segment_size_mb",
    "page_size",
    "base_addr_aligned_kb",
    "backend",
];
/// torch_npu's own keys.
pub const NPU_KEYS: &[&str] = &["segment_size_mb", "page_size", "base_addr_aligned_kb"];
/// Keys accepted and ignored: they change nothing in the device layout.
pub const IGNORED_KEYS: &[&str] = &[
    "release_lock_on_cudamalloc",
    "pinned_use_cuda_host_register",
    "pinned_num_register_threads",
    "pinned_use_background_threads",
    "pinned_reserve_segment_size_mb",
    "graph_capture_record_stream_reuse",
];

/// Every key an alloc-conf string may hold.
pub fn accepted_keys() -> Vec<&'static str> {
    EFFECTIVE_KEYS.iter().chain(IGNORED_KEYS).copied().collect()
}

/// The `key:value` pairs of an alloc-conf string, each checked to be a pair.
pub fn pairs(conf: &str) -> Result<Vec<(String, String)>> {
    let out = split_pairs(conf);
    if let Some((key, _)) = out.iter().find(|(k, v)| v.is_empty() || k.contains('=')) {
        return Err(Error::new(
            ErrorCode::AllocConfInvalid,
            format!("`{key}` is not a key:value pair"),
            "write the settings as PYTORCH_CUDA_ALLOC_CONF does: key:value pairs separated by commas, e.g. expandable_segments:True,max_split_size_mb:512",
        ));
    }
    Ok(out)
}

/// One setting, validated.
pub fn parse(key: &str, value: &str) -> Result<Setting> {
    let bad = |why: &str| invalid(key, value, why);
    Ok(match key {
        "expandable_segments" => Setting::Expandable(parse_bool(value).ok_or_else(|| bad("True or False"))?),
        "max_split_size_mb" => {
            let why = "a size in MiB above 20 (PyTorch rejects smaller ones) and at most 1048576, or -1 for unlimited";
            match parse_u64(value).ok_or_else(|| bad(why))? {
                None => Setting::MaxSplitSize(u64::MAX),
                Some(mb) if mb > 20 => Setting::MaxSplitSize(mib(mb).ok_or_else(|| bad(why))?),
                Some(_) => return Err(bad(why)),
            }
        }
        "max_non_split_rounding_mb" => {
            let why = "a size in MiB from 0 to 1048576";
            Setting::MaxNonSplitRounding(parse_u64(value).flatten().and_then(mib).ok_or_else(|| bad(why))?)
        }
        "large_segment_size_mb" | "segment_size_mb" => {
            let why = "a size in MiB from 2 to 1048576";
            Setting::LargeSegmentSize(parse_u64(value).flatten().filter(|&m| m >= 2).and_then(mib).ok_or_else(|| bad(why))?)
        }
        "roundup_power2_divisions" => Setting::Divisions(parse_divisions(value).map_err(|w| bad(&w))?),
        "garbage_collection_threshold" => {
            let t: f64 = value.parse().map_err(|_| bad("a fraction strictly between 0 and 1"))?;
            if !(t > 0.0 && t < 1.0) {
                return Err(bad("a fraction strictly between 0 and 1"));
            }
            Setting::GcThreshold(t)
        }
        "page_size" => Setting::HugePages(match value.to_ascii_lowercase().as_str() {
            "1g" => true,
            "2m" | "default" => false,
            _ => return Err(bad("1g (torch_npu)")),
        }),
        "base_addr_aligned_kb" => {
            Setting::NpuAlign(parse_u64(value).flatten().filter(|&k| k <= 16).ok_or_else(|| bad("0 to 16 KiB (torch_npu)"))? << 10)
        }
        "backend" => match value {
            "native" => Setting::NoEffect,
            "cudaMallocAsync" => {
                return Err(Error::new(
                    ErrorCode::AllocConfInvalid,
                    "backend:cudaMallocAsync has no segments or blocks to simulate",
                    "simulate the native caching allocator (leave `backend` out)",
                ))
            }
            _ => return Err(bad("native")),
        },
        k if IGNORED_KEYS.contains(&k) => Setting::NoEffect,
        _ => {
            return Err(Error::new(
                ErrorCode::AllocConfInvalid,
                format!("unknown allocator setting `{key}`"),
                format!("accepted keys: {}", accepted_keys().join(", ")),
            ))
        }
    })
}

/// A recorded `roundup_power2_divisions` entry (`allocator_settings` keeps them as an object of
/// interval start in MiB → divisions): the interval index and the divisions, validated.
pub fn recorded_division(interval_mb: &str, divisions: Option<u64>) -> Result<(usize, u64)> {
    let bad = |why: &str| invalid("roundup_power2_divisions", &format!("{interval_mb}:{divisions:?}"), why);
    let mb: u64 = interval_mb.trim().parse().map_err(|_| bad("interval starts in MiB"))?;
    if !mb.is_power_of_two() {
        return Err(bad("interval starts that are powers of two (MiB)"));
    }
    let n = check_division(divisions.ok_or_else(|| bad("a number of divisions"))?).map_err(|w| bad(&w))?;
    Ok(((63 - mb.leading_zeros()) as usize, n))
}

/// A recorded `garbage_collection_threshold` (0 = off).
pub fn recorded_gc_threshold(t: f64) -> Result<f64> {
    if (0.0..1.0).contains(&t) {
        Ok(t)
    } else {
        Err(invalid("garbage_collection_threshold", &t.to_string(), "a fraction from 0 (off) to below 1"))
    }
}

fn mib(mb: u64) -> Option<u64> {
    (mb <= MAX_MIB).then_some(())?;
    mb.checked_mul(MIB)
}

fn invalid(key: &str, value: &str, accepted: &str) -> Error {
    Error::new(ErrorCode::AllocConfInvalid, format!("`{key}:{value}` is not a valid value for {key}"), format!("{key} takes {accepted}"))
}

/// `key:value` pairs separated by commas; a value in brackets may hold commas itself. Unchecked:
/// a recorded setting string is read for the keys it holds, a malformed pair beside them ignored.
pub fn split_pairs(conf: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut depth = 0i64;
    let mut start = 0;
    let bytes = conf.as_bytes();
    for i in 0..=bytes.len() {
        let end = i == bytes.len();
        if !end {
            match bytes[i] {
                b'[' => depth += 1,
                b']' => depth -= 1,
                _ => {}
            }
        }
        if end || (bytes[i] == b',' && depth == 0) {
            let part = conf[start..i].trim();
            if !part.is_empty() {
                let (k, v) = part.split_once(':').unwrap_or((part, ""));
                out.push((k.trim().to_string(), v.trim().to_string()));
            }
            start = i + 1;
        }
    }
    out
}

/// PyTorch takes exactly `True` or `False`.
fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

/// A non-negative integer, or None inside Some for -1 (unlimited).
fn parse_u64(v: &str) -> Option<Option<u64>> {
    if v == "-1" {
        return Some(None);
    }
    v.parse::<u64>().ok().map(Some)
}

fn check_division(n: u64) -> std::result::Result<u64, String> {
    if (n == 0 || n == 1 || n.is_power_of_two()) && n <= MAX_DIVISIONS {
        Ok(n)
    } else {
        Err(format!("a power of two up to {MAX_DIVISIONS}, or a list like [256:1,512:2,>:4]"))
    }
}

/// `4` (every interval) or `[256:1,512:2,>:4]` (intervals from N MiB; the first value also
/// covers the smaller sizes, `>` every larger one), as PyTorch parses it.
fn parse_divisions(v: &str) -> std::result::Result<[u64; 16], String> {
    if let Ok(n) = v.parse::<u64>() {
        return Ok([check_division(n)?; 16]);
    }
    let inner = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')).ok_or("a number or a bracketed list")?;
    let mut out = [0u64; 16];
    let mut first = true;
    let mut last = 0usize;
    for item in inner.split(',') {
        let (k, n) = item.split_once(':').ok_or("interval:divisions pairs")?;
        let n = check_division(n.trim().parse().map_err(|_| "a number of divisions")?)?;
        if k.trim() == ">" {
            out[(last + 1).min(16)..].fill(n);
            continue;
        }
        let mb: u64 = k.trim().parse().map_err(|_| "interval starts in MiB")?;
        if !mb.is_power_of_two() {
            return Err("interval starts that are powers of two (MiB)".into());
        }
        let idx = (63 - mb.leading_zeros()) as usize;
        if first {
            out[..idx.min(16)].fill(n);
            first = false;
        }
        if idx < 16 {
            out[idx] = n;
        }
        last = idx;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_range_checked_never_wrapped() {
        for (k, v) in [
            ("large_segment_size_mb", "0"),
            ("large_segment_size_mb", "17592186044416"),
            ("segment_size_mb", "1"),
            ("max_split_size_mb", "17592186044437"), // 2^44 + 21: once 21 MiB
            ("max_split_size_mb", "18446744073709551615"),
            ("max_non_split_rounding_mb", "17592186044416"),
            ("roundup_power2_divisions", "9223372036854775808"),
            ("roundup_power2_divisions", "[1:0,2:3]"),
            ("garbage_collection_threshold", "NaN"),
            ("base_addr_aligned_kb", "99999999999999999999"),
        ] {
            let e = parse(k, v).unwrap_err();
            assert_eq!(e.code, ErrorCode::AllocConfInvalid);
            assert!(e.message.contains(k) && e.hint.contains(k), "{k}:{v} named: {e}");
        }
        assert_eq!(parse("max_split_size_mb", "1048576").unwrap(), Setting::MaxSplitSize(1 << 40));
        assert_eq!(parse("large_segment_size_mb", "2").unwrap(), Setting::LargeSegmentSize(2 << 20));
        assert!(recorded_gc_threshold(1.5).is_err() && recorded_gc_threshold(f64::NAN).is_err());
        assert!(recorded_division("3", Some(2)).is_err() && recorded_division("4", Some(3)).is_err());
        assert_eq!(recorded_division("4", Some(8)).unwrap(), (2, 8));
    }
}
