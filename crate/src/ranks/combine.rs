//! Across the files of a run: the spread of the peaks, the imbalance, the outlier ranks and why
//! the worst rank differs from the median one.
//!
//! Outliers are robust: a rank's peak is an outlier when its modified z-score
//! 0.6745·(x − median)/MAD exceeds 3.5 in absolute value (Iglewicz and Hoaglin) and it is at
//! least 1% away from the median; when at least half the ranks share one peak (MAD = 0), any
//! rank 1% away is one.

use super::summary::{FileSummary, Holder};
use crate::fasthash::FastMap;
use crate::format::{bytes, count};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct RanksReport {
    pub files: Vec<FileEntry>,
    pub summary: Summary,
    /// Files that could not be read, with why.
    pub errors: Vec<FileError>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FileError {
    pub file: String,
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct FileEntry {
    pub file: String,
    pub rank: i64,
    pub devices: Vec<DeviceEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct DeviceEntry {
    pub device: i64,
    pub events: usize,
    pub peaks: EntryPeaks,
    pub peak_time_us: Option<i64>,
    pub oom_events: usize,
    pub steps: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct EntryPeaks {
    pub allocated: crate::replay::Peak,
    pub reserved: crate::replay::Peak,
}

/// One (file, device) figure and where it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), schemars(rename = "RankAt"))]
pub struct At {
    pub bytes: i64,
    pub file: String,
    pub rank: i64,
    pub device: i64,
}

/// A figure of the peak allocated and of the peak reserved bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
#[cfg_attr(not(target_arch = "wasm32"), schemars(rename = "Both_{T}"))]
pub struct Both<T> {
    pub allocated: T,
    pub reserved: T,
}

struct Spread {
    max: Option<At>,
    median: Option<At>,
    min: Option<At>,
    /// max / median.
    imbalance: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Outlier {
    pub file: String,
    pub rank: i64,
    pub device: i64,
    pub bytes: i64,
    /// Against the median of the peak allocated bytes.
    pub above_median: i64,
    pub z: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct SiteDelta {
    pub label: String,
    pub worst: u64,
    pub median: u64,
    pub delta: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Worst {
    pub file: String,
    pub rank: i64,
    pub device: i64,
    pub median_file: String,
    pub median_rank: i64,
    /// Peak allocated bytes above the median rank's.
    pub excess_bytes: i64,
    /// Allocation sites by how much more (or less) the worst rank holds at its peak, largest
    /// difference first; with the last row (the rest) they sum to `excess_bytes`.
    pub top_sites: Vec<SiteDelta>,
    /// The same by category: they sum to `excess_bytes` too.
    pub categories: Vec<SiteDelta>,
    pub sentence: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
pub struct Summary {
    /// (file, device) pairs compared.
    pub ranks: usize,
    /// Said when the rank numbers could not be taken from the file names.
    pub note: Option<String>,
    pub max: Both<Option<At>>,
    pub median: Both<Option<At>>,
    pub min: Both<Option<At>>,
    /// max / median.
    pub imbalance: Both<Option<f64>>,
    pub outliers: Vec<Outlier>,
    pub outlier_rule: String,
    pub worst: Option<Worst>,
}

struct Unit<'a> {
    file: &'a FileSummary,
    rank: i64,
    d: usize,
}

impl Unit<'_> {
    fn allocated(&self) -> i64 {
        self.file.devices[self.d].peaks.allocated.bytes
    }
    fn reserved(&self) -> i64 {
        self.file.devices[self.d].peaks.reserved.bytes
    }
    fn at(&self, bytes: i64) -> At {
        At { bytes, file: self.file.file.clone(), rank: self.rank, device: self.file.devices[self.d].device }
    }
}

/// The median rank by `key`: the lowest-numbered rank holding the lower median value (an actual
/// rank, not an average).
fn median_index<'a>(units: &[Unit<'a>], key: impl Fn(&Unit<'a>) -> i64) -> Option<usize> {
    let mut values: Vec<i64> = units.iter().map(&key).collect();
    values.sort_unstable();
    let median = *values.get(values.len().saturating_sub(1) / 2)?;
    (0..units.len()).filter(|&i| key(&units[i]) == median).min_by_key(|&i| units[i].rank)
}

fn spread<'a>(units: &[Unit<'a>], key: impl Fn(&Unit<'a>) -> i64 + Copy) -> Spread {
    let max = units.iter().max_by_key(|u| (key(u), -u.rank)).map(|u| u.at(key(u)));
    let min = units.iter().min_by_key(|u| (key(u), u.rank)).map(|u| u.at(key(u)));
    let median = median_index(units, key).map(|i| units[i].at(key(&units[i])));
    let imbalance = match (&max, &median) {
        (Some(a), Some(m)) if m.bytes > 0 => Some(a.bytes as f64 / m.bytes as f64),
        _ => None,
    };
    Spread { max, median, min, imbalance }
}

fn deltas(worst: &[Holder], median: &[Holder]) -> Vec<SiteDelta> {
    let mut m: FastMap<&str, (u64, u64)> = FastMap::default();
    for h in worst {
        m.entry(&h.label).or_default().0 += h.bytes;
    }
    for h in median {
        m.entry(&h.label).or_default().1 += h.bytes;
    }
    let mut v: Vec<SiteDelta> = m
        .into_iter()
        .map(|(label, (w, md))| SiteDelta { label: label.to_string(), worst: w, median: md, delta: w as i64 - md as i64 })
        .collect();
    // Both signs, largest first: the rows sum to the difference of the peaks (worst − median),
    // the rows beyond the first `SHOWN` summed in one.
    v.retain(|d| d.delta != 0);
    v.sort_by(|a, b| b.delta.abs().cmp(&a.delta.abs()).then_with(|| b.delta.cmp(&a.delta)).then_with(|| a.label.cmp(&b.label)));
    const SHOWN: usize = 10;
    if v.len() > SHOWN {
        let rest = v.split_off(SHOWN - 1);
        let (w, md) = (rest.iter().map(|d| d.worst).sum(), rest.iter().map(|d| d.median).sum());
        v.push(SiteDelta { label: format!("[{} other differences]", rest.len()), worst: w, median: md, delta: w as i64 - md as i64 });
    }
    v
}

fn outliers(units: &[Unit]) -> Vec<Outlier> {
    let mut xs: Vec<i64> = units.iter().map(|u| u.allocated()).collect();
    xs.sort_unstable();
    let Some(&median) = xs.get(xs.len().saturating_sub(1) / 2) else { return Vec::new() };
    let mut dev: Vec<i64> = xs.iter().map(|x| (x - median).abs()).collect();
    dev.sort_unstable();
    let mad = dev[dev.len().saturating_sub(1) / 2];
    let mut out: Vec<Outlier> = units
        .iter()
        .filter_map(|u| {
            let above = u.allocated() - median;
            let z = (mad > 0).then(|| 0.6745 * above as f64 / mad as f64);
            let far = above.unsigned_abs() as f64 >= 0.01 * median.max(1) as f64;
            let out = far && z.is_none_or(|z| z.abs() > 3.5);
            out.then(|| Outlier {
                file: u.file.file.clone(),
                rank: u.rank,
                device: u.file.devices[u.d].device,
                bytes: u.allocated(),
                above_median: above,
                z,
            })
        })
        .collect();
    out.sort_by_key(|o| std::cmp::Reverse(o.above_median.abs()));
    out
}

/// Combine per-file summaries (in the order given; files without a rank in their name are
/// numbered by that order).
pub fn combine(summaries: &[FileSummary], errors: Vec<FileError>) -> RanksReport {
    // Rank numbers from the names only when every file has one and no two repeat.
    let mut named: Vec<i64> = summaries.iter().filter_map(|f| f.rank).collect();
    named.sort_unstable();
    named.dedup();
    let from_names = named.len() == summaries.len();
    let note = (!from_names && summaries.iter().any(|f| f.rank.is_some()))
        .then(|| "the rank numbers in the file names are missing or repeat: ranks are numbered in the order given".to_string());
    let rank_of = |i: usize, f: &FileSummary| if from_names { f.rank.unwrap_or(i as i64) } else { i as i64 };
    let units: Vec<Unit> = summaries
        .iter()
        .enumerate()
        .flat_map(|(i, f)| (0..f.devices.len()).map(move |d| Unit { file: f, rank: rank_of(i, f), d }))
        .filter(|u| u.file.devices[u.d].events > 0 || u.allocated() > 0)
        .collect();
    let allocated = spread(&units, |u| u.allocated());
    let reserved = spread(&units, |u| u.reserved());
    let worst = match (units.iter().max_by_key(|u| (u.allocated(), -u.rank)), median_index(&units, |u| u.allocated())) {
        (Some(w), Some(m)) if units.len() > 1 => {
            let m = &units[m];
            let (wd, md) = (&w.file.devices[w.d], &m.file.devices[m.d]);
            let excess = w.allocated() - m.allocated();
            let top_sites = deltas(&wd.top_sites, &md.top_sites);
            let categories = deltas(&wd.categories, &md.categories);
            // "of it" only when the site's difference fits in the excess; ranks running other
            // code can differ by more at one site than in total.
            let behind = match top_sites.iter().filter(|s| !s.label.starts_with('[')).max_by_key(|s| s.delta).filter(|s| s.delta > 0) {
                Some(s) if s.delta <= excess => format!(", {} of it from {}", bytes(s.delta), s.label),
                Some(s) => format!("; the largest difference by site is {} more at {}", bytes(s.delta), s.label),
                None => String::new(),
            };
            let named = |u: &Unit| {
                if u.file.devices.len() > 1 {
                    format!("{} (device {})", count(u.rank), u.file.devices[u.d].device)
                } else {
                    count(u.rank)
                }
            };
            let sentence = format!(
                "rank {} holds {} more at its allocated peak than the median rank {} ({} against {}){behind}.",
                named(w),
                bytes(excess),
                named(m),
                bytes(w.allocated()),
                bytes(m.allocated())
            );
            Some(Worst {
                file: w.file.file.clone(),
                rank: w.rank,
                device: wd.device,
                median_file: m.file.file.clone(),
                median_rank: m.rank,
                excess_bytes: excess,
                top_sites,
                categories,
                sentence,
            })
        }
        _ => None,
    };
    let files = summaries
        .iter()
        .enumerate()
        .map(|(i, f)| FileEntry {
            file: f.file.clone(),
            rank: rank_of(i, f),
            devices: f
                .devices
                .iter()
                .map(|d| DeviceEntry {
                    device: d.device,
                    events: d.events,
                    peaks: EntryPeaks { allocated: d.peaks.allocated, reserved: d.peaks.reserved },
                    peak_time_us: d.peak_time_us,
                    oom_events: d.oom_events.len(),
                    steps: d.steps,
                })
                .collect(),
        })
        .collect();
    RanksReport {
        files,
        summary: Summary {
            ranks: units.len(),
            note,
            max: Both { allocated: allocated.max, reserved: reserved.max },
            median: Both { allocated: allocated.median, reserved: reserved.median },
            min: Both { allocated: allocated.min, reserved: reserved.min },
            imbalance: Both { allocated: allocated.imbalance, reserved: reserved.imbalance },
            outliers: outliers(&units),
            outlier_rule:
                "|modified z-score| = |0.6745·(x − median)/MAD| is above 3.5 (above or below the median) and the peak is at least 1% from the median; when at least half the ranks share one peak (MAD = 0), any peak 1% away".into(),
            worst,
        },
        errors,
    }
}
