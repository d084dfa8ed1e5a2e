//! How a stack is named where people read it: the frame that names it, the calling Python
//! frame, its site and its whole text, exactly as the SnapshotDB's `call_stacks` and `frames`
//! rows hold them (the store builds those rows with these functions). Computed per stack asked
//! for, not for every stack of the snapshot: an analysis names only its top groups.

use crate::frames::{self, cut, Kind, ANSWER_NAME_CHARS};
use crate::model::{FrameId, Interner, StackId};
use std::fmt::Write;

/// A stack's names (the `call_stacks` columns `label`, `caller`, `site`, `text`).
pub struct StackLabel {
    /// The naming frame as shown (`frames::display`); "" for a stack without frames.
    pub label: String,
    pub caller: Option<String>,
    /// `filename:line name` of the naming frame (names cut as in every stack text); "" without one.
    pub site: String,
    /// Outermost first, one `filename:line name` a line.
    pub text: String,
    pub label_frame: Option<FrameId>,
}

/// The names of a snapshot's frames and stacks.
pub struct StackLabels<'a> {
    interner: &'a Interner,
    /// The common folder of the user's files, which `display` shortens paths against.
    root: String,
    /// Per frame: a line that runs the program's loop, which names no stack (`frames::loop_lines`).
    loop_lines: &'a [u8],
}

impl<'a> StackLabels<'a> {
    pub fn new(l: &'a crate::Loaded) -> StackLabels<'a> {
        let interner = &l.snapshot.interner;
        StackLabels { interner, root: frames::user_root(interner.frames.iter()), loop_lines: l.loop_lines() }
    }

    /// A frame as shown (`frames.display`).
    pub fn display(&self, frame: FrameId) -> String {
        frames::display(&self.interner.frames[frame as usize], &self.root)
    }

    /// `filename:line name` of a frame, whole (as `frames` rows hold it).
    pub fn frame_site(&self, frame: FrameId) -> String {
        let f = &self.interner.frames[frame as usize];
        format!("{}:{} {}", f.filename, f.line, f.name)
    }

    /// The frame that names a stack.
    pub fn label_frame(&self, stack: StackId) -> Option<FrameId> {
        let st = &self.interner.stacks[stack as usize];
        let kinds = self.kinds(st);
        frames::label_index_in(&kinds, st, self.loop_lines).map(|at| st[at])
    }

    /// The naming frame of a stack as shown ("" for a stack without frames).
    pub fn stack_label(&self, stack: StackId) -> String {
        self.label_frame(stack).map(|f| self.display(f)).unwrap_or_default()
    }

    fn kinds(&self, st: &[FrameId]) -> Vec<Kind> {
        st.iter().map(|&f| frames::kind(&self.interner.frames[f as usize])).collect()
    }

    pub fn stack(&self, stack: StackId) -> StackLabel {
        let st = &self.interner.stacks[stack as usize];
        let kinds = self.kinds(st);
        let at = frames::label_index_in(&kinds, st, self.loop_lines);
        let caller = at.and_then(|at| frames::caller_index(&kinds, at)).map(|c| self.display(st[c]));
        let label_frame = at.map(|at| st[at]);
        let cut_site = |fid: FrameId| {
            let f = &self.interner.frames[fid as usize];
            format!("{}:{} {}", cut(&f.filename, ANSWER_NAME_CHARS), f.line, cut(&f.name, ANSWER_NAME_CHARS))
        };
        let mut text = String::new();
        for (k, &fid) in st.iter().rev().enumerate() {
            if k > 0 {
                text.push('\n');
            }
            let f = &self.interner.frames[fid as usize];
            let _ = write!(text, "{}:{} {}", cut(&f.filename, ANSWER_NAME_CHARS), f.line, cut(&f.name, ANSWER_NAME_CHARS));
        }
        StackLabel {
            label: label_frame.map(|f| self.display(f)).unwrap_or_default(),
            caller,
            site: label_frame.map(cut_site).unwrap_or_default(),
            text,
            label_frame,
        }
    }
}
