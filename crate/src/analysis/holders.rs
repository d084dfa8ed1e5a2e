//! Who holds the live memory: the live lifetimes grouped by allocation stack or by the frame that
//! names it, largest first, each group labelled as people read it (`basis::Group`). From the
//! replay; the groups are those the SnapshotDB's `live_groups` query finds, in the same order.

use super::basis::{freed_only_label, Group, BEFORE_WINDOW_NO_STACK, NO_STACK};
use super::stack_labels::StackLabels;
use crate::fasthash::FastMap;
use crate::replay::{DeviceReplay, StackSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Stack,
    /// The frame that names each stack (never the unwinder's innermost frame).
    Frame,
}

/// What tells groups apart: the stack or frame, whether it is known only from the block's free
/// (not where it was allocated), and for those and the stackless ones, whether the block is from
/// before the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    id: Option<u32>,
    freed: bool,
    before: bool,
}

#[derive(Default)]
struct Sums {
    blocks: i64,
    bytes: i64,
    requested: i64,
}

/// The `live` lifetimes of `d` grouped `by`, the `limit` largest groups and one for the rest;
/// also their total bytes and blocks.
pub fn live_groups(d: &DeviceReplay, live: &[usize], labels: &StackLabels, by: By, limit: usize) -> (Vec<Group>, i64, i64) {
    let mut label_frames: FastMap<u32, Option<u32>> = FastMap::default();
    let mut sums: FastMap<Key, Sums> = FastMap::default();
    for &i in live {
        let l = &d.lifetimes[i];
        let id = match by {
            By::Stack => l.stack(),
            By::Frame => l.stack().and_then(|s| *label_frames.entry(s).or_insert_with(|| labels.label_frame(s))),
        };
        let freed = l.stack_source == StackSource::Free;
        let before = (id.is_none() || freed) && l.before_window();
        let s = sums.entry(Key { id, freed, before }).or_default();
        s.blocks += 1;
        s.bytes += l.size as i64;
        s.requested += l.requested as i64;
    }
    let mut keys: Vec<(Key, Sums)> = sums.into_iter().collect();
    keys.sort_by(|(a, x), (b, y)| y.bytes.cmp(&x.bytes).then(a.cmp(b)));
    // Without trace events there is no window: stackless dump blocks simply have no stack.
    let traced = d.events > 0;
    let all: Vec<Group> = keys.into_iter().map(|(k, s)| group(k, s, traced, labels, by)).collect();
    super::basis::top_groups(all, limit)
}

/// One group's row: its label, second line, site and stack.
fn group(k: Key, s: Sums, traced: bool, labels: &StackLabels, by: By) -> Group {
    let before = k.before && traced;
    // (shown, caller, site, stack) of the group's stack or frame.
    let named = k.id.map(|id| match by {
        By::Stack => {
            let n = labels.stack(id);
            (n.label, n.caller, n.site, Some(n.text))
        }
        By::Frame => (labels.display(id), None, labels.frame_site(id), None),
    });
    let (label, detail, origin, site, stack) = match named {
        Some((shown, _, _, stack)) if k.freed => {
            let origin = if before { "before_window" } else { "dynamic" };
            (freed_only_label(before).to_string(), Some(format!("freed at {shown}")), origin, None, stack)
        }
        Some((shown, caller, site, stack)) => (shown, caller, "dynamic", Some(site), stack),
        None if before => (BEFORE_WINDOW_NO_STACK.to_string(), None, "before_window", None, None),
        None => (NO_STACK.to_string(), None, "dynamic", None, None),
    };
    Group {
        label,
        detail,
        site,
        stack,
        stack_id: k.id.map(i64::from),
        origin: origin.into(),
        blocks: s.blocks,
        bytes: s.bytes,
        requested_bytes: s.requested,
        share: 0.0,
        merged: None,
    }
}
