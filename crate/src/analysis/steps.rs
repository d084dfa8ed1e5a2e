//! Steps and phases of a run: the phase runs and named ranges (crate::semantics::phases), the
//! training steps found in them, each step's peaks and where in the step they fall, and a
//! verdict on growth across steps (memory that grows step after step is the strongest leak
//! signal there is).

use crate::format;
use crate::replay::{first_max, DeviceReplay, Peak};
use crate::semantics::{DevicePhases, Phase, RangeGroup};
use serde::{Deserialize, Serialize};

pub use super::step_growth::Growth;

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
    /// false for the part after the last step boundary (the window ended inside it), and for a
    /// step an allocation failed in (`oom_event`) that did not recover.
    pub complete: bool,
    /// The first out-of-memory event inside the step: an allocation failed, so the step did not
    /// finish (the program raised, or caught the error and started again), unless the phase it
    /// failed in went on allocating (the program recovered inside the step).
    pub oom_event: Option<u32>,
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
pub struct StepsAnalysis {
    pub device: i64,
    pub phases: Vec<PhaseSpan>,
    /// Framework-internal ranges (dynamo, inductor, AOT): listed in `phases`, hidden by default.
    pub framework_ranges: usize,
    /// How the steps were found: `ProfilerStep annotations`, `optimizer steps`, `the first
    /// optimizer step and its count of backward passes, …` (later steps leave no event),
    /// `backward passes`, or None.
    pub step_source: Option<String>,
    /// At most `MAX_STEPS` (the first ones); `steps_total` counts them all.
    pub steps: Vec<Step>,
    pub steps_total: usize,
    /// `phases` holds at most `MAX_SPANS` (the first ones); `phases_total` counts them all.
    pub phases_total: usize,
    pub growth: Growth,
    /// Where each peak of the window falls: `{step, phase}` (None when before the first event).
    pub peak_allocated_at: Option<PeakPlace>,
    pub peak_reserved_at: Option<PeakPlace>,
    /// What kind of program the trace shows, from its phases and steps.
    pub program: Program,
}

/// What the trace shows the program doing, read from the phases of its events (the frames) and
/// the steps found in them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Program {
    /// `training_steps` (two or more complete steps with a backward pass or an optimizer step),
    /// `one_training_step`, `forward` (forward passes only: inference or evaluation),
    /// `model_build` (set-up only: modules built, moved or loaded), `dump_only` (at most one
    /// event), or `unknown` (the frames name none of these).
    pub kind: String,
    /// Complete training steps in the window (0 unless the program trains).
    pub training_steps: usize,
    /// Events in each phase, in `Phase::ALL` order, for the evidence.
    pub events_by_phase: Vec<PhaseCount>,
    /// One sentence: the kind and the evidence for it.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PhaseCount {
    pub phase: String,
    pub events: u64,
}

impl Step {
    /// What cut the step short, as the CLI and report show it: `out of memory at event N`,
    /// `partial` (the window cuts it), or, for a complete step, `recovered from out of memory at
    /// event N`; None for a complete step without one.
    pub fn cut_short(&self) -> Option<String> {
        match self.oom_event {
            Some(e) if !self.complete => Some(format!("out of memory at event {e}")),
            Some(e) => Some(format!("recovered from out of memory at event {e}")),
            None => (!self.complete).then(|| "partial".into()),
        }
    }
}

