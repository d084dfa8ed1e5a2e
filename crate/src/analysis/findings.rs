//! Findings: each is a problem, the evidence (numbers and where they come from), and a
//! suggestion with a priority, a category and the expected effect.

use super::categories::CategoryBreakdown;
use super::fragment::Fragmentation;
use super::leak::LeakAnalysis;
use super::oom::OomAnalysis;
use super::overview::DeviceOverview;
use super::peak::PeakAnalysis;
use super::step_growth::GrowthVerdict;
use super::steps::StepsAnalysis;
use crate::format::{bytes, count, event};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Finding {
    pub device: i64,
    /// high | medium | low | info
    pub priority: String,
    /// consistency | oom | leak | fragmentation | peak | history
    pub category: String,
    pub title: String,
    pub evidence: String,
    pub suggestion: String,
    pub expected_effect: String,
}

impl Finding {
    fn new(device: i64, priority: &str, category: &str, title: String, evidence: String, suggestion: &str, effect: String) -> Finding {
        let (priority, category, suggestion) = (priority.into(), category.into(), suggestion.into());
        Finding { device, priority, category, title, evidence, suggestion, expected_effect: effect }
    }
}

/// The program finding's title: the kind in a few words.
fn program_title(p: &super::steps::Program) -> String {
    match p.kind.as_str() {
        "training_steps" => format!("The trace shows training: {} complete steps", p.training_steps),
        "one_training_step" => "The trace shows one training step".into(),
        "forward" => "The trace shows forward passes only (inference or evaluation)".into(),
        "model_build" => "The trace shows the model being built".into(),
        "dump_only" => "The snapshot holds the dump only".into(),
        _ => "What the program does is unknown from its frames".into(),
    }
}

