//! Every code the engine answers with, one list per kind: error codes, consistency issue codes and
//! reader warnings here; block states, pools and trace actions (`model.rs`) and frame kinds
//! (`frames.rs`) are declared with this module's `codes!` macro beside the types they describe.
//! Each is an enum that serializes as its documented string (the JSON Schemas list the values);
//! `codes_doc.rs` generates `docs/codes.md` from all of them.

/// One enum per list: each variant with its string and what it means.
macro_rules! codes {
    ($(#[$m:meta])* $name:ident, $title:literal { $($var:ident = $s:literal => $meaning:literal,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
        pub enum $name {
            $(#[serde(rename = $s)] $var,)+
        }

        impl $name {
            /// Every value, in the documented order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The heading of this list in docs/codes.md.
            pub const TITLE: &'static str = $title;

            pub fn name(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }

            pub fn meaning(self) -> &'static str {
                match self { $($name::$var => $meaning),+ }
            }

            /// The value written as `s`, if any.
            pub fn from_name(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|c| c.name() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.name().into())
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                let s = v.as_str()?;
                $name::from_name(s).ok_or_else(|| rusqlite::types::FromSqlError::Other(format!("{s:?} is not one of the {}", $title).into()))
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.name() == *other
            }
        }
    };
}

codes! {
    /// The `code` of an error answer (`{"ok": false, "error": {"code", "message", "hint"}}`).
    ErrorCode, "Error codes" {
        AllocConfInvalid = "ALLOC_CONF_INVALID" => "an allocator setting (PYTORCH_CUDA_ALLOC_CONF syntax) that cannot be used",
        BudgetExceeded = "BUDGET_EXCEEDED" => "an input went over one of the engine's limits (size, time, count)",
        Busy = "BUSY" => "the snapshot is in use by another view (close it first)",
        DatabaseSchemaInvalid = "DATABASE_SCHEMA_INVALID" => "a .db input that is not a SnapshotDB this engine can read",
        DeviceNotFound = "DEVICE_NOT_FOUND" => "the asked device is not in the snapshot",
        EventNotFound = "EVENT_NOT_FOUND" => "no event with the asked index",
        EventOutOfRange = "EVENT_OUT_OF_RANGE" => "an event index or range outside the device's trace",
        ExportFailed = "EXPORT_FAILED" => "the asked output could not be made from this snapshot",
        FileNotFound = "FILE_NOT_FOUND" => "the named file does not exist",
        FocusFileInvalid = "FOCUS_FILE_INVALID" => "the folder's .snapscope focus file cannot be used",
        FocusNotConfigured = "FOCUS_NOT_CONFIGURED" => "no file given and no focus set for this folder",
        GzipInvalid = "GZIP_INVALID" => "a .gz input that does not decompress",
        GzipNested = "GZIP_NESTED" => "a gzip file inside a gzip file",
        InputTooLarge = "INPUT_TOO_LARGE" => "an input larger than the engine reads",
        Internal = "INTERNAL" => "an answer that could not be written (a bug: report it)",
        InternalError = "INTERNAL_ERROR" => "a failure inside the MCP server (a bug: report it)",
        InvalidParameter = "INVALID_PARAMETER" => "an option or parameter with a value that cannot be used",
        IoError = "IO_ERROR" => "a file could not be read or written",
        JsonInvalid = "JSON_INVALID" => "a JSON input that does not parse",
        McpError = "MCP_ERROR" => "the MCP transport failed",
        NoDevice = "NO_DEVICE" => "the snapshot has no device at all",
        NoEvents = "NO_EVENTS" => "the device has no trace events to ask about",
        NotLoaded = "NOT_LOADED" => "a call before a snapshot was loaded (the page's engine)",
        NotLoading = "NOT_LOADING" => "bytes sent to an engine that is not loading a file",
        NotSimulated = "NOT_SIMULATED" => "the recorded run cannot be simulated",
        PathNotAllowed = "PATH_NOT_ALLOWED" => "a path outside the folders the MCP server may read",
        PickleInvalid = "PICKLE_INVALID" => "a malformed pickle, located by byte offset",
        PickleUnsafe = "PICKLE_UNSAFE" => "a pickle that would run code (a refused global or opcode)",
        PickleUnsupported = "PICKLE_UNSUPPORTED" => "a pickle opcode or protocol the reader does not know",
        QueryFailed = "QUERY_FAILED" => "SQL that SQLite refused",
        QueryNotReadonly = "QUERY_NOT_READONLY" => "SQL that would change a database or attach a file",
        QueryTimeout = "QUERY_TIMEOUT" => "SQL that ran longer than the statement limit",
        ResourceNotFound = "RESOURCE_NOT_FOUND" => "an MCP resource URI that names nothing",
        RulesInvalid = "RULES_INVALID" => "a category rules file that cannot be used",
        SkillError = "SKILL_ERROR" => "an agent skill could not be installed",
        SnapshotInvalid = "SNAPSHOT_INVALID" => "well-formed data that is not a memory snapshot",
        StackNotFound = "STACK_NOT_FOUND" => "no call stack with the asked id",
        SummaryInvalid = "SUMMARY_INVALID" => "a file that is not a summary written by `ranks --summary-out`",
        TemplateColumns = "TEMPLATE_COLUMNS" => "a query template returned other columns than it declares (a bug: report it)",
        TemplateNotFound = "TEMPLATE_NOT_FOUND" => "no query template of that name",
        Usage = "USAGE" => "a malformed command line or limit setting",
    }
}