impl Program {
    pub fn trains(&self) -> bool {
        matches!(self.kind.as_str(), "training_steps" | "one_training_step")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PeakPlace {
    pub event: u32,
    pub step: Option<i64>,
    pub phase: String,
}

/// The most steps and phase spans an answer lists (the totals say how many there are).
pub const MAX_STEPS: usize = 10_000;
pub const MAX_SPANS: usize = 20_000;

/// `ooms`: the device's out-of-memory events, ascending.
pub fn steps(d: &DeviceReplay, phases: &DevicePhases, ooms: &[u32]) -> StepsAnalysis {
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
    let (source, bounds) = step_bounds(phases, d.events as u32, |first, last| d.allocates_in(first, last));
    let bounds = split_at_failures(bounds, ooms, phases, d);
    let steps = measure(d, phases, &bounds, ooms);
    let growth = super::step_growth::growth(d, phases, &steps);
    let program = program(d.events as u32, phases, source, &steps);
    let place = |p: Peak| {
        p.event.map(|e| PeakPlace {
            event: e,
            step: steps.iter().find(|s| s.first_event <= e && e <= s.last_event).map(|s| s.step),
            phase: phases.phase(e).name().into(),
        })
    };
    let (peak_allocated_at, peak_reserved_at) = (place(d.series.peak("allocated")), place(d.series.peak("reserved")));
    // Bounded answers: a hostile trace can have a backward pass every few events.
    let (steps_total, phases_total) = (steps.len(), spans.len());
    let mut steps = steps;
    steps.truncate(MAX_STEPS);
    spans.truncate(MAX_SPANS);
    StepsAnalysis {
        device: d.device,
        steps_total,
        phases_total,
        phases: spans,
        framework_ranges,
        step_source: source.map(str::to_string),
        peak_allocated_at,
        peak_reserved_at,
        steps,
        growth,
        program,
    }
}

/// The kind of program, from the phases its events ran in and the steps found.
fn program(events: u32, phases: &DevicePhases, source: Option<&str>, steps: &[Step]) -> Program {
    let mut counts = [0u64; Phase::ALL.len()];
    for &p in &phases.of_event {
        counts[p as usize] += 1;
    }
    let n = |p: Phase| counts[p as usize];
    let events_by_phase =
        Phase::ALL.iter().map(|&p| PhaseCount { phase: p.name().into(), events: n(p) }).filter(|c| c.events > 0).collect();
    let backward_passes = phases.runs.iter().filter(|r| r.phase == Phase::Backward).count();
    let optimizer_runs = phases.runs.iter().filter(|r| r.phase == Phase::Optimizer).count();
    let complete = steps.iter().filter(|s| s.complete).count();
    let trains = backward_passes > 0 || optimizer_runs > 0;
    let evidence = format!(
        "{} events: {}",
        format::count(events as i64),
        Phase::ALL
            .iter()
            .filter(|&&p| n(p) > 0)
            .map(|&p| format!("{} {}", format::count(n(p) as i64), p.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let passes = format!(
        "{} backward pass{}, {} optimizer run{}",
        backward_passes,
        if backward_passes == 1 { "" } else { "es" },
        optimizer_runs,
        if optimizer_runs == 1 { "" } else { "s" }
    );
    let (kind, training_steps, text) = if events <= 1 {
        (
            "dump_only",
            0,
            "The snapshot holds the dump and at most one event: it shows what was allocated, not what the program did.".to_string(),
        )
    } else if trains && complete >= 2 {
        let by = source.unwrap_or("steps");
        ("training_steps", complete, format!("Training: {complete} complete steps (by {by}; {passes}). {evidence}."))
    } else if trains {
        (
            "one_training_step",
            1,
            format!(
                "One training step ({passes}): what it keeps (gradients, optimizer state) is state for the next step, not growth. {evidence}."
            ),
        )
    } else if n(Phase::Forward) > 0 {
        let profiled = if source.is_some() { format!(" in {} profiler steps", steps.len()) } else { String::new() };
        ("forward", 0, format!("Forward passes only{profiled} (no backward pass, no optimizer step): inference or evaluation, no training steps. {evidence}."))
    } else if n(Phase::Setup) > 0 {
        (
            "model_build",
            0,
            format!("Set-up only (modules built, moved or loaded; no forward pass): the trace builds the model. {evidence}."),
        )
    } else {
        ("unknown", 0, format!("Unknown: the frames name no module forward, backward pass, optimizer step or set-up. {evidence}."))
    };
    Program { kind: kind.into(), training_steps, events_by_phase, text }
}

/// (number, first, last, complete) of each step.
type Bound = (i64, u32, u32, bool);

/// `allocates(first, last)`: whether an event of that span hands out a block.
/// Steps are where the program repeats a unit with a backward pass or an optimizer step (or where
/// ProfilerStep ranges say so): layers repeating inside one forward pass are never steps.
fn step_bounds(phases: &DevicePhases, events: u32, allocates: impl Fn(u32, u32) -> bool) -> (Option<&'static str>, Vec<Bound>) {
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
    // optimizer run that allocates nothing is zero_grad (it only frees), not a step, where the
    // steps allocate. An optimizer whose later steps work in place (SGD with momentum, a fused
    // Adam) allocates in its first step only and its later steps leave no event: its one
    // allocating run divides nothing after it, so every optimizer run (zero_grad's, once a step)
    // divides the steps, or failing that, where zero_grad runs inside the steps (Lightning's
    // closure, between forward and backward), the backward passes do. A division holds where
    // every complete step but the first (which the recording may have started inside) has a
    // backward pass and the partial rest no more of them than a step.
    // Each run's events are read once, so all of them together at most once.
    let optimizer: Vec<&crate::semantics::PhaseRun> = phases.runs.iter().filter(|r| r.phase == Phase::Optimizer).collect();
    let stepping: Vec<u32> = optimizer.iter().filter(|r| allocates(r.first, r.last)).map(|r| r.last).collect();
    let every_run: Vec<u32> = optimizer.iter().map(|r| r.last).collect();
    // Runs are maximal, so each backward run is one backward pass; sorted by event.
    let passes: Vec<u32> = phases.runs.iter().filter(|r| r.phase == Phase::Backward).map(|r| r.first).collect();
    let passes_in = |b: &Bound| runs_in(&passes, b);
    let most_in_a_step = |b: &[Bound]| {
        let complete: Vec<usize> = b.iter().filter(|s| s.3).map(passes_in).collect();
        complete.iter().skip(usize::from(complete.len() > 1)).max().copied().unwrap_or(0)
    };
    // Steps that leave no event: a rest with a step's backward passes is the last step.
    let last_step_too = |b: &mut Vec<Bound>| {
        let most = most_in_a_step(b);
        if let Some(last) = b.last_mut().filter(|l| !l.3 && most > 0 && passes_in(l) == most) {
            last.3 = true;
        }
    };
    // An optimizer run ends a training step only where that step has a backward pass: a run with
    // none since the step before (an optimizer's step at construction, a scheduler's or
    // averaging pass between steps) belongs to the step after it. A first step without one, or
    // without a forward pass where the other steps have one, was recorded from inside it (or is
    // set-up), so it is partial.
    let forwards: Vec<u32> = phases.runs.iter().filter(|r| r.phase == Phase::Forward).map(|r| r.first).collect();
    let forwards_in = |b: &Bound| runs_in(&forwards, b);
    let with_passes = |b: Vec<Bound>| -> Vec<Bound> {
        let mut out: Vec<Bound> = Vec::with_capacity(b.len());
        let mut joins: Option<u32> = None;
        let others_forward = b.iter().skip(1).any(|s| s.3 && forwards_in(s) > 0);
        for (k, &(_, first, last, complete)) in b.iter().enumerate() {
            let first = joins.take().unwrap_or(first);
            let part = (0, first, last, complete);
            if complete && passes_in(&part) == 0 && k > 0 {
                joins = Some(first);
                continue;
            }
            if complete && k == 0 && (passes_in(&part) == 0 || (others_forward && forwards_in(&part) == 0)) {
                out.push((0, first, last, false));
                continue;
            }
            out.push(part);
        }
        if let Some(first) = joins {
            out.push((0, first, events - 1, false));
        }
        numbered(out)
    };
    // Every complete step but the first holds as many backward passes as the others, and the
    // first no more (the recording may start inside it).
    let same_passes = |b: &[Bound]| {
        let counts: Vec<usize> = b.iter().filter(|s| s.3).map(passes_in).collect();
        let rest = counts.get(1).copied();
        rest.is_none_or(|n| counts[1..].iter().all(|&m| m == n) && counts[0] <= n)
    };
    let holds = |b: &[Bound]| {
        let most = most_in_a_step(b);
        b.iter().filter(|s| s.3).skip(1).all(|s| passes_in(s) > 0) && b.iter().filter(|s| !s.3).all(|s| passes_in(s) <= most)
    };
    // Where nothing at all marks the later steps (the optimizer allocates in its first step only
    // and the gradients are zeroed in place), the steps after the first repeat its backward
    // passes: the rest, holding at least as many, is divided after every as many passes, at the
    // forward pass that follows (a pipeline stage's micro-batches, whose optimizer step leaves no
    // event after the first). A last part with fewer passes stays partial.
    let repeat_first_step = |b: &[Bound]| -> Option<Vec<Bound>> {
        let [first, rest] = b else { return None };
        let k = passes_in(first);
        if !first.3 || rest.3 || k == 0 || passes_in(rest) < k {
            return None;
        }
        let inside = &passes[passes.partition_point(|&p| p < rest.1)..passes.partition_point(|&p| p <= rest.2)];
        let mut out = vec![*first];
        let mut start = rest.1;
        for group in inside.chunks(k).filter(|g| g.len() == k) {
            if start > rest.2 {
                break;
            }
            // The forward pass after the group's last backward pass, and after the step so far
            // (never an empty step).
            let after = (*group.last().expect("a whole group")).max(start);
            let next = forwards.get(forwards.partition_point(|&f| f <= after)).copied().filter(|&f| f <= rest.2);
            match next {
                Some(cut) => {
                    out.push((0, start, cut - 1, true));
                    start = cut;
                }
                None => {
                    out.push((0, start, rest.2, true));
                    start = rest.2 + 1;
                }
            }
        }
        if start <= rest.2 {
            out.push((0, start, rest.2, false));
        }
        Some(numbered(out))
    };
    // Set where the steps after the first are inferred from its backward passes.
    let inferred = std::cell::Cell::new(false);
    let by_optimizer = || -> Option<Vec<Bound>> {
        match stepping.len() {
            0 if !every_run.is_empty() => {
                let mut b = with_passes(split_after(&every_run, events));
                last_step_too(&mut b);
                Some(b)
            }
            0 => None,
            1 => {
                let by_stepping = split_after(&stepping, events);
                if holds(&by_stepping) {
                    return Some(with_passes(by_stepping));
                }
                let by_every_run = split_after(&every_run, events);
                if holds(&by_every_run) {
                    let mut b = with_passes(by_every_run);
                    last_step_too(&mut b);
                    return Some(b);
                }
                // No optimizer run after the one that allocated, which ended a step with a
                // backward pass: nothing tells a step that leaves no event from a micro-batch of
                // gradient accumulation, so the run divides as it is. (A run before any backward
                // pass, as an optimizer's state made at construction by a step, ends no training
                // step.)
                let last = optimizer.last().is_some_and(|r| r.last == stepping[0]);
                if !last || by_stepping.first().is_none_or(|s| passes_in(s) == 0) {
                    return None;
                }
                let b = with_passes(by_stepping);
                match repeat_first_step(&b) {
                    Some(repeated) => {
                        inferred.set(true);
                        Some(repeated)
                    }
                    None => Some(b),
                }
            }
            _ => {
                let by_stepping = with_passes(split_after(&stepping, events));
                // Iterations whose optimizer step was skipped (GradScaler on an overflow) still
                // run zero_grad: where the steps the allocating runs end hold unequal numbers of
                // backward passes and those every run ends hold one number, every run divides.
                if !same_passes(&by_stepping) && every_run.len() > stepping.len() {
                    let mut by_every_run = with_passes(split_after(&every_run, events));
                    last_step_too(&mut by_every_run);
                    if same_passes(&by_every_run) && holds(&by_every_run) {
                        return Some(by_every_run);
                    }
                }
                Some(by_stepping)
            }
        }
    };
    // Optimizer runs none of which ends a step with a backward pass divide nothing.
    if let Some(b) = by_optimizer().filter(|b| b.iter().any(|s| s.3)) {
        let source = if inferred.get() {
            "the first optimizer step and its count of backward passes, the later steps leaving no event"
        } else {
            "optimizer steps"
        };
        return (Some(source), b);
    }
    // Without optimizer runs that divide them: a step starts with each forward pass that follows
    // a backward pass.
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
    (None, Vec::new())
}

/// A step an allocation failed in ends where the program starts again after the failure (a
/// retry with a smaller batch, the next batch after a skipped one): at the first set-up, data or
/// forward run after the run of the out-of-memory event, when that is inside the step. Without
/// it the failed attempt and the step that followed it read as one step. Steps are renumbered.
fn split_at_failures(bounds: Vec<Bound>, ooms: &[u32], phases: &DevicePhases, d: &DeviceReplay) -> Vec<Bound> {
    // Where the program starts again after the OOM at `oom`, inside the step that holds it
    // (`last` its last event): none where it recovered before that.
    let again = |oom: u32, last: u32| {
        let after = phases.run_of(oom)? + 1;
        let run = phases.runs[after..]
            .iter()
            .take_while(|r| r.first <= last)
            .find(|r| matches!(r.phase, Phase::Setup | Phase::Data | Phase::Forward))?;
        (!recovers(d, phases, oom, run.first - 1)).then_some(run.first)
    };
    let mut cut_any = false;
    let mut out: Vec<Bound> = Vec::with_capacity(bounds.len());
    for &(n, mut first, last, complete) in &bounds {
        let inside = &ooms[ooms.partition_point(|&o| o < first)..ooms.partition_point(|&o| o <= last)];
        let mut cuts: Vec<u32> = inside.iter().filter_map(|&o| again(o, last)).filter(|&c| c > first).collect();
        cuts.dedup();
        for cut in cuts {
            if cut > first {
                out.push((n, first, cut - 1, false));
                first = cut;
                cut_any = true;
            }
        }
        out.push((n, first, last, complete));
    }
    if !cut_any {
        return bounds;
    }
    numbered(out)
}

/// Whether the phase the allocation at `oom` failed in allocates again after it, up to `end`:
/// the program recovered (a fallback to smaller chunks, an optimizer step run again another
/// way). One pass over the phase's runs in that span.
fn recovers(d: &DeviceReplay, phases: &DevicePhases, oom: u32, end: u32) -> bool {
    let failed_in = phases.phase(oom);
    let Some(from) = phases.run_of(oom) else { return false };
    phases.runs[from..].iter().take_while(|r| r.first <= end).filter(|r| r.phase == failed_in).any(|r| {
        let (a, b) = (r.first.max(oom + 1), r.last.min(end));
        a <= b && d.allocates_in(a, b)
    })
}

/// The steps numbered 1, 2, … in order (after some were joined, divided or split).
fn numbered(steps: Vec<Bound>) -> Vec<Bound> {
    steps.into_iter().enumerate().map(|(k, (_, first, last, complete))| (k as i64 + 1, first, last, complete)).collect()
}

/// How many of the runs starting at `starts` (sorted) start inside the step `b`.
fn runs_in(starts: &[u32], &(_, first, last, _): &Bound) -> usize {
    starts.partition_point(|&p| p <= last) - starts.partition_point(|&p| p < first)
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

fn measure(d: &DeviceReplay, phases: &DevicePhases, bounds: &[Bound], ooms: &[u32]) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    for &(step, first, last, complete) in bounds {
        // A step an allocation failed in did not finish, even where an optimizer run ends it
        // (Adam's first step making its state is where many runs end).
        let oom_event = ooms.get(ooms.partition_point(|&o| o < first)).copied().filter(|&o| o <= last);
        // ... unless the program recovered inside it: the phase the allocation failed in
        // allocates again later in the step (a fallback to smaller chunks, an optimizer step run
        // again another way).
        let recovered = oom_event.is_some_and(|o| recovers(d, phases, o, last));
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
            complete: complete && (oom_event.is_none() || recovered),
            oom_event,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimizer_ends_split_steps_and_keep_the_partial_tail() {
        assert_eq!(split_after(&[9, 19], 25), vec![(1, 0, 9, true), (2, 10, 19, true), (3, 20, 24, false)]);
        assert_eq!(split_after(&[24], 25), vec![(1, 0, 24, true)]);
    }
}
