use crate::emit::Out;
use crate::focus::resolve;
use snapscope::codes::ErrorCode;
use snapscope::format::{bytes, count, event, parse_bytes};
use snapscope::simulate::Simulation;
use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    /// Settings to simulate, in PYTORCH_CUDA_ALLOC_CONF syntax, on top of the recorded ones
    /// (e.g. "expandable_segments:True,max_split_size_mb:512"). Without it: the recorded
    /// settings, and the check that the simulation reproduces the recording.
    #[arg(long = "alloc-conf", value_name = "S")]
    alloc_conf: Option<String>,
    /// Device capacity for the OOM verdict (e.g. 80GiB); default: seen at a recorded OOM.
    #[arg(long = "device-memory", value_name = "BYTES")]
    device_memory: Option<String>,
    #[arg(long)]
    device: Option<i64>,
    /// Keep the runs in this SnapshotDB (table `simulated_runs`; create it with `snapscope import`).
    #[arg(long, value_name = "DB")]
    save: Option<PathBuf>,
}

/// `--device-memory` as bytes, with the accepted forms in the error.
pub fn device_memory(text: Option<&str>) -> Result<Option<u64>> {
    text.map(|t| {
        parse_bytes(t).filter(|&b| b > 0).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidParameter,
                format!("--device-memory {t:?} is not a byte count above 0"),
                "write it like 80GiB, 40GB, 16384MiB or a number of bytes",
            )
        })
    })
    .transpose()
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, a.device)?;
    let engine = crate::rules::open(&target.path)?;
    let memory = device_memory(a.device_memory.as_deref())?;
    let mut devices = Vec::new();
    // Pinned host memory is not the device allocator's: simulated only when asked for by number.
    let host: Vec<i64> = engine.overview()?.devices.iter().filter(|d| d.pinned_host).map(|d| d.device).collect();
    for d in engine.devices_or(target.device)? {
        if target.device.is_none() && host.contains(&d) {
            continue;
        }
        devices.push(engine.simulate(d, a.alloc_conf.as_deref(), memory)?);
    }
    if let Some(db) = &a.save {
        let bytes = std::fs::read(&target.path).map_err(|e| Error::io(&target.path.display().to_string(), e))?;
        snapscope::store::simulations::save(db, &snapscope::engine::sha256_hex(&bytes), &devices)?;
    }
    out.answer(serde_json::json!({ "devices": devices }), |_| {
        if devices.is_empty() {
            say!("no devices: the snapshot has no segments and no trace events, nothing to simulate");
        }
        devices.iter().for_each(print);
        if let Some(db) = &a.save {
            say!("\nsaved {} run(s) to {} (table simulated_runs)", devices.len(), db.display());
        }
    });
    Ok(())
}

fn print(s: &Simulation) {
    say!("== device {} ==  settings: {}", s.device, s.settings.conf);
    let change = s.reserved_peak.bytes as i64 - s.recorded_reserved_peak.bytes as i64;
    say!(
        "  reserved peak  {:>12} at {}   (recorded {}, {}{})",
        bytes(s.reserved_peak.bytes as i64),
        event(s.reserved_peak.event.map(i64::from)),
        bytes(s.recorded_reserved_peak.bytes as i64),
        if change >= 0 { "+" } else { "" },
        bytes(change)
    );
    say!("  allocated peak {:>12} at {}", bytes(s.allocated_peak.bytes as i64), event(s.allocated_peak.event.map(i64::from)));
    say!(
        "  at the reserved peak: {} free in reserved memory, largest free block {}",
        bytes(s.free_at_reserved_peak as i64),
        bytes(s.largest_free_at_reserved_peak as i64)
    );
    let (made, released) = if s.settings.expandable_segments {
        ("page mappings", "unmappings")
    } else {
        ("segment allocations (cudaMalloc)", "releases (cudaFree)")
    };
    say!("  {made} {}, {released} {}", count(s.segment_allocs as i64), count(s.segment_frees as i64));
    match (&s.oom_detail, &s.capacity) {
        (Some(o), Some(c)) => say!(
            "  out of memory at event {} ({} requested, {} reserved, capacity {})",
            count(o.event as i64),
            bytes(o.bytes as i64),
            bytes(o.reserved as i64),
            bytes(c.bytes as i64)
        ),
        (None, Some(c)) => say!("  no out-of-memory within {} ({})", bytes(c.bytes as i64), c.source),
        _ => say!("  OOM: unknown capacity (pass --device-memory, e.g. 80GiB)"),
    }
    if !s.recorded_ooms_avoided.is_empty() {
        let list: Vec<String> = s.recorded_ooms_avoided.iter().map(|e| count(*e as i64)).collect();
        say!("  recorded OOMs this setting would have served: event {}", list.join(", "));
    }
    if !s.cache_releases.is_empty() {
        let why = if s.capacity.is_some() {
            "the program's empty_cache"
        } else {
            "empty_cache, or a retry after a failed cudaMalloc: without the device memory they look alike"
        };
        say!("  recorded cache releases applied at the same points: {} ({why})", s.cache_releases.len());
    }
    match (s.reproduces_recording, &s.first_difference) {
        (Some(true), _) => say!("  self-check: the simulation reproduces this recording exactly"),
        (Some(false), Some(d)) => say!("  self-check: differs first at event {}: {}", count(d.event as i64), d.reason),
        _ if s.as_recorded => say!("  self-check: nothing to compare (the trace has no segment events)"),
        _ => {}
    }
    for n in &s.notes {
        say!("  note: {n}");
    }
}