codes! {
    /// The `code` of a consistency issue: an event (or the dump) the replay cannot reconcile.
    IssueCode, "Consistency issue codes" {
        AllocInconsistent = "ALLOC_INCONSISTENT" => "an alloc that does not fit the replayed allocator state",
        AllocUnmatched = "ALLOC_UNMATCHED" => "an alloc whose block the backward pass cannot place, or whose free the trace lacks",
        BlockOutsideSegments = "BLOCK_OUTSIDE_SEGMENTS" => "a block outside every reserved segment",
        CheckpointMismatch = "CHECKPOINT_MISMATCH" => "a recorded total that differs from the replayed one",
        DumpBlockDuplicate = "DUMP_BLOCK_DUPLICATE" => "two dump blocks at one address",
        DumpBlockMissing = "DUMP_BLOCK_MISSING" => "a block the replay ends with that the dump does not have",
        DumpSegmentMismatch = "DUMP_SEGMENT_MISMATCH" => "a replayed segment that differs from the dump's",
        DumpSegmentOverlap = "DUMP_SEGMENT_OVERLAP" => "dump segments that overlap",
        FreeUnmatched = "FREE_UNMATCHED" => "a free of a block that is not allocated",
        FreeWhileOccupied = "FREE_WHILE_OCCUPIED" => "a free at an address another block occupies",
        NegativeStart = "NEGATIVE_START" => "a running total that would start below zero",
        SegmentInconsistent = "SEGMENT_INCONSISTENT" => "a segment event that does not fit the replayed segments",
        SegmentUnmatched = "SEGMENT_UNMATCHED" => "a segment event the backward pass cannot match",
        SizeMismatch = "SIZE_MISMATCH" => "a free whose size differs from its alloc's",
    }
}

codes! {
    /// The `code` of a reader warning: something in the file skipped or cut, the rest read.
    WarningCode, "Warning codes" {
        AllocConfInvalid = "ALLOC_CONF_INVALID" => "recorded allocator settings that cannot be read (the defaults are used)",
        AnnotationTextCut = "ANNOTATION_TEXT_CUT" => "annotation names shown cut at 4,096 bytes (held whole, and whole in the SnapshotDB's long_texts)",
        DevicesTruncated = "DEVICES_TRUNCATED" => "more devices than an answer lists (the first ones are listed, `devices_total` says how many)",
        DumpInconsistent = "DUMP_INCONSISTENT" => "a dump segment whose totals differ from its blocks",
        EventInvalid = "EVENT_INVALID" => "trace entries that are not events, skipped",
        FrameInvalid = "FRAME_INVALID" => "stack frames that are not {filename, line, name}, skipped",
        FrameTextCut = "FRAME_TEXT_CUT" => "frame names or file names shown cut at 4,096 bytes (held whole, and whole in the SnapshotDB's long_texts)",
        SegmentInvalid = "SEGMENT_INVALID" => "dump segments that cannot be read, skipped",
        TraceInvalid = "TRACE_INVALID" => "a device trace that is not a list, skipped",
        TrailingBytes = "TRAILING_BYTES" => "bytes after the end of the pickle, ignored",
    }
}

pub(crate) use codes;

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON Schema of a code lists exactly its strings.
    #[test]
    fn schemas_list_the_values() {
        let schema = serde_json::to_value(schemars::schema_for!(IssueCode)).unwrap();
        let listed: Vec<&str> = schema["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(listed, IssueCode::ALL.iter().map(|c| c.name()).collect::<Vec<_>>());
    }
}
