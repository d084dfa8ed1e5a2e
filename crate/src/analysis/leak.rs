//! Leaks: blocks allocated inside the window and still allocated at the dump (told apart from
//! pending frees and from memory allocated before the window), long-lived blocks, and whether the
//! allocated floor grows across the window — all attributed to stacks.

use super::basis::NO_STACK;
use super::categories::CategoryTotal;
use super::stack_labels::StackLabels;
use crate::fasthash::FastMap;
use crate::model::BlockState;
use crate::semantics::Phase;
use crate::Loaded;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StackBytes {
    /// The frame that names the stack, as shown (see `basis::Group`).
    pub label: String,
    /// The calling Python frame.
    pub detail: Option<String>,
    pub site: Option<String>,
    /// The whole stack, outermost first.
    pub stack: Option<String>,
    pub stack_id: Option<i64>,
    pub blocks: i64,
    pub bytes: i64,
    /// First and last allocating events of these blocks.
    pub first_event: Option<i64>,
    pub last_event: Option<i64>,
}

super::basis::labelled!(StackBytes);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LeakAnalysis {
    pub device: i64,
    pub events: i64,
    /// Allocated in the window, still allocated at the dump.
    pub candidates: i64,
    pub candidate_bytes: i64,
    pub candidates_by_stack: Vec<StackBytes>,
    /// The candidates by category: what kind of memory is kept.
    pub candidates_by_category: Vec<super::categories::CategoryTotal>,
    /// Freed by the program but not yet returned (record_stream, other streams) at the dump.
    pub pending_free_blocks: i64,
    pub pending_free_bytes: i64,
    /// Allocated before the window and still live at the dump (weights, caches).
    pub before_window_blocks: i64,
    pub before_window_bytes: i64,
    /// Of those, the bytes without a stack (the dump gave none): what recording earlier would name.
    pub before_window_stackless_bytes: i64,
    /// In-window blocks that lived at least half the window (freed or not).
    pub long_lived_blocks: i64,
    pub long_lived_bytes: i64,
    /// Minimum allocated bytes in each tenth of the window.
    pub floor: Vec<i64>,
    /// Last floor − first floor.
    pub floor_growth: i64,
    /// The floor never drops and ends higher than it starts.
    pub floor_rises_steadily: bool,
    /// The site whose blocks still allocated at the dump were made in the most forward passes,
    /// when that is at least `MIN_PASSES`: memory kept pass after pass (growth without steps).
    pub kept_per_pass: Option<KeptPerPass>,
}

/// The fewest forward passes a site's kept blocks must come from before it is called kept pass
/// after pass: a pass's own layers repeat a site, but within one pass (one run of events).
pub const MIN_PASSES: i64 = 4;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct KeptPerPass {
    /// The site and its blocks still allocated at the dump that forward passes made.
    pub site: StackBytes,
    /// The forward passes (runs of forward events) those blocks were allocated in.
    pub passes: i64,
    /// The forward passes in the window.
    pub passes_in_window: i64,
}

/// The minimum allocated bytes in each tenth of the window, from the replay's block extremes
/// (what `leak` otherwise reads from every row of `traces`).
pub fn tenth_floors(series: &crate::replay::Series) -> Vec<i64> {
    let n = series.len();
    if n < 10 {
        return vec![];
    }
    // The tenths of `GROUP BY (trace_index * 10) / n`: event i is in tenth (i * 10) / n.
    (0..10)
        .map(|g| (g * n).div_ceil(10)..((g + 1) * n).div_ceil(10))
        .filter(|r| !r.is_empty())
        .map(|r| series.extremes(r).allocated_min)
        .collect()
}

/// Leaks of device position `pos`, from the replay: the `top` stacks of the candidates.
pub fn leak(l: &Loaded, pos: usize, top: usize) -> LeakAnalysis {
    let d = &l.devices[pos];
    let sem = l.semantics();
    let n = d.events as i64;
    let mut sums = Sums::default();
    let mut by_stack: FastMap<Option<u32>, StackSum> = FastMap::default();
    let mut by_category: FastMap<&str, (i64, i64)> = FastMap::default();
    let phases = &l.phases()[pos];
    let mut forward_kept: FastMap<Option<u32>, Vec<(u32, u64)>> = FastMap::default();
    for (i, lt) in d.lifetimes.iter().enumerate().filter(|(_, lt)| !lt.orphan) {
        let size = lt.size as i64;
        let alloc = lt.alloc_event().map(i64::from);
        let freed = lt.free_completed_event().map(i64::from);
        match lt.state_at_dump {
            Some(BlockState::ActiveAllocated) if alloc.is_some() => {
                sums.candidates.add(size);
                let s = by_stack.entry(lt.stack()).or_insert_with(|| StackSum { blocks: 0, bytes: 0, first: i64::MAX, last: i64::MIN });
                s.blocks += 1;
                s.bytes += size;
                s.first = s.first.min(alloc.unwrap_or(0));
                s.last = s.last.max(alloc.unwrap_or(0));
                let c = by_category.entry(sem.of_lifetime(pos, i).0).or_default();
                c.0 += 1;
                c.1 += size;
                if let Some(e) = lt.alloc_event().filter(|&e| phases.phase(e) == Phase::Forward) {
                    let run = phases.run_of(e).unwrap_or(0) as u32;
                    forward_kept.entry(lt.stack()).or_default().push((run, lt.size));
                }
            }
            Some(BlockState::ActivePendingFree) => sums.pending.add(size),
            _ => {}
        }
        if alloc.is_none() && freed.is_none() {
            sums.before.add(size);
            if lt.stack().is_none() {
                sums.stackless.add(size);
            }
        }
        // Alive for at least half the window: never freed, or freed that long after.
        let long = alloc.is_some_and(|a| a <= n - n / 2 && freed.is_none_or(|f| f >= n / 2 && f - a >= n / 2));
        if long {
            sums.long_lived.add(size);
        }
    }
    let labels = StackLabels::new(l);
    let kept_per_pass = kept_pass_after_pass(forward_kept, phases, &by_stack, &labels);
    let mut stacks: Vec<(Option<u32>, StackSum)> = by_stack.into_iter().collect();
    // Ties in the later stack first, stackless last: the order the SnapshotDB query gives.
    stacks.sort_by(|(a, x), (b, y)| y.bytes.cmp(&x.bytes).then(b.cmp(a)));
    stacks.truncate(top);
    let mut candidates_by_stack: Vec<StackBytes> = stacks.into_iter().map(|(stack, s)| stack_bytes(stack, &s, &labels)).collect();
    super::basis::disambiguate(&mut candidates_by_stack);
    let mut candidates_by_category: Vec<CategoryTotal> =
        by_category.into_iter().map(|(c, (blocks, bytes))| CategoryTotal { category: c.to_string(), blocks, bytes }).collect();
    candidates_by_category.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.category.cmp(&b.category)));
    let mut out = assemble(d.device, n, sums, candidates_by_stack, candidates_by_category, tenth_floors(&d.series));
    out.kept_per_pass = kept_per_pass;
    out
}

