//! An open snapshot: the replayed snapshot (when read from a pickle) and its SnapshotDB. The CLI
//! and the wasm facade both work through this, so they answer with the same functions.

use crate::analysis::{compare, event, findings, fragment, leak, oom, overview, peak, state, timeline, tree};
use crate::error::{Error, Result};
use crate::Loaded;
use rusqlite::Connection;
use std::sync::Arc;

pub struct Session {
    /// Shared with the SnapshotDB's virtual `traces` table.
    pub loaded: Option<Arc<Loaded>>,
    pub conn: Connection,
}

impl Session {
    pub fn from_loaded(loaded: Loaded, meta: &[(&str, String)]) -> Result<Session> {
        let loaded = Arc::new(loaded);
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
        let trace = l.snapshot.trace(device);
        let time_of = |i: usize| trace.and_then(|t| t.events.get(i)).and_then(|e| e.time_us());
        Ok(timeline::downsample(device, &d.series, time_of, from, to, buckets))
    }

    pub fn overview(&self) -> Result<overview::Overview> {
        serde_json::from_str(&self.overview_json()?)
            .map_err(|e| Error::new("DATABASE_SCHEMA_INVALID", format!("stored overview unreadable: {e}"), "re-import the snapshot"))
    }

    pub fn devices(&self) -> Result<Vec<i64>> {
        Ok(self.overview()?.devices.iter().map(|d| d.device).collect())
    }

    /// Every analysis of one device. `event` picks the event of the peak analysis (default: the
    /// allocated peak).
    pub fn analyze(&self, device: i64, event: Option<Option<i64>>) -> Result<DeviceAnalysis> {
        let ov = self.overview()?.devices.into_iter().find(|d| d.device == device).ok_or_else(|| no_device(device))?;
        if let Some(Some(e)) = event {
            self.check_event(device, Some(e))?;
        }
        let has_events = ov.events > 0;
        let peak = if has_events { Some(peak::peak(&self.conn, device, event, 10)?) } else { None };
        let fragment = fragment::fragmentation(&self.conn, device)?;
        let floor = self.loaded.as_ref().and_then(|l| l.device(device)).map(|d| leak::tenth_floors(&d.series));
        let leak = if has_events { Some(leak::leak(&self.conn, device, 10, floor)?) } else { None };
        let oom = oom::oom(&self.conn, device)?;
        let findings = findings::findings(&ov, peak.as_ref(), &fragment, leak.as_ref(), &oom);
        Ok(DeviceAnalysis { device, overview: ov, peak, fragment, leak, oom, findings })
    }

    pub fn compare(&self, other: &Session) -> Result<compare::Comparison> {
        compare::compare(&self.conn, &other.conn, 20)
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

/// All analyses of one device, as `analyze --mode all` prints them.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct DeviceAnalysis {
    pub device: i64,
    pub overview: overview::DeviceOverview,
    /// None without trace events.
    pub peak: Option<peak::PeakAnalysis>,
    pub fragment: fragment::Fragmentation,
    pub leak: Option<leak::LeakAnalysis>,
    pub oom: oom::OomAnalysis,
    pub findings: Vec<findings::Finding>,
}

pub fn no_device(device: i64) -> Error {
    Error::new("DEVICE_NOT_FOUND", format!("device {device} is not in this snapshot"), "see `overview` for the devices it has")
}
