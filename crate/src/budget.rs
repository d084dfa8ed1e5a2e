//! Resource budgets per input: what one file (or one answer) may cost, checked where the cost
//! arises, with one named error when it is exceeded (`BUDGET_EXCEEDED`: which budget, its limit,
//! the flag that raises it). Every budget is listed once in [`BUDGETS`]; the CLI raises one with
//! `--budget NAME=N` (repeatable), the page runs with the defaults.
//!
//! The limits are process-wide (one CLI invocation reads its inputs under one set of budgets);
//! nothing but the CLI's argument parsing changes them.

use crate::codes::ErrorCode;
use crate::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};

/// One budget: its name (as `--budget` takes it), default limit, unit and what it bounds.
#[derive(Debug)]
pub struct Budget {
    pub name: &'static str,
    default: u64,
    pub unit: &'static str,
    pub what: &'static str,
    index: usize,
}

/// Bytes a compressed input may inflate to, over all its gzip members. 0 (the default) means
/// "the larger of 64 MiB and 200x the compressed size": a genuine snapshot pickle compresses
/// 3-10x, a bomb 1000x.
pub const DECOMPRESSED_BYTES: Budget = Budget {
    name: "decompressed_bytes",
    default: 0,
    unit: "bytes",
    what: "decompressed size of a gzip input (default: the larger of 64 MiB and 200x the compressed size)",
    index: 0,
};

/// Size of a category rules file (`--categories`).
pub const RULES_BYTES: Budget =
    Budget { name: "rules_bytes", default: 1 << 20, unit: "bytes", what: "size of a category rules file", index: 1 };

/// Bytes of cell values one SQL or template answer may carry (rows are bounded by `--max-rows`),
/// and the largest value SQLite may build while answering: 10 MB, an answer's bound. A longer
/// list of rows is cut there (`truncated`, `has_more`); one row over it is BUDGET_EXCEEDED.
pub const ANSWER_BYTES: Budget = Budget {
    name: "answer_bytes",
    default: 10_000_000,
    unit: "bytes",
    what: "bytes of cell values in one sql/query answer (rows past it are cut)",
    index: 2,
};

/// Segments and blocks of the dump, counted as expanded: a container the pickle memo shares
/// counts each time it is used (4,194,304 by default; real dumps hold thousands to a few hundred
/// thousand).
pub const DUMP_BLOCKS: Budget = Budget {
    name: "dump_blocks",
    default: 1 << 22,
    unit: "segments and blocks",
    what: "segments and blocks of the dump, shared ones counted per use",
    index: 3,
};

/// Bytes of the distinct stack frames' file and function names as shown (each at most 4,096
/// bytes; a longer one is shown cut and held whole once, under `text_bytes`): 32 MiB by default,
/// where real snapshots hold well under 1 MiB (distinct frames sharing one pickled string count
/// per frame, as every answer and the SnapshotDB's `frames` rows show them per frame).
pub const FRAME_TEXT_BYTES: Budget = Budget {
    name: "frame_text_bytes",
    default: 32 << 20,
    unit: "bytes",
    what: "file and function names of the distinct stack frames, as shown",
    index: 4,
};

/// Milliseconds one statement over an input `.db` may run (the schema check, every analysis's
/// query; user SQL has its own `--timeout`).
pub const DB_STATEMENT_MS: Budget =
    Budget { name: "db_statement_ms", default: 60_000, unit: "milliseconds", what: "time of one statement over an input .db", index: 5 };

/// Bytes of the `external_annotations` as shown (names at most 4,096 bytes, 32 bytes per entry), an
/// annotation shared through the pickle memo counted per use.
pub const ANNOTATION_BYTES: Budget = Budget {
    name: "annotation_bytes",
    default: 256 << 20,
    unit: "bytes",
    what: "external_annotations, shared ones counted per use",
    index: 6,
};

