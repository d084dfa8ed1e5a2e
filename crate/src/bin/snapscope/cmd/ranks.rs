use crate::emit::Out;
use rayon::prelude::*;
use snapscope::codes::ErrorCode;
use snapscope::format::{bytes, count, event};
use snapscope::ranks::{combine, summarize, FileError, FileSummary, RanksReport};
use snapscope::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Snapshot files, or folders of them (one per rank).
    inputs: Vec<PathBuf>,
    /// Files read at once (default: every core). Memory is bounded by this × the largest file.
    #[arg(short = 'j', long = "jobs")]
    jobs: Option<usize>,
    /// Also write each file's summary to DIR (FILE.summary.json), to merge later.
    #[arg(long = "summary-out", value_name = "DIR")]
    summary_out: Option<PathBuf>,
    /// Combine the summaries in DIR (written by --summary-out, anywhere) instead of reading snapshots.
    #[arg(long, value_name = "DIR")]
    merge: Option<PathBuf>,
}

const SNAPSHOT_EXTENSIONS: [&str; 5] = ["pickle", "pkl", "pt", "json", "gz"];
const SUMMARY_SUFFIX: &str = ".summary.json";

/// The files to read: folders expanded (snapshot extensions only), ordered by the rank in their
/// names, then by name.
fn expand(inputs: &[PathBuf], keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in inputs {
        if !p.is_dir() {
            files.push(p.clone());
            continue;
        }
        // Folders are searched to the bottom (run/rank3/memory_snapshot.pickle), as the page does,
        // never through a link out of the folder, each file once (the one path policy).
        files.extend(snapscope::engine::folder_files(p, &keep)?);
    }
    // The engine's run order, the page's too.
    let names: Vec<String> = files.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let files: Vec<PathBuf> = snapscope::ranks::run_order(&names).into_iter().map(|i| files[i].clone()).collect();
    if files.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidParameter,
            "no snapshot files given",
            "snapscope ranks DIR, or snapscope ranks rank0.pickle rank1.pickle ...",
        ));
    }
    Ok(files)
}

fn is_snapshot(p: &Path) -> bool {
    let name = p.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    !name.ends_with(SUMMARY_SUFFIX)
        && p.extension().is_some_and(|x| SNAPSHOT_EXTENSIONS.contains(&x.to_string_lossy().to_ascii_lowercase().as_str()))
}

/// The snapshot files `inputs` name (folders expanded), as `read_all` reads them.
pub fn snapshot_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    expand(inputs, is_snapshot)
}

/// Read, replay and summarize one file; the snapshot is dropped on return.
fn summarize_file(path: &Path, out_dir: Option<&Path>) -> std::result::Result<FileSummary, FileError> {
    let shown = path.display().to_string();
    let fail = |e: Error| FileError { file: shown.clone(), code: e.code.to_string(), message: e.message };
    let size = std::fs::metadata(path).map_err(|e| fail(Error::io(&shown, e)))?.len();
    let (loaded, _) = snapscope::engine::stream_snapshot(path, false).map_err(fail)?;
    let summary = summarize(&shown, size, &loaded);
    if let Some(dir) = out_dir {
        // Files of the same name on different nodes (rank0.pickle everywhere) must not overwrite
        // each other's summaries: the name carries a hash of the whole path.
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let full = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let tag = &snapscope::engine::sha256_hex(full.to_string_lossy().as_bytes())[..12];
        let text = serde_json::to_vec(&summary).expect("serializable");
        snapscope::engine::write_atomic(&dir.join(format!("{name}.{tag}{SUMMARY_SUFFIX}")), &text).map_err(fail)?;
    }
    Ok(summary)
}

fn read_summary(path: &Path) -> std::result::Result<FileSummary, FileError> {
    let shown = path.display().to_string();
    let text =
        std::fs::read(path).map_err(|e| FileError { file: shown.clone(), code: ErrorCode::IoError.to_string(), message: e.to_string() })?;
    serde_json::from_slice(&text).map_err(|e| FileError {
        file: shown,
        code: ErrorCode::SummaryInvalid.to_string(),
        message: format!("not a summary from --summary-out: {e}"),
    })
}

