//! Growth across steps: whether the program keeps memory from step to step (the strongest leak
//! signal there is), told apart from steps that each do more (longer sequences, larger batches:
//! each step frees what the one before kept, and keeps more).

use super::steps::Step;
use crate::fasthash::FastMap;
use crate::format;
use crate::replay::DeviceReplay;
use crate::semantics::{DevicePhases, Phase};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Growth {
    pub verdict: GrowthVerdict,
    /// The verdict is a leak signal (`growing`, `kept_across_steps`): what the findings and the
    /// Leaks view raise.
    pub leak_signal: bool,
    /// The typical (median) change of the allocated bytes from one step's end to the next over
    /// the steps compared.
    pub bytes_per_step: Option<i64>,
    /// The steps compared (the complete ones after the first, which warms up).
    pub steps_compared: Vec<i64>,
    /// What the compared steps keep to the end of the last one (None with fewer than three).
    pub kept: Option<KeptAcrossSteps>,
    pub text: String,
}

/// `growing`: each step ends higher, and not because each step does more; `kept_across_steps`:
/// the ends do not rise every step (or rise because each step does more), but blocks from steps
/// in both halves of those compared are still held;
/// `rising_working_set`: each step ends higher but keeps nothing from the steps before (the
/// steps grow); `shrinking`, `stable`, `too_few_steps`, `no_steps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum GrowthVerdict {
    Growing,
    KeptAcrossSteps,
    RisingWorkingSet,
    Shrinking,
    Stable,
    TooFewSteps,
    NoSteps,
}

impl GrowthVerdict {
    pub fn leak_signal(self) -> bool {
        matches!(self, GrowthVerdict::Growing | GrowthVerdict::KeptAcrossSteps)
    }
}

/// Blocks allocated in a compared step two or more steps before the last compared one and not
/// freed by that step's end: what the program keeps across steps. Optimizer and set-up
/// allocations are left out: what outlives them is state made once per parameter or model, even
/// lazily in a later step (an expert's optimizer state the first time it is routed to, a model
/// built between steps), not kept step after step.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct KeptAcrossSteps {
    pub bytes: i64,
    pub blocks: i64,
    /// The steps that allocated them, ascending.
    pub steps: Vec<i64>,
    /// The step at whose end they are still held (the last compared).
    pub held_at_step: i64,
    /// The stack that allocated most of them, and its bytes.
    pub top_stack_id: Option<i64>,
    pub top_stack_bytes: i64,
}

/// The longest period of steps taking turns the growth verdict looks for (optimizers in turn).
const MAX_PERIOD: usize = 3;

/// How much more a step must allocate than the one before, against how much higher it ends,
/// before rising ends read as growing steps rather than as memory kept.
const WORKING_SET_FACTOR: i64 = 2;

