//! Allocator settings a simulation runs under: the recorded ones (from `allocator_settings` or
//! what the replay inferred) changed by a `PYTORCH_CUDA_ALLOC_CONF`-style string.

use crate::error::{Error, Result};
use crate::replay::rules::{Rules, MIB};
use serde::Serialize;

/// Keys that change the simulated layout.
const EFFECTIVE_KEYS: &[&str] = &[
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
const NPU_KEYS: &[&str] = &["segment_size_mb", "page_size", "base_addr_aligned_kb"];
/// Keys accepted and ignored: they change nothing in the device layout.
const IGNORED_KEYS: &[&str] = &[
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

const GIB: u64 = 1 << 30;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Settings {
    /// Rounding, split and oversize rules shared with the replay (pad, divisions, max_split_size,
    /// max_non_split_rounding, expandable).
    #[serde(skip)]
    pub rules: Rules,
    /// `garbage_collection_threshold` (0 = off). PyTorch runs it only under a memory fraction.
    pub garbage_collection_threshold: f64,
    /// Segment size for requests under 10 MiB, and the large pool's expandable page.
    pub large_segment_size: u64,
    /// torch_npu: 16 KiB alignment of large expandable blocks (0 = off).
    pub npu_align: u64,
    /// torch_npu `page_size:1g`: large segments and expandable pages in 1 GiB units.
    pub huge_pages: bool,
    /// The file was written by torch_npu (pad, alignment and key checks differ).
    pub npu: bool,
}

impl Settings {
    /// The settings the recording ran under, as the replay established them.
    pub fn recorded(rules: &Rules) -> Settings {
        let npu = rules.pad > 0;
        Settings {
            rules: rules.clone(),
            garbage_collection_threshold: 0.0,
            large_segment_size: 20 * MIB,
            npu_align: if npu { 16 << 10 } else { 0 },
            huge_pages: false,
            npu,
        }
    }

    /// With the recorded `allocator_settings` values the rules do not carry.
    pub fn with_recorded_extras(mut self, allocator_settings: Option<&serde_json::Value>) -> Settings {
        let Some(s) = allocator_settings else { return self };
        if let Some(g) = s.get("garbage_collection_threshold").and_then(|v| v.as_f64()) {
            self.garbage_collection_threshold = g;
        }
        if let Some(conf) = s.get("PYTORCH_CUDA_ALLOC_CONF").and_then(|v| v.as_str()) {
            for (k, v) in split_pairs(conf) {
                if k == "large_segment_size_mb" {
                    if let Ok(n) = v.parse::<u64>() {
                        self.large_segment_size = n * MIB;
                    }
                }
            }
        }
        self
    }

    /// Apply an alloc-conf string (`key:value,key:value`) on top of these settings.
    pub fn apply_conf(mut self, conf: &str) -> Result<Settings> {
        for (key, value) in split_pairs(conf) {
            let bad = |why: &str| invalid(&key, &value, why);
            if value.is_empty() || key.contains('=') {
                return Err(Error::new(
                    "ALLOC_CONF_INVALID",
                    format!("`{key}` is not a key:value pair"),
                    "write the settings as PYTORCH_CUDA_ALLOC_CONF does: key:value pairs separated by commas, e.g. expandable_segments:True,max_split_size_mb:512",
                ));
            }
            if NPU_KEYS.contains(&key.as_str()) && !self.npu {
                return Err(Error::new(
                    "ALLOC_CONF_INVALID",
                    format!("`{key}` is a torch_npu setting and this recording is CUDA's"),
                    format!("CUDA takes: {}", accepted_keys().into_iter().filter(|k| !NPU_KEYS.contains(k)).collect::<Vec<_>>().join(", ")),
                ));
            }
            match key.as_str() {
                "expandable_segments" => {
                    self.rules.expandable = parse_bool(&value).ok_or_else(|| bad("True or False"))?;
                }
                "max_split_size_mb" => {
                    let mb = parse_u64(&value).ok_or_else(|| bad("a size in MiB (> 20), or -1 for unlimited"))?;
                    self.rules.max_split_size = match mb {
                        None => u64::MAX,
                        Some(mb) if mb > 20 => mb * MIB,
                        Some(_) => return Err(bad("a size in MiB above 20 (PyTorch rejects smaller ones)")),
                    };
                }
                "max_non_split_rounding_mb" => {
                    let mb = parse_u64(&value).flatten().ok_or_else(|| bad("a size in MiB"))?;
                    self.rules.max_non_split_rounding = mb * MIB;
                }
                "large_segment_size_mb" | "segment_size_mb" => {
                    let mb = parse_u64(&value).flatten().filter(|&m| m >= 2).ok_or_else(|| bad("a size in MiB of at least 2"))?;
                    self.large_segment_size = mb * MIB;
                }
                "roundup_power2_divisions" => self.rules.divisions = parse_divisions(&value).map_err(|w| bad(&w))?,
                "garbage_collection_threshold" => {
                    let t: f64 = value.parse().map_err(|_| bad("a fraction between 0 and 1"))?;
                    if !(t > 0.0 && t < 1.0) {
                        return Err(bad("a fraction strictly between 0 and 1"));
                    }
                    self.garbage_collection_threshold = t;
                }
                "page_size" => {
                    self.huge_pages = match value.to_ascii_lowercase().as_str() {
                        "1g" => true,
                        "2m" | "default" => false,
                        _ => return Err(bad("1g (torch_npu)")),
                    }
                }
                "base_addr_aligned_kb" => {
                    let kb = parse_u64(&value).flatten().filter(|&k| k <= 16).ok_or_else(|| bad("0 to 16 KiB (torch_npu)"))?;
                    self.npu_align = kb << 10;
                }
                "backend" => match value.as_str() {
                    "native" => {}
                    "cudaMallocAsync" => {
                        return Err(Error::new(
                            "ALLOC_CONF_INVALID",
                            "backend:cudaMallocAsync has no segments or blocks to simulate",
                            "simulate the native caching allocator (leave `backend` out)",
                        ))
                    }
                    _ => return Err(bad("native")),
                },
                k if IGNORED_KEYS.contains(&k) => {}
                _ => {
                    return Err(Error::new(
                        "ALLOC_CONF_INVALID",
                        format!("unknown allocator setting `{key}`"),
                        format!("accepted keys: {}", accepted_keys().join(", ")),
                    ))
                }
            }
        }
        let limited = self.rules.max_split_size != u64::MAX || self.garbage_collection_threshold > 0.0;
        if self.npu && self.rules.expandable && limited {
            return Err(Error::new(
                "ALLOC_CONF_INVALID",
                "torch_npu rejects expandable_segments together with max_split_size_mb or garbage_collection_threshold",
                "simulate them one at a time",
            ));
        }
        Ok(self)
    }

    /// Page of an expandable segment in a pool (2 MiB small, the large segment size large).
    pub fn page(&self, small: bool) -> u64 {
        match (small, self.huge_pages) {
            (true, _) => 2 * MIB,
            (false, true) => GIB,
            (false, false) => self.large_segment_size,
        }
    }

    /// `get_allocation_size`: the cudaMalloc for a rounded request no cached block fits.
    pub fn allocation_size(&self, s: u64) -> u64 {
        if s <= MIB {
            2 * MIB
        } else if self.huge_pages {
            s.div_ceil(GIB) * GIB
        } else if s < 10 * MIB {
            self.large_segment_size
        } else {
            s.div_ceil(2 * MIB) * 2 * MIB
        }
    }

    /// The settings as an alloc-conf string (only what differs from the defaults).
    pub fn conf_string(&self) -> String {
        let mut parts = Vec::new();
        if self.rules.expandable {
            parts.push("expandable_segments:True".to_string());
        }
        if self.rules.max_split_size != u64::MAX {
            parts.push(format!("max_split_size_mb:{}", self.rules.max_split_size / MIB));
        }
        if self.rules.max_non_split_rounding != 20 * MIB {
            parts.push(format!("max_non_split_rounding_mb:{}", self.rules.max_non_split_rounding / MIB));
        }
        if self.rules.divisions.iter().any(|&d| d > 1) {
            parts.push(format!("roundup_power2_divisions:{}", divisions_string(&self.rules.divisions)));
        }
        if self.garbage_collection_threshold > 0.0 {
            parts.push(format!("garbage_collection_threshold:{}", self.garbage_collection_threshold));
        }
        if self.large_segment_size != 20 * MIB {
            parts.push(format!("large_segment_size_mb:{}", self.large_segment_size / MIB));
        }
        if self.huge_pages {
            parts.push("page_size:1g".into());
        }
        if parts.is_empty() {
            "(defaults)".into()
        } else {
            parts.join(",")
        }
    }

    /// A JSON view of every setting the simulator uses.
    pub fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "conf": self.conf_string(),
            "expandable_segments": self.rules.expandable,
            "max_split_size": if self.rules.max_split_size == u64::MAX { serde_json::Value::Null } else { self.rules.max_split_size.into() },
            "max_non_split_rounding": self.rules.max_non_split_rounding,
            "roundup_power2_divisions": self.rules.divisions,
            "garbage_collection_threshold": self.garbage_collection_threshold,
            "large_segment_size": self.large_segment_size,
            "pad": self.rules.pad,
            "npu_align": self.npu_align,
            "huge_pages": self.huge_pages,
        })
    }
}

