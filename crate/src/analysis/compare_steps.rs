//! Two runs step by step: step N of A against step N of B, at each step's allocated peak, by
//! category and by site (sites matched by meaning, as in `compare`). Steps come from the steps
//! analysis of each run.

use super::compare::{diff_categories, diff_stacks, CategoryDelta, DeviceSide, StackDelta};
use serde::{Deserialize, Serialize};

/// One run's step: its number and its side at the step's allocated peak.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StepSide {
    pub step: i64,
    /// The step's allocated peak: bytes and event.
    pub peak_bytes: i64,
    pub side: DeviceSide,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StepComparison {
    pub step: i64,
    /// Each run's allocated peak within the step, and its event.
    pub peak_a: i64,
    pub peak_b: i64,
    pub event_a: Option<i64>,
    pub event_b: Option<i64>,
    pub delta: i64,
    /// Live memory by category at each step's peak, largest change first.
    pub categories: Vec<CategoryDelta>,
    /// Live memory by site at each step's peak, largest change first.
    pub stacks: Vec<StackDelta>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceSteps {
    pub device: i64,
    pub steps_a: i64,
    pub steps_b: i64,
    /// The steps both runs have, in order.
    pub steps: Vec<StepComparison>,
    /// Why there is nothing to compare, when there is not.
    pub note: Option<String>,
}

/// Steps of A against the same-numbered steps of B, `top` sites each.
pub fn compare_steps(device: i64, a: &[StepSide], b: &[StepSide], top: usize) -> DeviceSteps {
    let steps: Vec<StepComparison> = a
        .iter()
        .filter_map(|x| b.iter().find(|y| y.step == x.step).map(|y| (x, y)))
        .map(|(x, y)| StepComparison {
            step: x.step,
            peak_a: x.peak_bytes,
            peak_b: y.peak_bytes,
            event_a: x.side.event,
            event_b: y.side.event,
            delta: y.peak_bytes - x.peak_bytes,
            categories: diff_categories(Some(&x.side), Some(&y.side)),
            stacks: diff_stacks(Some(&x.side), Some(&y.side), top),
        })
        .collect();
    let note = match (a.len(), b.len()) {
        (0, 0) => Some("neither run has steps (steps need a backward pass or an optimizer step in the trace)".to_string()),
        (0, _) => Some("the first run has no steps (steps need a backward pass or an optimizer step in the trace)".to_string()),
        (_, 0) => Some("the second run has no steps (steps need a backward pass or an optimizer step in the trace)".to_string()),
        _ => None,
    };
    DeviceSteps { device, steps_a: a.len() as i64, steps_b: b.len() as i64, steps, note }
}