pub fn growth(d: &DeviceReplay, phases: &DevicePhases, steps: &[Step]) -> Growth {
    let complete: Vec<&Step> = steps.iter().filter(|s| s.complete).collect();
    if steps.is_empty() {
        return Growth {
            verdict: GrowthVerdict::NoSteps,
            leak_signal: false,
            bytes_per_step: None,
            steps_compared: Vec::new(),
            kept: None,
            text: "No steps: the trace has no ProfilerStep ranges, optimizer steps or backward passes to divide it.".into(),
        };
    }
    // The first step allocates the optimizer state and warms the caches: with four or more
    // complete steps it is left out. A trend needs two changes (three steps) at least.
    let compared: Vec<&Step> = if complete.len() >= 4 { complete[1..].to_vec() } else { complete.clone() };
    if compared.len() < 3 {
        return Growth {
            verdict: GrowthVerdict::TooFewSteps,
            leak_signal: false,
            bytes_per_step: None,
            steps_compared: compared.iter().map(|s| s.step).collect(),
            kept: None,
            text: format!(
                "{} complete step{} in the window: a trend across steps needs at least three.",
                complete.len(),
                if complete.len() == 1 { "" } else { "s" }
            ),
        };
    }
    let (kept, volume) = kept_and_volume(d, phases, &compared);
    // Changes from each step's end to the end `lag` steps later, and of the bytes each step
    // allocates.
    let changes = |lag: usize| -> Vec<i64> { compared.windows(lag + 1).map(|w| w[lag].end_allocated - w[0].end_allocated).collect() };
    let volume_change = |lag: usize| median_low(&volume.windows(lag + 1).map(|w| w[lag] - w[0]).collect::<Vec<_>>()) / lag as i64;
    let diffs = changes(1);
    // The typical change, not the mean: one step's end can hold more than the others' (the last
    // step's gradients, when zero_grad at the top of the next iteration follows the optimizer
    // step with nothing between, ends the others' runs but never the last's).
    let mut per = median_low(&diffs);
    let last = compared.last().expect("three steps or more");
    let span = format!("steps {}–{}", compared[0].step, last.step);
    // Kept from steps in both halves of those compared: blocks that keep arriving, where state
    // made lazily (a cache entry per new shape, a buffer filled up to its size, an expert's
    // gradient the first time it is routed to) comes early and stops.
    let middle = compared[(compared.len() - 1) / 2].step;
    let piling_up = kept.steps.first().is_some_and(|&s| s <= middle) && kept.steps.last().is_some_and(|&s| s > middle);
    // Ends that rise only every second or third step (a list appended to every few steps, one
    // of several optimizers taking turns), three times at least, with kept blocks piling up:
    // ends alone rise so when state is made once and the last step ends holding its gradients.
    let period = (2..=MAX_PERIOD).find(|&lag| {
        let c = changes(lag);
        c.len() >= 3 && c.iter().all(|&d| d > 0)
    });
    let rising = if diffs.iter().all(|&d| d > 0) { Some(1) } else { period.filter(|_| piling_up && !diffs.iter().all(|&d| d < 0)) };
    let ends = compared.iter().map(|s| s.end_allocated);
    let spread = ends.clone().max().unwrap_or(0) - ends.min().unwrap_or(0);
    let kept_text = |head: String, joint: &str, tail: &str| {
        format!(
            "{head}{joint} {} ({} blocks) allocated in {} is still held at the end of step {}: memory kept across steps{tail} (a leak signal).",
            format::bytes(kept.bytes),
            format::count(kept.blocks),
            steps_named(&kept.steps),
            last.step
        )
    };
    let (verdict, text) = if let Some(lag) = rising {
        per = median_low(&changes(lag)) / lag as i64;
        let more = volume_change(lag);
        // The steps keep less than one step's rise and each allocates more: they grow.
        let steps_grow = kept.bytes < per && more >= WORKING_SET_FACTOR * per;
        if lag > 1 {
            (
                GrowthVerdict::Growing,
                kept_text(
                    format!("Allocated at the end of every {} step rises over {span}", if lag == 2 { "second" } else { "third" }),
                    ":",
                    "",
                ),
            )
        } else if steps_grow && piling_up {
            // Growing steps hide a small leak in the rise; the kept blocks show it.
            (
                GrowthVerdict::KeptAcrossSteps,
                kept_text(
                    format!(
                        "Allocated at the end of each step grows by {} per step over {span}, most of it because each step allocates {} more than the one before",
                        format::bytes(per),
                        format::bytes(more)
                    ),
                    ", but",
                    "",
                ),
            )
        } else if steps_grow {
            (
                GrowthVerdict::RisingWorkingSet,
                format!(
                    "Allocated at the end of each step grows by {} per step over {span}, but the steps keep nothing from each other: of what steps {}–{} allocated, {} is still held at the end of step {}, and each step allocates {} more than the one before. The steps grow (longer sequences, larger batches); memory is not kept across them.",
                    format::bytes(per),
                    compared[0].step,
                    compared[compared.len() - 3].step,
                    if kept.bytes == 0 { "nothing".to_string() } else { format!("only {}", format::bytes(kept.bytes)) },
                    last.step,
                    format::bytes(more)
                ),
            )
        } else {
            (
                GrowthVerdict::Growing,
                format!(
                    "Allocated at the end of each step grows by {} per step over {span}: memory is kept across steps (a leak signal).",
                    format::bytes(per)
                ),
            )
        }
    } else if diffs.iter().all(|&d| d < 0) {
        (GrowthVerdict::Shrinking, format!("Allocated at the end of each step shrinks by {} per step over {span}.", format::bytes(-per)))
    } else {
        let stable = format!("Allocated at the end of each step is stable over {span} (within {})", format::bytes(spread));
        if piling_up {
            (GrowthVerdict::KeptAcrossSteps, kept_text(stable, ", but", ", not added every step"))
        } else if kept.bytes > 0
            && spread > 0
            && 2 * kept.bytes >= spread
            && kept.steps.last().is_some_and(|&k| k < compared[compared.len() - 3].step)
        {
            // What the early steps keep makes most of the spread: state filled early, then
            // no more (a cache per new shape, a buffer filled to its size).
            (
                GrowthVerdict::Stable,
                format!(
                    "{stable}: {} allocated in {} is still held at the end of step {}, and nothing kept comes from {}: state made and then kept (a cache, a buffer filled to its size, a copy), not growth.",
                    format::bytes(kept.bytes),
                    steps_named(&kept.steps),
                    last.step,
                    step_span(kept.steps.last().copied().unwrap_or(last.step) + 1, compared[compared.len() - 3].step)
                ),
            )
        } else {
            (GrowthVerdict::Stable, format!("{stable}."))
        }
    };
    Growth {
        verdict,
        leak_signal: verdict.leak_signal(),
        bytes_per_step: Some(per),
        steps_compared: compared.iter().map(|s| s.step).collect(),
        kept: Some(kept),
        text,
    }
}

