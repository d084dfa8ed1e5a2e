//! The category of every block lifetime: the first rule whose frame patterns, allocation phase
//! and lifetime condition all hold.

use super::phases::DevicePhases;
use super::rules::{FrameSource, LifetimeRule, Phase, RuleSet};
use crate::model::{DeviceTrace, Interner};
use crate::replay::{DeviceReplay, StackSource};

/// Rule index of a block no rule matched.
pub const NO_RULE: u8 = u8::MAX;

/// For each stack, the rules whose `file`/`function` patterns match one of its frames (bit i =
/// rule i). Frames are tested once each, stacks combine their frames' bits; a `skip_wrappers`
/// rule's bit counts only from frames inside (innermost of) the stack's first module frame.
pub fn stack_matches(interner: &Interner, rules: &RuleSet) -> Vec<u128> {
    let pattern_rules: Vec<usize> = (0..rules.rules.len()).filter(|&i| rules.rules[i].has_frame_pattern()).collect();
    let by_frame: Vec<u128> = interner
        .frames
        .iter()
        .map(|f| {
            let file = crate::frames::posix_path(&f.filename);
            pattern_rules.iter().filter(|&&i| rules.rules[i].matches_frame(&file, &f.name)).fold(0u128, |m, &i| m | (1 << i))
        })
        .collect();
    let wrapper_rules = (0..rules.rules.len()).filter(|&i| rules.rules[i].skip_wrappers).fold(0u128, |m, i| m | (1 << i));
    let module: Vec<bool> = if wrapper_rules == 0 { Vec::new() } else { interner.frames.iter().map(super::phases::runs_module).collect() };
    interner
        .stacks
        .iter()
        .map(|st| {
            let mut bits = 0u128;
            let mut counted = u128::MAX;
            for &f in st {
                bits |= by_frame.get(f as usize).copied().unwrap_or(0) & counted;
                if module.get(f as usize).copied().unwrap_or(false) {
                    counted = !wrapper_rules;
                }
            }
            bits
        })
        .collect()
}

/// Rules whose patterns match a `forward_frames` text (one `file:line:name`-ish line per frame:
/// each line is tried as both file and function).
fn forward_matches(text: &str, rules: &RuleSet) -> u128 {
    let mut m = 0u128;
    for (i, r) in
        rules.rules.iter().enumerate().filter(|(_, r)| r.has_frame_pattern() && matches!(r.frames, FrameSource::Forward | FrameSource::Any))
    {
        if text.lines().any(|l| r.matches_frame(l, l)) {
            m |= 1 << i;
        }
    }
    m
}

/// Category and deciding rule of each lifetime of one device, as parallel arrays.
pub struct DeviceCategories {
    pub category: Vec<u8>,
    pub rule: Vec<u8>,
}

/// What each stack says, for [`classify`]: the rules whose patterns match one of its frames
/// ([`stack_matches`]) and the phase its frames name (`phases::stack_phases`).
pub struct Stacks<'a> {
    pub rules: &'a [u128],
    pub phases: &'a [Option<Phase>],
}

