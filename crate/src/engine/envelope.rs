//! The JSON envelope of every `--json` answer and of the page's `overview()`:
//! `{"ok": true, "schema_version": 1, ...the answer's own fields}`.

use serde::Serialize;

pub const ENVELOPE_VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Envelope<T: Serialize> {
    pub ok: bool,
    pub schema_version: u32,
    /// "project" when the CLI took its input from the folder's focus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_source: Option<&'static str>,
    #[serde(flatten)]
    pub body: T,
}

/// `body`'s fields behind `ok` and `schema_version` (`body` must serialize as an object).
pub fn envelope<T: Serialize>(body: T) -> Envelope<T> {
    Envelope { ok: true, schema_version: ENVELOPE_VERSION, focus_source: None, body }
}
