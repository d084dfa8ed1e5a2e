//! Stacked live allocations over time, in the spirit of memory_viz's Active Memory Timeline: the
//! `max_blocks` largest blocks alive in the window are stacked in allocation order in every
//! column (a freed block lets the ones above slide down); everything else is summed into one
//! "other" band so that each column still totals the active counter. Level of detail: one column
//! per pixel and a block budget, so millions of events cost the same as thousands.

use crate::error::Error;
use crate::replay::{DeviceReplay, Lifetime};
use crate::Loaded;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct BandBlock {
    pub lifetime: u32,
    pub address: u64,
    pub size: u64,
    pub alloc_event: Option<u32>,
    pub free_event: Option<u32>,
    pub stack: Option<u32>,
    /// Innermost frame that names the allocation site.
    pub site: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Bands {
    pub device: i64,
    pub from: u32,
    pub to: u32,
    /// Event sampled by each column.
    pub column_event: Vec<u32>,
    /// Entries of column c are `entries[column_start[c]..column_start[c + 1]]`.
    pub column_start: Vec<u32>,
    /// Index into `blocks` and the bytes below it, per entry.
    pub entry_block: Vec<u32>,
    pub entry_bottom: Vec<u64>,
    /// Active bytes of the column not covered by the listed blocks (the summarized band).
    pub other_bytes: Vec<u64>,
    pub active: Vec<u64>,
    pub blocks: Vec<BandBlock>,
}

fn live_at(l: &Lifetime, e: u32) -> bool {
    l.alloc_event().is_none_or(|a| a <= e) && l.free_completed_event().is_none_or(|f| f > e)
}

pub fn bands(loaded: &Loaded, device: i64, from: u32, to: u32, columns: u32, max_blocks: usize) -> crate::Result<Bands> {
    let d: &DeviceReplay = loaded.device(device).ok_or_else(|| Error::no_device(device))?;
    let n = d.events as u32;
    let to = to.min(n.saturating_sub(1));
    let from = from.min(to);
    let columns = columns.clamp(1, 4000).min(to - from + 1);
    // Blocks alive somewhere in the range, the weightiest first, then stacked in allocation order.
    let mut chosen: Vec<u32> = (0..d.lifetimes.len() as u32)
        .filter(|&i| {
            let l = &d.lifetimes[i as usize];
            !l.orphan && l.alloc_event().is_none_or(|a| a <= to) && l.free_completed_event().is_none_or(|f| f > from)
        })
        .collect();
    // Size × events alive in the range: a large block alive throughout (weights) is always
    // drawn, not lost among the short-lived peaks of bigger temporaries.
    let weight = |l: &Lifetime| {
        let born = l.alloc_event().map_or(from, |a| a.max(from));
        let dies = l.free_completed_event().map_or(to + 1, |f| f.min(to + 1));
        l.size as u128 * u128::from(dies.saturating_sub(born).max(1))
    };
    // The weightiest max_blocks, ties to the earlier lifetime: selected in linear time, then
    // only they are sorted (sorting all of a 26 M-event file's lifetimes took seconds).
    let key = |&i: &u32| (std::cmp::Reverse(weight(&d.lifetimes[i as usize])), i);
    if chosen.len() > max_blocks {
        if max_blocks > 0 {
            chosen.select_nth_unstable_by_key(max_blocks - 1, key);
        }
        chosen.truncate(max_blocks);
    }
    chosen.sort_unstable_by_key(key);
    chosen.sort_by_key(|&i| {
        let l = &d.lifetimes[i as usize];
        (l.alloc_event().map(|a| a as i64).unwrap_or(-1), l.addr)
    });
    let interner = &loaded.snapshot.interner;
    let root = crate::frames::user_root(interner.frames.iter());
    // Blocks share stacks (a layer's every step): each stack's site is found once.
    let mut sites: crate::fasthash::FastMap<u32, Option<String>> = Default::default();
    let blocks: Vec<BandBlock> = chosen
        .iter()
        .map(|&i| {
            let l = &d.lifetimes[i as usize];
            let site = l.stack().and_then(|s| {
                sites
                    .entry(s)
                    .or_insert_with(|| {
                        crate::frames::site(interner, &interner.stacks[s as usize], loaded.loop_lines())
                            .map(|f| crate::frames::display(f, &root))
                    })
                    .clone()
            });
            BandBlock {
                lifetime: i,
                address: l.addr,
                size: l.size,
                alloc_event: l.alloc_event(),
                free_event: l.free_completed_event(),
                stack: l.stack(),
                site: match site {
                    // A stack known only from the free does not say where the block was allocated.
                    Some(f) if l.stack_source == crate::replay::StackSource::Free => {
                        let what = if l.before_window() { "allocated before the window" } else { "allocation stack not recorded" };
                        format!("{what}; freed at {f}")
                    }
                    Some(f) => f,
                    None => String::new(),
                },
            }
        })
        .collect();
    let mut b = Bands {
        device,
        from,
        to,
        column_event: vec![],
        column_start: vec![],
        entry_block: vec![],
        entry_bottom: vec![],
        other_bytes: vec![],
        active: vec![],
        blocks,
    };
    let span = (to - from) as u64 + 1;
    for c in 0..columns as u64 {
        let e = from + (c * span / columns as u64) as u32;
        b.column_event.push(e);
        b.column_start.push(b.entry_block.len() as u32);
        let mut bottom = 0u64;
        for (k, &i) in chosen.iter().enumerate() {
            let l = &d.lifetimes[i as usize];
            if live_at(l, e) {
                b.entry_block.push(k as u32);
                b.entry_bottom.push(bottom);
                bottom += l.size;
            }
        }
        let active = d.series.active.get(e as usize).unwrap_or(0).max(0) as u64;
        b.active.push(active);
        b.other_bytes.push(active.saturating_sub(bottom));
    }
    b.column_start.push(b.entry_block.len() as u32);
    Ok(b)
}
