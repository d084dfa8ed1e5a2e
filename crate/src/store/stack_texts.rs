//! A stack's two texts in `call_stacks`: `frames_json`, its frames innermost first as a JSON
//! array, and `text`, outermost first, one `file:line name` a line. A frame's piece of each is
//! the same in every stack it is in, unless one of its names is long enough to be cut shorter
//! where the stack repeats it (`frames::RepeatCut`): so the pieces are made once per frame and
//! copied per stack (made per stack and frame, they were half of the `call_stacks` step).

use crate::frames::{RepeatCut, REPEAT_NAME_CHARS};
use crate::model::Frame;
use std::fmt::Write as _;

/// Each frame's pieces, made when a stack first needs them.
pub struct StackTexts {
    pieces: Vec<Option<Pieces>>,
}

enum Pieces {
    /// Its JSON object and its line.
    Same(Box<str>, Box<str>),
    /// A name over REPEAT_NAME_CHARS: written per stack.
    PerStack,
}

impl StackTexts {
    pub fn new(frames: usize) -> StackTexts {
        StackTexts { pieces: (0..frames).map(|_| None).collect() }
    }

    /// `stack`'s two texts (its frame ids innermost first) into `json` and `text`, cleared first.
    pub fn write(&mut self, frames: &[Frame], stack: &[u32], json: &mut String, text: &mut String) {
        json.clear();
        text.clear();
        let (mut seen_json, mut seen_text) = (RepeatCut::default(), RepeatCut::default());
        json.push('[');
        for (k, &fid) in stack.iter().enumerate() {
            if k > 0 {
                json.push(',');
            }
            match self.pieces(frames, fid) {
                Pieces::Same(object, _) => json.push_str(object),
                Pieces::PerStack => frame_json(json, &frames[fid as usize], &mut seen_json),
            }
        }
        json.push(']');
        for (k, &fid) in stack.iter().rev().enumerate() {
            if k > 0 {
                text.push('\n');
            }
            match self.pieces(frames, fid) {
                Pieces::Same(_, line) => text.push_str(line),
                Pieces::PerStack => frame_line(text, &frames[fid as usize], &mut seen_text),
            }
        }
    }

    fn pieces(&mut self, frames: &[Frame], fid: u32) -> &Pieces {
        self.pieces[fid as usize].get_or_insert_with(|| {
            let f = &frames[fid as usize];
            if f.filename.len() > REPEAT_NAME_CHARS || f.name.len() > REPEAT_NAME_CHARS {
                return Pieces::PerStack;
            }
            // Names this short are never cut: a fresh RepeatCut gives them as they are.
            let (mut object, mut line) = (String::new(), String::new());
            frame_json(&mut object, f, &mut RepeatCut::default());
            frame_line(&mut line, f, &mut RepeatCut::default());
            Pieces::Same(object.into(), line.into())
        })
    }
}

/// A frame as an object of `call_stacks.frames_json`.
fn frame_json(out: &mut String, f: &Frame, seen: &mut RepeatCut) {
    #[derive(serde::Serialize)]
    struct FrameJson<'f> {
        filename: &'f str,
        line: i64,
        name: &'f str,
    }
    let (filename, name) = (seen.cut(&f.filename), seen.cut(&f.name));
    let row = FrameJson { filename: &filename, line: f.line, name: &name };
    out.push_str(&serde_json::to_string(&row).expect("serializable"));
}

/// A frame as a line of `call_stacks.text`.
fn frame_line(out: &mut String, f: &Frame, seen: &mut RepeatCut) {
    let _ = write!(out, "{}:{} {}", seen.cut(&f.filename), f.line, seen.cut(&f.name));
}
