//! Findings: each is a problem, the evidence (numbers and where they come from), and a
//! suggestion with a priority, a category and the expected effect.

use super::categories::CategoryBreakdown;
use super::fragment::Fragmentation;
use super::leak::LeakAnalysis;
use super::oom::OomAnalysis;
use super::overview::DeviceOverview;
use super::peak::PeakAnalysis;
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

/// What a device's analyses say, as findings. `sem`: categories at the peak and the steps.
pub fn findings(
    ov: &DeviceOverview,
    peak: Option<&PeakAnalysis>,
    frag: &Fragmentation,
    leak: Option<&LeakAnalysis>,
    oom: &OomAnalysis,
    sem: (Option<&CategoryBreakdown>, Option<&StepsAnalysis>),
    what_if: Option<&crate::simulate::WhatIf>,
) -> Vec<Finding> {
    let d = ov.device;
    let (cats, steps) = sem;
    // Growth across steps outranks the floor over tenths of the window as leak evidence.
    let steps_grow = steps.is_some_and(|s| s.growth.verdict == "growing");
    let mut f = Vec::new();
    let mut add = |priority: &str, category: &str, title: String, evidence: String, suggestion: &str, effect: String| {
        f.push(Finding {
            device: d,
            priority: priority.into(),
            category: category.into(),
            title,
            evidence,
            suggestion: suggestion.into(),
            expected_effect: effect,
        });
    };
    if !ov.consistency.ok {
        let n = ov.consistency.issues.len() as u64 + ov.consistency.more_issues;
        let first =
            ov.consistency.issues.first().map(|i| format!("first at {}: {}", event(i.event.map(i64::from)), i.message)).unwrap_or_default();
        add(
            "high",
            "consistency",
            format!("{n} events do not fit the allocator state"),
            first,
            "treat figures between the first issue and the dump as approximate; check for skip_actions, edited traces or cudaMallocAsync",
            "knowing which numbers to trust".into(),
        );
    }
    for o in &oom.ooms {
        let simulated = what_if.and_then(|w| w.ooms.iter().find(|x| x.event as i64 == o.event).map(|x| (w, x)));
        // When the simulation serves the request under the toggled setting, that is the first
        // thing to try, whatever the verdict from the numbers alone.
        let suggestion = match simulated {
            Some((w, x)) if !x.happens => format!("set PYTORCH_CUDA_ALLOC_CONF={} (simulated: this request is served)", w.conf),
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
    if let Some(l) = leak {
        // A window that is one forward pass and nothing else: its floor rises as the pass's
        // activations pile up; that is not yet a leak.
        let one_forward_pass = steps.is_some_and(|s| {
            s.steps.is_empty() && s.phases.iter().filter(|p| p.kind == "run").all(|p| p.name == "forward" || p.name == "data")
        });
        if l.floor_rises_steadily && l.candidate_bytes > 0 {
            let top = l.candidates_by_stack.first().map(|s| s.label.clone()).unwrap_or_default();
            let within = if one_forward_pass {
                "; the window is one forward pass (no backward, no optimizer step): the rise may be its activations piling up rather than a leak"
            } else {
                ""
            };
            add(
                if one_forward_pass { "medium" } else { "high" },
                "leak",
                format!("Allocated memory floor grows by {} over the window", bytes(l.floor_growth)),
                format!(
                    "{} blocks ({}) allocated in the window are still allocated at the end; largest site: {top}{within}",
                    count(l.candidates),
                    bytes(l.candidate_bytes)
                ),
                "drop references to these tensors (detach/.item() for logged values, clear caches)",
                format!("up to {} less memory at the end, and no slow creep", bytes(l.candidate_bytes)),
            );
        } else if l.candidate_bytes > 0 && l.events > 0 && !steps_grow {
            add(
                "info",
                "leak",
                format!("{} blocks ({}) allocated in the window are alive at the dump", count(l.candidates), bytes(l.candidate_bytes)),
                "the allocated floor does not grow steadily: likely live state (activations of the current step, caches), not a leak"
                    .into(),
                "check the candidates by stack if the dump was taken between steps",
                "".into(),
            );
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
                } else {
                    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                },
                match what_if.filter(|w| w.conf == "expandable_segments:True") {
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
    if let Some(p) = peak {
        // By the frame that names the stacks (one site may hold several stacks); memory from
        // before the window has no allocation site to advise about.
        if let Some(g) = p.by_top_frame.first().filter(|g| g.share > 0.4 && g.origin == "dynamic" && g.stack_id.is_some()) {
            add(
                "medium",
                "peak",
                format!("One allocation site holds {:.0}% of the peak", g.share * 100.0),
                format!("{} in {} blocks at {}: {}", bytes(g.bytes), count(g.blocks), event(p.event), g.label),
                "start there: smaller shapes, lower precision, checkpointing or freeing earlier",
                format!("the peak drops by up to {}", bytes(g.bytes)),
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
                "expandable_segments:True or a smaller garbage_collection_threshold releases them",
                format!("up to {} lower reserved peak", bytes(p.reserved_minus_allocated)),
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
        add(
            "info",
            "history",
            "The trace starts after allocations were made".into(),
            format!(
                "{} of the blocks the trace touches were allocated before its first event ({} allocated then); a stack is known for those still alive at the dump, from the dump, not for those the trace frees",
                count(ov.window.blocks_before_window as i64),
                bytes(ov.at_window_start.map_or(0, |s| s.allocated)),
            ),
            "record earlier (start _record_memory_history before the model is built) or with a larger max_entries",
            "allocation stacks for that memory".into(),
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
    if let Some(g) = steps.map(|s| &s.growth).filter(|g| g.verdict == "growing") {
        add(
            "high",
            "leak",
            format!("Memory grows by {} per training step", bytes(g.bytes_per_step.unwrap_or(0))),
            g.text.clone(),
            "find what is kept across steps (Leaks lists the blocks still allocated; detach/.item() logged values, clear lists of tensors)",
            format!("{} less per step", bytes(g.bytes_per_step.unwrap_or(0))),
        );
    }
    if let Some((c, top)) =
        cats.and_then(|c| c.categories.first().map(|t| (c, t))).filter(|(_, t)| t.bytes > 0 && t.category != "unaccounted")
    {
        let at = if c.at_dump { "the dump".to_string() } else { event(c.event) };
        let rules: Vec<String> = top.rules.iter().take(2).map(|r| format!("rule {}: {}", r.rule, r.why)).collect();
        let sites: Vec<String> = top.top_sites.iter().take(2).map(|s| format!("{} {}", bytes(s.bytes), s.label)).collect();
        add(
            if top.share >= 0.4 && top.category != "unknown" { "medium" } else { "info" },
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
    let rank = |p: &str| ["high", "medium", "low", "info"].iter().position(|x| *x == p).unwrap_or(4);
    f.sort_by_key(|x| rank(&x.priority));
    f
}
