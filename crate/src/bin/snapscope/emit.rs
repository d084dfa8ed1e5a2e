//! Output: with `--json`, exactly one JSON object on stdout in the envelope
//! (`{"ok": true, "schema_version": 1, ...}`), errors as `{"ok": false, "error": {...}}` on
//! stderr; otherwise text for people. One mapping from errors to exit codes.

use serde::Serialize;
use snapscope::codes::ErrorCode;
use snapscope::engine::{envelope, ENVELOPE_VERSION};
use snapscope::Error;
use std::borrow::Cow;

/// How a command answers: JSON or text, and whether its input came from the project focus.
#[derive(Clone, Copy)]
pub struct Out {
    pub json: bool,
    pub from_focus: bool,
}

impl Out {
    /// Print `body` in the envelope with `--json`, else run `text`.
    pub fn answer<T: Serialize>(&self, body: T, text: impl FnOnce(&T)) {
        if capturing() {
            // Another surface (the MCP server) runs this command: keep the JSON and the text.
            let mut e = envelope(&body);
            e.focus_source = self.from_focus.then_some("project");
            let json = serde_json::to_value(&e).expect("serializable");
            let want_text = CAPTURE.with(|c| {
                let mut c = c.borrow_mut();
                let k = c.as_mut().expect("capturing");
                k.json = Some(json);
                k.want_text
            });
            if want_text {
                text(&body);
            }
            return;
        }
        if self.json {
            let mut e = envelope(&body);
            e.focus_source = self.from_focus.then_some("project");
            match serde_json::to_string_pretty(&e) {
                Ok(text) => line(&text),
                Err(err) => {
                    fail(&Error::new(ErrorCode::Internal, format!("the answer could not be written as JSON: {err}"), "report this"), true)
                }
            }
        } else {
            text(&body);
        }
    }
}

/// What a command answered when it ran under [`capture`]: its `--json` and its text.
#[derive(Default)]
pub struct Captured {
    pub json: Option<serde_json::Value>,
    pub text: String,
    /// Whether the command's text is wanted (the text of a large answer can be far larger).
    pub want_text: bool,
}

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Captured>> = const { std::cell::RefCell::new(None) };
}

fn capturing() -> bool {
    CAPTURE.with(|c| c.borrow().is_some())
}

/// Run `f` (a command) with its answer and (when `want_text`) its text lines kept instead of printed.
pub fn capture<R>(want_text: bool, f: impl FnOnce() -> R) -> (R, Captured) {
    CAPTURE.with(|c| *c.borrow_mut() = Some(Captured { want_text, ..Captured::default() }));
    let r = f();
    (r, CAPTURE.with(|c| c.borrow_mut().take().unwrap_or_default()))
}

/// One line of text output: printed, or kept while a command runs under [`capture`].
pub fn line(s: &str) {
    let kept = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(k) => {
            k.text.push_str(s);
            k.text.push('\n');
            true
        }
        None => false,
    });
    if !kept {
        print_line(s);
    }
}

/// Text for a terminal: control characters a snapshot may carry in its names (ESC, BEL, C1 codes
/// that set the title or clear the screen) and bidirectional controls are printed escaped, never
/// sent as they are.
pub fn clean(s: &str) -> Cow<'_, str> {
    // Control characters, and the bidirectional overrides and isolates that reorder what a
    // terminal shows (U+202E makes `gpj.exe` read `exe.jpg`).
    let bidi = |c: char| matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let bad = |c: char| (c.is_control() && c != '\n' && c != '\t') || bidi(c);
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| if bad(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect())
}

/// `println!` for text output: every line goes through [`clean`] and [`line`].
macro_rules! say {
    () => {
        $crate::emit::line("")
    };
    ($($t:tt)*) => {
        $crate::emit::line(&$crate::emit::clean(&format!($($t)*)))
    };
}

/// Whether errors are written as JSON (`--json`), for a failure while answering.
pub static JSON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One line on stdout. A write that fails (a full disk, /dev/full) ends the command with a clean
/// IO_ERROR instead of `println!`'s panic; a closed pipe ends it quietly, like other Unix tools.
fn print_line(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{text}").and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let e =
            Error::new(ErrorCode::IoError, format!("writing the answer to stdout: {e}"), "free disk space, or send the output elsewhere");
        fail(&e, JSON.load(std::sync::atomic::Ordering::Relaxed));
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
        eprintln!("error: {}\n  code: {}\n  hint: {}", clean(&e.message), e.code, clean(&e.hint));
    }
    std::process::exit(exit_code(e))
}
