//! Output: with `--json`, exactly one JSON object on stdout in the envelope
//! (`{"ok": true, "schema_version": 1, ...}`), errors as `{"ok": false, "error": {...}}` on
//! stderr; otherwise text for people. One mapping from errors to exit codes.

use serde::Serialize;
use snapscope::engine::{envelope, ENVELOPE_VERSION};
use snapscope::Error;

/// How a command answers: JSON or text, and whether its input came from the project focus.
#[derive(Clone, Copy)]
pub struct Out {
    pub json: bool,
    pub from_focus: bool,
}

impl Out {
    /// Print `body` in the envelope with `--json`, else run `text`.
    pub fn answer<T: Serialize>(&self, body: T, text: impl FnOnce(&T)) {
        if self.json {
            let mut e = envelope(&body);
            e.focus_source = self.from_focus.then_some("project");
            println!("{}", serde_json::to_string_pretty(&e).expect("serializable"));
        } else {
            text(&body);
        }
    }
}

/// Exit code of a failed command (0 is success; clap exits with 2 on a usage error).
pub fn exit_code(_e: &Error) -> i32 {
    1
}

pub fn fail(e: &Error, as_json: bool) -> ! {
    if as_json {
        let body = serde_json::json!({"ok": false, "schema_version": ENVELOPE_VERSION, "error": {"code": e.code, "message": e.message, "hint": e.hint}});
        eprintln!("{body}");
    } else {
        eprintln!("error: {}\n  code: {}\n  hint: {}", e.message, e.code, e.hint);
    }
    std::process::exit(exit_code(e))
}
