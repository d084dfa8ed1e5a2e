//! The caching allocator's size rules (CUDA and torch_npu), and how to tell which rules produced a
//! snapshot. See docs/allocator-rules.md for the sources and the derivation.

use crate::model::{Action, BlockState, Pool, Snapshot};
use serde::Serialize;

pub const MIB: u64 = 1 << 20;
pub const MIN_BLOCK: u64 = 512;
pub const SMALL_SIZE: u64 = MIB;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Rules {
    /// Bytes added before rounding: 32 on torch_npu, 0 on CUDA.
    pub pad: u64,
    /// `roundup_power2_divisions`, 16 intervals starting at 1 MiB, 2 MiB, ... (0 = plain 512 rounding).
    pub divisions: [u64; 16],
    /// Blocks of at least this size are never split (u64::MAX = unlimited, the default).
    pub max_split_size: u64,
    /// An oversize request may take a free block at most this much larger.
    pub max_non_split_rounding: u64,
    /// Global expandable_segments setting: every split keeps the exact size.
    pub expandable: bool,
    /// Where each setting came from, for the report.
    pub source: String,
    /// False when nothing in the dump tells the pad apart: the replay then tries both.
    #[serde(skip)]
    pub pad_certain: bool,
}

impl Default for Rules {
    /// CUDA's defaults: no pad, plain 512-byte rounding, unlimited splitting, 20 MiB oversize.
    fn default() -> Self {
        Rules {
            pad: 0,
            divisions: [0; 16],
            max_split_size: u64::MAX,
            max_non_split_rounding: 20 * MIB,
            expandable: false,
            source: String::new(),
            pad_certain: true,
        }
    }
}

impl Rules {
    /// Rounded block size for a request of `r` bytes (`round_size` in the allocators).
    pub fn round_size(&self, r: u64) -> u64 {
        let r = r.saturating_add(self.pad);
        if r < MIN_BLOCK {
            return MIN_BLOCK;
        }
        let idx = (63 - r.leading_zeros() as i64 - 20).clamp(0, 15) as usize;
        let d = self.divisions[idx];
        if d > 1 && r > MIN_BLOCK * d {
            roundup_power2_next_division(r, d)
        } else {
            r.div_ceil(MIN_BLOCK) * MIN_BLOCK
        }
    }

    pub fn pool_of(&self, block_size: u64) -> Pool {
        if block_size <= SMALL_SIZE {
            Pool::Small
        } else {
            Pool::Large
        }
    }

    /// Does taking `s` bytes from a free block leave a remainder the allocator keeps separate?
    pub fn should_split(&self, pool: Pool, s: u64, remaining: u64) -> bool {
        if pool == Pool::Small || self.expandable {
            remaining >= MIN_BLOCK
        } else {
            s < self.max_split_size && remaining > SMALL_SIZE
        }
    }

    /// Infer the rules of one device from the snapshot: `allocator_settings` when present
    /// (PyTorch 2.3+), otherwise from the dump itself (torch_npu pads, expandable segments in
    /// use). Per device, because merged files can hold devices of different runs.
    pub fn infer(snap: &Snapshot, device: i64) -> Rules {
        let mut rules = Rules::default();
        let mut notes = Vec::new();
        if let Some(s) = snap.allocator_settings.as_ref().filter(|s| s.as_object().is_some_and(|o| !o.is_empty())) {
            rules.expandable = s.get("expandable_segments").and_then(|v| v.as_bool()).unwrap_or(false);
            if let Some(m) = s.get("max_split_size").and_then(|v| v.as_i64()) {
                if m > 0 {
                    rules.max_split_size = m as u64;
                }
            }
            // Recorded values go through the one settings parser; one it refuses is left at the
            // default and named in the source (the simulator refuses it with its error).
            let mut refused = Vec::new();
            if let Some(div) = s.get("roundup_power2_divisions").and_then(|v| v.as_object()) {
                for (k, v) in div {
                    match crate::alloc_conf::recorded_division(k, v.as_u64()) {
                        Ok((idx, n)) if idx < 16 => rules.divisions[idx] = n,
                        Ok(_) => {}
                        Err(_) => refused.push(k.as_str()),
                    }
                }
            }
            if let Some(conf) = s.get("PYTORCH_CUDA_ALLOC_CONF").and_then(|v| v.as_str()) {
                for (k, v) in crate::alloc_conf::split_pairs(conf) {
                    if k == "max_non_split_rounding_mb" {
                        match crate::alloc_conf::parse(&k, &v) {
                            Ok(crate::alloc_conf::Setting::MaxNonSplitRounding(n)) => rules.max_non_split_rounding = n,
                            _ => refused.push("max_non_split_rounding_mb"),
                        }
                    }
                }
            }
            if !refused.is_empty() {
                notes.push("invalid recorded settings ignored");
            }
            notes.push("allocator_settings");
        }
        let uses_expandable = snap.segments.iter().any(|s| s.device == device && s.is_expandable)
            || snap.trace(device).is_some_and(|t| t.events.iter().any(|e| matches!(e.action(), Action::SegmentMap | Action::SegmentUnmap)));
        if uses_expandable && !rules.expandable {
            rules.expandable = true;
            notes.push("expandable segments seen in the dump/trace");
        }
        match infer_pad(snap, device, &rules).or_else(|| infer_pad(snap, -1, &rules)) {
            Some(pad) => rules.pad = pad,
            None => rules.pad_certain = false,
        }
        if rules.pad > 0 {
            notes.push("torch_npu 32-byte pad (from dump block sizes)");
        }
        rules.source = if notes.is_empty() { "defaults".into() } else { notes.join("; ") };
        rules
    }
}