/// Summarize every snapshot of `inputs` (files or folders) on `jobs` threads (default: every
/// core), writing each summary to `summary_out` when given, and combine them.
pub fn read_all(inputs: &[PathBuf], jobs: Option<usize>, summary_out: Option<&Path>) -> Result<RanksReport> {
    let files = expand(inputs, is_snapshot)?;
    if let Some(dir) = summary_out {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(&dir.display().to_string(), e))?;
    }
    let results = pool(jobs)?.install(|| files.par_iter().map(|f| summarize_file(f, summary_out)).collect());
    Ok(combined(results))
}

fn pool(jobs: Option<usize>) -> Result<rayon::ThreadPool> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::new(ErrorCode::InvalidParameter, format!("cannot start {jobs} threads: {e}"), "use a smaller -j"))
}

fn combined(results: Vec<std::result::Result<FileSummary, FileError>>) -> RanksReport {
    let (mut ok, mut errors) = (Vec::new(), Vec::new());
    for r in results {
        match r {
            Ok(s) => ok.push(s),
            Err(e) => errors.push(e),
        }
    }
    combine(&ok, errors)
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let report = match &a.merge {
        Some(dir) => {
            let files = expand(std::slice::from_ref(dir), |p| p.to_string_lossy().ends_with(SUMMARY_SUFFIX))?;
            combined(pool(a.jobs)?.install(|| files.par_iter().map(|f| read_summary(f)).collect()))
        }
        None => read_all(&a.inputs, a.jobs, a.summary_out.as_deref())?,
    };
    if report.files.is_empty() {
        let first = report.errors.first().map(|e| format!(" (first: {} {})", e.file, e.message)).unwrap_or_default();
        return Err(Error::new(
            ErrorCode::SnapshotInvalid,
            format!("none of the {} files could be read{first}", report.errors.len()),
            "give snapshot files (or summaries from --summary-out with --merge)",
        ));
    }
    out.answer(&report, print);
    Ok(())
}

fn print(r: &&RanksReport) {
    say!("{:>6}  {:>12} {:>14}  {:>12}  {:>5}  file", "rank", "peak alloc", "at", "reserved", "OOMs");
    for f in &r.files {
        for d in &f.devices {
            say!(
                "{:>6}  {:>12} {:>14}  {:>12}  {:>5}  {}{}",
                f.rank,
                bytes(d.peaks.allocated.bytes),
                event(d.peaks.allocated.event.map(i64::from)),
                bytes(d.peaks.reserved.bytes),
                d.oom_events,
                f.file,
                if f.devices.len() > 1 { format!(" (device {})", d.device) } else { String::new() }
            );
        }
    }
    let s = &r.summary;
    if let Some(n) = &s.note {
        say!("note: {n}");
    }
    let fig = |a: &Option<snapscope::ranks::combine::At>| {
        a.as_ref().map_or("—".into(), |a| format!("{} (rank {})", bytes(a.bytes), count(a.rank)))
    };
    say!("\npeak allocated: max {}, median {}, min {}", fig(&s.max.allocated), fig(&s.median.allocated), fig(&s.min.allocated));
    say!("peak reserved:  max {}, median {}, min {}", fig(&s.max.reserved), fig(&s.median.reserved), fig(&s.min.reserved));
    if let Some(i) = s.imbalance.allocated {
        say!("imbalance (max / median of the peak allocated): {i:.3}");
    }
    if s.outliers.is_empty() {
        say!("outliers: none ({})", s.outlier_rule);
    } else {
        for o in &s.outliers {
            let sign = if o.above_median >= 0 { "+" } else { "" };
            let dev = if r.files.iter().any(|f| f.devices.len() > 1) { format!(" device {}", o.device) } else { String::new() };
            say!("outlier: rank {}{dev} {} ({sign}{} against the median)", count(o.rank), bytes(o.bytes), bytes(o.above_median));
        }
    }
    if let Some(w) = &s.worst {
        say!("\n{}", w.sentence);
        for d in w.top_sites.iter().take(5) {
            say!("  {:>+12}  {}", bytes(d.delta), d.label);
        }
        for c in w.categories.iter().take(3) {
            say!("  {:>+12}  category {}", bytes(c.delta), c.label);
        }
    }
    for e in &r.errors {
        say!("could not read {}: {} {}", e.file, e.code, e.message);
    }
}
