//! What the memory is at one event: the live blocks by category (parameter, gradient, optimizer
//! state, activation, …), the rule that decided each share, the top sites of each category, and
//! what to do about the largest share. The categories of the blocks come from the replay's
//! semantics (crate::semantics); a .db file answers the same from its `lifetimes.category`.

use super::live;
use super::stack_labels::StackLabels;
use crate::fasthash::FastMap;
use crate::format;
use crate::replay::StackSource;
use crate::Loaded;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct RuleShare {
    pub rule: String,
    pub bytes: i64,
    pub blocks: i64,
    pub why: String,
    /// What reduces this rule's memory, where the rule says (cuBLAS's workspace is no KV cache).
    pub advice: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SiteShare {
    pub label: String,
    pub bytes: i64,
    pub blocks: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CategoryShare {
    pub category: String,
    pub bytes: i64,
    pub blocks: i64,
    /// Of the active bytes at the event.
    pub share: f64,
    /// The rules that put blocks here, largest first.
    pub rules: Vec<RuleShare>,
    /// The largest sites of the category (stack labels), at most three.
    pub top_sites: Vec<SiteShare>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CategoryBreakdown {
    pub device: i64,
    /// None = the state before the first event (the dump for a file without events).
    pub event: Option<i64>,
    /// A file without trace events: the figures are the dump's.
    pub at_dump: bool,
    /// The active counter after `event`: the categories' bytes sum to it.
    pub active: i64,
    pub categories: Vec<CategoryShare>,
    /// One sentence on the largest share and what would reduce it.
    pub finding: Option<String>,
}

/// A category's bytes without the rules and sites (Peak, Leaks, Compare).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CategoryTotal {
    pub category: String,
    pub bytes: i64,
    pub blocks: i64,
}

/// Live bytes by category, largest first (the rows of a breakdown).
pub fn totals_of(b: &CategoryBreakdown) -> Vec<CategoryTotal> {
    b.categories.iter().map(|c| CategoryTotal { category: c.category.clone(), bytes: c.bytes, blocks: c.blocks }).collect()
}

/// What reduces a category's share, for the finding. For uncategorized blocks it depends on
/// whether their largest site has a stack: without one, recording earlier gives them one; with
/// one, no rule knows that code, and a rule of the user's own will.
pub fn advice_for(c: &CategoryShare) -> &str {
    // A rule that holds most of the share and says what reduces its memory speaks for it.
    if let Some(a) = c.rules.first().filter(|r| 2 * r.bytes > c.bytes).and_then(|r| r.advice.as_deref()) {
        return a;
    }
    let stackless = c.top_sites.first().is_none_or(|s| s.label.starts_with('['));
    match c.category.as_str() {
        "unknown" | "persistent" if !stackless => {
            "a category rule for these sites would name them (snapscope --categories rules.toml, or the rules editor; docs/categories.md)"
        }
        "persistent" => {
            "these blocks predate the trace and have no stack (most likely weights or state): recording memory history before the model is built would say what they are"
        }
        other => advice(other),
    }
}

/// What reduces each category, for the finding.
pub fn advice(category: &str) -> &'static str {
    match category {
        "activation" => "activation checkpointing (torch.utils.checkpoint) or a smaller micro-batch would help most",
        "optimizer state" => {
            "a lighter optimizer state (8-bit or factored optimizers), sharding it (ZeRO-1/FSDP) or offloading it would help most"
        }
        "parameter" => "lower-precision weights, sharding (FSDP/ZeRO-3) or offloading would help most",
        "gradient" => "sharding gradients (ZeRO-2/FSDP), lower-precision gradients or zero_grad(set_to_none=True) would help most",
        "autograd temporary" | "temporary" => "fusing operations (torch.compile) or processing in smaller chunks would help most",
        "cache" => "a smaller or quantized KV cache (shorter maximum length, paged cache) would help most",
        "input/data" => "smaller batches, or keeping data on the host until it is needed, would help most",
        "communication" => "smaller communication buckets (bucket_cap_mb) or limiting concurrent all-gathers would help most",
        _ => "recording memory history from before the model is built would give these blocks stacks and categories",
    }
}

/// The row for bytes of the counters that no lifetime explains (inconsistent traces only).
pub const UNACCOUNTED: &str = "unaccounted";

/// What no rule explains: the `why` of blocks no rule matched.
const NO_RULE_WHY: &str = "no rule matched: nothing in its stack or lifetime says what it is";

/// The live memory of device position `pos` by category right after `event` (None = the
/// window start), from the replay.
pub fn categories(l: &Loaded, pos: usize, event: Option<i64>) -> CategoryBreakdown {
    let d = &l.devices[pos];
    let sem = l.semantics();
    let labels = StackLabels::new(l);
    let at = live::event_index(event);
    let traced = d.events > 0;
    let mut rules: FastMap<(&str, &str), (i64, i64)> = FastMap::default();
    let mut sites: FastMap<(&str, String), (i64, i64)> = FastMap::default();
    let mut stack_label: FastMap<u32, String> = FastMap::default();
    for i in live::live(d, at) {
        let lt = &d.lifetimes[i];
        let (category, rule) = sem.of_lifetime(pos, i);
        let r = rules.entry((category, rule)).or_default();
        r.0 += 1;
        r.1 += lt.size as i64;
        // A stack known only from the free does not say where the block was allocated.
        let site = match lt.stack().filter(|_| lt.stack_source != StackSource::Free) {
            Some(s) => stack_label.entry(s).or_insert_with(|| labels.stack_label(s)).clone(),
            None => stackless_site(lt.before_window(), traced).to_string(),
        };
        let s = sites.entry((category, site)).or_default();
        s.0 += 1;
        s.1 += lt.size as i64;
    }
    let mut rows: Vec<(String, String, i64, i64)> =
        rules.into_iter().map(|((c, r), (n, b))| (c.to_string(), r.to_string(), n, b)).collect();
    rows.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| (&a.0, &a.1).cmp(&(&b.0, &b.1))));
    let why: HashMap<String, (String, Option<String>)> = l.rules().info().into_iter().map(|r| (r.name, (r.why, r.advice))).collect();
    let mut cats = merge(rows, &why);
    let mut by_category: HashMap<&str, Vec<SiteShare>> = HashMap::new();
    for ((category, label), (blocks, bytes)) in sites {
        by_category.entry(category).or_default().push(SiteShare { label, bytes, blocks });
    }
    for c in &mut cats {
        let mut s = by_category.remove(c.category.as_str()).unwrap_or_default();
        s.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
        s.truncate(3);
        c.top_sites = s;
    }
    breakdown(d.device, event, traced, live::counters_at(d, at).active, cats)
}

