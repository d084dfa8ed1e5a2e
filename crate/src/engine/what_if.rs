//! The what-if the analyses cite: the recording with expandable segments toggled, against the
//! recorded settings. These are two whole simulations, the largest part of `analyze` after the
//! replay; natively they run on a thread of their own, started before the analyses that read
//! the SnapshotDB (which is built meanwhile), so the two overlap. On wasm they run when asked.

use super::Engine;
use crate::error::Result;
use crate::simulate::{simulate_confs, Simulation, WhatIf};
use crate::Loaded;

/// The two simulations of one device being computed in the background.
#[cfg(not(target_arch = "wasm32"))]
pub(super) type Pending = std::thread::JoinHandle<Result<(Simulation, Simulation)>>;
/// No threads on wasm: nothing is ever pending.
#[cfg(target_arch = "wasm32")]
pub(super) type Pending = std::convert::Infallible;

/// The toggled settings' simulation and the recorded settings' (the baseline), in that order,
/// from inputs prepared once for both.
fn pair(l: &Loaded, device: i64, conf: &str, memory: Option<u64>) -> Result<(Simulation, Simulation)> {
    let mut sims = simulate_confs(l, device, &[conf, ""], memory)?.into_iter();
    Ok((sims.next().expect("two confs"), sims.next().expect("two confs")))
}

#[cfg(not(target_arch = "wasm32"))]
fn finish(pending: Pending) -> Result<(Simulation, Simulation)> {
    pending.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[cfg(target_arch = "wasm32")]
fn finish(pending: Pending) -> Result<(Simulation, Simulation)> {
    match pending {}
}

impl Engine {
    /// Start the what-if of `device` in the background (natively), unless it is known or under
    /// way. Errors are left for [`Engine::what_if`] to raise when it is asked for.
    pub(super) fn start_what_if(&self, device: i64) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let Ok(l) = self.shared() else { return };
            if self.what_ifs.borrow().contains_key(&device) || self.pending_what_ifs.borrow().contains_key(&device) {
                return;
            }
            let Ok(settings) = self.recorded_settings(device) else { return };
            let (conf, memory, l) = (WhatIf::toggle_conf(&settings), self.device_memory.get(), std::sync::Arc::clone(l));
            if let Ok(h) = std::thread::Builder::new().name("what-if".into()).spawn(move || pair(&l, device, conf, memory)) {
                self.pending_what_ifs.borrow_mut().insert(device, h);
            }
        }
        #[cfg(target_arch = "wasm32")]
        let _ = device;
    }

    /// The recording with expandable segments toggled, for the findings and the OOM view.
    pub(super) fn what_if(&self, device: i64, oom: &crate::analysis::oom::OomAnalysis) -> Result<WhatIf> {
        if let Some(w) = self.what_ifs.borrow().get(&device) {
            return Ok(w.clone());
        }
        let conf = WhatIf::toggle_conf(&self.recorded_settings(device)?);
        let pending = self.pending_what_ifs.borrow_mut().remove(&device);
        let (sim, baseline) = match pending {
            Some(p) => finish(p)?,
            None => pair(self.model()?, device, conf, self.device_memory.get())?,
        };
        let recorded: Vec<u32> = oom.ooms.iter().map(|o| o.event as u32).collect();
        let w = WhatIf::from_simulation(conf, &sim, &baseline, &recorded);
        self.what_ifs.borrow_mut().insert(device, w.clone());
        Ok(w)
    }

    /// Wait for the background simulations and forget them (before the replay changes or the
    /// settings they assumed do).
    pub(super) fn drop_pending_what_ifs(&self) {
        for (_, p) in self.pending_what_ifs.borrow_mut().drain() {
            let _ = finish(p);
        }
    }
}
