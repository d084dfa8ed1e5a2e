//! Many ranks, many files: each snapshot of a distributed run summarized on its own (and dropped),
//! then the summaries combined into the spread of the peaks, the outliers and why the worst rank
//! differs from the median one. The CLI reads files in parallel, the page one engine per core;
//! both produce [`FileSummary`]s and call [`combine`].

pub mod combine;
pub mod order;
pub mod summary;

pub use combine::{combine, FileError, RanksReport};
pub use order::run_order;
pub use summary::{rank_from_name, summarize, FileSummary};
