//! An open snapshot: the replayed snapshot (when read from a pickle) and its SnapshotDB. The CLI
//! and the wasm facade both work through this, so they answer with the same functions.

use crate::analysis::{event, overview, state, timeline, tree};
use crate::error::{Error, Result};
use crate::Loaded;
use rusqlite::Connection;

pub struct Session {
    pub loaded: Option<Loaded>,
    pub conn: Connection,
}

impl Session {
    pub fn from_loaded(loaded: Loaded, meta: &[(&str, String)]) -> Result<Session> {
        let conn = crate::store::to_memory(&loaded, meta)?;
        Ok(Session { loaded: Some(loaded), conn })
    }

    pub fn from_db(conn: Connection) -> Result<Session> {
        crate::store::check_schema(&conn)?;
        Ok(Session { loaded: None, conn })
    }

    pub fn overview_json(&self) -> Result<String> {
        match &self.loaded {
            Some(l) => Ok(serde_json::to_string(&overview::overview(l)).unwrap_or_default()),
            None => crate::store::metadata(&self.conn, "overview_json")?
                .ok_or_else(|| Error::new("DATABASE_SCHEMA_INVALID", "the SnapshotDB has no overview", "re-import the snapshot")),
        }
    }

    pub fn tree(&self, device: i64, event: Option<i64>) -> Result<tree::MemoryTree> {
        self.check_event(device, event)?;
        tree::memory_tree(&self.conn, device, event, tree::TreeOptions::default())
    }

    pub fn state(&self, device: i64, event: Option<i64>) -> Result<state::AllocatorState> {
        self.check_event(device, event)?;
        state::allocator_state(&self.conn, device, event)
    }

    pub fn event(&self, device: i64, index: i64) -> Result<event::EventDetail> {
        event::event_detail(&self.conn, device, index)
    }

    pub fn timeline(&self, device: i64, from: u32, to: u32, buckets: u32) -> Result<timeline::Timeline> {
        let l = self
            .loaded
            .as_ref()
            .ok_or_else(|| Error::new("UNSUPPORTED", "timelines need the snapshot itself", "open the snapshot, not the SnapshotDB"))?;
        let d = l.device(device).ok_or_else(|| no_device(device))?;
        Ok(timeline::downsample(device, &d.series, from, to, buckets))
    }

    /// Event indices are validated: an index past the end is an error, not the end state.
    pub fn check_event(&self, device: i64, event: Option<i64>) -> Result<()> {
        let events: Option<i64> = self.conn.query_row("SELECT events FROM devices WHERE device_index = ?1", [device], |r| r.get(0)).ok();
        let n = events.ok_or_else(|| no_device(device))?;
        match event {
            Some(e) if e < 0 || e >= n => Err(Error::new(
                "EVENT_OUT_OF_RANGE",
                format!("event {e} is outside device {device}'s trace (0..{})", n.max(1) - 1),
                "omit the event for the state before the first event, or pick one from `overview`",
            )),
            _ => Ok(()),
        }
    }
}

pub fn no_device(device: i64) -> Error {
    Error::new("DEVICE_NOT_FOUND", format!("device {device} is not in this snapshot"), "see `overview` for the devices it has")
}
