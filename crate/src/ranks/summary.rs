//! One file of a distributed run, summarized so the file can be dropped: per device the peaks
//! (the same as `overview`), OOM events, the step count and who holds the memory at the
//! allocated peak, by allocation site and by category. Summaries are what `ranks` combines and
//! what `--summary-out` writes for a later `--merge`.

use crate::analysis::overview::{overview, Peaks};
use crate::fasthash::FastMap;
use crate::model::BlockState;
use crate::replay::{DeviceReplay, Lifetime};
use crate::Loaded;
use serde::{Deserialize, Serialize};

/// Sites and categories kept per device (the diff of two ranks reads these).
const TOP: usize = 25;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FileSummary {
    pub file: String,
    /// From the file name (`rank7`, `rank_7`, `rank-7`), else None (then the order given).
    pub rank: Option<i64>,
    pub source_bytes: u64,
    pub devices: Vec<DeviceSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceSummary {
    pub device: i64,
    pub events: usize,
    pub peaks: Peaks,
    /// `time_us` of the allocated peak's event, when the trace has times.
    pub peak_time_us: Option<i64>,
    pub oom_events: Vec<u32>,
    /// ProfilerStep ranges or optimizer steps found (None: no steps recognized).
    pub steps: Option<usize>,
    /// Allocated bytes at the allocated peak by allocation site, largest first.
    pub top_sites: Vec<Holder>,
    /// Allocated bytes at the allocated peak by category, largest first.
    pub categories: Vec<Holder>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Holder {
    pub label: String,
    pub bytes: u64,
    pub blocks: u64,
}

/// The rank a file's path carries, the last one named: `rank7.pickle`, `snapshot_rank_07.pkl`,
/// `mem-rank-3.pickle`, `run/rank3/memory_snapshot.pickle`.
pub fn rank_from_name(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    lower.rmatch_indices("rank").find_map(|(at, _)| {
        let rest = lower[at + 4..].trim_start_matches(['_', '-', '.']);
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    })
}

/// Counted in `allocated` right after event `e`.
fn allocated_after(l: &Lifetime, e: u32) -> bool {
    if l.orphan {
        return false;
    }
    let born = match l.alloc_event() {
        Some(a) => a <= e,
        None => l.allocated_at_start(),
    };
    let freed = match l.free_requested_event().or(l.free_completed_event()) {
        Some(f) => f <= e,
        None => l.state_at_dump == Some(BlockState::ActivePendingFree),
    };
    born && !freed
}

/// The label of a summary's memory beyond its `TOP` largest rows: the rows still sum to the
/// allocated peak, so the ranks' differences do too.
pub const OTHER_HOLDERS: &str = "[the other sites]";

fn top(map: FastMap<String, (u64, u64)>) -> Vec<Holder> {
    let mut v: Vec<Holder> = map.into_iter().map(|(label, (bytes, blocks))| Holder { label, bytes, blocks }).collect();
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
    if v.len() > TOP {
        let rest = v.split_off(TOP);
        v.push(Holder {
            label: OTHER_HOLDERS.to_string(),
            bytes: rest.iter().map(|h| h.bytes).sum(),
            blocks: rest.iter().map(|h| h.blocks).sum(),
        });
    }
    v
}

/// The frame that names a stack, and the innermost Python frame below it when that is another
/// one (library code such as FSDP's `unshard` under the user's `forward`): ranks are compared
/// by this text, and two sites calling the same user line through different code stay apart.
fn site_label(interner: &crate::model::Interner, stack: &[crate::model::FrameId], loop_lines: &[u8], root: &str) -> String {
    let Some(site) = crate::frames::site(interner, stack, loop_lines) else { return "[no Python frame]".to_string() };
    let label = crate::frames::display(site, root);
    let inner = stack.iter().map(|&f| &interner.frames[f as usize]).find(|f| crate::frames::kind(f).is_python());
    match inner {
        Some(f) if !std::ptr::eq(f, site) => format!("{label} · in {}", crate::frames::display(f, root)),
        _ => label,
    }
}

/// Sites and categories of the memory allocated right after `event`.
fn holders(l: &Loaded, pos: usize, d: &DeviceReplay, event: Option<u32>, root: &str) -> (Vec<Holder>, Vec<Holder>) {
    let interner = &l.snapshot.interner;
    let sem = l.semantics();
    let mut sites: FastMap<String, (u64, u64)> = FastMap::default();
    let mut cats: FastMap<String, (u64, u64)> = FastMap::default();
    for (i, lt) in d.lifetimes.iter().enumerate() {
        let alive = match event {
            Some(e) => allocated_after(lt, e),
            None => lt.allocated_at_start(),
        };
        if !alive {
            continue;
        }
        let site = match lt.stack() {
            Some(s) => site_label(interner, &interner.stacks[s as usize], l.loop_lines(), root),
            None if lt.before_window() => "[allocated before the window]".to_string(),
            None => "[no stack recorded]".to_string(),
        };
        let s = sites.entry(site).or_default();
        s.0 += lt.size;
        s.1 += 1;
        let c = cats.entry(sem.of_lifetime(pos, i).0.to_string()).or_default();
        c.0 += lt.size;
        c.1 += 1;
    }
    (top(sites), top(cats))
}

/// Summarize a replayed snapshot read from `file` (`source_bytes` long).
pub fn summarize(file: &str, source_bytes: u64, l: &Loaded) -> FileSummary {
    let ov = overview(l);
    let root = crate::frames::user_root(l.snapshot.interner.frames.iter());
    let mut devices = Vec::new();
    for (pos, d) in l.devices.iter().enumerate() {
        let Some(o) = ov.devices.iter().find(|o| o.device == d.device && !o.pinned_host) else { continue };
        let trace = l.snapshot.trace(d.device);
        let event = o.peaks.allocated.event;
        let (top_sites, categories) = holders(l, pos, d, event, &root);
        let oom_events = trace.map(|t| t.oom_events()).unwrap_or_default();
        let steps = l.phases().get(pos).map(|p| crate::analysis::steps::steps(d, p, &oom_events).steps.len()).filter(|&n| n > 0);
        devices.push(DeviceSummary {
            device: d.device,
            events: o.events,
            peaks: o.peaks.clone(),
            peak_time_us: event.and_then(|e| trace.and_then(|t| t.events.get(e as usize)).and_then(|x| x.time_us())),
            oom_events,
            steps,
            top_sites,
            categories,
        });
    }
    FileSummary { file: file.to_string(), rank: rank_from_name(file), source_bytes, devices }
}

#[cfg(test)]
mod tests {
    use super::rank_from_name;

    #[test]
    fn ranks_come_from_file_names() {
        assert_eq!(rank_from_name("rank7.pickle"), Some(7));
        assert_eq!(rank_from_name("snapshot_rank_07.pkl"), Some(7));
        assert_eq!(rank_from_name("mem-RANK-12.pickle"), Some(12));
        assert_eq!(rank_from_name("memory_snapshot.pickle"), None);
        assert_eq!(rank_from_name("ranking.pickle"), None);
        assert_eq!(rank_from_name("run/rank3/memory_snapshot.pickle"), Some(3));
        assert_eq!(rank_from_name("/tmp/ranks64/rank12.pickle"), Some(12));
        assert_eq!(rank_from_name("rank.-_3.pickle"), Some(3));
        assert_eq!(rank_from_name("rank3_of_rank8.pickle"), Some(8), "the last 'rank'");
        assert_eq!(rank_from_name("rank99999999999999999999.pickle"), None);
    }
}
