//! What the memory is at one event: the live blocks by category (parameter, gradient, optimizer
//! state, activation, …), the rule that decided each share, the top sites of each category, and
//! what to do about the largest share. The categories of the blocks come from the SnapshotDB's
//! `lifetimes.category` (crate::semantics), so a .db file answers the same.

use super::basis::{counters_at, dev_id, with_live};
use crate::error::Result;
use crate::format;
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct RuleShare {
    pub rule: String,
    pub bytes: i64,
    pub blocks: i64,
    pub why: String,
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

/// Live bytes by category after `event`, largest first (the rows of `categories_at`).
pub fn totals(conn: &Connection, device: i64, event: Option<i64>) -> Result<Vec<CategoryTotal>> {
    Ok(categories_at(conn, device, event)?
        .categories
        .into_iter()
        .map(|c| CategoryTotal { category: c.category, bytes: c.bytes, blocks: c.blocks })
        .collect())
}

/// What reduces a category's share, for the finding. For uncategorized blocks it depends on
/// whether their largest site has a stack: without one, recording earlier gives them one; with
/// one, no rule knows that code, and a rule of the user's own will.
pub fn advice_for(c: &CategoryShare) -> &'static str {
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

pub fn categories_at(conn: &Connection, device: i64, event: Option<i64>) -> Result<CategoryBreakdown> {
    let dev = dev_id(conn, device)?;
    let at = event.unwrap_or(-1);
    let why: std::collections::HashMap<String, String> = conn
        .prepare("SELECT name, why FROM category_rules")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare(&with_live(include_str!("../../sql/analysis/categories_at.sql"), "?1", "?2"))?;
    let rows = stmt
        .query_map(params![dev, at], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?)))?;
    let mut cats: Vec<CategoryShare> = Vec::new();
    for row in rows {
        let (category, rule, blocks, bytes) = row?;
        let why = why.get(&rule).cloned().unwrap_or_else(|| "no rule matched: nothing in its stack or lifetime says what it is".into());
        let share = RuleShare { rule, bytes, blocks, why };
        match cats.iter_mut().find(|c| c.category == category) {
            Some(c) => {
                c.bytes += bytes;
                c.blocks += blocks;
                c.rules.push(share);
            }
            None => cats.push(CategoryShare { category, bytes, blocks, share: 0.0, rules: vec![share], top_sites: Vec::new() }),
        }
    }
    let traced: bool = conn.query_row("SELECT events > 0 FROM devices WHERE id = ?1", [dev], |r| r.get(0))?;
    let before = if traced { super::basis::BEFORE_WINDOW_NO_STACK } else { "[in the dump, no stack]" };
    let mut sites = conn.prepare(&with_live(include_str!("../../sql/analysis/category_top_sites.sql"), "?1", "?2"))?;
    for c in &mut cats {
        c.top_sites = sites
            .query_map(params![dev, at, c.category, before, super::basis::NO_STACK], |r| {
                Ok(SiteShare { label: r.get(0)?, blocks: r.get(1)?, bytes: r.get(2)? })
            })?
            .collect::<rusqlite::Result<_>>()?;
    }
    cats.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.category.cmp(&b.category)));
    let active = counters_at(conn, device, event)?.active;
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
            rules: vec![RuleShare { rule: "inconsistent-trace".into(), bytes: gap, blocks: 0, why: why.into() }],
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
    Ok(CategoryBreakdown { device, event, at_dump: !traced, active, categories: cats, finding })
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