fn stack_bytes(stack: Option<u32>, s: &StackSum, labels: &StackLabels) -> StackBytes {
    let named = stack.map(|id| labels.stack(id));
    StackBytes {
        label: named.as_ref().map_or_else(|| NO_STACK.to_string(), |n| n.label.clone()),
        detail: named.as_ref().and_then(|n| n.caller.clone()),
        site: named.as_ref().map(|n| n.site.clone()),
        stack: named.map(|n| n.text),
        stack_id: stack.map(i64::from),
        blocks: s.blocks,
        bytes: s.bytes,
        first_event: Some(s.first),
        last_event: Some(s.last),
    }
}

/// The site (a stack with frames) whose still-allocated blocks came from the most forward runs,
/// if at least `MIN_PASSES`: the blocks `forward_kept` lists per stack as (run, size). Ties go
/// to the most bytes.
fn kept_pass_after_pass(
    forward_kept: FastMap<Option<u32>, Vec<(u32, u64)>>,
    phases: &crate::semantics::DevicePhases,
    by_stack: &FastMap<Option<u32>, StackSum>,
    labels: &StackLabels,
) -> Option<KeptPerPass> {
    let (stack, passes, bytes, blocks) = forward_kept
        .into_iter()
        .filter_map(|(stack, mut blocks)| {
            let stack = stack?;
            let bytes: u64 = blocks.iter().map(|b| b.1).sum();
            let n = blocks.len() as i64;
            blocks.sort_unstable();
            blocks.dedup_by_key(|b| b.0);
            Some((stack, blocks.len() as i64, bytes as i64, n))
        })
        .filter(|k| k.1 >= MIN_PASSES)
        .max_by(|a, b| (a.1, a.2, std::cmp::Reverse(a.0)).cmp(&(b.1, b.2, std::cmp::Reverse(b.0))))?;
    let all = by_stack.get(&Some(stack))?;
    let mut site = stack_bytes(Some(stack), all, labels);
    (site.blocks, site.bytes) = (blocks, bytes);
    let passes_in_window = phases.runs.iter().filter(|r| r.phase == Phase::Forward).count() as i64;
    Some(KeptPerPass { site, passes, passes_in_window })
}

/// Blocks and bytes of one kind of lifetime.
#[derive(Default)]
struct Count {
    blocks: i64,
    bytes: i64,
}

impl Count {
    fn add(&mut self, size: i64) {
        self.blocks += 1;
        self.bytes += size;
    }
}

/// The figures of a leak analysis besides its lists.
#[derive(Default)]
struct Sums {
    candidates: Count,
    pending: Count,
    before: Count,
    stackless: Count,
    long_lived: Count,
}

struct StackSum {
    blocks: i64,
    bytes: i64,
    first: i64,
    last: i64,
}

fn assemble(
    device: i64,
    events: i64,
    s: Sums,
    candidates_by_stack: Vec<StackBytes>,
    candidates_by_category: Vec<CategoryTotal>,
    floor: Vec<i64>,
) -> LeakAnalysis {
    let floor_growth = match (floor.first(), floor.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0,
    };
    let floor_rises_steadily = floor.len() >= 3 && floor.windows(2).all(|w| w[1] >= w[0]) && floor_growth > 0;
    LeakAnalysis {
        device,
        events,
        candidates: s.candidates.blocks,
        candidate_bytes: s.candidates.bytes,
        candidates_by_stack,
        candidates_by_category,
        pending_free_blocks: s.pending.blocks,
        pending_free_bytes: s.pending.bytes,
        before_window_blocks: s.before.blocks,
        before_window_bytes: s.before.bytes,
        before_window_stackless_bytes: s.stackless.bytes,
        long_lived_blocks: s.long_lived.blocks,
        long_lived_bytes: s.long_lived.bytes,
        floor,
        floor_growth,
        floor_rises_steadily,
        kept_per_pass: None,
    }
}
