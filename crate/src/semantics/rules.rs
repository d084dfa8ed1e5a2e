//! Category rules: what a block of memory is (parameter, gradient, activation, …), decided by
//! regular expressions over its stack frames and by what the block did in the run's phases.
//! The default set is `default_rules.toml`; users replace or extend it with their own file.

use crate::error::{Error, Result};
use regex::Regex;
use serde::{Deserialize, Serialize};

/// The categories every rule set knows, in the order they are shown. Rules may name others.
pub const CATEGORIES: [&str; 11] = [
    "parameter",
    "gradient",
    "optimizer state",
    "activation",
    "autograd temporary",
    "temporary",
    "input/data",
    "communication",
    "cache",
    "persistent",
    "unknown",
];

pub const UNKNOWN: &str = "unknown";
/// The rule name reported for blocks no rule matched.
pub const NO_RULE: &str = "no-rule";

pub const DEFAULT_RULES: &str = include_str!("default_rules.toml");

/// At most this many rules: a stack's matches are kept as one bit per rule.
pub const MAX_RULES: usize = 128;

/// The phase a block was allocated in (see `phases.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Forward,
    Backward,
    Optimizer,
    Data,
    /// Building the program's state: module construction, `.to()`, loading weights, the
    /// optimizer's constructor.
    Setup,
    /// Frames that name none of the above (or no frames at all in the trace).
    Unknown,
}

impl Phase {
    pub const ALL: [Phase; 6] = [Phase::Forward, Phase::Backward, Phase::Optimizer, Phase::Data, Phase::Setup, Phase::Unknown];
    pub fn name(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Backward => "backward",
            Phase::Optimizer => "optimizer",
            Phase::Data => "data",
            Phase::Setup => "setup",
            Phase::Unknown => "unknown",
        }
    }
}

/// What the block did after its allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum LifetimeRule {
    /// No condition.
    #[default]
    Any,
    /// Freed by the program in the same phase run it was allocated in.
    WithinPhase,
    /// Alive after the phase run it was allocated in ended (or at the dump).
    OutlivesPhase,
    /// Allocated outside backward and alive when a later backward pass starts.
    IntoBackward,
    /// Allocated in a forward pass and alive after the end of `OUTLIVES_STEPS` optimizer steps
    /// or more (the optimizer runs after a backward pass), and not freed by a backward pass: no
    /// backward pass saved it (its own would have freed it, and a last output reassigned in the
    /// next step is gone after one): the program keeps it, as a cache, a list of outputs or a
    /// leak.
    OutlivesSteps,
    /// Allocated before the trace window.
    BeforeWindow,
    /// Alive at an OOM event (allocated before it, freed after it or never): what held the
    /// memory when it ran out.
    AtOom,
    /// Not freed in the window and of the same size as a block categorized `gradient` (one to
    /// one): a parameter whose gradient it is. Tried after every other rule.
    PairsWithGradient,
    /// Allocated in the window and never freed in it: still held at the dump.
    AtDump,
    /// Never freed in the window (allocated in it or before it): held at the dump.
    Kept,
    /// A copy of a buffer grown by copying: its site re-made the buffer larger and freed the
    /// copy before, `grown_by_copy::MIN_COPIES` times or more in a row (`grown_by_copy.rs`).
    GrownByCopy,
    /// What a cache started as: freed by the very next event after a block of the rule's
    /// category was made, older and no larger than it (a copy one token longer, a reordering), and matched by no rule with frame patterns
    /// (a library's cache that keeps a layer's first keys as the projection made them and copies
    /// from the next token on: the first copy lets that block go). Tried after the other rules.
    StartsCache,
    /// Allocated before the window and alive through all of it, never freed: weights or state
    /// the trace never touches. Tried after every other rule, `pairs_with_gradient` included.
    Persistent,
}

