//! Cells of the two large tables, `traces` and `lifetimes`: one function per column (declared
//! beside the column in `tables.rs`) that both the loader of .db files and the virtual tables
//! of open sessions call, so the two can never disagree.

use crate::model::{DeviceTrace, Event, EventExtra, Pool};
use crate::replay::{DeviceReplay, Lifetime, StackSource, NONE};
use crate::Loaded;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};
use std::borrow::Cow;
use std::sync::Arc;

/// One row of a large table: its device, position, ids and item (an event or a lifetime).
pub struct Row<'a, T> {
    pub loaded: &'a Loaded,
    /// Device position in `loaded.devices` (= `device_id`).
    pub dev: usize,
    /// Position within the device.
    pub index: usize,
    /// The row's id.
    pub id: i64,
    /// Id of the device's first lifetime (lifetime ids run across devices).
    pub lifetime_base: i64,
    pub item: &'a T,
}

/// A cell's value.
#[derive(Debug, PartialEq)]
pub enum CellValue<'a> {
    Null,
    Int(i64),
    Text(Cow<'a, str>),
}

impl CellValue<'_> {
    pub fn of(v: Option<i64>) -> Self {
        v.map_or(CellValue::Null, CellValue::Int)
    }
    pub fn text_of(v: Option<&str>) -> CellValue<'_> {
        v.map_or(CellValue::Null, |s| CellValue::Text(Cow::Borrowed(s)))
    }

    /// A text an event shares with others: shown cut (see [`shared_cut`]).
    pub fn shared_text_of(v: Option<&str>) -> CellValue<'_> {
        match v {
            Some(s) => CellValue::Text(shared_cut(s).map_or(Cow::Borrowed(s), Cow::Owned)),
            None => CellValue::Null,
        }
    }
}

/// Characters of a shared text a cell shows (see [`shared_cut`]).
pub const SHARED_TEXT_CHARS: usize = 1000;

/// A text shared by many rows (an event's compile_context, user_metadata, internal_metadata; an
/// annotation's or range's name) as its cells show it: its first 1,000 characters and `…`, when
/// longer, so one long text shared by every row is not repeated in full per row (its whole text
/// is in `long_texts` once, the snapshot and the event's own answers keep it whole).
pub fn shared_cut(s: &str) -> Option<String> {
    match crate::frames::cut(s, SHARED_TEXT_CHARS) {
        Cow::Owned(cut) => Some(cut),
        Cow::Borrowed(_) => None,
    }
}

/// Whether [`shared_cut`] cuts `s`, without building the cut.
pub fn is_shared_cut(s: &str) -> bool {
    crate::frames::cut_index(s, SHARED_TEXT_CHARS).is_some()
}

/// The texts an event shares with other events, and the `traces` column each shows in: the one
/// list the writer of `long_text_uses` and the reader of a .db go through.
#[derive(Clone, Copy)]
pub enum SharedText {
    CompileContext,
    UserMetadata,
    /// Shown inside `extra_json`.
    InternalMetadata,
}

impl SharedText {
    pub const ALL: [SharedText; 3] = [SharedText::CompileContext, SharedText::UserMetadata, SharedText::InternalMetadata];

    /// `long_text_uses.column_name` of a cell showing this text cut.
    pub fn column(self) -> &'static str {
        match self {
            SharedText::CompileContext => "compile_context",
            SharedText::UserMetadata => "user_metadata",
            SharedText::InternalMetadata => "extra_json.internal_metadata",
        }
    }

    pub fn of(self, x: &EventExtra) -> &Option<Arc<str>> {
        match self {
            SharedText::CompileContext => &x.compile_context,
            SharedText::UserMetadata => &x.user_metadata,
            SharedText::InternalMetadata => &x.internal_metadata,
        }
    }

    pub fn of_mut(self, x: &mut EventExtra) -> &mut Option<Arc<str>> {
        match self {
            SharedText::CompileContext => &mut x.compile_context,
            SharedText::UserMetadata => &mut x.user_metadata,
            SharedText::InternalMetadata => &mut x.internal_metadata,
        }
    }
}

impl ToSql for CellValue<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            CellValue::Null => ValueRef::Null,
            CellValue::Int(v) => ValueRef::Integer(*v),
            CellValue::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

