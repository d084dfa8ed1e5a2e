//! `snapscope diff`: two runs (at their allocated peaks, or step by step) or two moments of one
//! run, by category and by site. Sites are matched by meaning (function and file, then callers;
//! lines only break ties), so an edit that moves a line shows the move, not a new site.

use crate::emit::Out;
use snapscope::analysis::compare::{CategoryDelta, StackDelta};
use snapscope::analysis::compare_steps::compare_steps;
use snapscope::analysis::diff::{MomentsDiff, Moved};
use snapscope::codes::ErrorCode;
use snapscope::format::{bytes, event};
use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Two snapshots or DBs (A then B), or one with --at A --at B.
    #[arg(num_args = 1..=2, required = true)]
    inputs: Vec<PathBuf>,
    /// A moment of one run, twice: an event index, `peak` (the allocated peak), `start` (the
    /// window start) or `end` (the last event).
    #[arg(long = "at", value_name = "EVENT")]
    at: Vec<String>,
    /// Step N of A against step N of B (steps from each run's steps analysis).
    #[arg(long)]
    steps: bool,
    #[arg(long)]
    device: Option<i64>,
    /// Sites shown per device (or per step).
    #[arg(long, default_value_t = 20)]
    top: usize,
}

const USAGE: &str = "snapscope diff A B · snapscope diff A B --steps · snapscope diff FILE --at 100 --at peak";

pub fn run(a: Args, out: Out) -> Result<()> {
    match (a.inputs.len(), a.at.len(), a.steps) {
        (2, 0, false) => files(&a, out),
        (2, 0, true) => steps(&a, out),
        (1, 2, false) => moments(&a, out),
        (1, _, _) => Err(Error::new(ErrorCode::InvalidParameter, "one file needs two moments: --at A --at B", USAGE)),
        (_, n, _) if n > 0 => Err(Error::new(
            ErrorCode::InvalidParameter,
            format!("--at takes one file and two moments (got {} files and {n} --at)", a.inputs.len()),
            USAGE,
        )),
        _ => Err(Error::new(ErrorCode::InvalidParameter, "--steps compares two files", USAGE)),
    }
}

fn signed(v: i64) -> String {
    match v {
        0 => "±0".into(),
        v if v > 0 => format!("+{}", bytes(v)),
        v => format!("−{}", bytes(-v)),
    }
}

fn print_categories(rows: &[CategoryDelta]) {
    say!("  by category:{:>25} {:>11} {:>11}", "A", "B", "B − A");
    for c in rows.iter().filter(|c| c.bytes_a != 0 || c.bytes_b != 0) {
        say!("  {:>24} {:>12} {:>11} {:>11}", c.category, bytes(c.bytes_a), bytes(c.bytes_b), signed(c.delta));
    }
}

fn print_sites(rows: &[StackDelta]) {
    say!("  by site (matched by function and file, then callers):");
    say!("  {:>9} {:>11} {:>11} {:>11}  site", "change", "A", "B", "B − A");
    for s in rows {
        let mut name = match &s.detail {
            Some(d) if d.starts_with("freed at") => format!("{} {d}", s.label),
            Some(d) => format!("{} ← {d}", s.label),
            None => s.label.clone(),
        };
        if let Some(l) = &s.line_change {
            name.push_str(&format!("  [line {l}]"));
        }
        if s.matched_by.as_deref() == Some("function") {
            name.push_str("  [other callers]");
        }
        say!("  {:>9} {:>11} {:>11} {:>11}  {name}", s.change, bytes(s.bytes_a), bytes(s.bytes_b), signed(s.delta));
    }
}

fn files(a: &Args, out: Out) -> Result<()> {
    let (ea, eb) = (crate::rules::open(&a.inputs[0])?, crate::rules::open(&a.inputs[1])?);
    let mut c = snapscope::analysis::compare::compare(&ea.compare_side()?, &eb.compare_side()?, a.top);
    if let Some(d) = a.device {
        c.devices.retain(|x| x.device == d);
    }
    out.answer(serde_json::json!({"mode": "files", "a": a.inputs[0], "b": a.inputs[1], "comparison": c}), |_| {
        say!("A = {}\nB = {}", a.inputs[0].display(), a.inputs[1].display());
        for d in &c.devices {
            let peak = d.figures.iter().find(|f| f.label == "peak allocated");
            let side = |v: Option<i64>| v.map_or("— (no trace)".to_string(), bytes);
            say!(
                "\n== device {}: allocated peak {} → {} ({}) ==",
                d.device,
                side(peak.and_then(|f| f.a)),
                side(peak.and_then(|f| f.b)),
                d.allocated_peak_delta.map_or("—".into(), signed)
            );
            print_categories(&d.categories);
            print_sites(&d.stacks);
        }
    });
    Ok(())
}