/// Bytes of the distinct texts longer than shown (4,096 bytes: frames' file and function names,
/// annotations' names), each held whole once however many frames or annotations share it, and of
/// the distinct frames' FX node fields (`fx_node_op`, `fx_node_name`, `fx_node_target`,
/// `fx_original_trace`: never cut, held per frame): 256 MiB by default, where real snapshots hold
/// none of the first and a few KB of the second per compiled node.
pub const TEXT_BYTES: Budget = Budget {
    name: "text_bytes",
    default: 256 << 20,
    unit: "bytes",
    what: "distinct names longer than 4,096 bytes (held whole once each) and the distinct frames' FX node fields",
    index: 7,
};

/// Every budget, for `--budget` and `capabilities`.
pub const BUDGETS: &[&Budget] =
    &[&DECOMPRESSED_BYTES, &RULES_BYTES, &ANSWER_BYTES, &DUMP_BLOCKS, &FRAME_TEXT_BYTES, &DB_STATEMENT_MS, &ANNOTATION_BYTES, &TEXT_BYTES];

const UNSET: u64 = u64::MAX;
static OVERRIDES: [AtomicU64; 8] = [const { AtomicU64::new(UNSET) }; 8];

impl Budget {
    /// The limit in force: the override given with `--budget`, else the default.
    pub fn limit(&self) -> u64 {
        match OVERRIDES[self.index].load(Ordering::Relaxed) {
            UNSET => self.default,
            v => v,
        }
    }

    /// Whether `--budget` set this one.
    pub fn overridden(&self) -> bool {
        OVERRIDES[self.index].load(Ordering::Relaxed) != UNSET
    }

    /// The error for exceeding this budget at `limit` (the limit in force, computed where the
    /// default depends on the input), saying what exceeded it.
    pub fn exceeded(&self, limit: u64, what: impl std::fmt::Display) -> Error {
        Error::new(
            ErrorCode::BudgetExceeded,
            format!("budget {} exceeded: {what} (limit {limit} {}; {})", self.name, self.unit, self.what),
            format!("if the input is genuine, raise it with `--budget {}=N` (N in {}) on the command line", self.name, self.unit),
        )
    }
}

/// Set a budget from `NAME=N` (the CLI's `--budget`). N takes a K/M/G suffix (powers of 1024).
pub fn set(spec: &str) -> Result<(), Error> {
    let names = || BUDGETS.iter().map(|b| b.name).collect::<Vec<_>>().join(", ");
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| Error::new(ErrorCode::Usage, format!("`--budget {spec}` is not NAME=N"), format!("budgets: {}", names())))?;
    let b = BUDGETS
        .iter()
        .find(|b| b.name == name.trim())
        .ok_or_else(|| Error::new(ErrorCode::Usage, format!("unknown budget `{name}`"), format!("budgets: {}", names())))?;
    let n = parse_amount(value.trim()).ok_or_else(|| {
        Error::new(
            ErrorCode::Usage,
            format!("`{value}` is not a limit for budget {name}"),
            "give a whole number, optionally with K, M or G (e.g. 512M)",
        )
    })?;
    OVERRIDES[b.index].store(n, Ordering::Relaxed);
    Ok(())
}

fn parse_amount(v: &str) -> Option<u64> {
    let (digits, shift) = match v.as_bytes().last()? {
        b'K' | b'k' => (&v[..v.len() - 1], 10),
        b'M' | b'm' => (&v[..v.len() - 1], 20),
        b'G' | b'g' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1u64 << shift).filter(|&n| n != UNSET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_checked() {
        assert_eq!(parse_amount("512M"), Some(512 << 20));
        assert_eq!(parse_amount("7"), Some(7));
        assert_eq!(parse_amount("17592186044416G"), None, "overflow is refused, not wrapped");
        assert_eq!(parse_amount("-1"), None);
        assert!(set("nope=1").is_err());
        assert!(set("rules_bytes").is_err());
    }

    #[test]
    fn the_error_names_budget_limit_and_flag() {
        let e = RULES_BYTES.exceeded(1 << 20, "the rules file has 5000000 bytes");
        assert_eq!(e.code, ErrorCode::BudgetExceeded);
        assert!(e.message.contains("rules_bytes") && e.message.contains("1048576"), "{}", e.message);
        assert!(e.hint.contains("--budget rules_bytes="), "{}", e.hint);
    }
}