/// What a device's analyses say, as findings. `sem`: categories at the peak and the steps.
pub fn findings(
    ov: &DeviceOverview,
    peak: Option<&PeakAnalysis>,
    frag: &Fragmentation,
    leak: Option<&LeakAnalysis>,
    oom: &OomAnalysis,
    sem: (Option<&CategoryBreakdown>, Option<&StepsAnalysis>, Option<&super::held_gradients::HeldGradients>),
    what_if: Option<&crate::simulate::WhatIf>,
) -> Vec<Finding> {
    let d = ov.device;
    let (cats, steps, held) = sem;
    let mut f = Vec::new();
    let mut add = |priority: &str, category: &str, title: String, evidence: String, suggestion: &str, effect: String| {
        f.push(Finding::new(d, priority, category, title, evidence, suggestion, effect))
    };
    if !ov.consistency.ok {
        let n = ov.consistency.issues.len() as u64 + ov.consistency.more_issues;
        let first =
            ov.consistency.issues.first().map(|i| format!("first at {}: {}", event(i.event.map(i64::from)), i.message)).unwrap_or_default();
        // Allocations whose frees the trace lacks are the one inconsistency with a known cause
        // (a trace cut short before the dump, or `skip_actions`): say so, not only that they
        // do not fit.
        let frees_missing =
            ov.consistency.more_issues == 0 && ov.consistency.issues.iter().all(|i| i.code == crate::codes::IssueCode::AllocUnmatched);
        let (title, suggestion) = if frees_missing {
            (
                format!("The trace lacks the frees of {n} allocations that the dump no longer has"),
                "the trace was cut short before the dump or recorded with skip_actions: the figures count a block whose address is not used again as allocated to the trace's end; record without skip_actions and dump right after the code of interest for exact figures",
            )
        } else {
            (
                format!("{n} events do not fit the allocator state"),
                "treat figures between the first issue and the dump as approximate; check for skip_actions, edited traces or cudaMallocAsync",
            )
        };
        add("high", "consistency", title, first, suggestion, "knowing which numbers to trust".into());
    }
    for o in &oom.ooms {
        let simulated = what_if.and_then(|w| w.ooms.iter().find(|x| x.event as i64 == o.event).map(|x| (w, x)));
        // When the simulation serves the request under the toggled setting, that is the first
        // thing to try, whatever the verdict from the numbers alone.
        // (Not where memory grows until it runs out, or the working set is at the device's
        // limit: a setting serves that one request, not the program.)
        let suggestion = match simulated {
            Some((w, x)) if !x.happens && o.verdict != "growth" && !o.at_the_limit() => {
                format!("set PYTORCH_CUDA_ALLOC_CONF={} (simulated: this request is served)", w.conf)
            }
            _ => o.suggestions.first().cloned().unwrap_or_default(),
        };
        add(
            "high",
            "oom",
            format!("Out of memory at event {} ({})", count(o.event), o.verdict.replace('_', " ")),
            format!("{}{}", o.explanation, simulated.map(|(_, x)| format!(" {}", x.sentence)).unwrap_or_default()),
            &suggestion,
            format!("the {} request fits", bytes(o.requested)),
        );
    }
    let program = steps.map(|s| &s.program);
    let kind = program.map_or("unknown", |p| p.kind.as_str());
    if let Some(p) = program.filter(|_| ov.events > 0) {
        add("info", "program", program_title(p), p.text.clone(), "", "".into());
    }
    for x in leak_findings(ov, leak, steps) {
        add(&x.priority, &x.category, x.title, x.evidence, &x.suggestion, x.expected_effect);
    }
    if let Some(h) = held.filter(|h| ov.peaks.allocated.bytes > 0 && h.bytes as f64 >= 0.05 * ov.peaks.allocated.bytes as f64) {
        add(
            "medium",
            "peak",
            format!("{} of gradients from the step before are held through the forward pass at the peak", bytes(h.bytes as i64)),
            format!(
                "{} gradient blocks are alive at the allocated peak (event {}, in a forward pass) and freed at events {}–{}, after it and before the backward pass: the previous step's .grad, released by zero_grad after the forward",
                count(h.blocks as i64),
                count(h.peak_event as i64),
                count(h.freed_from as i64),
                count(h.freed_to as i64)
            ),
            "call optimizer.zero_grad(set_to_none=True) before the forward pass (or right after optimizer.step())",
            format!("the peak drops by up to {}", bytes(h.bytes as i64)),
        );
    }
    // What the simulated expandable-segments toggle says, when it was simulated: a finding that
    // would advise it must not contradict it.
    let expandable = what_if.filter(|w| w.conf == "expandable_segments:True");
    let expandable_helps = expandable.is_none_or(|w| w.change < 0 || w.ooms.iter().any(|o| !o.happens));
    if let Some(at) = frag.at.iter().find(|a| a.label == "allocated_peak").or(frag.at.first()) {
        if at.reserved > 0 && at.free_bytes as f64 > 0.2 * at.reserved as f64 && at.fragmentation > 0.5 {
            add(
                "medium",
                "fragmentation",
                format!(
                    "{:.0}% of reserved memory is free but split into {} pieces",
                    100.0 * at.free_bytes as f64 / at.reserved as f64,
                    at.free_blocks
                ),
                format!("at {}: {} free, largest piece {}", at.label.replace('_', " "), bytes(at.free_bytes), bytes(at.largest_free)),
                if what_if.is_some_and(|w| w.conf == "expandable_segments:False") {
                    "the recording already uses expandable segments: the free pieces lie between live blocks; free or reuse the long-lived blocks that split them"
                } else if !expandable_helps {
                    "expandable segments would not lower the reserved peak here (simulated): free or reuse the long-lived blocks that split the free memory"
                } else {
                    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                },
                match expandable {
                    Some(w) => w.sentence.clone(),
                    None => format!("up to {} less reserved memory", bytes(at.free_bytes - at.largest_free)),
                },
            );
        }
        if at.allocated > 0 && at.rounding_waste as f64 > 0.05 * at.allocated as f64 {
            add(
                "low",
                "fragmentation",
                format!("{} lost to rounding", bytes(at.rounding_waste)),
                format!(
                    "{:.1}% of allocated bytes are rounding (block size − requested)",
                    100.0 * at.rounding_waste as f64 / at.allocated as f64
                ),
                "check roundup_power2_divisions and odd tensor sizes",
                format!("up to {}", bytes(at.rounding_waste)),
            );
        }
    }
    // The category finding is left out when the peak's largest site is that category's
    // largest site with about the same share: one fact, said once.
    let mut site_says_category = false;
    if let Some(p) = peak {
        // By the frame that names the stacks (one site may hold several stacks); memory from
        // before the window has no allocation site to advise about.
        if let Some(g) = p.by_top_frame.first().filter(|g| g.share > 0.4 && g.origin == "dynamic" && g.stack_id.is_some()) {
            // The site's category: the one that holds most of the site's bytes (at least half).
            let in_category =
                |x: &&super::categories::CategoryShare| x.top_sites.iter().find(|s| s.label == g.label).map_or(0, |s| s.bytes);
            let category = cats
                .and_then(|c| c.categories.iter().max_by_key(|x| (in_category(x), std::cmp::Reverse(x.category.clone()))))
                .filter(|x| 2 * in_category(x) >= g.bytes);
            let at = if p.at_dump { "the memory at the dump".to_string() } else { "the peak".to_string() };
            site_says_category = category.is_some_and(|c| {
                (c.share - g.share).abs() < 0.03 && cats.is_some_and(|cs| cs.categories.first().is_some_and(|t| t.category == c.category))
            });
            let named = category.filter(|c| c.category != "unknown").map_or(String::new(), |c| format!(" ({})", c.category));
            add(
                "medium",
                "peak",
                format!("One allocation site holds {:.0}% of {at}{named}", g.share * 100.0),
                format!("{} in {} blocks at {}: {}", bytes(g.bytes), count(g.blocks), event(p.event), g.label),
                match category {
                    Some(c) if c.category != "unknown" && c.category != "persistent" => super::categories::advice_for(c),
                    _ => "this site's tensors are the place to look: their shapes, dtype and how long they are kept",
                },
                format!("{} lower at most, if this site's memory goes", bytes(g.bytes)),
            );
        }
        if p.counters_at_event.reserved > 0 && p.reserved_minus_allocated as f64 > 0.25 * p.counters_at_event.reserved as f64 {
            add(
                "low",
                "peak",
                format!(
                    "{} reserved but not allocated at {}",
                    bytes(p.reserved_minus_allocated),
                    if p.at_dump { "the dump" } else { "the peak" }
                ),
                "cached blocks the allocator keeps for reuse".into(),
                if expandable_helps {
                    "expandable_segments:True or a smaller garbage_collection_threshold releases them"
                } else {
                    "garbage_collection_threshold (with a memory fraction) or empty_cache() between phases releases them; expandable segments would not lower the reserved peak here (simulated)"
                },
                match expandable {
                    Some(w) if !expandable_helps => w.sentence.clone(),
                    _ => format!("up to {} lower reserved peak", bytes(p.reserved_minus_allocated)),
                },
            );
        }
    }
    if ov.window.overflowed == Some(true) {
        add(
            "medium",
            "history",
            "The trace is not the whole run: its ring buffer wrapped".into(),
            format!(
                "{} events kept{}; the oldest were overwritten. Peaks, steps and growth are those of the window; blocks allocated before it ({}) are known only from the dump or from their free, without an allocation event; a leak that started earlier shows only as memory present at the window start ({})",
                count(ov.events as i64),
                ov.window.max_entries.map_or(String::new(), |m| format!(" of max_entries = {}", count(m as i64))),
                count(ov.window.blocks_before_window as i64),
                bytes(ov.at_window_start.map_or(0, |s| s.allocated)),
            ),
            "record with a larger max_entries, or start recording closer to the code you want to see",
            "the whole run in the trace".into(),
        );
    }
    if ov.events > 0 && ov.window.blocks_before_window > 0 && ov.at_window_start.is_some_and(|s| s.allocated > 0) {
        // Recording earlier is advice only where the memory from before the window lacks stacks.
        let stackless = leak.map_or(0, |l| l.before_window_stackless_bytes);
        let before = leak.map_or(0, |l| l.before_window_bytes);
        let mostly_stackless = before > 0 && stackless * 2 > before;
        add(
            "info",
            "history",
            "The trace starts after allocations were made".into(),
            format!(
                "{} of the blocks the trace touches were allocated before its first event ({} allocated then); of those alive at the dump ({}), {} have no stack (the dump gives the others theirs)",
                count(ov.window.blocks_before_window as i64),
                bytes(ov.at_window_start.map_or(0, |s| s.allocated)),
                bytes(before),
                bytes(stackless),
            ),
            if mostly_stackless {
                "record earlier (start _record_memory_history before the model is built) or with a larger max_entries"
            } else {
                ""
            },
            if mostly_stackless { "allocation stacks for that memory".into() } else { "".into() },
        );
    }
    if ov.events == 0 {
        let dump = frag.at.iter().find(|a| a.label == "dump");
        add(
            "info",
            "history",
            "This snapshot holds the dump only, no trace events".into(),
            format!(
                "the figures describe the memory at the dump ({} allocated of {} reserved); peaks over time, leaks and OOM causes need a trace",
                bytes(ov.at_dump.allocated as i64),
                bytes(ov.at_dump.reserved as i64)
            ),
            "record with torch.cuda.memory._record_memory_history(max_entries=100000) before the code you want to see",
            "peaks, growth and OOM causes over time".into(),
        );
        if let Some(d) = dump.filter(|d| d.pending_free_bytes > 0) {
            add(
                "low",
                "leak",
                format!("{} freed but not yet returned at the dump", bytes(d.pending_free_bytes)),
                "pending-free blocks (used on other streams, record_stream)".into(),
                "synchronize the side streams or avoid record_stream on large tensors",
                format!("{} returned sooner", bytes(d.pending_free_bytes)),
            );
        }
    }
    if let Some(g) = steps.map(|s| &s.growth).filter(|g| g.verdict == GrowthVerdict::Growing) {
        // The rise over the steps compared, not the window's floor (whose rise holds the first
        // step's optimizer state and gradients: not growth).
        let end_of = |n: i64| steps.and_then(|s| s.steps.iter().find(|x| x.step == n)).map(|x| x.end_allocated);
        let rise = match (g.steps_compared.first(), g.steps_compared.last()) {
            (Some(&a), Some(&b)) => match (end_of(a), end_of(b)) {
                (Some(x), Some(y)) if y > x => format!(" From the end of step {a} to the end of step {b} it rose by {}.", bytes(y - x)),
                _ => String::new(),
            },
            _ => String::new(),
        };
        // Where the kept memory was allocated: the largest site whose blocks still held at the
        // dump were allocated across three steps or more (first-step state comes from one).
        let step_of = |e: Option<i64>| {
            let e = e? as u32;
            steps.and_then(|s| s.steps.iter().position(|x| x.first_event <= e && e <= x.last_event))
        };
        let repeating = |c: &&super::leak::StackBytes| match (step_of(c.first_event), step_of(c.last_event)) {
            (Some(a), Some(b)) => b >= a + 2,
            _ => false,
        };
        let kept = leak.and_then(|l| l.candidates_by_stack.iter().find(repeating)).map_or(String::new(), |c| {
            format!(
                " Kept in step after step: {} ({} in {} blocks still allocated at the dump, allocated at events {}–{}).",
                c.label,
                bytes(c.bytes),
                count(c.blocks),
                c.first_event.map_or("?".into(), count),
                c.last_event.map_or("?".into(), count)
            )
        });
        let unit = if kind == "training_steps" { "training step" } else { "step" };
        add(
            "high",
            "leak",
            format!("Memory grows by {} per {unit}", bytes(g.bytes_per_step.unwrap_or(0))),
            format!("{}{rise}{kept}", g.text),
            "find what is kept across steps (Leaks lists the blocks still allocated; detach/.item() logged values, clear lists of tensors)",
            format!("{} less per step", bytes(g.bytes_per_step.unwrap_or(0))),
        );
    }
    if let Some((c, top)) = cats
        .and_then(|c| c.categories.first().map(|t| (c, t)))
        .filter(|(_, t)| t.bytes > 0 && t.category != "unaccounted" && !site_says_category)
    {
        let at = if c.at_dump { "the dump".to_string() } else { event(c.event) };
        let rules: Vec<String> = top.rules.iter().take(2).map(|r| format!("rule {}: {}", r.rule, r.why)).collect();
        let sites: Vec<String> = top.top_sites.iter().take(2).map(|s| format!("{} {}", bytes(s.bytes), s.label)).collect();
        add(
            if top.share >= 0.4 && !matches!(top.category.as_str(), "unknown" | "persistent") { "medium" } else { "info" },
            "categories",
            format!(
                "{} is the largest share at {at}: {} ({})",
                super::categories::capitalize(&top.category),
                super::categories::percent(top.share),
                bytes(top.bytes)
            ),
            format!("{}; largest sites: {}", rules.join("; "), sites.join(", ")),
            super::categories::advice_for(top),
            format!("up to {} at {at}", bytes(top.bytes)),
        );
    }
    // By priority; within one, what the program is, then what holds the memory, then the rest.
    let rank = |p: &str| ["high", "medium", "low", "info"].iter().position(|x| *x == p).unwrap_or(4);
    let order = |c: &str| {
        ["program", "consistency", "oom", "peak", "categories", "fragmentation", "leak", "history"]
            .iter()
            .position(|x| *x == c)
            .unwrap_or(8)
    };
    f.sort_by_key(|x| (rank(&x.priority), order(&x.category)));
    f
}

