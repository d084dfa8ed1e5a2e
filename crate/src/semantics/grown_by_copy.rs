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
//! its levels only; activations kept for backward are replaced by nothing larger. A block alive
//! across a backward or optimizer run is no copy: a training step's output that the next step's
//! (longer sequences, a larger batch) replaces. Nor is a chain whose passes grow with it (a sweep
//! over batch sizes): see [`work_grows_with`].

use crate::replay::{DeviceReplay, StackSource};

/// Copies in a chain before it counts: more than a network has levels at one line, fewer than a
/// generation has tokens.
pub const MIN_COPIES: usize = 8;

/// For each lifetime of the device: whether it is a copy in a chain of a buffer grown by
/// copying. `steps_runs`: where each backward and optimizer run starts, in order.
pub fn grown_by_copy(d: &DeviceReplay, steps_runs: &[u32]) -> Vec<bool> {
    let mut out = vec![false; d.lifetimes.len()];
    // The lifetimes allocated in the window with their own stack, by site, then in allocation
    // order: the events give that order, and a counting sort by site keeps it (a sort of
    // (site, event, lifetime) triples took 16 bytes a lifetime at its peak, this 4).
    let sited = |e: usize| -> Option<(u32, u32)> {
        let i = d.event_lifetime[e];
        let l = d.lifetimes.get(i as usize).filter(|l| l.stack_source != StackSource::Free && l.alloc_event() == Some(e as u32))?;
        Some((l.stack()?, i))
    };
    let mut starts: Vec<u32> = Vec::new();
    for (site, _) in (0..d.event_lifetime.len()).filter_map(sited) {
        if starts.len() <= site as usize + 1 {
            starts.resize(site as usize + 2, 0);
        }
        starts[site as usize + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut by_site = vec![0u32; starts.last().copied().unwrap_or(0) as usize];
    let mut next = starts.clone();
    for (site, i) in (0..d.event_lifetime.len()).filter_map(sited) {
        by_site[next[site as usize] as usize] = i;
        next[site as usize] += 1;
    }
    for w in starts.windows(2).filter(|w| (w[1] - w[0]) as usize >= MIN_COPIES) {
        mark_chains(d, by_site[w[0] as usize..w[1] as usize].iter().map(|&i| i as usize).collect(), steps_runs, &mut out);
    }
    out
}

/// Mark the copies of one site's buffers grown by copying (the site's lifetimes in allocation
/// order).
fn mark_chains(d: &DeviceReplay, site: Vec<usize>, steps_runs: &[u32], out: &mut [bool]) {
    let lifetime = |k: usize| &d.lifetimes[site[k]];
    let allocs: Vec<u32> = (0..site.len()).map(|k| lifetime(k).alloc_event().unwrap_or(0)).collect();
    // The site's last block made before each block's free, when it is a later and larger one
    // and the block lived inside one pass: a block alive across a backward or optimizer run is a
    // step's output the next step's replaces (a sequence length or batch that grows), not a copy.
    let replaced_by: Vec<Option<usize>> = (0..site.len())
        .map(|k| {
            let l = lifetime(k);
            let freed = l.free_requested_event().or(l.free_completed_event())?;
            let made = l.alloc_event()?;
            if steps_runs.partition_point(|&s| s <= made) != steps_runs.partition_point(|&s| s <= freed) {
                return None;
            }
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
    let mut replaces = vec![false; site.len()];
    for b in replaced_by.iter().flatten() {
        replaces[*b] = true;
    }
    // From each chain's first block: one whose work grows with it is no buffer.
    for k in (0..site.len()).filter(|&k| length[k] >= MIN_COPIES && !replaces[k]) {
        let chain: Vec<usize> = std::iter::successors(Some(k), |&c| replaced_by[c]).collect();
        if work_grows_with(d, &chain.iter().map(|&c| lifetime(c)).collect::<Vec<_>>()) {
            continue;
        }
        for c in chain {
            copy[c] = true;
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

/// How much more the work between two copies must grow than the copy itself before the chain
/// reads as passes that each do more.
const WORK_FACTOR: i64 = 2;

/// Whether the work between the copies of `chain` (blocks in order, each replacing the one
/// before) grows at least `WORK_FACTOR` times as much as the block: the peak allocated between a
/// block's allocation and the next one's, above the level at the first. A generation's KV cache
/// grows while each token's pass does the same work (plus one more copy of a cache); a sweep over
/// batch sizes that keeps each pass's output until the next exists makes every pass larger.
fn work_grows_with(d: &DeviceReplay, chain: &[&crate::replay::Lifetime]) -> bool {
    let work = |a: &crate::replay::Lifetime, b: &crate::replay::Lifetime| -> Option<i64> {
        let (from, to) = (a.alloc_event()? as usize, b.alloc_event()? as usize);
        let base = d.series.allocated.get(from)?;
        Some(if to > from + 1 { d.series.extremes(from + 1..to).allocated_max - base } else { 0 })
    };
    let [first, second, .., before_last, last] = chain else {
        return false;
    };
    let grown = last.size as i64 - first.size as i64;
    match (work(first, second), work(before_last, last)) {
        (Some(w0), Some(w1)) => grown > 0 && w1 - w0 >= WORK_FACTOR * grown,
        _ => false,
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
        let twice = ["", "once", "twice", "three times"][super::WORK_FACTOR as usize];
        assert!(doc.replace("\n  ", " ").contains(&format!("grows at least {twice} as much as the block")), "docs/categories.md");
    }
}