/// What the compared steps keep to the end of the last one, and the bytes each allocates.
fn kept_and_volume(d: &DeviceReplay, phases: &DevicePhases, compared: &[&Step]) -> (KeptAcrossSteps, Vec<i64>) {
    let n = compared.len();
    let held_at = compared[n - 1];
    let mut kept = KeptAcrossSteps { held_at_step: held_at.step, ..Default::default() };
    let mut volume = vec![0i64; n];
    let mut kept_in = vec![false; n];
    let mut by_stack: FastMap<Option<u32>, i64> = FastMap::default();
    for lt in d.lifetimes.iter().filter(|lt| !lt.orphan) {
        let Some(a) = lt.alloc_event() else { continue };
        // The compared step holding `a`, if any (steps are sorted and disjoint).
        let Some(k) = compared.partition_point(|s| s.first_event <= a).checked_sub(1) else { continue };
        if a > compared[k].last_event {
            continue;
        }
        let size = lt.size as i64;
        volume[k] += size;
        let freed = lt.free_requested_event().or(lt.free_completed_event());
        if k + 2 < n && freed.is_none_or(|f| f > held_at.last_event) && !matches!(phases.phase(a), Phase::Optimizer | Phase::Setup) {
            kept.bytes += size;
            kept.blocks += 1;
            kept_in[k] = true;
            *by_stack.entry(lt.stack()).or_default() += size;
        }
    }
    kept.steps = compared.iter().zip(&kept_in).filter(|(_, &k)| k).map(|(s, _)| s.step).collect();
    // The largest stack; ties to the lowest id, so the answer does not depend on hashing.
    if let Some((stack, bytes)) = by_stack.into_iter().max_by_key(|&(s, b)| (b, std::cmp::Reverse(s))) {
        kept.top_stack_id = stack.map(i64::from);
        kept.top_stack_bytes = bytes;
    }
    (kept, volume)
}

/// "6 and 11", "2, 3 and 5", or the first few and how many.
fn step_list(steps: &[i64]) -> String {
    const SHOWN: usize = 5;
    let names: Vec<String> = steps.iter().take(SHOWN).map(|s| s.to_string()).collect();
    match steps.len() {
        0 => String::new(),
        1 => names[0].clone(),
        n if n <= SHOWN => format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
        n => format!("{}, … ({n} steps)", names.join(", ")),
    }
}

/// "step 6", "steps 6 and 11".
fn steps_named(steps: &[i64]) -> String {
    format!("{} {}", if steps.len() == 1 { "step" } else { "steps" }, step_list(steps))
}

/// "step 6", "steps 6–9".
fn step_span(first: i64, last: i64) -> String {
    if first == last {
        format!("step {first}")
    } else {
        format!("steps {first}–{last}")
    }
}

/// The middle value (the lower of the two middle ones): always one of the values.
fn median_low(values: &[i64]) -> i64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_growth_per_step_is_the_typical_change_not_one_outlier() {
        assert_eq!(median_low(&[512, 512, 512, 512 + (12 << 20)]), 512);
        assert_eq!(median_low(&[3, 1, 2]), 2);
        assert_eq!(median_low(&[]), 0);
    }

    #[test]
    fn the_docs_state_the_working_set_factor() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/categories.md")).unwrap();
        let said = ["", "once", "twice", "three times"][WORKING_SET_FACTOR as usize];
        assert!(doc.contains(&format!("allocates at least {said} its rise")), "docs/categories.md");
    }

    #[test]
    fn step_lists_read_as_a_sentence() {
        assert_eq!(step_list(&[6]), "6");
        assert_eq!(step_list(&[6, 11]), "6 and 11");
        assert_eq!(step_list(&[2, 3, 5]), "2, 3 and 5");
        assert_eq!(step_list(&[1, 2, 3, 4, 5, 6, 7]), "1, 2, 3, 4, 5, … (7 steps)");
    }
}
