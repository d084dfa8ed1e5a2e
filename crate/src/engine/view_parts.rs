//! What the page's Leaks and OOM views show, each computed alone: the parts of `analyze` a view
//! reads and nothing more (`--mode all` also replays every other analysis and both what-if
//! simulations).

use super::Engine;
use crate::analysis::{findings, leak, oom, steps};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The Leaks view: the window's leak analysis, the steps (growth across them) and the leak
/// findings that give the verdict.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct LeakView {
    pub device: i64,
    /// None without trace events.
    pub leak: Option<leak::LeakAnalysis>,
    /// None for a SnapshotDB file (steps need the replay).
    pub steps: Option<steps::StepsAnalysis>,
    /// The findings of category `leak`, as `analyze` gives them.
    pub findings: Vec<findings::Finding>,
}

/// The OOM view: each recorded OOM, and the what-if the verdicts cite (only when there is an OOM
/// to cite it for).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct OomView {
    pub device: i64,
    pub oom: oom::OomAnalysis,
    pub what_if: Option<crate::simulate::WhatIf>,
}

impl Engine {
    pub fn leak_view(&self, device: i64) -> Result<LeakView> {
        let ov = self.overview()?.devices.iter().find(|d| d.device == device).cloned().ok_or_else(|| Error::no_device(device))?;
        let leak = self.leak(device)?;
        let steps = Some(self.steps(device)?);
        let findings = findings::leak_findings(&ov, leak.as_ref(), steps.as_ref());
        Ok(LeakView { device, leak, steps, findings })
    }

    pub fn oom_view(&self, device: i64) -> Result<OomView> {
        let events = self.device_overview(device)?.events;
        let oom = self.oom(device)?;
        let simulated = events > 0 && self.model()?.snapshot.host_device != Some(device);
        let what_if = if simulated && !oom.ooms.is_empty() { Some(self.what_if(device, &oom)?) } else { None };
        Ok(OomView { device, oom, what_if })
    }
}
