//! Leaks: blocks allocated inside the window and still allocated at the dump (told apart from
//! pending frees and from memory allocated before the window), long-lived blocks, and whether the
//! allocated floor grows across the window — all attributed to stacks.

use super::basis::NO_STACK;
use super::categories::CategoryTotal;
use super::stack_labels::StackLabels;
use crate::fasthash::FastMap;
use crate::model::BlockState;
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
    let labels = StackLabels::new(&l.snapshot.interner);
    let mut stacks: Vec<(Option<u32>, StackSum)> = by_stack.into_iter().collect();
    // Ties in the later stack first, stackless last: the order the SnapshotDB query gives.
    stacks.sort_by(|(a, x), (b, y)| y.bytes.cmp(&x.bytes).then(b.cmp(a)));
    stacks.truncate(top);
    let mut candidates_by_stack: Vec<StackBytes> = stacks
        .into_iter()
        .map(|(stack, s)| {
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
        })
        .collect();
    super::basis::disambiguate(&mut candidates_by_stack);
    let mut candidates_by_category: Vec<CategoryTotal> =
        by_category.into_iter().map(|(c, (blocks, bytes))| CategoryTotal { category: c.to_string(), blocks, bytes }).collect();
    candidates_by_category.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.category.cmp(&b.category)));
    assemble(d.device, n, sums, candidates_by_stack, candidates_by_category, tenth_floors(&d.series))
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
    }
}
