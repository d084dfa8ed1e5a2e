//! Peak analysis: the peak event of each counter, the gaps at it, and who holds the memory there,
//! grouped by allocation stack and by top frame. Groups sum exactly to the active counter at the
//! event (blocks allocated before the window without a stack form their own labelled group).

use super::basis::{Group, PeakSet};
use super::holders::{self, By};
use super::live;
use super::overview::DeviceOverview;
use super::peak_rows::{self, Shown};
use super::stack_labels::StackLabels;
use crate::replay::Counters;
use crate::Loaded;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct PeakAnalysis {
    pub device: i64,
    pub peaks: PeakSet,
    /// The event analysed (the allocated peak unless asked otherwise); None = window start.
    pub event: Option<i64>,
    /// The device has no trace events: the state analysed is the dump's.
    pub at_dump: bool,
    pub counters_at_event: Counters,
    /// reserved − active and reserved − allocated at the event: cached, not handed out.
    pub reserved_minus_active: i64,
    pub reserved_minus_allocated: i64,
    pub live_blocks: i64,
    pub live_bytes: i64,
    /// live_bytes / active counter (1.0 when the replay is consistent).
    pub coverage: f64,
    pub by_stack: Vec<Group>,
    /// How much of the live memory the rows of `by_stack` hold.
    pub stack_rows: Shown,
    /// The live memory by site: stacks named by the same frame merged into one row.
    pub by_site: Vec<Group>,
    /// How much of the live memory the rows of `by_site` hold.
    pub site_rows: Shown,
    pub by_top_frame: Vec<Group>,
    /// The same live memory by category (docs/categories.md).
    pub by_category: Vec<super::categories::CategoryTotal>,
}

/// Who holds the live memory at the event: the groups and their totals.
struct Holders {
    /// Every group by stack, largest first (the rows are cut from it).
    all_stacks: Vec<Group>,
    by_top_frame: Vec<Group>,
    live_bytes: i64,
    live_blocks: i64,
    by_category: Vec<super::categories::CategoryTotal>,
}

/// Who holds the memory of device position `pos` right after `event` (None = the window
/// start), from the replay; `ov` is the device's overview (its peaks).
pub fn peak(l: &Loaded, pos: usize, ov: &DeviceOverview, event: Option<i64>, top: usize) -> PeakAnalysis {
    let d = &l.devices[pos];
    let at = live::event_index(event);
    let live = live::live(d, at);
    let labels = StackLabels::new(l);
    let (all_stacks, live_bytes, live_blocks) = holders::live_groups(d, &live, &labels, By::Stack, usize::MAX);
    let (by_top_frame, _, _) = holders::live_groups(d, &live, &labels, By::Frame, top);
    let by_category = super::categories::totals_of(&super::categories::categories(l, pos, event));
    let h = Holders { all_stacks, by_top_frame, live_bytes, live_blocks, by_category };
    assemble(ov, event, live::counters_at(d, at), h, top)
}

fn assemble(ov: &DeviceOverview, event: Option<i64>, c: Counters, h: Holders, top: usize) -> PeakAnalysis {
    let place = if ov.events == 0 {
        "at the dump".to_string()
    } else if event.is_some() && event == ov.peaks.allocated.event.map(i64::from) {
        "at the allocated peak".to_string()
    } else {
        format!("after {}", crate::format::event(event))
    };
    let (by_site, sites) = peak_rows::by_site(&h.all_stacks, top);
    let site_rows = peak_rows::shown(&by_site, sites, h.live_bytes, &place);
    let stacks = h.all_stacks.len();
    let by_stack = super::basis::top_groups(h.all_stacks, top).0;
    let stack_rows = peak_rows::shown(&by_stack, stacks, h.live_bytes, &place);
    PeakAnalysis {
        device: ov.device,
        peaks: live::peak_set(&ov.peaks),
        event,
        at_dump: ov.events == 0,
        counters_at_event: c,
        reserved_minus_active: c.reserved - c.active,
        reserved_minus_allocated: c.reserved - c.allocated,
        live_blocks: h.live_blocks,
        live_bytes: h.live_bytes,
        coverage: if c.active > 0 { h.live_bytes as f64 / c.active as f64 } else { 1.0 },
        by_stack,
        stack_rows,
        by_site,
        site_rows,
        by_top_frame: h.by_top_frame,
        by_category: h.by_category,
    }
}
