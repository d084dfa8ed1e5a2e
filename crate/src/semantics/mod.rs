//! What the memory is and when: the phase of every event (forward, backward, optimizer, data),
//! the named ranges the program recorded, and the category of every block lifetime under a
//! rule set. Phases are computed once per replay, categories once per rule set; the store and
//! the analyses read them.

pub mod categories;
mod grown_by_copy;
pub mod phases;
pub mod rules;

use crate::model::Snapshot;
use crate::replay::DeviceReplay;
pub use categories::{DeviceCategories, NO_RULE};
pub use phases::{DevicePhases, NamedRange, PhaseRun, RangeGroup};
pub use rules::{Phase, RuleSet};

/// The name a unit enum serializes to (`outlives_phase`, `framework`): the text tables and
/// answers show.
pub fn snake_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The phase of every event of each device (parallel to `Loaded::devices`): from the frames and
/// annotations alone, whatever the category rules.
/// `by_stack_phase`: `phases::stack_phases` of the snapshot.
pub fn phases_of(snapshot: &Snapshot, devices: &[DeviceReplay], by_stack_phase: &[Option<Phase>]) -> Vec<DevicePhases> {
    let whole = phases::stacks_are_whole(&snapshot.interner);
    devices
        .iter()
        .map(|d| phases::device_phases(snapshot.trace(d.device), d.device, &snapshot.annotations, by_stack_phase, whole))
        .collect()
}

/// The category of every lifetime under one rule set.
pub struct Semantics {
    pub rules: RuleSet,
    /// Parallel to `Loaded::devices`.
    pub categories: Vec<DeviceCategories>,
}

impl Semantics {
    pub fn compute(
        snapshot: &Snapshot,
        devices: &[DeviceReplay],
        phases: &[DevicePhases],
        by_stack_phase: &[Option<Phase>],
        rules: RuleSet,
    ) -> Semantics {
        let by_stack_rules = categories::stack_matches(&snapshot.interner, &rules);
        let stacks = categories::Stacks { rules: &by_stack_rules, phases: by_stack_phase };
        let categories =
            devices.iter().zip(phases).map(|(d, p)| categories::classify(d, snapshot.trace(d.device), p, &rules, &stacks)).collect();
        Semantics { rules, categories }
    }

    /// Category name and deciding rule name of lifetime `index` of device position `dev`.
    pub fn of_lifetime(&self, dev: usize, index: usize) -> (&str, &str) {
        let c = &self.categories[dev];
        let category = &self.rules.categories[c.category[index] as usize];
        let rule = match c.rule[index] {
            NO_RULE => rules::NO_RULE,
            r => &self.rules.rules[r as usize].name,
        };
        (category, rule)
    }
}
