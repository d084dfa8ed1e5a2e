//! Two snapshots side by side (before/after a change, rank against rank): peaks per device, and
//! live bytes at each allocated peak per site, sites matched by meaning (`compare_match`): a line
//! moved by an edit is one site with its line change, not a vanished and a new one.

use super::basis::PeakSet;
use super::compare_match::{line_change, pair, Sites};
use super::holders::{self, By};
use super::overview::{DeviceOverview, Overview};
use super::stack_labels::StackLabels;
use super::{categories, live};
use crate::Loaded;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct StackDelta {
    /// The frame that names the stack, as shown.
    pub label: String,
    /// The calling Python frame (tells apart stacks that end in the same line).
    pub detail: Option<String>,
    /// The whole stack, outermost first (A's largest; B's for a new site).
    pub stack: String,
    /// B's largest stack when it is not `stack` (the site matched by code or function).
    pub stack_b: Option<String>,
    /// The naming frame (`path:line name`) in A and in B.
    pub site_a: Option<String>,
    pub site_b: Option<String>,
    /// The naming line's move, "model.py:20 → 23", when it moved.
    pub line_change: Option<String>,
    /// How A's and B's stacks were matched: stack (the same), code (the same functions in the
    /// same files, lines moved), function (the same naming function, other callers); None for
    /// new and vanished sites.
    pub matched_by: Option<String>,
    /// Stacks of A and of B in this row.
    pub stacks_a: i64,
    pub stacks_b: i64,
    pub bytes_a: i64,
    pub bytes_b: i64,
    pub delta: i64,
    /// new | vanished | changed | same
    pub change: String,
}

/// One figure of both snapshots: `delta` = b − a (None when either lacks the device).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Figure {
    pub label: String,
    /// "bytes" or "count".
    pub unit: String,
    pub a: Option<i64>,
    pub b: Option<i64>,
    pub delta: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceComparison {
    pub device: i64,
    pub peaks_a: Option<PeakSet>,
    pub peaks_b: Option<PeakSet>,
    /// b − a of the allocated peak.
    pub allocated_peak_delta: Option<i64>,
    /// Events, peaks and dump figures side by side.
    pub figures: Vec<Figure>,
    /// Live bytes at each allocated peak per stack, largest change first.
    pub stacks: Vec<StackDelta>,
    /// Categories at the allocated peaks, largest change first.
    pub categories: Vec<CategoryDelta>,
    /// What keeps A (B) out of a comparison by site and category: `device` (the file lacks
    /// the device) or `stacks` (its live blocks carry no stack: recorded without history). None
    /// when it takes part (a file without trace events at its dump).
    pub a_lacks: Option<String>,
    pub b_lacks: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Comparison {
    pub devices: Vec<DeviceComparison>,
}

/// What one snapshot contributes to a comparison, per device: its overview, its peaks and the
/// live bytes per stack at its allocated peak. Each snapshot computes its own side (the page
/// holds them in different workers), and either side compares itself with the other.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Side {
    pub devices: Vec<DeviceSide>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceSide {
    pub overview: DeviceOverview,
    pub peaks: PeakSet,
    /// Live bytes per stack (its whole text, or a synthetic label) at the allocated peak (at the
    /// dump without events).
    pub stacks: BTreeMap<String, i64>,
    /// How each stack of `stacks` is shown: (label, detail).
    pub labels: BTreeMap<String, (String, Option<String>)>,
    /// The naming frame (`path:line name`) of each stack of `stacks` that has one.
    #[serde(default)]
    pub sites: BTreeMap<String, String>,
    /// The event the stacks and categories are at (None = the window start or the dump).
    #[serde(default)]
    pub event: Option<i64>,
    /// Live bytes per category at the same event.
    pub categories: BTreeMap<String, i64>,
}

impl DeviceSide {
    /// Live bytes at the side's event.
    pub fn live_bytes(&self) -> i64 {
        self.stacks.values().sum()
    }
}

/// One category's bytes in A and B at their allocated peaks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct CategoryDelta {
    pub category: String,
    pub bytes_a: i64,
    pub bytes_b: i64,
    pub delta: i64,
}

