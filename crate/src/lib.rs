//! snapscope: a PyTorch / torch_npu memory-snapshot analyzer.
//!
//! bytes → [`reader`] → [`model::Snapshot`] → [`replay`] → [`store`] (SQLite) → [`analysis`].
//! The same functions serve the native CLI and the WebAssembly build.

pub mod alloc_conf;
pub mod analysis;
#[cfg(not(target_arch = "wasm32"))]
pub mod bounds;
pub mod budget;
pub mod clock;
pub mod codes;
pub mod codes_doc;
pub mod engine;
pub mod error;
pub mod export;
pub mod fasthash;
pub mod format;
pub mod frames;
pub mod model;
#[cfg(not(target_arch = "wasm32"))]
pub mod outfile;
pub mod query;
pub mod ranks;
pub mod reader;
pub mod replay;
pub mod report;
pub mod semantics;
pub mod simulate;
mod sqlite_error;
pub mod store;
pub mod warmup;

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
pub mod wasm;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
mod wasm_fault;

pub use error::{Error, Result};

/// A read and replayed snapshot: the input of every store and analysis function.
pub struct Loaded {
    pub snapshot: model::Snapshot,
    pub devices: Vec<replay::DeviceReplay>,
    /// The phase each stack's frames name, computed on first use (read by the phases of events
    /// and by the categories under every rule set).
    stack_phases: std::sync::OnceLock<Vec<Option<semantics::Phase>>>,
    /// Per frame: a line that runs the program's loop (`frames::loop_lines`), computed on first use.
    loop_lines: std::sync::OnceLock<Vec<u8>>,
    /// Phases of every event, computed on first use (they do not depend on the rules).
    phases: std::sync::OnceLock<Vec<semantics::DevicePhases>>,
    /// Categories, computed on first use under `rules`.
    semantics: std::sync::OnceLock<semantics::Semantics>,
    rules: semantics::RuleSet,
}

impl Loaded {
    pub fn from_snapshot(snapshot: model::Snapshot) -> Loaded {
        let devices = replay::replay_all(&snapshot);
        Loaded {
            snapshot,
            devices,
            stack_phases: std::sync::OnceLock::new(),
            loop_lines: std::sync::OnceLock::new(),
            phases: std::sync::OnceLock::new(),
            semantics: std::sync::OnceLock::new(),
            rules: semantics::RuleSet::defaults(),
        }
    }

    /// The phase each stack's frames name (indexed by stack id).
    pub fn stack_phases(&self) -> &[Option<semantics::Phase>] {
        self.stack_phases.get_or_init(|| semantics::phases::stack_phases(&self.snapshot.interner))
    }

    /// Per frame: a user line that runs the program's loop from inside a library, which names no
    /// stack (`frames::loop_lines`).
    pub fn loop_lines(&self) -> &[u8] {
        self.loop_lines.get_or_init(|| {
            let mut allocating = vec![false; self.snapshot.interner.stacks.len()];
            for l in self.devices.iter().flat_map(|d| &d.lifetimes) {
                if let Some(s) = l.stack().filter(|_| l.stack_source != replay::StackSource::Free) {
                    allocating[s as usize] = true;
                }
            }
            let passes = semantics::phases::frame_passes(&self.snapshot.interner);
            frames::loop_lines(&self.snapshot.interner, &allocating, &passes)
        })
    }

    /// The phase runs and named ranges of each device (parallel to `devices`).
    pub fn phases(&self) -> &[semantics::DevicePhases] {
        self.phases.get_or_init(|| semantics::phases_of(&self.snapshot, &self.devices, self.stack_phases()))
    }

    /// The category of every lifetime under the current rules.
    pub fn semantics(&self) -> &semantics::Semantics {
        self.semantics.get_or_init(|| {
            semantics::Semantics::compute(&self.snapshot, &self.devices, self.phases(), self.stack_phases(), self.rules.clone())
        })
    }

    /// Categorize under other rules from now on.
    pub fn set_rules(&mut self, rules: semantics::RuleSet) {
        self.rules = rules;
        self.semantics = std::sync::OnceLock::new();
    }

    pub fn rules(&self) -> &semantics::RuleSet {
        &self.rules
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Loaded> {
        Ok(Loaded::from_snapshot(reader::read_snapshot(bytes)?))
    }

    pub fn device(&self, device: i64) -> Option<&replay::DeviceReplay> {
        self.devices.iter().find(|d| d.device == device)
    }
}

/// Engine version recorded in exported databases.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