/// How a column's cell is computed from its row.
pub type CellFn<T> = for<'r, 'a> fn(&'r Row<'a, T>) -> CellValue<'a>;

/// Rows of one large table: how many a device has and the item of each.
pub trait Items: Sized + 'static {
    fn count(d: &DeviceReplay) -> usize;
    fn item(l: &Loaded, dev: usize, index: usize) -> &Self;
}

impl Items for Event {
    fn count(d: &DeviceReplay) -> usize {
        d.events
    }
    fn item(l: &Loaded, dev: usize, index: usize) -> &Event {
        let trace = l.snapshot.trace(l.devices[dev].device).expect("a device with events has a trace");
        &trace.events[index]
    }
}

impl Items for Lifetime {
    fn count(d: &DeviceReplay) -> usize {
        d.lifetimes.len()
    }
    fn item(l: &Loaded, dev: usize, index: usize) -> &Lifetime {
        &l.devices[dev].lifetimes[index]
    }
}

impl<'a> Row<'a, Event> {
    pub fn replay(&self) -> &'a DeviceReplay {
        &self.loaded.devices[self.dev]
    }
    fn trace(&self) -> Option<&'a DeviceTrace> {
        self.loaded.snapshot.trace(self.replay().device)
    }
    pub fn extra(&self) -> Option<&'a EventExtra> {
        self.trace().and_then(|t| t.extra(self.item))
    }
    pub fn stream(&self) -> u64 {
        self.trace().map_or(0, |t| t.stream(self.item))
    }
    /// The action's name (an unknown action keeps its own).
    pub fn action(&self) -> &'a str {
        self.extra().and_then(|x| x.action_name.as_deref()).unwrap_or(self.item.action().name())
    }
    pub fn lifetime_id(&self) -> Option<i64> {
        let l = self.replay().event_lifetime[self.index];
        (l != NONE).then(|| self.lifetime_base + l as i64)
    }
    /// The shared texts this row's cells show cut, each with its column and whole text.
    pub fn cut_texts(&self) -> impl Iterator<Item = (&'static str, &'a Arc<str>)> {
        self.extra().into_iter().flat_map(cut_texts)
    }
    /// Rare fields without a column of their own, as JSON (None when there are none).
    pub fn extra_json(&self) -> Option<String> {
        self.extra().filter(|x| has_extra_json(x)).map(|x| {
            // The shared texts cut as in their columns: not repeated whole per row.
            let mut y = x.clone();
            for t in SharedText::ALL {
                if let Some(cut) = t.of(x).as_deref().and_then(shared_cut) {
                    *t.of_mut(&mut y) = Some(cut.into());
                }
            }
            serde_json::to_string(&y).unwrap_or_default()
        })
    }
}

/// The shared texts of an event's extras that its cells show cut, each with its column and
/// whole text.
pub fn cut_texts(x: &EventExtra) -> impl Iterator<Item = (&'static str, &Arc<str>)> {
    SharedText::ALL.into_iter().filter_map(move |t| {
        let whole = t.of(x).as_ref()?;
        is_shared_cut(whole).then_some((t.column(), whole))
    })
}

/// Whether an event's extras have anything for `extra_json`.
pub fn has_extra_json(x: &EventExtra) -> bool {
    x.forward_frames.is_some() || x.internal_metadata.is_some() || x.pool_id.is_some() || x.category.is_some() || !x.other.is_empty()
}

pub fn pool_name(p: Pool) -> &'static str {
    match p {
        Pool::Small => "small",
        Pool::Large => "large",
    }
}

pub fn stack_source_name(s: StackSource) -> &'static str {
    match s {
        StackSource::Alloc => "alloc",
        StackSource::DumpBlock => "dump_block",
        StackSource::Free => "free",
        StackSource::None => "none",
    }
}

pub fn origin_name(x: &Lifetime) -> &'static str {
    if x.before_window() {
        "before_window"
    } else {
        "in_window"
    }
}

/// A 64-bit address or size as SQLite stores it (values ≥ 2^63 read as negative).
pub fn int(v: u64) -> CellValue<'static> {
    CellValue::Int(v as i64)
}
