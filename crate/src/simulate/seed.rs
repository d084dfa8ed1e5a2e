//! The simulated allocator's state at the window start, from the replay: the reserved ranges
//! then (cudaMalloc segments, expandable mappings inside their reservations) and the blocks
//! allocated before the window, with the free space between them as free blocks.

use super::addresses::AddressSource;
use super::pool::{Allocator, State, NIL};
use super::private::{AsRecorded, PrivateRanges};
use crate::fasthash::FastMap;
use crate::model::{Action, BlockState, DeviceTrace, Pool};
use crate::replay::{DeviceReplay, Lifetime};

/// Recorded addresses the simulation reuses: every cudaMalloc segment (at the window start and
/// `segment_alloc`s) and the start of each expandable reservation (lowest mapped address per
/// stream and pool).
pub(crate) fn recorded_addresses(replay: &DeviceReplay, trace: &DeviceTrace) -> AddressSource {
    let rules = &replay.rules;
    let mut bases: FastMap<(u64, bool), u64> = FastMap::default();
    let mut note = |stream: u64, small: bool, addr: u64| {
        let b = bases.entry((stream, small)).or_insert(addr);
        *b = (*b).min(addr);
    };
    for r in replay.start_ranges.iter().filter(|r| r.expandable) {
        note(r.stream, r.pool == Pool::Small, r.start);
    }
    let events = &trace.events;
    let mut segments = Vec::new();
    for i in 0..events.len() {
        let e = &events[i];
        match e.action() {
            Action::SegmentAlloc => segments.push((e.addr, e.size)),
            // The mapping serves the next allocation: its pool is the pool of that request.
            Action::SegmentMap => {
                let next_alloc = (i + 1..events.len()).map(|j| &events[j]).find(|n| n.action() == Action::Alloc);
                let small = next_alloc.is_some_and(|n| rules.round_size(n.size) <= crate::replay::rules::SMALL_SIZE);
                note(trace.stream(e), small, e.addr);
            }
            _ => {}
        }
    }
    AddressSource::new(segments, bases)
}

/// State of a block allocated before the window, at the window start.
fn start_state(l: &Lifetime) -> State {
    let pending = l.free_requested_event().is_none()
        && (l.free_completed_event().is_some() || l.state_at_dump == Some(BlockState::ActivePendingFree));
    if pending {
        State::Pending
    } else {
        State::Allocated
    }
}

