//! Out-of-memory events: for each `oom`, the request, what the driver still had free, the
//! allocator state at that moment, who held the memory, the events just before, and a verdict on
//! the cause with suggestions.

use super::basis::Group;
use super::categories::{CategoryBreakdown, CategoryShare};
use super::holders::{self, By};
use super::leak::{leak, LeakAnalysis};
use super::live;
use super::stack_labels::StackLabels;
use super::state::{state, AllocatorState};
use crate::format::bytes;
use crate::model::{Action, DeviceTrace};
use crate::replay::Counters;
use crate::Loaded;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct RecentEvent {
    pub index: i64,
    pub action: String,
    pub size: i64,
    pub allocated: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct OomCase {
    pub event: i64,
    /// Bytes the failed request needed (the rounded size PyTorch records).
    pub requested: i64,
    /// Bytes the driver reported free on the device.
    pub device_free: Option<i64>,
    pub counters: Counters,
    /// Free bytes inside reserved segments, and the largest contiguous piece.
    pub free_in_reserved: i64,
    pub largest_free_block: i64,
    pub top_stacks: Vec<Group>,
    pub events_before: Vec<RecentEvent>,
    /// fragmentation | one_huge_request | growth | exhaustion
    pub verdict: String,
    pub explanation: String,
    pub suggestions: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct OomAnalysis {
    pub device: i64,
    /// The first [`MAX_OOMS`] OOMs of the trace.
    pub ooms: Vec<OomCase>,
    /// OOM events in the trace, analyzed or not.
    #[serde(default)]
    pub ooms_total: usize,
    /// Without an OOM event: what the dump says about the room left (a dump taken after an OOM
    /// has no `oom` action, only this).
    pub at_dump: Option<DumpRoom>,
}

/// The room the allocator had at the dump, against the largest request the trace made.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DumpRoom {
    pub reserved: i64,
    pub allocated: i64,
    /// Free bytes inside reserved segments (pending frees excluded) and the largest piece.
    pub free_in_reserved: i64,
    pub largest_free_block: i64,
    /// Freed by the program, not yet reusable (other streams).
    pub pending_free_bytes: i64,
    /// The largest allocation the trace requested, and its event (None without allocations).
    pub largest_request: Option<LargestRequest>,
    /// The answer in one sentence.
    pub summary: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LargestRequest {
    pub bytes: i64,
    pub event: i64,
}

/// OOMs analyzed per device: each reads the allocator's state at its event (a pass over the
/// trace), and a program stops at its first few; 100,000 OOM events took over a minute.
pub const MAX_OOMS: usize = 100;

/// What is known at one `oom` event: the request and what the device and the allocator had.
struct AtOom {
    event: i64,
    requested: i64,
    device_free: Option<i64>,
    counters: Counters,
    state: AllocatorState,
    top_stacks: Vec<Group>,
    events_before: Vec<RecentEvent>,
}

/// Each OOM of device position `pos` with its verdict, or the room at the dump, from the replay.
pub fn oom(l: &Loaded, pos: usize) -> OomAnalysis {
    let d = &l.devices[pos];
    let empty = DeviceTrace::default();
    let trace = l.snapshot.trace(d.device).unwrap_or(&empty);
    let every_oom = trace.oom_events();
    let mut ooms: Vec<usize> = every_oom.iter().map(|&i| i as usize).collect();
    let ooms_total = ooms.len();
    ooms.truncate(MAX_OOMS);
    let growth = if ooms.is_empty() { None } else { Some(leak(l, pos, 5)) };
    // The steps' verdict: memory that grows step after step is the cause of an OOM it runs into,
    // whatever the state of the cache at it; from the first step compared on (an attempt that
    // failed before them is no end of that growth).
    let grows_from: Option<(super::steps::Growth, u32)> = (!ooms.is_empty())
        .then(|| l.phases().get(pos).map(|p| super::steps::steps(d, p, &every_oom)))
        .flatten()
        .filter(|s| s.growth.leak_signal)
        .and_then(|s| {
            let first = s.growth.steps_compared.first().and_then(|&n| s.steps.iter().find(|st| st.step == n))?.first_event;
            Some((s.growth, first))
        });
    let labels = StackLabels::new(l);
    let cases: Vec<OomCase> = ooms
        .into_iter()
        .map(|i| {
            let ev = &trace.events[i];
            let at = Some(i as u32);
            let (top_stacks, _, _) = holders::live_groups(d, &live::live(d, at), &labels, By::Stack, 5);
            let events_before = (i.saturating_sub(10)..i)
                .map(|k| {
                    let e = &trace.events[k];
                    // An unknown action keeps its own name.
                    let action = trace.extra(e).and_then(|x| x.action_name.as_deref()).unwrap_or(e.action().name());
                    RecentEvent { index: k as i64, action: action.to_string(), size: e.size as i64, allocated: d.series.allocated.at(k) }
                })
                .collect();
            let at_oom = AtOom {
                event: i as i64,
                requested: ev.size as i64,
                device_free: trace.extra(ev).and_then(|x| x.device_free).map(|f| f as i64),
                counters: live::counters_at(d, at),
                state: state(l, pos, Some(i as i64)),
                top_stacks,
                events_before,
            };
            // What holds the memory at the OOM decides what to do about a working set that does
            // not fit (no advice about batches where no activation is alive).
            let holding = super::categories::categories(l, pos, Some(i as i64));
            let step_growth = grows_from.as_ref().filter(|(_, from)| i as u32 >= *from).map(|(g, _)| g);
            verdict(at_oom, growth.as_ref(), step_growth, &holding)
        })
        .collect();
    let at_dump = cases.is_empty().then(|| {
        let last = d.events.checked_sub(1).map(|e| e as i64);
        // The largest request, at the first event making it.
        let largest = (0..trace.events.len())
            .filter(|&i| trace.events[i].action() == Action::Alloc)
            .min_by_key(|&i| (std::cmp::Reverse(trace.events[i].size as i64), i))
            .map(|i| LargestRequest { bytes: trace.events[i].size as i64, event: i as i64 });
        room(d.events as i64, &state(l, pos, last), largest)
    });
    OomAnalysis { device: d.device, ooms: cases, ooms_total, at_dump }
}

/// All the free memory there was at an OOM, cached and on the device, would have held the
/// request but left less than the request itself and under 2.5% of the device: serving this
/// one (by joining the pieces) leaves the next like it nowhere to go. The working set is at the
/// device's limit, whatever the pieces.
/// What is left under `1 / AT_THE_LIMIT_FRACTION` of the device (2.5%) is at its limit.
pub const AT_THE_LIMIT_FRACTION: i64 = 40;

fn at_the_limit(free_in_reserved: i64, device_free: Option<i64>, requested: i64, reserved: i64) -> bool {
    device_free.is_some_and(|f| {
        let left = free_in_reserved + f - requested;
        left >= 0 && left < requested && left * AT_THE_LIMIT_FRACTION < reserved + f
    })
}

impl OomCase {
    /// Whether the working set was at the device's limit (see `at_the_limit`): no allocator
    /// setting is the answer there.
    pub fn at_the_limit(&self) -> bool {
        at_the_limit(self.free_in_reserved, self.device_free, self.requested, self.counters.reserved)
    }
}

/// The cause of one OOM and what to do, from what was known at it and the window's growth.
/// `steps`: the steps' growth verdict where it signals a leak.
fn verdict(at: AtOom, growth: Option<&LeakAnalysis>, steps: Option<&super::steps::Growth>, holding: &CategoryBreakdown) -> OomCase {
    let AtOom { event: e, requested: req, device_free, counters, state: st, top_stacks, events_before } = at;
    let capacity = counters.reserved + device_free.unwrap_or(0);
    let g = growth;
    let free_anywhere = st.free + device_free.unwrap_or(0);
    let (verdict, explanation, suggestions): (&str, String, Vec<String>) = if let Some(s) = steps {
        (
            "growth",
            format!("{} Memory accumulates step after step until it runs out: the OOM is where that growth ends.", s.text),
            vec![
                "find what each step keeps (the steps' kept blocks and the leak analysis name the sites): a reference held across steps, such as a loss or outputs kept without .item() or .detach()".into(),
                "release references (e.g. losses kept for logging with .item())".into(),
            ],
        )
    } else if at_the_limit(st.free, device_free, req, counters.reserved) {
        let mut advice = exhaustion_advice(holding);
        advice.push("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True can join the free pieces for this request, not for much more".into());
        (
            "exhaustion",
            format!(
                "{} were allocated when {} more were requested: {} free inside reserved segments (largest piece {}) and {} on the device. Even joined they would leave only {} free, less than the request: the working set is at the device's limit, and the next allocations like it would not fit.",
                bytes(counters.allocated),
                bytes(req),
                bytes(st.free),
                bytes(st.largest_free),
                bytes(device_free.unwrap_or(0)),
                bytes(free_anywhere - req)
            ),
            advice,
        )
    } else if st.free >= req && st.largest_free < req {
        (
            "fragmentation",
            format!(
                "{} were free inside reserved segments, enough for the {} request, but the largest free block was {}: the free memory is split into pieces.",
                bytes(st.free),
                bytes(req),
                bytes(st.largest_free)
            ),
            vec![
                "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so free pages can be remapped into one range".into(),
                "or cap splitting of large blocks with max_split_size_mb".into(),
                "allocate long-lived tensors (weights, optimizer state) before the training loop".into(),
            ],
        )
    } else if device_free.is_some_and(|f| st.free + f >= req && counters.allocated + req <= capacity) {
        // Free memory exists, in the cache and on the device, but in two places: the cached
        // piece sits in a segment that live blocks keep from being returned.
        (
            "fragmentation",
            format!(
                "{} were free inside reserved segments and {} on the device, together enough for the {} request, but neither piece holds it: cached memory in segments that still hold live blocks cannot be returned to the device.",
                bytes(st.free),
                bytes(device_free.unwrap_or(0)),
                bytes(req)
            ),
            vec![
                "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so free pages can be unmapped and mapped where they are needed".into(),
                "allocate long-lived tensors (weights, optimizer state) before the training loop".into(),
                "call torch.cuda.empty_cache() only where whole segments are free".into(),
            ],
        )
    } else if capacity > 0 && req * 2 > capacity {
        (
            "one_huge_request",
            format!(
                "The single request of {} is more than half of everything the device could offer ({} reserved + free).",
                bytes(req),
                bytes(capacity)
            ),
            vec![
                "split the operation into chunks (smaller batch or sequence length for that step)".into(),
                "check the shape that produced this allocation".into(),
            ],
        )
    } else if g.is_some_and(|g| g.floor_rises_steadily && g.floor_growth > 0) {
        let g = g.unwrap();
        (
            "growth",
            format!(
                "The allocated floor rose by {} across the window and never dropped: memory accumulates until it runs out.",
                bytes(g.floor_growth)
            ),
            vec![
                "look at the leak analysis: blocks allocated in the window and still alive at the end".into(),
                "release references (e.g. losses kept for logging with .item())".into(),
            ],
        )
    } else {
        (
            "exhaustion",
            format!(
                "{} were allocated when {} more were requested; the device had {} free: the working set does not fit.",
                bytes(counters.allocated),
                bytes(req),
                device_free.map_or("an unknown amount".into(), bytes)
            ),
            exhaustion_advice(holding),
        )
    };
    OomCase {
        event: e,
        requested: req,
        device_free,
        counters,
        free_in_reserved: st.free,
        largest_free_block: st.largest_free,
        top_stacks,
        events_before,
        verdict: verdict.into(),
        explanation,
        suggestions,
    }
}

/// The largest categories alive at an OOM (a fifth of the memory or more, at most three), each
/// with what reduces it; the batch size only where what a batch makes (activations,
/// temporaries, inputs) is among them.
fn exhaustion_advice(holding: &CategoryBreakdown) -> Vec<String> {
    let large: Vec<&CategoryShare> = holding.categories.iter().filter(|c| c.share >= 0.2 && c.bytes > 0).take(3).collect();
    let mut out: Vec<String> = large
        .iter()
        .map(|c| {
            format!(
                "{} holds {} ({}): {}",
                super::categories::capitalize(&c.category),
                bytes(c.bytes),
                super::categories::percent(c.share),
                super::categories::advice_for(c)
            )
        })
        .collect();
    if large.iter().any(|c| matches!(c.category.as_str(), "activation" | "autograd temporary" | "temporary" | "input/data")) {
        out.push("reduce the batch size or sequence length".into());
    }
    // Nothing named says what the memory is: the usual remedies, as a start.
    if large.iter().all(|c| matches!(c.category.as_str(), "unknown" | "persistent" | super::categories::UNACCOUNTED)) {
        out.push("reduce the batch size or sequence length, or shard parameters and optimizer state (FSDP, ZeRO)".into());
    }
    out
}

/// The room at the dump (`st`, the state after the last of `events`) against the largest request.
fn room(events: i64, st: &AllocatorState, largest_request: Option<LargestRequest>) -> DumpRoom {
    let pending = st.active - st.allocated;
    let trace = if events == 0 {
        "This snapshot has no trace events, so nothing says whether an allocation failed".to_string()
    } else {
        "This trace has no OOM event".to_string()
    };
    let fits = match &largest_request {
        Some(r) if r.bytes > st.largest_free => format!(
            "; the largest request of the trace ({} at event {}) would not fit in it without a new segment",
            bytes(r.bytes),
            crate::format::count(r.event)
        ),
        Some(r) => format!("; the largest request of the trace ({} at event {}) would fit", bytes(r.bytes), crate::format::count(r.event)),
        None => String::new(),
    };
    let summary = format!(
        "{trace}. At the dump {} of {} reserved is allocated, {} is free in reserved segments (largest free block {}){}{fits}.",
        bytes(st.allocated),
        bytes(st.reserved),
        bytes(st.free),
        bytes(st.largest_free),
        if pending > 0 { format!(" and {} is freed but still pending (other streams)", bytes(pending)) } else { String::new() },
    );
    DumpRoom {
        reserved: st.reserved,
        allocated: st.allocated,
        free_in_reserved: st.free,
        largest_free_block: st.largest_free,
        pending_free_bytes: pending,
        largest_request,
        summary,
    }
}