/// This snapshot's side at each device's allocated peak: `overview` lists its devices.
pub fn side(l: &Loaded, overview: &Overview) -> Side {
    let devices = overview
        .devices
        .iter()
        .filter_map(|d| {
            let pos = l.devices.iter().position(|r| r.device == d.device)?;
            Some(device_side(l, pos, d, d.peaks.allocated.event.map(i64::from)))
        })
        .collect();
    Side { devices }
}

/// One device's side (position `pos` in the replay) right after `event` (None = the window
/// start, the dump without events).
pub fn device_side(l: &Loaded, pos: usize, d: &DeviceOverview, event: Option<i64>) -> DeviceSide {
    let (mut stacks, mut labels, mut sites) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let r = &l.devices[pos];
    let live = live::live(r, live::event_index(event));
    let (groups, _, _) = holders::live_groups(r, &live, &StackLabels::new(l), By::Stack, usize::MAX);
    for g in groups {
        // Memory known only by its free stays apart from the same stack's allocations.
        let key = match (&g.stack, g.origin.as_str()) {
            (Some(text), "before_window") => format!("{}\n{text}", g.label),
            (Some(text), _) => text.clone(),
            (None, _) => g.label.clone(),
        };
        *stacks.entry(key.clone()).or_insert(0) += g.bytes;
        if let Some(site) = &g.site {
            sites.insert(key.clone(), site.clone());
        }
        labels.insert(key, (g.label, g.detail));
    }
    let categories = categories::totals_of(&categories::categories(l, pos, event)).into_iter().map(|c| (c.category, c.bytes)).collect();
    DeviceSide { overview: d.clone(), peaks: live::peak_set(&d.peaks), stacks, labels, sites, event, categories }
}

/// Sites of A and B by live bytes, matched by meaning: new, vanished, changed, largest change first.
pub fn diff_stacks(a: Option<&DeviceSide>, b: Option<&DeviceSide>, top: usize) -> Vec<StackDelta> {
    fn of(x: Option<&DeviceSide>) -> Sites<'_> {
        x.map(|x| x.stacks.iter().map(|(k, &v)| (k.as_str(), (v, x.sites.get(k).map(String::as_str)))).collect()).unwrap_or_default()
    }
    fn largest<'a>(s: &Sites<'a>, keys: &[&'a str]) -> Option<&'a str> {
        keys.iter().copied().max_by_key(|k| (s[k].0, std::cmp::Reverse(*k)))
    }
    let (sa, sb) = (of(a), of(b));
    let shown = |x: Option<&DeviceSide>, k: &str| x.and_then(|x| x.labels.get(k)).cloned();
    let mut rows: Vec<StackDelta> = pair(&sa, &sb)
        .into_iter()
        .map(|p| {
            let (x, y): (i64, i64) = (p.a.iter().map(|k| sa[k].0).sum(), p.b.iter().map(|k| sb[k].0).sum());
            let (ka, kb) = (largest(&sa, &p.a), largest(&sb, &p.b));
            let change = match (ka, kb) {
                (None, Some(_)) => "new",
                (Some(_), None) => "vanished",
                _ if x != y => "changed",
                _ => "same",
            };
            let key = ka.or(kb).unwrap_or_default();
            let (label, detail) =
                ka.and_then(|k| shown(a, k)).or_else(|| kb.and_then(|k| shown(b, k))).unwrap_or_else(|| (key.to_string(), None));
            let (site_a, site_b) = (ka.and_then(|k| sa[k].1), kb.and_then(|k| sb[k].1));
            StackDelta {
                label,
                detail,
                stack: key.to_string(),
                stack_b: kb.filter(|k| *k != key).map(str::to_string),
                site_a: site_a.map(str::to_string),
                site_b: site_b.map(str::to_string),
                line_change: line_change(site_a, site_b),
                matched_by: p.how.map(|h| h.name().to_string()),
                stacks_a: p.a.len() as i64,
                stacks_b: p.b.len() as i64,
                bytes_a: x,
                bytes_b: y,
                delta: y - x,
                change: change.into(),
            }
        })
        .collect();
    rows.sort_by(|p, q| (-p.delta.abs(), -p.bytes_a.max(p.bytes_b), &p.label).cmp(&(-q.delta.abs(), -q.bytes_a.max(q.bytes_b), &q.label)));
    rows.truncate(top);
    rows
}