/// The leak findings alone (what the Leaks view shows as its verdict): they read the window's
/// leak analysis and the steps (the program's kind, growth across steps), nothing else.
pub fn leak_findings(ov: &DeviceOverview, leak: Option<&LeakAnalysis>, steps: Option<&StepsAnalysis>) -> Vec<Finding> {
    // Growth across steps outranks the floor over tenths of the window as leak evidence.
    let steps_grow = steps.is_some_and(|s| s.growth.leak_signal);
    let kind = steps.map_or("unknown", |s| s.program.kind.as_str());
    let mut f = Vec::new();
    let mut add = |priority: &str, category: &str, title: String, evidence: String, suggestion: &str, effect: String| {
        f.push(Finding::new(ov.device, priority, category, title, evidence, suggestion, effect))
    };
    // Kept from some steps, not every one (a list appended to every few steps): the blocks
    // themselves, still held many steps later, are the evidence.
    if let Some((g, k)) =
        steps.map(|s| &s.growth).filter(|g| g.verdict == GrowthVerdict::KeptAcrossSteps).and_then(|g| Some((g, g.kept.as_ref()?)))
    {
        let site = leak
            .and_then(|l| l.candidates_by_stack.iter().find(|c| c.stack_id == k.top_stack_id))
            .map_or(String::new(), |c| format!(" Largest site: {} ({} of them).", c.label, bytes(k.top_stack_bytes)));
        add(
            "medium",
            "leak",
            format!("{} allocated in {} steps is still held at the end of step {}", bytes(k.bytes), count(k.steps.len() as i64), count(k.held_at_step)),
            format!("{}{site}", g.text),
            "find what is kept across steps (Leaks lists the blocks still allocated; detach/.item() logged values, clear lists of tensors); if it is meant to stay (a sample buffer), this is its cost",
            format!("up to {} less", bytes(k.bytes)),
        );
    }
    if let Some(l) = leak {
        let kept = || {
            l.candidates_by_category
                .iter()
                .filter(|c| c.bytes > 0)
                .take(4)
                .map(|c| format!("{} {}", c.category, bytes(c.bytes)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let top = l.candidates_by_stack.first().map(|s| s.label.clone()).unwrap_or_default();
        match kind {
            // Growth across steps is the leak verdict (below); the floor only adds evidence.
            "training_steps" if l.candidate_bytes > 0 && !steps_grow => {
                let growth = steps.map(|s| s.growth.text.clone()).unwrap_or_default();
                add(
                    "info",
                    "leak",
                    format!("{} blocks ({}) allocated in the window are alive at the dump", count(l.candidates), bytes(l.candidate_bytes)),
                    format!("{growth} What is kept: {}; largest site: {top}", kept()),
                    "not a leak by the steps; if the dump was taken between steps, the largest sites say what is kept",
                    "".into(),
                );
            }
            // Without steps, a site that keeps a block from pass after pass is the growth.
            "forward" if l.kept_per_pass.is_some() => {
                let k = l.kept_per_pass.as_ref().expect("matched");
                add(
                    "medium",
                    "leak",
                    format!("Memory kept pass after pass: {} holds blocks from {} forward passes", k.site.label, count(k.passes)),
                    format!(
                        "{} blocks ({}) allocated at {} in {} of the window's {} forward passes (events {}–{}) are all still allocated at the dump: the program keeps something from every pass, so its memory grows with the passes. All kept: {}",
                        count(k.site.blocks),
                        bytes(k.site.bytes),
                        k.site.label,
                        count(k.passes),
                        count(k.passes_in_window),
                        count(k.site.first_event.unwrap_or(0)),
                        count(k.site.last_event.unwrap_or(0)),
                        kept()
                    ),
                    "if each pass's result stays on the GPU (a list of outputs, losses or scores), keep what is needed on the CPU (.cpu(), .item()) or drop it; if it is meant to grow (generated scores, a sample buffer), this is its cost per pass",
                    format!("up to {} less at the dump", bytes(k.site.bytes)),
                );
            }
            "one_training_step" | "model_build" | "forward" if l.candidate_bytes > 0 => {
                // What the window kept, by category; why that is no leak follows from the kind.
                let (what, why) = match kind {
                    "one_training_step" => (
                        "a one-step trace",
                        "what a step keeps (its gradients, optimizer state) is state for the next step, not growth (a first step creates it, a later one replaces it); a leak shows only across three or more steps",
                    ),
                    "model_build" => ("a model build", "the model's parameters and buffers, built to stay: not a leak"),
                    _ => ("forward passes only", "what the program holds at the dump (its model, the passes' outputs, caches); with no training steps to compare there is no leak verdict"),
                };
                add(
                    "info",
                    "leak",
                    format!("{} allocated in the window ({what}) is still held at the dump", bytes(l.candidate_bytes)),
                    format!("{} blocks: {}; {why}", count(l.candidates), kept()),
                    if kind == "one_training_step" { "record three or more steps to check for growth" } else { "" },
                    "".into(),
                );
            }
            "unknown" if l.floor_rises_steadily && l.candidate_bytes > 0 => {
                add(
                    "low",
                    "leak",
                    format!("Allocated memory floor grows by {} over the window", bytes(l.floor_growth)),
                    format!(
                        "{} blocks ({}) allocated in the window are still allocated at the end; largest site: {top}. The frames name no steps, so whether this is a leak or the program's working set cannot be told",
                        count(l.candidates),
                        bytes(l.candidate_bytes)
                    ),
                    "record a few complete steps (torch.profiler's step() names them) to tell growth from state",
                    format!("up to {} less memory at the end", bytes(l.candidate_bytes)),
                );
            }
            _ => {}
        }
        if l.pending_free_bytes > 0 {
            add(
                "low",
                "leak",
                format!("{} freed but not yet returned at the dump", bytes(l.pending_free_bytes)),
                format!("{} pending-free blocks (used on other streams, record_stream)", count(l.pending_free_blocks)),
                "synchronize the side streams or avoid record_stream on large tensors",
                format!("{} returned sooner", bytes(l.pending_free_bytes)),
            );
        }
    }
    f
}
