//! docs/codes.md, generated from every code list: the engine's own codes (`codes.rs`) and the
//! enumerated values of the model (block states, pools, trace actions) and of frames (kinds). It
//! sits above all of them so that the lists themselves depend on nothing but the `codes!` macro.

use crate::codes::{ErrorCode, IssueCode, WarningCode};

/// One generated table per list (docs/codes.md).
pub fn doc() -> String {
    let mut out = String::from(
        "# Codes\n\n<!-- Generated from crate/src/codes_doc.rs, do not edit: \
         UPDATE_CODES_DOC=1 cargo test -p snapscope codes_doc -->\n\n\
         Every code and enumerated value snapscope answers with, as it appears in JSON.\n",
    );
    let lists: [(&str, Vec<(&str, &str)>); 7] = [
        (ErrorCode::TITLE, ErrorCode::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (IssueCode::TITLE, IssueCode::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (WarningCode::TITLE, WarningCode::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (crate::model::BlockState::TITLE, crate::model::BlockState::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (crate::model::Pool::TITLE, crate::model::Pool::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (crate::frames::Kind::TITLE, crate::frames::Kind::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
        (crate::model::Action::TITLE, crate::model::Action::ALL.iter().map(|c| (c.name(), c.meaning())).collect()),
    ];
    for (title, rows) in lists {
        out.push_str(&format!("\n## {title}\n\n| value | meaning |\n|---|---|\n"));
        for (s, m) in rows {
            out.push_str(&format!("| `{s}` | {} |\n", m.replace('|', "\\|")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::fmt;

    /// docs/codes.md is this module's table (UPDATE_CODES_DOC=1 rewrites it).
    #[test]
    fn codes_doc() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/codes.md");
        let want = doc();
        if std::env::var_os("UPDATE_CODES_DOC").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "docs/codes.md is stale: UPDATE_CODES_DOC=1 cargo test -p snapscope codes_doc");
    }

    /// Within a list every string is distinct and parses back to its value; JSON is the string.
    #[test]
    fn every_code_round_trips() {
        fn check<T: Copy + PartialEq + fmt::Debug + Serialize + serde::de::DeserializeOwned>(all: &[T], s: fn(T) -> &'static str) {
            let names: std::collections::HashSet<_> = all.iter().map(|c| s(*c)).collect();
            assert_eq!(names.len(), all.len());
            for c in all {
                assert_eq!(serde_json::to_string(c).unwrap(), format!("\"{}\"", s(*c)));
                assert_eq!(serde_json::from_str::<T>(&serde_json::to_string(c).unwrap()).unwrap(), *c);
            }
        }
        check(ErrorCode::ALL, ErrorCode::name);
        check(IssueCode::ALL, IssueCode::name);
        check(WarningCode::ALL, WarningCode::name);
        check(crate::model::BlockState::ALL, crate::model::BlockState::name);
        check(crate::model::Pool::ALL, crate::model::Pool::name);
        check(crate::frames::Kind::ALL, crate::frames::Kind::name);
        check(crate::model::Action::ALL, crate::model::Action::name);
    }
}
