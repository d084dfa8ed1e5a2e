use crate::emit::Out;
use snapscope::codes::ErrorCode;
use snapscope::engine::Engine;
use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    snapshot: PathBuf,
    /// Event range A..B, both ends included.
    #[arg(long)]
    events: Option<String>,
    /// time_us range T0..T1 (both ends included).
    #[arg(long = "time-us")]
    time_us: Option<String>,
    #[arg(long)]
    device: Option<i64>,
    /// Write OUT-dev<N>.pickle for every device instead of one range.
    #[arg(long)]
    split_devices: bool,
    #[arg(short, long)]
    output: PathBuf,
}

/// Parse "A..B" (both ends included).
fn parse_range(text: &str) -> Result<(i64, i64)> {
    let bad = || {
        Error::new(ErrorCode::InvalidParameter, format!("{text:?} is not a range A..B"), "e.g. --events 1000..2000 (both ends included)")
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let (a, b) = (a.trim().parse::<i64>().map_err(|_| bad())?, b.trim().parse::<i64>().map_err(|_| bad())?);
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let engine = Engine::open(&a.snapshot)?;
    let mut written = Vec::new();
    if a.split_devices {
        let stem = a.output.with_extension("");
        for d in engine.devices()? {
            let n = engine.trace_events(d) as i64;
            if n == 0 {
                continue;
            }
            let path = PathBuf::from(format!("{}-dev{d}.pickle", stem.display()));
            snapscope::engine::refuse_input_as_output(&path, &[&a.snapshot])?;
            let count = engine.write_slice(d, 0, n - 1, &path)?;
            written.push(serde_json::json!({"device": d, "path": path, "events": count}));
        }
    } else {
        let d = engine.device_or_first(a.device)?;
        let (first, last) = match (&a.events, &a.time_us) {
            (Some(r), None) => parse_range(r)?,
            (None, Some(r)) => {
                let (t0, t1) = parse_range(r)?;
                engine.time_range(d, t0, t1)?
            }
            _ => {
                return Err(Error::new(
                    ErrorCode::InvalidParameter,
                    "give exactly one of --events A..B, --time-us T0..T1, --split-devices",
                    "snapscope slice SNAP --events 100..200 -o out.pickle",
                ))
            }
        };
        snapscope::engine::refuse_input_as_output(&a.output, &[&a.snapshot])?;
        let count = engine.write_slice(d, first, last, &a.output)?;
        written.push(serde_json::json!({"device": d, "path": a.output, "events": count, "first_event": first, "last_event": last}));
    }
    out.answer(serde_json::json!({ "written": written }), |_| {
        for w in &written {
            say!("wrote {} ({} events of device {})", w["path"].as_str().unwrap_or(""), w["events"], w["device"]);
        }
    });
    Ok(())
}
