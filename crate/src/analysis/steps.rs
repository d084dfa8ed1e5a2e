//! Steps and phases of a run: the phase runs and named ranges (crate::semantics::phases), the
//! training steps found in them, each step's peaks and where in the step they fall, and a
//! verdict on growth across steps (memory that grows step after step is the strongest leak
//! signal there is).

use crate::format;
use crate::replay::{first_max, DeviceReplay, Peak};
use crate::semantics::{DevicePhases, Phase, RangeGroup};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PhaseSpan {
    pub name: String,
    /// `run` (events in one phase, from their stacks) or `range` (annotations, compiled regions).
    pub kind: String,
    /// `phase` for runs; `step`, `optimizer`, `data`, `framework`, `compiled`, `user` for ranges.
    pub group: String,
    pub start_event: Option<u32>,
    pub end_event: Option<u32>,
    pub start_us: Option<i64>,
    pub end_us: Option<i64>,
    pub open: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Step {
    pub step: i64,
    pub first_event: u32,
    pub last_event: u32,
    /// false for the part after the last step boundary (the window ended inside it).
    pub complete: bool,
    pub peak_allocated: Peak,
    pub peak_reserved: Peak,
    /// The phase of the event where allocated peaked.
    pub peak_phase: String,
    /// Allocated after the step's last event.
    pub end_allocated: i64,
    /// Against the previous step (None for the first).
    pub change_peak_allocated: Option<i64>,
    pub change_end_allocated: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Growth {
    /// `growing`, `shrinking`, `stable`, `too_few_steps` or `no_steps`.
    pub verdict: String,
    /// Mean change of the allocated bytes at step ends over the steps compared.
    pub bytes_per_step: Option<i64>,
    /// The steps compared (the complete ones after the first, which warms up).
    pub steps_compared: Vec<i64>,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StepsAnalysis {
    pub device: i64,
    pub phases: Vec<PhaseSpan>,
    /// Framework-internal ranges (dynamo, inductor, AOT): listed in `phases`, hidden by default.
    pub framework_ranges: usize,
    /// How the steps were found: `ProfilerStep annotations`, `optimizer steps`, `backward passes`,
    /// or None.
    pub step_source: Option<String>,
    pub steps: Vec<Step>,
    pub growth: Growth,
    /// Where each peak of the window falls: `{step, phase}` (None when before the first event).
    pub peak_allocated_at: Option<PeakPlace>,
    pub peak_reserved_at: Option<PeakPlace>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PeakPlace {
    pub event: u32,
    pub step: Option<i64>,
    pub phase: String,
}

pub fn steps(d: &DeviceReplay, phases: &DevicePhases) -> StepsAnalysis {
    let mut spans: Vec<PhaseSpan> = phases
        .runs
        .iter()
        .map(|r| PhaseSpan {
            name: r.phase.name().into(),
            kind: "run".into(),
            group: "phase".into(),
            start_event: Some(r.first),
            end_event: Some(r.last),
            start_us: None,
            end_us: None,
            open: false,
        })
        .collect();
    spans.extend(phases.ranges.iter().map(|r| PhaseSpan {
        name: r.name.clone(),
        kind: "range".into(),
        group: crate::semantics::snake_name(&r.group),
        start_event: r.start_event,
        end_event: r.end_event,
        start_us: r.start_us,
        end_us: r.end_us,
        open: r.open,
    }));
    let framework_ranges = phases.ranges.iter().filter(|r| r.group == RangeGroup::Framework).count();
    let mut allocs: Vec<Alloc> =
        d.lifetimes.iter().filter_map(|l| l.alloc_event().map(|e| (e, l.size, l.free_completed_event().unwrap_or(u32::MAX)))).collect();
    allocs.sort_unstable();
    let (source, bounds) = step_bounds(phases, d.events as u32, &allocs);
    let steps = measure(d, phases, &bounds);
    let growth = growth(&steps);
    let place = |p: Peak| {
        p.event.map(|e| PeakPlace {
            event: e,
            step: steps.iter().find(|s| s.first_event <= e && e <= s.last_event).map(|s| s.step),
            phase: phases.phase(e).name().into(),
        })
    };
    StepsAnalysis {
        device: d.device,
        phases: spans,
        framework_ranges,
        step_source: source.map(str::to_string),
        peak_allocated_at: place(d.series.peak("allocated")),
        peak_reserved_at: place(d.series.peak("reserved")),
        steps,
        growth,
    }
}

/// (number, first, last, complete) of each step.
type Bound = (i64, u32, u32, bool);

/// An allocation: its event, block size and the event that returned it (`u32::MAX`: never).
type Alloc = (u32, u64, u32);

/// `allocs`: the allocations in event order.
fn step_bounds(phases: &DevicePhases, events: u32, allocs: &[Alloc]) -> (Option<&'static str>, Vec<Bound>) {
    if events == 0 {
        return (None, Vec::new());
    }
    let profiler: Vec<Bound> = phases
        .ranges
        .iter()
        .filter(|r| r.group == RangeGroup::Step)
        .filter_map(|r| {
            let n = r.name.trim_start_matches("ProfilerStep#").parse::<i64>().ok()?;
            Some((n, r.start_event?, r.end_event?, !r.open))
        })
        .collect();
    if !profiler.is_empty() {
        return (Some("ProfilerStep annotations"), profiler);
    }
    // A step ends with its optimizer step; what follows the last one is a partial step. An
    // optimizer run that allocates nothing is zero_grad (it only frees), not a step.
    let allocates = |first: u32, last: u32| {
        let i = allocs.partition_point(|a| a.0 < first);
        allocs.get(i).is_some_and(|a| a.0 <= last)
    };
    let optimizer: Vec<&crate::semantics::PhaseRun> = phases.runs.iter().filter(|r| r.phase == Phase::Optimizer).collect();
    let stepping: Vec<u32> = optimizer.iter().filter(|r| allocates(r.first, r.last)).map(|r| r.last).collect();
    let ends = if stepping.is_empty() { optimizer.iter().map(|r| r.last).collect() } else { stepping };
    if !ends.is_empty() {
        return (Some("optimizer steps"), split_after(&ends, events));
    }
    // Without an optimizer: a step starts with each forward pass that follows a backward pass.
    let starts: Vec<u32> =
        phases.runs.windows(2).filter(|w| w[0].phase == Phase::Backward && w[1].phase != Phase::Backward).map(|w| w[1].first).collect();
    if !starts.is_empty() {
        let ends: Vec<u32> = starts.iter().map(|s| s - 1).collect();
        let mut b = split_after(&ends, events);
        if let Some(last) = b.last_mut() {
            // The last part is complete only if it holds a backward pass of its own.
            last.3 = phases.runs.iter().any(|r| r.phase == Phase::Backward && r.first >= last.1);
        }
        return (Some("backward passes"), b);
    }
    // Without annotations or phases: the allocation pattern repeats once per step, and a step
    // returns most of what it allocated (layers repeating inside one pass keep theirs: no steps).
    let sizes: Vec<u64> = allocs.iter().map(|a| a.1).collect();
    if let Some((offset, period)) = periodicity(&sizes) {
        let starts: Vec<usize> = (offset..sizes.len()).step_by(period).collect();
        let bounds: Vec<Bound> = starts
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let last = starts.get(k + 1).map_or(events - 1, |&next| allocs[next].0 - 1);
                (k as i64 + 1, allocs[i].0, last, k + 1 < starts.len())
            })
            .collect();
        // allocs is in event order: each step's allocations are one slice of it.
        let keeps_most = |b: &Bound| {
            let from = allocs.partition_point(|a| a.0 < b.1);
            let to = allocs.partition_point(|a| a.0 <= b.2);
            let mine = allocs[from..to].iter();
            let (all, kept) = mine.fold((0u64, 0u64), |(all, kept), a| (all + a.1, kept + if a.2 > b.2 { a.1 } else { 0 }));
            kept * 2 > all
        };
        let keeping = bounds.iter().filter(|b| b.3 && keeps_most(b)).count();
        if keeping * 2 <= bounds.iter().filter(|b| b.3).count() {
            return (Some("a repeating allocation pattern"), bounds);
        }
    }
    (None, Vec::new())
}

/// The smallest period (in allocations) with which the sequence of block sizes repeats: at least
/// 90 % of the sizes equal the one a period later, over at least three periods; and where the
/// repetition starts. Looks at the first 6,000 allocations.
fn periodicity(sizes: &[u64]) -> Option<(usize, usize)> {
    let s = &sizes[..sizes.len().min(6000)];
    let n = s.len();
    for period in 2..=n / 3 {
        // Where a whole period first repeats (set-up allocations may come before).
        let Some(offset) = (0..period).find(|&i| (i..i + period).all(|j| s[j] == s[j + period])) else {
            continue;
        };
        if n - offset < 3 * period {
            continue;
        }
        let pairs = n - period - offset;
        let same = (offset..n - period).filter(|&i| s[i] == s[i + period]).count();
        if same * 10 >= pairs * 9 {
            return Some((offset, period));
        }
    }
    None
}

fn split_after(ends: &[u32], events: u32) -> Vec<Bound> {
    let mut out = Vec::new();
    let mut first = 0u32;
    for &e in ends {
        if e >= first {
            out.push((out.len() as i64 + 1, first, e, true));
            first = e + 1;
        }
    }
    if first < events {
        out.push((out.len() as i64 + 1, first, events - 1, false));
    }
    out
}

fn measure(d: &DeviceReplay, phases: &DevicePhases, bounds: &[Bound]) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for &(step, first, last, complete) in bounds {
        let range = first as usize..last as usize + 1;
        let peak = |name: &str| {
            let col = d.series.column(name).expect("a counter column");
            first_max(col.range(range.clone()))
                .map_or(Peak { bytes: 0, event: None }, |(b, i)| Peak { bytes: b, event: Some(first + i as u32) })
        };
        let peak_allocated = peak("allocated");
        let prev = out.last();
        let end_allocated = d.series.allocated.at(last as usize);
        out.push(Step {
            step,
            first_event: first,
            last_event: last,
            complete,
            peak_phase: peak_allocated.event.map_or("unknown", |e| phases.phase(e).name()).into(),
            change_peak_allocated: prev.map(|p| peak_allocated.bytes - p.peak_allocated.bytes),
            change_end_allocated: prev.map(|p| end_allocated - p.end_allocated),
            peak_reserved: peak("reserved"),
            peak_allocated,
            end_allocated,
        });
    }
    out
}

fn growth(steps: &[Step]) -> Growth {
    let complete: Vec<&Step> = steps.iter().filter(|s| s.complete).collect();
    if steps.is_empty() {
        return Growth {
            verdict: "no_steps".into(),
            bytes_per_step: None,
            steps_compared: Vec::new(),
            text: "No steps found: the trace has no ProfilerStep ranges, optimizer steps, repeated backward passes or repeating allocation pattern.".into(),
        };
    }
    // The first step allocates the optimizer state and warms the caches: with four or more
    // complete steps it is left out. A trend needs two changes (three steps) at least.
    let compared: Vec<&Step> = if complete.len() >= 4 { complete[1..].to_vec() } else { complete.clone() };
    if compared.len() < 3 {
        return Growth {
            verdict: "too_few_steps".into(),
            bytes_per_step: None,
            steps_compared: compared.iter().map(|s| s.step).collect(),
            text: format!(
                "{} complete step{} in the window: a trend across steps needs at least three.",
                complete.len(),
                if complete.len() == 1 { "" } else { "s" }
            ),
        };
    }
    let diffs: Vec<i64> = compared.windows(2).map(|w| w[1].end_allocated - w[0].end_allocated).collect();
    let total = compared.last().unwrap().end_allocated - compared[0].end_allocated;
    let per = total / diffs.len() as i64;
    let span = format!("steps {}–{}", compared[0].step, compared.last().unwrap().step);
    let (verdict, text) = if diffs.iter().all(|&d| d > 0) {
        (
            "growing",
            format!(
                "Allocated at the end of each step grows by {} per step over {span}: memory is kept across steps (a leak signal).",
                format::bytes(per)
            ),
        )
    } else if diffs.iter().all(|&d| d < 0) {
        ("shrinking", format!("Allocated at the end of each step shrinks by {} per step over {span}.", format::bytes(-per)))
    } else {
        let ends = compared.iter().map(|s| s.end_allocated);
        let spread = ends.clone().max().unwrap_or(0) - ends.min().unwrap_or(0);
        ("stable", format!("Allocated at the end of each step is stable over {span} (within {}).", format::bytes(spread)))
    };
    Growth { verdict: verdict.into(), bytes_per_step: Some(per), steps_compared: compared.iter().map(|s| s.step).collect(), text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeating_allocation_pattern_is_found_with_its_start() {
        // One set-up allocation, then three iterations of three allocations.
        assert_eq!(periodicity(&[7, 1, 2, 3, 1, 2, 3, 1, 2, 3]), Some((1, 3)));
        assert_eq!(periodicity(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), None, "no repetition");
        assert_eq!(periodicity(&[1, 2, 1, 2]), None, "two periods are not three");
    }

    #[test]
    fn optimizer_ends_split_steps_and_keep_the_partial_tail() {
        assert_eq!(split_after(&[9, 19], 25), vec![(1, 0, 9, true), (2, 10, 19, true), (3, 20, 24, false)]);
        assert_eq!(split_after(&[24], 25), vec![(1, 0, 24, true)]);
    }
}