fn steps(a: &Args, out: Out) -> Result<()> {
    let (ea, eb) = (crate::rules::open(&a.inputs[0])?, crate::rules::open(&a.inputs[1])?);
    let mut devices = Vec::new();
    for d in ea.devices_or(a.device)? {
        if !eb.overview()?.devices.iter().any(|x| x.device == d) {
            continue;
        }
        devices.push(compare_steps(d, &ea.step_sides(d)?, &eb.step_sides(d)?, a.top));
    }
    out.answer(serde_json::json!({"mode": "steps", "a": a.inputs[0], "b": a.inputs[1], "devices": devices}), |_| {
        say!("A = {}\nB = {}", a.inputs[0].display(), a.inputs[1].display());
        for d in &devices {
            say!("\n== device {}: {} steps in A, {} in B ==", d.device, d.steps_a, d.steps_b);
            if let Some(n) = &d.note {
                say!("  {n}");
            }
            for s in &d.steps {
                say!(
                    "\n step {}: peak {} → {} ({}) at {} / {}",
                    s.step,
                    bytes(s.peak_a),
                    bytes(s.peak_b),
                    signed(s.delta),
                    event(s.event_a),
                    event(s.event_b)
                );
                print_categories(&s.categories);
                print_sites(&s.stacks);
            }
        }
    });
    Ok(())
}

/// `--at`'s value as an event of `device` (None = the window start).
fn moment(engine: &snapscope::engine::Engine, device: i64, v: &str) -> Result<Option<i64>> {
    let d = engine.overview()?.devices.iter().find(|d| d.device == device).ok_or_else(|| Error::no_device(device))?;
    match v {
        "start" => Ok(None),
        "peak" => Ok(d.peaks.allocated.event.map(i64::from)),
        "end" if d.events > 0 => Ok(Some(d.events as i64 - 1)),
        "end" => Ok(None),
        n => n
            .parse()
            .map(Some)
            .map_err(|_| Error::new(ErrorCode::InvalidParameter, format!("--at {n}: not an event index, peak, start or end"), USAGE)),
    }
}

fn moved(m: &Moved) -> String {
    format!(
        "kept {:>10} · freed {:>10} · born {:>10} · transient {:>10} · change {}",
        bytes(m.kept),
        bytes(m.freed),
        bytes(m.born),
        bytes(m.transient),
        signed(m.delta)
    )
}

fn moments(a: &Args, out: Out) -> Result<()> {
    let engine = crate::rules::open(&a.inputs[0])?;
    let mut devices: Vec<MomentsDiff> = Vec::new();
    for d in engine.devices_or(a.device)? {
        let (x, y) = (moment(&engine, d, &a.at[0])?, moment(&engine, d, &a.at[1])?);
        let mut m = engine.diff_moments(d, x, y)?;
        m.by_site.truncate(a.top + 1);
        devices.push(m);
    }
    out.answer(serde_json::json!({"mode": "moments", "file": a.inputs[0], "devices": devices}), |_| {
        for m in &devices {
            say!(
                "== device {}: after {} ({} live) → after {} ({} live) ==",
                m.device,
                event(m.event_a),
                bytes(m.live_a),
                event(m.event_b),
                bytes(m.live_b)
            );
            say!("  total {}", moved(&m.total));
            say!("  by category:");
            for c in &m.by_category {
                say!("  {:>24}  {}", c.category, moved(&c.bytes));
            }
            say!("  by site:");
            for s in &m.by_site {
                let name = match &s.detail {
                    Some(d) if d.starts_with("freed at") => format!("{} {d}", s.label),
                    Some(d) => format!("{} ← {d}", s.label),
                    None => s.label.clone(),
                };
                say!("    {}  {name}", moved(&s.bytes));
            }
        }
    });
    Ok(())
}