pub fn diff_categories(a: Option<&DeviceSide>, b: Option<&DeviceSide>) -> Vec<CategoryDelta> {
    let empty = BTreeMap::new();
    let (ma, mb) = (a.map_or(&empty, |x| &x.categories), b.map_or(&empty, |x| &x.categories));
    let names: std::collections::BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    let mut out: Vec<CategoryDelta> = names
        .into_iter()
        .map(|c| {
            let (x, y) = (ma.get(c).copied().unwrap_or(0), mb.get(c).copied().unwrap_or(0));
            CategoryDelta { category: c.clone(), bytes_a: x, bytes_b: y, delta: y - x }
        })
        .collect();
    out.sort_by_key(|c| (-c.delta.abs(), c.category.clone()));
    out
}

fn figures(a: Option<&DeviceOverview>, b: Option<&DeviceOverview>) -> Vec<Figure> {
    type Get = fn(&DeviceOverview) -> i64;
    let rows: [(&str, &str, Get); 8] = [
        ("events", "count", |d| d.events as i64),
        ("peak allocated", "bytes", |d| d.peaks.allocated.bytes),
        ("peak active", "bytes", |d| d.peaks.active.bytes),
        ("peak reserved", "bytes", |d| d.peaks.reserved.bytes),
        ("peak requested", "bytes", |d| d.peaks.requested.bytes),
        ("allocated at dump", "bytes", |d| d.at_dump.allocated as i64),
        ("reserved at dump", "bytes", |d| d.at_dump.reserved as i64),
        ("segments at dump", "count", |d| d.segments_at_dump as i64),
    ];
    // A file without trace events has no peaks over time: its peak rows stay empty rather than
    // show the dump's figures under a peak's name.
    let traced = |d: &&DeviceOverview| d.events > 0;
    rows.iter()
        .map(|&(label, unit, get)| {
            let side = |d: Option<&DeviceOverview>| if label.starts_with("peak") { d.filter(traced).map(get) } else { d.map(get) };
            let (x, y) = (side(a), side(b));
            Figure { label: label.into(), unit: unit.into(), a: x, b: y, delta: x.zip(y).map(|(x, y)| y - x) }
        })
        .collect()
}

/// Snapshot A against snapshot B, device by device (the union of both), `top` stacks each.
pub fn compare(a: &Side, b: &Side, top: usize) -> Comparison {
    let mut all: Vec<i64> = a.devices.iter().chain(&b.devices).map(|d| d.overview.device).collect();
    all.sort_unstable();
    all.dedup();
    let find = |s: &'_ Side, d: i64| s.devices.iter().find(|x| x.overview.device == d).cloned();
    let devices = all
        .into_iter()
        .map(|d| {
            let (pa, pb) = (find(a, d), find(b, d));
            let stacks = diff_stacks(pa.as_ref(), pb.as_ref(), top);
            let categories = diff_categories(pa.as_ref(), pb.as_ref());
            let lacks = |x: &Option<DeviceSide>| match x {
                None => Some("device".to_string()),
                Some(x) if x.live_bytes() > 0 && x.sites.is_empty() => Some("stacks".to_string()),
                Some(_) => None,
            };
            DeviceComparison {
                a_lacks: lacks(&pa),
                b_lacks: lacks(&pb),
                device: d,
                allocated_peak_delta: pa
                    .as_ref()
                    .zip(pb.as_ref())
                    .filter(|(x, y)| x.overview.events > 0 && y.overview.events > 0)
                    .map(|(x, y)| y.peaks.allocated.bytes - x.peaks.allocated.bytes),
                figures: figures(pa.as_ref().map(|x| &x.overview), pb.as_ref().map(|x| &x.overview)),
                peaks_a: pa.map(|x| x.peaks),
                peaks_b: pb.map(|x| x.peaks),
                stacks,
                categories,
            }
        })
        .collect();
    Comparison { devices }
}
