//! `simulated_runs`: the allocator simulations a user chose to keep in a SnapshotDB
//! (`snapscope simulate FILE --alloc-conf S --save DB`), one row per device and setting.

use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use crate::simulate::Simulation;
use rusqlite::{params, Connection};

pub const CREATE: &str = include_str!("../../sql/store/simulated_runs.sql");

/// Append simulations to the database at `path` (a SnapshotDB from `snapscope import`) of the
/// snapshot whose SHA-256 is `source_sha256`: runs never land in another snapshot's database.
pub fn save(path: &std::path::Path, source_sha256: &str, runs: &[Simulation]) -> Result<usize> {
    let fail = |e: rusqlite::Error| Error::io(&path.display().to_string(), e);
    if !path.exists() {
        return Err(Error::new(
            ErrorCode::InvalidParameter,
            format!("{} does not exist", path.display()),
            "create the SnapshotDB first: snapscope import FILE -o DB",
        ));
    }
    let conn = Connection::open(path).map_err(fail)?;
    super::check_schema(&conn)?;
    let recorded = super::metadata(&conn, "source_sha256")?.unwrap_or_default();
    if recorded != source_sha256 {
        return Err(Error::new(
            ErrorCode::InvalidParameter,
            format!("{} was imported from another snapshot (its source SHA-256 differs)", path.display()),
            "save into the SnapshotDB of this snapshot: snapscope import FILE -o DB",
        ));
    }
    conn.execute(CREATE, []).map_err(fail)?;
    for s in runs {
        conn.execute(
            include_str!("../../sql/store/simulated_runs_insert.sql"),
            params![
                s.device,
                s.settings.conf.as_str(),
                s.as_recorded,
                s.reproduces_recording,
                s.first_difference.as_ref().map(|d| d.event),
                s.first_difference.as_ref().map(|d| d.reason.clone()),
                s.reserved_peak.bytes as i64,
                s.reserved_peak.event,
                s.recorded_reserved_peak.bytes as i64,
                s.allocated_peak.bytes as i64,
                s.segment_allocs as i64,
                s.segment_frees as i64,
                s.free_at_reserved_peak as i64,
                s.largest_free_at_reserved_peak as i64,
                s.oom_detail.as_ref().map(|o| o.event),
                s.capacity.as_ref().map(|c| c.bytes as i64),
                serde_json::to_string(&s.settings).expect("serializable"),
            ],
        )
        .map_err(fail)?;
    }
    Ok(runs.len())
}