/// Which frames a rule's patterns are tried on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum FrameSource {
    /// The block's allocation stack.
    #[default]
    Stack,
    /// The forward stack PyTorch records for a backward allocation (`forward_frames`).
    Forward,
    /// The stack of the program's free of the block: who let it go (`zero_grad` frees gradients).
    Free,
    /// The allocation stack or the forward stack.
    Any,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleText {
    name: String,
    category: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    function: Option<String>,
    #[serde(default)]
    frames: FrameSource,
    #[serde(default)]
    skip_wrappers: bool,
    #[serde(default)]
    phase: Option<Phase>,
    #[serde(default)]
    lifetime: LifetimeRule,
    /// Exact block sizes in bytes (library constants such as cuBLAS's workspace).
    #[serde(default)]
    size: Vec<u64>,
    #[serde(default)]
    why: Option<String>,
    /// What reduces the memory this rule names, where that differs from its category's advice.
    #[serde(default)]
    advice: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesText {
    /// true: the file's rules are the whole set; false (default): they are tried before the
    /// default rules.
    #[serde(default)]
    replace_defaults: bool,
    #[serde(default)]
    rule: Vec<RuleText>,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    /// Index into `RuleSet::categories`.
    pub category: u8,
    pub file: Option<Regex>,
    pub function: Option<Regex>,
    pub frames: FrameSource,
    /// A matching frame counts only where no module's forward runs inside it: a wrapper's
    /// `forward` around the model (FSDP's, a checkpoint wrapper's) does not make the model's
    /// allocations its own.
    pub skip_wrappers: bool,
    pub phase: Option<Phase>,
    pub lifetime: LifetimeRule,
    /// Exact block sizes the rule applies to (empty: any size).
    pub sizes: Vec<u64>,
    pub why: String,
    /// What reduces this rule's memory (None: its category's advice).
    pub advice: Option<String>,
    /// Where it came from: `default` or `user`.
    pub origin: &'static str,
}

impl Rule {
    pub fn has_frame_pattern(&self) -> bool {
        self.file.is_some() || self.function.is_some()
    }

    /// The block size is one the rule names (or the rule names none).
    pub fn fits_size(&self, size: u64) -> bool {
        self.sizes.is_empty() || self.sizes.contains(&size)
    }

    /// Both patterns (those given) match this one frame.
    pub fn matches_frame(&self, filename: &str, function: &str) -> bool {
        self.file.as_ref().is_none_or(|r| r.is_match(filename)) && self.function.as_ref().is_none_or(|r| r.is_match(function))
    }
}

/// An ordered rule set and the categories it can produce (the known ones first).
#[derive(Debug, Clone)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
    pub categories: Vec<String>,
    /// The user's rules file as given (None for the defaults alone).
    pub source: Option<String>,
}

/// A rule as shown to users (`analyze --mode categories`, the page's rule list).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct RuleInfo {
    pub name: String,
    pub category: String,
    pub file: Option<String>,
    pub function: Option<String>,
    pub frames: FrameSource,
    /// Frames that wrap a module's forward do not count (`skip_wrappers`).
    pub skip_wrappers: bool,
    pub phase: Option<Phase>,
    pub lifetime: LifetimeRule,
    pub sizes: Vec<u64>,
    pub why: String,
    /// What reduces this rule's memory, where it differs from its category's advice.
    pub advice: Option<String>,
    pub origin: String,
}

impl RuleSet {
    /// The default rules. Parsed and their patterns compiled once per process (every load
    /// categorizes with them, and compiling took 10-20 ms of a load in the page's wasm); each
    /// caller gets a copy whose patterns share the compiled programs.
    pub fn defaults() -> RuleSet {
        static DEFAULTS: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
        DEFAULTS.get_or_init(|| RuleSet::parse(DEFAULT_RULES, "default").expect("the default rules parse")).clone()
    }

    /// A user's rules file: prepended to the defaults unless it says `replace_defaults = true`.
    pub fn from_user(text: &str) -> Result<RuleSet> {
        let mut user = RuleSet::parse(text, "user")?;
        user.source = Some(text.to_string());
        let replace = toml::from_str::<RulesText>(text).map(|t| t.replace_defaults).unwrap_or(false);
        if !replace {
            let defaults = RuleSet::defaults();
            for r in defaults.rules {
                let name = &defaults.categories[r.category as usize];
                let category = user.category_index(name)?;
                user.rules.push(Rule { category, ..r });
            }
            user.check_size()?;
        }
        Ok(user)
    }

