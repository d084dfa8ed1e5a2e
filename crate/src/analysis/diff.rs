//! Two moments of one run: of the memory live after event A or after event B, what was kept
//! (live at both), freed (live at A, gone by B) and born (allocated after A, live at B), plus
//! what was born and freed in between (transient), by category and by site. live(B) − live(A)
//! = born − freed, row by row.

use super::basis::{dev_id, freed_only_label, BEFORE_WINDOW_NO_STACK, NO_STACK};
use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bytes of one row (a category or a site) between the two moments.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Moved {
    /// Live at A and at B.
    pub kept: i64,
    /// Live at A, freed by B.
    pub freed: i64,
    /// Allocated after A, live at B.
    pub born: i64,
    /// Allocated after A and freed by B: never seen at either moment.
    pub transient: i64,
    /// born − freed: live(B) − live(A).
    pub delta: i64,
}

impl Moved {
    fn add(&mut self, o: &Moved) {
        self.kept += o.kept;
        self.freed += o.freed;
        self.born += o.born;
        self.transient += o.transient;
        self.delta += o.delta;
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct MomentCategory {
    pub category: String,
    #[serde(flatten)]
    pub bytes: Moved,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct MomentSite {
    /// The frame that names the stack, or a synthetic label.
    pub label: String,
    pub detail: Option<String>,
    /// The naming frame, `path:line name`.
    pub site: Option<String>,
    pub stack: Option<String>,
    pub stack_id: Option<i64>,
    #[serde(flatten)]
    pub bytes: Moved,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct MomentsDiff {
    pub device: i64,
    /// The earlier moment (None = the window start) and the later one.
    pub event_a: Option<i64>,
    pub event_b: Option<i64>,
    /// Live bytes after each moment (the blocks the replay knows).
    pub live_a: i64,
    pub live_b: i64,
    /// The whole device: kept + freed = live_a, kept + born = live_b.
    pub total: Moved,
    /// Largest change first.
    pub by_category: Vec<MomentCategory>,
    /// Largest change first, then the most bytes moved; `top` rows, the rest summed in one.
    pub by_site: Vec<MomentSite>,
}

/// Kept, freed, born and transient bytes between events `a` and `b` (either order; None = the
/// window start) on `device`, `top` sites.
pub fn moments(conn: &Connection, device: i64, a: Option<i64>, b: Option<i64>, top: usize) -> Result<MomentsDiff> {
    let dev = dev_id(conn, device)?;
    let events: i64 = conn.query_row("SELECT events FROM devices WHERE id = ?1", [dev], |r| r.get(0))?;
    for e in [a, b].into_iter().flatten() {
        if e < 0 || e >= events {
            return Err(Error::new(
                ErrorCode::InvalidParameter,
                format!("event {e} is not on device {device} (it has {events} trace events)"),
                if events == 0 {
                    "a file without trace events has one moment, the dump: compare it with another file instead"
                } else {
                    "pass --at with an event index from 0 to the last event, or peak / start / end"
                },
            ));
        }
    }
    let (a, b) = if a.unwrap_or(-1) <= b.unwrap_or(-1) { (a, b) } else { (b, a) };
    let (ea, eb) = (a.unwrap_or(-1), b.unwrap_or(-1));
    // Lifetimes that touch (A, B]: allocated by B and not freed by A.
    let sql = include_str!("../../sql/analysis/diff_touching_lifetimes.sql");
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params![dev, ea, eb], |r| {
        Ok((
            r.get::<_, Option<i64>>(0)?,
            r.get::<_, bool>(1)?,
            r.get::<_, bool>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, bool>(4)?,
            r.get::<_, bool>(5)?,
            r.get::<_, i64>(6)?,
        ))
    })?;
    let traced = events > 0;
    let mut cats: BTreeMap<String, Moved> = BTreeMap::new();
    let mut sites: BTreeMap<(Option<i64>, bool, bool), Moved> = BTreeMap::new();
    let mut total = Moved::default();
    for row in rows {
        let (stack, before, freed_src, category, at_a, at_b, bytes) = row?;
        let m = match (at_a, at_b) {
            (true, true) => Moved { kept: bytes, ..Default::default() },
            (true, false) => Moved { freed: bytes, delta: -bytes, ..Default::default() },
            (false, true) => Moved { born: bytes, delta: bytes, ..Default::default() },
            (false, false) => Moved { transient: bytes, ..Default::default() },
        };
        total.add(&m);
        cats.entry(category).or_default().add(&m);
        // As the Peak view groups: memory known only by its free apart from its stack's allocations.
        let before = before && traced && (stack.is_none() || freed_src);
        sites.entry((stack, freed_src, before)).or_default().add(&m);
    }
    let mut by_category: Vec<MomentCategory> = cats.into_iter().map(|(category, bytes)| MomentCategory { category, bytes }).collect();
    by_category.sort_by_key(|c| (-c.bytes.delta.abs(), -(c.bytes.born + c.bytes.freed), c.category.clone()));
    let mut by_site: Vec<MomentSite> = sites
        .into_iter()
        .map(|((stack_id, freed_src, before), bytes)| site_row(conn, stack_id, freed_src, before, bytes))
        .collect::<Result<_>>()?;
    by_site.sort_by_key(|s| (-s.bytes.delta.abs(), -(s.bytes.born + s.bytes.freed + s.bytes.transient), s.label.clone()));
    if by_site.len() > top {
        let rest = by_site.split_off(top);
        let mut sum = Moved::default();
        rest.iter().for_each(|s| sum.add(&s.bytes));
        by_site.push(MomentSite {
            label: format!("[{} other sites]", rest.len()),
            detail: None,
            site: None,
            stack: None,
            stack_id: None,
            bytes: sum,
        });
    }
    super::basis::disambiguate(&mut by_site);
    Ok(MomentsDiff {
        device,
        event_a: a,
        event_b: b,
        live_a: total.kept + total.freed,
        live_b: total.kept + total.born,
        total,
        by_category,
        by_site,
    })
}

super::basis::labelled!(MomentSite);

fn site_row(conn: &Connection, stack_id: Option<i64>, freed_src: bool, before: bool, bytes: Moved) -> Result<MomentSite> {
    let shown = match stack_id {
        Some(id) => conn
            .query_row("SELECT label, caller, site, text FROM call_stacks WHERE id = ?1", [id], |r| {
                Ok((
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .ok(),
        None => None,
    };
    let (label, detail, site, stack) = match shown {
        Some((Some(label), _, _, text)) if freed_src => {
            (freed_only_label(before).to_string(), Some(format!("freed at {label}")), None, text)
        }
        Some((Some(label), caller, site, text)) => (label, caller, site, text),
        _ if before => (BEFORE_WINDOW_NO_STACK.to_string(), None, None, None),
        _ => (NO_STACK.to_string(), None, None, None),
    };
    Ok(MomentSite { label, detail, site, stack, stack_id, bytes })
}