pub fn classify(
    d: &DeviceReplay,
    trace: Option<&DeviceTrace>,
    phases: &DevicePhases,
    rules: &RuleSet,
    stacks: &Stacks,
) -> DeviceCategories {
    let by_stack = stacks.rules;
    let backward_starts: Vec<u32> = phases.runs.iter().filter(|r| r.phase == Phase::Backward).map(|r| r.first).collect();
    let step_ends = optimizer_step_ends(phases);
    let ooms: Vec<u32> = trace.map(|t| t.oom_events()).unwrap_or_default();
    let no_forward_rules = !rules.rules.iter().any(|r| matches!(r.frames, FrameSource::Forward | FrameSource::Any));
    let unknown = rules.unknown();
    let grown = match rules.rules.iter().any(|r| r.lifetime == LifetimeRule::GrownByCopy) {
        true => {
            let passes: Vec<u32> =
                phases.runs.iter().filter(|r| matches!(r.phase, Phase::Backward | Phase::Optimizer)).map(|r| r.first).collect();
            super::grown_by_copy::grown_by_copy(d, &passes)
        }
        false => Vec::new(),
    };
    let mut out = DeviceCategories { category: Vec::with_capacity(d.lifetimes.len()), rule: Vec::with_capacity(d.lifetimes.len()) };
    for (index, l) in d.lifetimes.iter().enumerate() {
        // A free's stack says who freed the block, not what it is.
        let stack = l.stack().filter(|_| l.stack_source != StackSource::Free);
        let stack_bits = stack.and_then(|s| by_stack.get(s as usize).copied()).unwrap_or(0);
        let alloc = l.alloc_event();
        let forward_bits = match (no_forward_rules, alloc, trace) {
            (false, Some(e), Some(t)) => t
                .events
                .get(e as usize)
                .and_then(|ev| t.extra(ev))
                .and_then(|x| x.forward_frames.as_deref())
                .map_or(0, |f| forward_matches(f, rules)),
            _ => 0,
        };
        let freed = l.free_requested_event().or(l.free_completed_event());
        let free_bits = l
            .free_requested_event()
            .and_then(|e| trace.and_then(|t| t.events.get(e as usize)))
            .and_then(|ev| ev.stack())
            .and_then(|s| by_stack.get(s as usize).copied())
            .unwrap_or(0);
        // A block allocated before the window has no event: its stack (from the dump) names the
        // phase it was allocated in, as an event's would (an optimizer's state made in an
        // earlier step).
        let phase = match alloc {
            Some(e) => Some(phases.phase(e)),
            None => stack.and_then(|s| stacks.phases.get(s as usize).copied().flatten()),
        };
        // The window may start inside the run such a block was allocated in (recording began
        // mid-pass): a block of that run's phase belongs to it.
        let alloc_run = match alloc {
            Some(e) => phases.run_of(e),
            None => phases.runs.first().filter(|r| phase == Some(r.phase)).map(|_| 0),
        };
        let free_run = freed.and_then(|e| phases.run_of(e));
        let holds = |rule: LifetimeRule| match rule {
            LifetimeRule::Any => true,
            LifetimeRule::BeforeWindow => alloc.is_none(),
            LifetimeRule::PairsWithGradient | LifetimeRule::Persistent | LifetimeRule::StartsCache => false,
            LifetimeRule::AtDump => alloc.is_some() && freed.is_none(),
            LifetimeRule::Kept => freed.is_none(),
            LifetimeRule::GrownByCopy => grown.get(index).copied().unwrap_or(false),
            LifetimeRule::AtOom => {
                let after = alloc.map_or(0, |a| ooms.partition_point(|&o| o <= a));
                ooms.get(after).is_some_and(|&o| freed.is_none_or(|f| f > o))
            }
            LifetimeRule::WithinPhase => alloc_run.is_some() && alloc_run == free_run,
            LifetimeRule::OutlivesPhase => alloc_run.is_none() || freed.is_none() || alloc_run != free_run,
            LifetimeRule::OutlivesSteps => match alloc {
                // A block a backward pass frees was saved for it, however many optimizer steps
                // ran meanwhile (one forward pass whose heads each step their own optimizer).
                Some(a) if phase == Some(Phase::Forward) && freed.is_none_or(|f| phases.phase(f) != Phase::Backward) => {
                    let after = step_ends.partition_point(|&e| e < a);
                    let before_free = freed.map_or(step_ends.len(), |f| step_ends.partition_point(|&e| e < f));
                    before_free.saturating_sub(after) >= OUTLIVES_STEPS
                }
                _ => false,
            },
            LifetimeRule::IntoBackward => match alloc {
                Some(a) if phase != Some(Phase::Backward) => {
                    let next = backward_starts.partition_point(|&s| s <= a);
                    backward_starts.get(next).is_some_and(|&s| freed.is_none_or(|f| f >= s))
                }
                _ => false,
            },
        };
        let found = rules.rules.iter().enumerate().find(|(i, r)| {
            let bit = 1u128 << i;
            let frames_ok = !r.has_frame_pattern()
                || match r.frames {
                    FrameSource::Stack => stack_bits & bit != 0,
                    FrameSource::Forward => forward_bits & bit != 0,
                    FrameSource::Free => free_bits & bit != 0,
                    FrameSource::Any => (stack_bits | forward_bits) & bit != 0,
                };
            frames_ok && r.fits_size(l.size) && r.phase.is_none_or(|p| phase == Some(p)) && holds(r.lifetime)
        });
        match found {
            Some((i, r)) => {
                out.category.push(r.category);
                out.rule.push(i as u8);
            }
            None => {
                out.category.push(unknown);
                out.rule.push(NO_RULE);
            }
        }
    }
    mark_cache_starts(d, rules, &mut out);
    pair_with_gradients(d, rules, &mut out);
    mark_persistent(d, rules, &mut out);
    out
}

/// Optimizer steps a forward pass's block must outlive to be kept by the program, not saved
/// for a backward pass (`LifetimeRule::OutlivesSteps`): a step's last output, reassigned in the
/// next step, outlives one; a GAN's generated batch, used by both optimizers' steps, two.
pub const OUTLIVES_STEPS: usize = 3;

/// Where each optimizer step ends: the last event of the optimizer runs after a backward pass
/// and before the next one (a step's update and the next step's zero_grad are one).
fn optimizer_step_ends(phases: &DevicePhases) -> Vec<u32> {
    let mut ends: Vec<u32> = Vec::new();
    let mut after_backward = false;
    for r in &phases.runs {
        match r.phase {
            Phase::Backward => after_backward = true,
            Phase::Optimizer if after_backward => {
                ends.push(r.last);
                after_backward = false;
            }
            Phase::Optimizer => {
                if let Some(last) = ends.last_mut() {
                    *last = r.last;
                }
            }
            _ => {}
        }
    }
    ends
}

