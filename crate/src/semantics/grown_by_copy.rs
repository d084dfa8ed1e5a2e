//! Buffers grown by copying: one allocation site re-makes its block larger, again and again, and
//! frees the copy before once the new one exists (`cache = torch.cat([cache, new])` each step:
//! a KV cache, or outputs collected step by step). Its blocks are born and freed inside one
//! forward run, so by lifetime alone they would read as temporaries, and the advice for those
//! (fuse operations) is wrong for them: each copy holds the old and the new buffer at once.
//!
//! Per site, the blocks in allocation order: block A is *replaced* by block B when B is the site's
//! last block made before A is freed and B is larger (`new = torch.cat([old, x])`, then `old`
//! let go: nothing else of the site comes between). A chain of at least [`MIN_COPIES`] blocks,
//! each replaced by the next, is a buffer grown by copying; the other layers' copies join it (those
//! replaced by one of its copies, and those of the size it ended at). The outputs of a U-Net's levels,
//! which grow at one line within a pass and start small again at the next, make chains as long as
//! its levels only; activations kept for backward are replaced by nothing larger.

use crate::replay::{DeviceReplay, StackSource};

/// Copies in a chain before it counts: more than a network has levels at one line, fewer than a
/// generation has tokens.
pub const MIN_COPIES: usize = 8;

/// For each lifetime of the device: whether it is a copy in a chain of a buffer grown by
/// copying.
pub fn grown_by_copy(d: &DeviceReplay) -> Vec<bool> {
    let mut out = vec![false; d.lifetimes.len()];
    // The lifetimes allocated in the window with their own stack, by site, then in allocation
    // order (lifetimes are not in allocation order).
    let mut sited: Vec<(u32, u32, u32)> = d
        .lifetimes
        .iter()
        .enumerate()
        .filter(|(_, l)| l.stack_source != StackSource::Free)
        .filter_map(|(i, l)| Some((l.stack()?, l.alloc_event()?, i as u32)))
        .collect();
    sited.sort_unstable();
    for site in sited.chunk_by(|a, b| a.0 == b.0) {
        if site.len() >= MIN_COPIES {
            mark_chains(d, site.iter().map(|s| s.2 as usize).collect(), &mut out);
        }
    }
    out
}

/// Mark the copies of one site's buffers grown by copying (the site's lifetimes in allocation
/// order).
fn mark_chains(d: &DeviceReplay, site: Vec<usize>, out: &mut [bool]) {
    let lifetime = |k: usize| &d.lifetimes[site[k]];
    let allocs: Vec<u32> = (0..site.len()).map(|k| lifetime(k).alloc_event().unwrap_or(0)).collect();
    // The site's last block made before each block's free, when it is a later and larger one.
    let replaced_by: Vec<Option<usize>> = (0..site.len())
        .map(|k| {
            let l = lifetime(k);
            let freed = l.free_requested_event().or(l.free_completed_event())?;
            let last = allocs.partition_point(|&a| a < freed).checked_sub(1)?;
            (last > k && lifetime(last).size > l.size).then_some(last)
        })
        .collect();
    // Chain lengths from the end: a block's chain is itself and the chain of what replaced it.
    let mut length = vec![1usize; site.len()];
    for k in (0..site.len()).rev() {
        if let Some(b) = replaced_by[k] {
            length[k] = 1 + length[b];
        }
    }
    let mut copy = vec![false; site.len()];
    for (k, _) in length.iter().enumerate().filter(|(_, &n)| n >= MIN_COPIES) {
        // A marked block's chain is marked to its end already.
        let mut at = Some(k);
        while let Some(c) = at.filter(|&c| !copy[c]) {
            copy[c] = true;
            at = replaced_by[c];
        }
    }
    // The other layers' copies: replaced by a copy of the chain (every layer's cache made
    // before the old ones go), or of the size the chain ended at (the last step's, never
    // replaced).
    let mut last_sizes: Vec<u64> = (0..site.len()).filter(|&k| copy[k] && replaced_by[k].is_none()).map(|k| lifetime(k).size).collect();
    last_sizes.sort_unstable();
    for k in (0..site.len()).rev() {
        copy[k] |= match replaced_by[k] {
            Some(b) => copy[b],
            None => last_sizes.binary_search(&lifetime(k).size).is_ok(),
        };
    }
    for (k, &c) in copy.iter().enumerate() {
        out[site[k]] |= c;
    }
}

#[cfg(test)]
mod tests {
    use super::MIN_COPIES;

    /// The rule and its documentation state the chain length this module uses.
    #[test]
    fn the_rule_and_its_docs_name_the_chain_length() {
        let said = format!("at least {MIN_COPIES} ");
        assert!(crate::semantics::rules::DEFAULT_RULES.contains(&said));
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/categories.md")).unwrap();
        assert!(doc.contains(&format!("a chain of {said}blocks")), "docs/categories.md");
    }
}