/// The site label of a block without an allocation stack.
fn stackless_site(before_window: bool, traced: bool) -> &'static str {
    match (before_window, traced) {
        (true, true) => super::basis::BEFORE_WINDOW_NO_STACK,
        (true, false) => "[in the dump, no stack]",
        (false, _) => super::basis::NO_STACK,
    }
}

/// Rows of (category, rule, blocks, bytes), largest first, as categories with their rules.
fn merge(rows: Vec<(String, String, i64, i64)>, why: &HashMap<String, (String, Option<String>)>) -> Vec<CategoryShare> {
    let mut cats: Vec<CategoryShare> = Vec::new();
    for (category, rule, blocks, bytes) in rows {
        let (why, advice) = why.get(&rule).cloned().unwrap_or_else(|| (NO_RULE_WHY.into(), None));
        let share = RuleShare { rule, bytes, blocks, why, advice };
        match cats.iter_mut().find(|c| c.category == category) {
            Some(c) => {
                c.bytes += bytes;
                c.blocks += blocks;
                c.rules.push(share);
            }
            None => cats.push(CategoryShare { category, bytes, blocks, share: 0.0, rules: vec![share], top_sites: Vec::new() }),
        }
    }
    cats
}

/// The breakdown of categories (with their sites) against the active counter at the event.
fn breakdown(device: i64, event: Option<i64>, traced: bool, active: i64, mut cats: Vec<CategoryShare>) -> CategoryBreakdown {
    cats.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.category.cmp(&b.category)));
    // On a trace the replay could not reconcile, the counters may hold bytes no lifetime
    // explains: shown as their own row so the shares still add up and the gap is visible.
    let gap = active - cats.iter().map(|c| c.bytes).sum::<i64>();
    if gap != 0 {
        let why = "the trace contradicts the replay here: the counters hold bytes no block lifetime explains (see the replay issues)";
        cats.push(CategoryShare {
            category: UNACCOUNTED.into(),
            bytes: gap,
            blocks: 0,
            share: 0.0,
            rules: vec![RuleShare { rule: "inconsistent-trace".into(), bytes: gap, blocks: 0, why: why.into(), advice: None }],
            top_sites: Vec::new(),
        });
    }
    for c in &mut cats {
        c.share = c.bytes as f64 / active.max(1) as f64;
    }
    let finding = cats.first().filter(|c| c.bytes > 0).map(|c| {
        format!(
            "{} {} {} of the active memory ({}): {}.",
            capitalized(&c.category),
            are(&c.category),
            percent(c.share),
            format::bytes(c.bytes),
            advice_for(c)
        )
    });
    CategoryBreakdown { device, event, at_dump: !traced, active, categories: cats, finding }
}

/// A share as a whole percent, with a decimal where rounding would claim all or nothing.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (99.5..100.0).contains(&p) || (p > 0.0 && p < 0.5) {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

fn capitalized(s: &str) -> String {
    let plural = match s {
        "activation" => "activations",
        "parameter" => "parameters",
        "gradient" => "gradients",
        "autograd temporary" => "autograd temporaries",
        "temporary" => "temporaries",
        "unknown" => "uncategorized blocks",
        other => other,
    };
    capitalize(plural)
}

/// `s` with its first letter in upper case.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
}

fn are(category: &str) -> &'static str {
    match category {
        "activation" | "parameter" | "gradient" | "autograd temporary" | "temporary" | "unknown" => "are",
        _ => "is",
    }
}