/// Lay out the window start; returns the simulated block of every lifetime alive then (indexed
/// by lifetime, NIL for none: lifetimes are dense, so a table, not a map), and the private
/// pools' share (kept as recorded, not laid out).
pub(crate) fn seed(alloc: &mut Allocator, replay: &DeviceReplay, private: &PrivateRanges) -> (Vec<u32>, AsRecorded) {
    let mut kept = AsRecorded::default();
    for r in replay.start_ranges.iter().filter(|r| private.contains(r.start)) {
        kept.reserved += r.size;
    }
    for &l in &replay.before_window {
        let lt = &replay.lifetimes[l as usize];
        if !lt.orphan && private.contains(lt.addr) {
            kept.active += lt.size;
            if start_state(lt) == State::Allocated {
                kept.allocated += lt.size;
            }
        }
    }
    let mut live: Vec<u32> = replay
        .before_window
        .iter()
        .copied()
        .filter(|&l| !replay.lifetimes[l as usize].orphan && !private.contains(replay.lifetimes[l as usize].addr))
        .collect();
    live.sort_by_key(|&l| replay.lifetimes[l as usize].addr);
    let mut block_of = vec![NIL; replay.lifetimes.len()];
    // Pieces of a range [start, end): live blocks and the free gaps between them.
    let pieces_in = |start: u64, end: u64, owners: &mut Vec<Option<u32>>| -> Vec<(u64, u64, State)> {
        let mut out = Vec::new();
        let first = live.partition_point(|&l| replay.lifetimes[l as usize].addr < start);
        let mut at = start;
        for &id in live[first..].iter().take_while(|&&l| replay.lifetimes[l as usize].addr < end) {
            let l = &replay.lifetimes[id as usize];
            if l.addr < at {
                continue;
            }
            if l.addr > at {
                out.push((at, l.addr - at, State::Free));
                owners.push(None);
            }
            let size = l.size.min(end - l.addr).max(1);
            out.push((l.addr, size, start_state(l)));
            owners.push(Some(id));
            at = l.addr + size;
        }
        if at < end {
            out.push((at, end - at, State::Free));
            owners.push(None);
        }
        out
    };

    let ranges: Vec<_> = replay.start_ranges.iter().copied().filter(|r| !private.contains(r.start)).collect();
    // Expandable ranges grouped into reservations by stream and pool.
    let mut regions: Vec<((u64, bool), Vec<crate::replay::ranges::Range>)> = Vec::new();
    // Simulating without expandable segments a recording made with them: the mappings from before
    // the window become plain segments, as a run without them would have had segments there.
    let as_segments = !alloc.settings.rules.expandable;
    for r in &ranges {
        if r.expandable && !as_segments {
            let key = (r.stream, r.pool == Pool::Small);
            match regions.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(*r),
                None => regions.push((key, vec![*r])),
            }
        }
    }
    for r in ranges.iter().filter(|r| !r.expandable || as_segments) {
        let cuts = if r.expandable { page_cuts(alloc, replay, &live, r) } else { vec![r.start, r.end()] };
        for w in cuts.windows(2) {
            let mut owners = Vec::new();
            let pieces = pieces_in(w[0], w[1], &mut owners);
            let ids = alloc.seed_chain(&pieces, r.stream, r.pool == Pool::Small, NIL);
            remember(&mut block_of, &owners, &ids);
        }
    }
    let mut bases: Vec<u64> = regions.iter().map(|(k, _)| alloc.addresses.region(k.0, k.1)).collect();
    let span = alloc.addresses.region_size();
    let mut sorted = bases.clone();
    sorted.sort_unstable();
    for ((key, mut mapped), base) in regions.into_iter().zip(bases.drain(..)) {
        mapped.sort_by_key(|r| r.start);
        let limit = sorted.iter().copied().find(|&b| b > base).unwrap_or(u64::MAX);
        let end = base.saturating_add(span).min(limit).max(mapped.last().map(|r| r.end()).unwrap_or(base));
        let mut pieces = Vec::new();
        let mut owners = Vec::new();
        let mut at = base.min(mapped[0].start);
        for r in &mapped {
            if r.start > at {
                pieces.push((at, r.start - at, State::Unmapped));
                owners.push(None);
            }
            pieces.extend(pieces_in(r.start, r.end(), &mut owners));
            at = r.end();
        }
        if at < end {
            pieces.push((at, end - at, State::Unmapped));
            owners.push(None);
        }
        let region = alloc.add_region(base.min(mapped[0].start), key.1);
        let ids = alloc.seed_chain(&pieces, key.0, key.1, region);
        remember(&mut block_of, &owners, &ids);
    }
    (block_of, kept)
}

/// An expandable mapping turned into the segments a run without expandable segments would
/// more likely have had: one per page, pages joined where a live block spans their boundary.
fn page_cuts(alloc: &Allocator, replay: &DeviceReplay, live: &[u32], r: &crate::replay::ranges::Range) -> Vec<u64> {
    let page = alloc.settings.page(r.pool == Pool::Small);
    // Live blocks do not overlap: only the last one starting before `at` can span it.
    let spans = |at: u64| {
        let i = live.partition_point(|&l| replay.lifetimes[l as usize].addr < at);
        i > 0 && {
            let l = &replay.lifetimes[live[i - 1] as usize];
            l.addr + l.size > at
        }
    };
    let mut cuts = vec![r.start];
    let mut at = r.start + page;
    while at < r.end() {
        if !spans(at) {
            cuts.push(at);
        }
        at += page;
    }
    cuts.push(r.end());
    cuts
}

fn remember(block_of: &mut [u32], owners: &[Option<u32>], ids: &[u32]) {
    for (o, &id) in owners.iter().zip(ids) {
        if let Some(l) = o {
            block_of[*l as usize] = id;
        }
    }
}