/// Blocks a cache started as: the block the very next event after a block of the rule's
/// category was made frees, when it is older and no larger (a copy one token longer, or a
/// reordering of the same size) and no rule with frame patterns matched it
/// (`LifetimeRule::StartsCache`).
fn mark_cache_starts(d: &DeviceReplay, rules: &RuleSet, out: &mut DeviceCategories) {
    let Some((rule, r)) = rules.rules.iter().enumerate().find(|(_, r)| r.lifetime == LifetimeRule::StartsCache) else {
        return;
    };
    let generic = |k: usize| out.rule[k] == NO_RULE || !rules.rules[out.rule[k] as usize].has_frame_pattern();
    let mut starts = Vec::new();
    for (i, l) in d.lifetimes.iter().enumerate().filter(|(i, l)| out.category[*i] == r.category && !l.orphan) {
        let Some(made) = l.alloc_event() else { continue };
        let next = made as usize + 1;
        let Some(j) = d.event_lifetime.get(next).map(|&j| j as usize).filter(|&j| j < d.lifetimes.len() && j != i) else { continue };
        let a = &d.lifetimes[j];
        let frees_it = a.free_requested_event().or(a.free_completed_event()) == Some(next as u32);
        if frees_it
            && !a.orphan
            && a.alloc_event().is_none_or(|e| e < made)
            && a.size <= l.size
            && out.category[j] != r.category
            && generic(j)
        {
            starts.push(j);
        }
    }
    for j in starts {
        out.category[j] = r.category;
        out.rule[j] = rule as u8;
    }
}

/// The last pass: blocks still without a rule that were allocated before the window and never
/// freed in it take the `persistent` rule (a named guess: weights or state, not a certainty).
fn mark_persistent(d: &DeviceReplay, rules: &RuleSet, out: &mut DeviceCategories) {
    let Some((rule, r)) = rules.rules.iter().enumerate().find(|(_, r)| r.lifetime == LifetimeRule::Persistent) else {
        return;
    };
    // "Alive through the window" says something only where there is a window of events.
    if d.events < 2 {
        return;
    }
    for (i, l) in d.lifetimes.iter().enumerate() {
        let kept = l.free_requested_event().is_none() && l.free_completed_event().is_none();
        if out.rule[i] == NO_RULE && kept && !l.orphan && l.alloc_event().is_none() && r.phase.is_none() {
            out.category[i] = r.category;
            out.rule[i] = rule as u8;
        }
    }
}

/// The second pass: blocks no rule matched, kept through the window, paired one to one by size
/// with the gradients found in the first pass (a parameter and its .grad have the same size).
fn pair_with_gradients(d: &DeviceReplay, rules: &RuleSet, out: &mut DeviceCategories) {
    let Some((rule, r)) = rules.rules.iter().enumerate().find(|(_, r)| r.lifetime == LifetimeRule::PairsWithGradient) else {
        return;
    };
    let Some(gradient) = rules.categories.iter().position(|c| c == "gradient").map(|g| g as u8) else {
        return;
    };
    let parameter = rules.categories.iter().position(|c| c == "parameter").map(|p| p as u8);
    // A parameter has one gradient at a time, whatever the steps: the gradients of a size alive
    // at once (not every step's) say how many parameters of that size there are, and parameters
    // other rules already found take their places first (an optimizer's state is as large as
    // its parameter, and would take them otherwise).
    let mut unpaired = most_alive_at_once(d, |i| out.category[i] == gradient);
    for (i, l) in d.lifetimes.iter().enumerate() {
        let kept = l.free_requested_event().is_none() && l.free_completed_event().is_none();
        if kept && !l.orphan && parameter == Some(out.category[i]) {
            if let Some(n) = unpaired.get_mut(&l.size) {
                *n = n.saturating_sub(1);
            }
        }
    }
    for (i, l) in d.lifetimes.iter().enumerate() {
        let kept = l.free_requested_event().is_none() && l.free_completed_event().is_none();
        if out.rule[i] != NO_RULE || !kept || l.orphan || r.phase.is_some() {
            continue;
        }
        if let Some(n) = unpaired.get_mut(&l.size).filter(|n| **n > 0) {
            *n -= 1;
            out.category[i] = r.category;
            out.rule[i] = rule as u8;
        }
    }
}

/// For each block size, the most lifetimes that `pick` selects alive at one time (allocated at or
/// before an event and not freed by it; a block from before the window is alive from its start).
fn most_alive_at_once(d: &DeviceReplay, pick: impl Fn(usize) -> bool) -> std::collections::HashMap<u64, u32> {
    // (size, event, +1 at an allocation / -1 at a free): frees sort before allocations of the
    // same event, so a block replaced in place is not counted twice.
    let mut changes: Vec<(u64, u32, i8)> = Vec::new();
    for (_, l) in d.lifetimes.iter().enumerate().filter(|(i, l)| !l.orphan && pick(*i)) {
        changes.push((l.size, l.alloc_event().unwrap_or(0), 1));
        if let Some(f) = l.free_requested_event().or(l.free_completed_event()) {
            changes.push((l.size, f, -1));
        }
    }
    changes.sort_unstable();
    let mut most: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
    let mut alive = 0i64;
    let mut size = None;
    for (s, _, delta) in changes {
        if size != Some(s) {
            (size, alive) = (Some(s), 0);
        }
        alive += i64::from(delta);
        let m = most.entry(s).or_default();
        *m = (*m).max(alive.max(0) as u32);
    }
    most
}
