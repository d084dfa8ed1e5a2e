//! Gradients held through a forward pass: at an allocated peak inside a forward pass, the blocks
//! categorized `gradient` that the program frees after the peak and before the next backward
//! pass starts. They are the previous step's `.grad`s, released by a `zero_grad` that runs after
//! the forward instead of before it: moving it lowers the peak by their size. Gradients an
//! optimizer step after the peak still reads (a no-grad pass between backward and `step()`) are
//! this step's, not held.

use crate::replay::DeviceReplay;
use crate::semantics::{DeviceCategories, DevicePhases, Phase};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct HeldGradients {
    /// The allocated peak the gradients were held at.
    pub peak_event: u32,
    pub blocks: u64,
    pub bytes: u64,
    /// The first and last of the events that free them (between the peak and the backward).
    pub freed_from: u32,
    pub freed_to: u32,
}

/// None unless the peak is in a forward pass and gradients alive at it are freed before the next
/// backward pass starts.
pub fn held_gradients(d: &DeviceReplay, phases: &DevicePhases, cats: &DeviceCategories, gradient: u8) -> Option<HeldGradients> {
    let peak = d.series.peak("allocated").event?;
    if phases.phase(peak) != Phase::Forward {
        return None;
    }
    let backward = phases.runs.iter().find(|r| r.phase == Phase::Backward && r.first > peak)?.first;
    // The first optimizer step after the peak (a run that allocates: `zero_grad` only frees).
    let step =
        phases.runs.iter().find(|r| r.phase == Phase::Optimizer && r.first > peak && d.allocates_in(r.first, r.last)).map(|r| r.first);
    let mut out = HeldGradients { peak_event: peak, blocks: 0, bytes: 0, freed_from: u32::MAX, freed_to: 0 };
    for (i, l) in d.lifetimes.iter().enumerate() {
        let Some(freed) = l.free_requested_event() else { continue };
        let alive = l.alloc_event().is_none_or(|a| a <= peak) && freed > peak;
        if cats.category[i] == gradient && !l.orphan && alive && freed < backward && step.is_none_or(|s| freed < s) {
            out.blocks += 1;
            out.bytes += l.size;
            out.freed_from = out.freed_from.min(freed);
            out.freed_to = out.freed_to.max(freed);
        }
    }
    (out.blocks > 0).then_some(out)
}