    fn parse(text: &str, origin: &'static str) -> Result<RuleSet> {
        let parsed: RulesText = toml::from_str(text).map_err(|e| {
            Error::rules(format!(
                "category rules: {}. Write [[rule]] tables with name, category and file/function/phase/lifetime (docs/categories.md)",
                e.to_string().trim()
            ))
        })?;
        let mut set = RuleSet { rules: Vec::new(), categories: CATEGORIES.iter().map(|c| c.to_string()).collect(), source: None };
        for (i, r) in parsed.rule.into_iter().enumerate() {
            let at = format!("category rules: rule {} ({:?})", i + 1, r.name);
            if r.name.trim().is_empty() || r.category.trim().is_empty() {
                return Err(Error::rules(format!("{at}: `name` and `category` must not be empty")));
            }
            let pattern = |p: &Option<String>, key: &str| -> Result<Option<Regex>> {
                p.as_deref()
                    .map(|p| Regex::new(p).map_err(|e| Error::rules(format!("{at}: `{key}` is not a regular expression: {e}"))))
                    .transpose()
            };
            let file = pattern(&r.file, "file")?;
            let function = pattern(&r.function, "function")?;
            let category = set.category_index(r.category.trim())?;
            set.rules.push(Rule {
                name: r.name,
                category,
                file,
                function,
                frames: r.frames,
                skip_wrappers: r.skip_wrappers,
                phase: r.phase,
                lifetime: r.lifetime,
                sizes: r.size,
                why: r.why.unwrap_or_default(),
                advice: r.advice.filter(|a| !a.trim().is_empty()),
                origin,
            });
        }
        set.check_size()?;
        Ok(set)
    }

    fn check_size(&self) -> Result<()> {
        if self.rules.len() > MAX_RULES {
            return Err(Error::rules(format!("category rules: {} rules; at most {MAX_RULES} are allowed", self.rules.len())));
        }
        Ok(())
    }

    fn category_index(&mut self, name: &str) -> Result<u8> {
        if let Some(i) = self.categories.iter().position(|c| c == name) {
            return Ok(i as u8);
        }
        if self.categories.len() >= 250 {
            return Err(Error::rules("category rules: more than 250 categories".to_string()));
        }
        self.categories.push(name.to_string());
        Ok((self.categories.len() - 1) as u8)
    }

    pub fn unknown(&self) -> u8 {
        self.categories.iter().position(|c| c == UNKNOWN).unwrap_or(0) as u8
    }

    pub fn info(&self) -> Vec<RuleInfo> {
        self.rules
            .iter()
            .map(|r| RuleInfo {
                name: r.name.clone(),
                category: self.categories[r.category as usize].clone(),
                file: r.file.as_ref().map(|x| x.as_str().to_string()),
                function: r.function.as_ref().map(|x| x.as_str().to_string()),
                frames: r.frames,
                skip_wrappers: r.skip_wrappers,
                phase: r.phase,
                lifetime: r.lifetime,
                sizes: r.sizes.clone(),
                why: r.why.clone(),
                advice: r.advice.clone(),
                origin: r.origin.to_string(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_name_known_categories() {
        let d = RuleSet::defaults();
        assert!(d.rules.len() >= 10);
        assert_eq!(d.categories.len(), CATEGORIES.len(), "the defaults use only the known categories");
        assert!(d.rules.iter().all(|r| !r.why.is_empty()), "every default rule says why");
    }

    #[test]
    fn user_rules_go_first_and_may_add_categories() {
        let s = RuleSet::from_user("[[rule]]\nname = \"lora\"\ncategory = \"adapter\"\nfunction = 'lora_'\n").unwrap();
        assert_eq!(s.rules[0].name, "lora");
        assert_eq!(s.categories[s.rules[0].category as usize], "adapter");
        assert_eq!(s.rules.len(), 1 + RuleSet::defaults().rules.len());
        let only = RuleSet::from_user("replace_defaults = true\n[[rule]]\nname = \"x\"\ncategory = \"cache\"\n").unwrap();
        assert_eq!(only.rules.len(), 1);
    }

    #[test]
    fn docs_show_the_default_rules_verbatim() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/categories.md")).unwrap();
        assert!(doc.contains(&format!("```toml\n{DEFAULT_RULES}```")), "docs/categories.md must hold default_rules.toml as it is");
    }

    #[test]
    fn bad_rules_say_which_and_why() {
        let e = RuleSet::from_user("[[rule]]\nname = \"x\"\ncategory = \"c\"\nfile = '('\n").unwrap_err().to_string();
        assert!(e.contains("rule 1") && e.contains("`file` is not a regular expression"), "{e}");
        let e = RuleSet::from_user("[[rule]]\nname = \"x\"\ncategory = \"c\"\nlifetime = \"forever\"\n").unwrap_err().to_string();
        assert!(e.contains("category rules") && e.contains("forever"), "{e}");
        let e = RuleSet::from_user("[[rule]]\nname = \"x\"\ncategory = \"c\"\nfiel = 'a'\n").unwrap_err().to_string();
        assert!(e.contains("fiel"), "{e}");
    }
}
