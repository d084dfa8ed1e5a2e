//! What the memory is and when: the phase of every event (forward, backward, optimizer, data),
//! the named ranges the program recorded, and the category of every block lifetime under a
//! rule set. Computed once per rule set from the replay; the store and the analyses read it.

pub mod categories;
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

pub struct Semantics {
    pub rules: RuleSet,
    /// Parallel to `Loaded::devices`.
    pub phases: Vec<DevicePhases>,
    pub categories: Vec<DeviceCategories>,
}

impl Semantics {
    pub fn compute(snapshot: &Snapshot, devices: &[DeviceReplay], rules: RuleSet) -> Semantics {
        let by_stack_phase = phases::stack_phases(&snapshot.interner);
        let by_stack_rules = categories::stack_matches(&snapshot.interner, &rules);
        let mut out = Semantics { rules, phases: Vec::new(), categories: Vec::new() };
        for d in devices {
            let trace = snapshot.trace(d.device);
            let p = phases::device_phases(trace, d.device, &snapshot.annotations, &by_stack_phase);
            out.categories.push(categories::classify(d, trace, &p, &out.rules, &by_stack_rules));
            out.phases.push(p);
        }
        out
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