/// `roundup_power2_next_division` of the CUDA allocator.
fn roundup_power2_next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor << 1;
    }
    let down = size & !(step - 1);
    if down == size {
        size
    } else {
        down + step
    }
}

/// torch_npu adds 32 bytes before rounding; CUDA does not. Blocks whose size is exactly the
/// rounded request (small pool, expandable) tell which one wrote the file. `device` -1 looks at
/// every device. None when no block tells.
fn infer_pad(snap: &Snapshot, device: i64, rules: &Rules) -> Option<u64> {
    let exact_blocks: Vec<(u64, u64)> = snap
        .segments
        .iter()
        .filter(|s| device < 0 || s.device == device)
        .filter(|s| s.pool == Pool::Small || s.is_expandable)
        .flat_map(|s| s.blocks.iter())
        .filter(|b| b.state != BlockState::Inactive && b.requested_size > 0)
        .map(|b| (b.size, b.requested_size))
        .collect();
    if exact_blocks.is_empty() {
        return None;
    }
    let fits = |pad| exact_blocks.iter().filter(|&&(size, req)| Rules { pad, ..rules.clone() }.round_size(req) == size).count();
    // Pad 0 wins ties: every CUDA file, and NPU files whose requests never cross a 512 boundary.
    Some(if fits(32) > fits(0) { 32 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pad: u64) -> Rules {
        Rules { pad, ..Rules::default() }
    }

    #[test]
    fn cuda_rounding() {
        let r = rules(0);
        assert_eq!(r.round_size(1), 512);
        assert_eq!(r.round_size(512), 512);
        assert_eq!(r.round_size(513), 1024);
        assert_eq!(r.round_size(41_943_040), 41_943_040);
    }

    #[test]
    fn npu_pads_32_bytes() {
        let r = rules(32);
        assert_eq!(r.round_size(41_943_040), 41_943_552);
        assert_eq!(r.round_size(480), 512);
        assert_eq!(r.round_size(481), 1024);
        assert_eq!(r.pool_of(r.round_size(MIB)), Pool::Large);
    }

    #[test]
    fn power2_divisions() {
        let mut r = rules(0);
        r.divisions = [4; 16];
        // 1 MiB + 1 with 4 divisions rounds up to the next quarter step of 1 MiB (256 KiB).
        assert_eq!(r.round_size(MIB + 1), MIB + 256 * 1024);
        assert_eq!(r.round_size(4 * MIB), 4 * MIB);
    }

    #[test]
    fn split_rule() {
        let r = rules(0);
        assert!(r.should_split(Pool::Small, 512, 512));
        assert!(!r.should_split(Pool::Large, 2 * MIB, MIB));
        assert!(r.should_split(Pool::Large, 2 * MIB, MIB + 512));
        let e = Rules { expandable: true, ..rules(0) };
        assert!(e.should_split(Pool::Large, 2 * MIB, 512));
    }
}
