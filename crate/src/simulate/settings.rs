//! Allocator settings a simulation runs under: the recorded ones (from `allocator_settings` or
//! what the replay inferred) changed by a `PYTORCH_CUDA_ALLOC_CONF`-style string.

use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::replay::rules::{Rules, MIB};
use serde::Serialize;

pub use crate::alloc_conf::accepted_keys;
use crate::alloc_conf::{self, Setting, NPU_KEYS};

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

    /// With the recorded `allocator_settings` values the rules do not carry, validated by the
    /// same parser as `--alloc-conf` (a file's own settings are as untrusted as the rest of it):
    /// a value PyTorch could not have run with keeps the default (the reader's
    /// ALLOC_CONF_INVALID warning names it).
    pub fn with_recorded_extras(mut self, allocator_settings: Option<&serde_json::Value>) -> Result<Settings> {
        let Some(s) = allocator_settings else { return Ok(self) };
        if let Some(Ok(g)) = s.get("garbage_collection_threshold").and_then(|v| v.as_f64()).map(alloc_conf::recorded_gc_threshold) {
            self.garbage_collection_threshold = g;
        }
        if let Some(conf) = s.get("PYTORCH_CUDA_ALLOC_CONF").and_then(|v| v.as_str()) {
            for (k, v) in alloc_conf::split_pairs(conf) {
                if let (true, Ok(Setting::LargeSegmentSize(n))) = (k == "large_segment_size_mb", alloc_conf::parse(&k, &v)) {
                    self.large_segment_size = n;
                }
            }
        }
        Ok(self)
    }

    /// Apply an alloc-conf string (`key:value,key:value`) on top of these settings.
    pub fn apply_conf(mut self, conf: &str) -> Result<Settings> {
        for (key, value) in alloc_conf::pairs(conf)? {
            if NPU_KEYS.contains(&key.as_str()) && !self.npu {
                return Err(Error::new(
                    ErrorCode::AllocConfInvalid,
                    format!("`{key}` is a torch_npu setting and this recording is CUDA's"),
                    format!("CUDA takes: {}", accepted_keys().into_iter().filter(|k| !NPU_KEYS.contains(k)).collect::<Vec<_>>().join(", ")),
                ));
            }
            match alloc_conf::parse(&key, &value)? {
                Setting::Expandable(b) => self.rules.expandable = b,
                Setting::MaxSplitSize(n) => self.rules.max_split_size = n,
                Setting::MaxNonSplitRounding(n) => self.rules.max_non_split_rounding = n,
                Setting::LargeSegmentSize(n) => self.large_segment_size = n,
                Setting::Divisions(d) => self.rules.divisions = d,
                Setting::GcThreshold(t) => self.garbage_collection_threshold = t,
                Setting::HugePages(h) => self.huge_pages = h,
                Setting::NpuAlign(a) => self.npu_align = a,
                Setting::NoEffect => {}
            }
        }
        let limited = self.rules.max_split_size != u64::MAX || self.garbage_collection_threshold > 0.0;
        if self.npu && self.rules.expandable && limited {
            return Err(Error::new(
                ErrorCode::AllocConfInvalid,
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
    pub fn describe(&self) -> SimSettings {
        SimSettings {
            conf: self.conf_string(),
            expandable_segments: self.rules.expandable,
            garbage_collection_threshold: self.garbage_collection_threshold,
            huge_pages: self.huge_pages,
            large_segment_size: self.large_segment_size,
            max_non_split_rounding: self.rules.max_non_split_rounding,
            max_split_size: (self.rules.max_split_size != u64::MAX).then_some(self.rules.max_split_size),
            npu_align: self.npu_align,
            pad: self.rules.pad,
            roundup_power2_divisions: self.rules.divisions,
        }
    }
}

/// The settings a simulation ran under, as its answer states them (fields in name order).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SimSettings {
    /// The alloc-conf string simulated, or "as recorded: …".
    pub conf: String,
    pub expandable_segments: bool,
    /// 0 = off.
    pub garbage_collection_threshold: f64,
    pub huge_pages: bool,
    pub large_segment_size: u64,
    pub max_non_split_rounding: u64,
    /// Bytes; None = unlimited.
    pub max_split_size: Option<u64>,
    pub npu_align: u64,
    pub pad: u64,
    /// Divisions of the power-of-two intervals from 1 MiB, 2 MiB, 4 MiB … (≤ 1: off).
    pub roundup_power2_divisions: [u64; 16],
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
        assert_eq!(e.code, ErrorCode::AllocConfInvalid);
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
    fn recorded_settings_read_their_keys_and_keep_defaults_for_bad_values() {
        let v = serde_json::json!({"PYTORCH_CUDA_ALLOC_CONF": "oops,large_segment_size_mb:40"});
        assert_eq!(base().with_recorded_extras(Some(&v)).unwrap().large_segment_size, 40 * MIB, "a malformed neighbour is ignored");
        for conf in ["large_segment_size_mb:0", "large_segment_size_mb:17592186044416"] {
            let v = serde_json::json!({ "PYTORCH_CUDA_ALLOC_CONF": conf });
            assert_eq!(base().with_recorded_extras(Some(&v)).unwrap().large_segment_size, 20 * MIB, "{conf}: the default");
        }
        let v = serde_json::json!({"garbage_collection_threshold": 7.0});
        assert_eq!(base().with_recorded_extras(Some(&v)).unwrap().garbage_collection_threshold, 0.0);
    }

    #[test]
    fn segment_sizes_follow_get_allocation_size() {
        let s = base();
        assert_eq!(s.allocation_size(512), 2 * MIB);
        assert_eq!(s.allocation_size(3 * MIB), 20 * MIB);
        assert_eq!(s.allocation_size(11 * MIB + 1), 12 * MIB);
    }
}