fn invalid(key: &str, value: &str, accepted: &str) -> Error {
    Error::new("ALLOC_CONF_INVALID", format!("`{key}:{value}` is not a valid value for {key}"), format!("{key} takes {accepted}"))
}

/// `key:value` pairs separated by commas; a value in brackets may hold commas itself.
fn split_pairs(conf: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut depth = 0;
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

/// `4` (every interval) or `[256:1,512:2,>:4]` (intervals from N MiB; the first value also
/// covers the smaller sizes, `>` every larger one), as PyTorch parses it.
fn parse_divisions(v: &str) -> std::result::Result<[u64; 16], String> {
    let check = |n: u64| {
        if n == 0 || n == 1 || n.is_power_of_two() {
            Ok(n)
        } else {
            Err("a power of two, or a list like [256:1,512:2,>:4]".to_string())
        }
    };
    if let Ok(n) = v.parse::<u64>() {
        return Ok([check(n)?; 16]);
    }
    let inner = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')).ok_or("a number or a bracketed list")?;
    let mut out = [0u64; 16];
    let mut first = true;
    let mut last = 0usize;
    for item in inner.split(',') {
        let (k, n) = item.split_once(':').ok_or("interval:divisions pairs")?;
        let n = check(n.trim().parse().map_err(|_| "a number of divisions")?)?;
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

fn divisions_string(d: &[u64; 16]) -> String {
    if d.iter().all(|&x| x == d[0]) {
        return d[0].to_string();
    }
    let items: Vec<String> = d.iter().enumerate().map(|(i, n)| format!("{}:{n}", 1u64 << i)).collect();
    format!("[{}]", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Settings {
        Settings::recorded(&Rules::default())
    }

    #[test]
    fn parses_the_documented_syntax() {
        let s = base().apply_conf("expandable_segments:True,max_split_size_mb:512").unwrap();
        assert!(s.rules.expandable);
        assert_eq!(s.rules.max_split_size, 512 * MIB);
        let d = base().apply_conf("roundup_power2_divisions:[256:1,512:2,>:4]").unwrap().rules.divisions;
        assert_eq!((d[0], d[8], d[9], d[10], d[15]), (1, 1, 2, 4, 4));
        assert_eq!(base().apply_conf("roundup_power2_divisions:4").unwrap().rules.divisions, [4; 16]);
        assert_eq!(base().apply_conf("garbage_collection_threshold:0.6").unwrap().garbage_collection_threshold, 0.6);
    }

    #[test]
    fn rejects_unknown_keys_and_values_with_the_accepted_list() {
        let e = base().apply_conf("expandable:True").unwrap_err();
        assert_eq!(e.code, "ALLOC_CONF_INVALID");
        assert!(e.hint.contains("max_split_size_mb"), "{}", e.hint);
        assert!(base().apply_conf("max_split_size_mb:10").is_err());
        assert!(base().apply_conf("garbage_collection_threshold:1.5").is_err());
        assert!(base().apply_conf("roundup_power2_divisions:3").is_err());
        assert!(base().apply_conf("backend:cudaMallocAsync").is_err());
        assert!(base().apply_conf("release_lock_on_cudamalloc:True").is_ok());
        assert!(base().apply_conf("expandable_segments:true").is_err(), "PyTorch takes True or False");
        assert!(base().apply_conf("expandable_segments=True").unwrap_err().hint.contains("key:value"));
        assert!(base().apply_conf("page_size:1g").unwrap_err().message.contains("torch_npu"));
    }

    #[test]
    fn segment_sizes_follow_get_allocation_size() {
        let s = base();
        assert_eq!(s.allocation_size(512), 2 * MIB);
        assert_eq!(s.allocation_size(3 * MIB), 20 * MIB);
        assert_eq!(s.allocation_size(11 * MIB + 1), 12 * MIB);
    }
}
