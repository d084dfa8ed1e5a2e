//! The analysis modes of `analyze`, one entry each: its name, what it computes (only what it
//! needs: a mode costs itself) and its answer. The CLI, the page (`analyze(mode, device, at)`)
//! and the MCP server all go through [`Engine::answer`]; `--mode all` is every part at once.

use super::{At, Engine};
use crate::analysis::{categories, fragment, leak, oom, overview, peak, steps, streams, tree, DeviceAnalysis};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::simulate::tune::Tuning;
use serde::{Deserialize, Serialize};

/// One analysis mode. Serialized as its name (`"peak"`, `"all"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Overview,
    Peak,
    Fragment,
    Leak,
    Oom,
    Tree,
    /// Two files: answered by [`Engine::compare_with`], not per device.
    Compare,
    Categories,
    Steps,
    Streams,
    Tune,
    All,
}

impl Mode {
    /// Every mode, in the order `--help` and `capabilities` list them.
    pub const ALL: [Mode; 12] = [
        Mode::Overview,
        Mode::Peak,
        Mode::Fragment,
        Mode::Leak,
        Mode::Oom,
        Mode::Tree,
        Mode::Compare,
        Mode::Categories,
        Mode::Steps,
        Mode::Streams,
        Mode::Tune,
        Mode::All,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Mode::Overview => "overview",
            Mode::Peak => "peak",
            Mode::Fragment => "fragment",
            Mode::Leak => "leak",
            Mode::Oom => "oom",
            Mode::Tree => "tree",
            Mode::Compare => "compare",
            Mode::Categories => "categories",
            Mode::Steps => "steps",
            Mode::Streams => "streams",
            Mode::Tune => "tune",
            Mode::All => "all",
        }
    }

    pub fn parse(name: &str) -> Result<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name).ok_or_else(|| {
            Error::new(ErrorCode::InvalidParameter, format!("unknown analysis mode {name:?}"), format!("one of: {}", ANALYSES.join(", ")))
        })
    }
}

/// The modes' names (clap's value list, `capabilities`).
pub const ANALYSES: [&str; 12] = {
    let mut names = [""; 12];
    let mut i = 0;
    while i < names.len() {
        names[i] = Mode::ALL[i].name();
        i += 1;
    }
    names
};

/// One device's answer to one mode.
pub enum Answer {
    /// The device's figures and its prioritized findings (which read every analysis but streams).
    Overview(overview::DeviceOverview, Vec<crate::analysis::findings::Finding>),
    Peak(Option<peak::PeakAnalysis>),
    Fragment(fragment::Fragmentation),
    Leak(Option<leak::LeakAnalysis>),
    Oom(oom::OomAnalysis),
    Tree(tree::MemoryTree),
    Categories(categories::CategoryBreakdown),
    Steps(steps::StepsAnalysis),
    Streams(streams::StreamAnalysis),
    Tune(Tuning),
    All(Box<DeviceAnalysis>),
}

impl Answer {
    /// The part alone, as the page takes it.
    pub fn part_json(&self) -> serde_json::Value {
        let v = match self {
            Answer::Overview(o, f) => return serde_json::json!({"overview": o, "findings": f}),
            Answer::Peak(p) => serde_json::to_value(p),
            Answer::Fragment(f) => serde_json::to_value(f),
            Answer::Leak(l) => serde_json::to_value(l),
            Answer::Oom(o) => serde_json::to_value(o),
            Answer::Tree(t) => serde_json::to_value(t),
            Answer::Categories(c) => serde_json::to_value(c),
            Answer::Steps(s) => serde_json::to_value(s),
            Answer::Streams(s) => serde_json::to_value(s),
            Answer::Tune(t) => serde_json::to_value(t),
            Answer::All(a) => serde_json::to_value(a),
        };
        v.expect("answers serialize")
    }

    /// One entry of `analyze --json`'s `devices`: `{"device", "<mode>": part}`; `overview`
    /// adds its `findings`, and `all` is every mode's key at once.
    pub fn device_json(&self, mode: Mode, device: i64) -> serde_json::Value {
        match self {
            Answer::Overview(o, f) => serde_json::json!({"device": device, "overview": o, "findings": f}),
            Answer::All(a) => serde_json::to_value(a).expect("answers serialize"),
            _ => serde_json::json!({"device": device, mode.name(): self.part_json()}),
        }
    }
}

impl Engine {
    /// One mode's answer for one device, computing that part and what it depends on only.
    /// `at` is the event of the parts that take one (peak, tree, categories, all).
    pub fn answer(&self, mode: Mode, device: i64, at: At) -> Result<Answer> {
        Ok(match mode {
            Mode::Overview => {
                let a = self.analyze_parts(device, at, false)?;
                Answer::Overview(a.overview, a.findings)
            }
            Mode::Peak => Answer::Peak(Some(self.peak(device, at)?)),
            Mode::Fragment => Answer::Fragment(self.fragment(device)?),
            Mode::Leak => Answer::Leak(self.leak(device)?),
            Mode::Oom => Answer::Oom(self.oom(device)?),
            Mode::Tree => Answer::Tree(self.tree(device, at)?),
            Mode::Categories => Answer::Categories(self.categories(device, at)?),
            Mode::Steps => Answer::Steps(self.steps(device)?),
            Mode::Streams => Answer::Streams(self.streams(device)?),
            Mode::Tune => Answer::Tune(self.tune_or_why(device)?),
            Mode::All => Answer::All(Box::new(self.analyze(device, at)?)),
            Mode::Compare => {
                return Err(Error::new(
                    ErrorCode::InvalidParameter,
                    "mode compare takes two files",
                    "snapscope analyze A.pickle --mode compare --ref B.pickle",
                ))
            }
        })
    }

    /// The standard settings ranked, or an empty ranking that says why there is none.
    fn tune_or_why(&self, device: i64) -> Result<Tuning> {
        let events = self.overview()?.devices.iter().find(|o| o.device == device).ok_or_else(|| Error::no_device(device))?.events;
        if events == 0 {
            let verdict = "no trace events: nothing to simulate".to_string();
            return Ok(Tuning { device, reproduces_recording: None, health: None, rows: Vec::new(), try_first: None, verdict });
        }
        self.tune(device, self.device_memory.get())
    }
}
