//! `snapscope analyze`: the analyses of each device, as JSON or as text for people.

use crate::output::{bytes, event, json};
use snapscope::session::{no_device, DeviceAnalysis, Session};
use snapscope::{Error, Result};
use std::path::Path;

pub fn run(s: &Session, mode: &str, reference: Option<&Path>, ev: Option<i64>, device: Option<i64>, as_json: bool) -> Result<()> {
    let devices = match device {
        Some(d) if s.devices()?.contains(&d) => vec![d],
        Some(d) => return Err(no_device(d)),
        None => s.devices()?,
    };
    if mode == "compare" {
        let other = reference.ok_or_else(|| {
            Error::new("INVALID_PARAMETER", "--mode compare needs --ref OTHER", "snapscope analyze A.pickle --mode compare --ref B.pickle")
        })?;
        let c = s.compare(&crate::input::session(other)?)?;
        if as_json {
            json(&serde_json::json!({"ok": true, "schema_version": 1, "mode": "compare", "comparison": c}));
        } else {
            for d in &c.devices {
                println!(
                    "device {}: allocated peak {} → {} ({})",
                    d.device,
                    d.peaks_a.as_ref().map(|p| bytes(p.allocated.bytes)).unwrap_or("—".into()),
                    d.peaks_b.as_ref().map(|p| bytes(p.allocated.bytes)).unwrap_or("—".into()),
                    d.allocated_peak_delta.map(bytes).unwrap_or("—".into())
                );
                for st in d.stacks.iter().take(10) {
                    println!("  {:>9} {:>12}  {}", st.change, bytes(st.delta), st.label.lines().last().unwrap_or(""));
                }
            }
        }
        return Ok(());
    }
    let mut out = Vec::new();
    for d in devices {
        if mode == "tree" {
            let t = s.tree(
                d,
                ev.or(s.overview()?.devices.iter().find(|x| x.device == d).and_then(|x| x.peaks.allocated.event.map(|e| e as i64))),
            )?;
            out.push(serde_json::json!({"device": d, "tree": t}));
            continue;
        }
        let a = s.analyze(d, ev.map(Some))?;
        out.push(match mode {
            "overview" => serde_json::json!({"device": d, "overview": a.overview, "findings": a.findings}),
            "peak" => serde_json::json!({"device": d, "peak": a.peak}),
            "fragment" => serde_json::json!({"device": d, "fragment": a.fragment}),
            "leak" => serde_json::json!({"device": d, "leak": a.leak}),
            "oom" => serde_json::json!({"device": d, "oom": a.oom}),
            _ => serde_json::to_value(&a).expect("serializable"),
        });
        if !as_json {
            print_text(&a, mode);
        }
    }
    if as_json {
        json(&serde_json::json!({"ok": true, "schema_version": 1, "mode": mode, "devices": out}));
    } else if mode == "tree" {
        for t in &out {
            println!("device {}:", t["device"]);
            for n in t["tree"]["nodes"].as_array().into_iter().flatten() {
                println!(
                    "{}{}: {} / self {} / {} blocks",
                    "  ".repeat(n["depth"].as_u64().unwrap_or(0) as usize),
                    n["label"].as_str().unwrap_or(""),
                    bytes(n["total_bytes"].as_i64().unwrap_or(0)),
                    bytes(n["self_bytes"].as_i64().unwrap_or(0)),
                    n["blocks"]
                );
            }
        }
    }
    Ok(())
}

fn print_text(a: &DeviceAnalysis, mode: &str) {
    let all = mode == "all";
    println!("== device {} ==", a.device);
    if all || mode == "overview" {
        let d = &a.overview;
        println!(
            "peak allocated {} at {} · reserved peak {} · at dump {} of {} reserved · replay {}",
            bytes(d.peaks.allocated.bytes),
            event(d.peaks.allocated.event),
            bytes(d.peaks.reserved.bytes),
            bytes(d.at_dump.allocated as i64),
            bytes(d.at_dump.reserved as i64),
            if d.consistency.ok { "exact" } else { "PARTIAL" }
        );
    }
    if let Some(p) = a.peak.as_ref().filter(|_| all || mode == "peak") {
        println!(
            "\nwho holds {} at {} (reserved − allocated {}):",
            bytes(p.live_bytes),
            event(p.event.map(|e| e as u32)),
            bytes(p.reserved_minus_allocated)
        );
        for g in &p.by_stack {
            println!("  {:5.1}% {:>11} {:>6} blocks  {}", g.share * 100.0, bytes(g.bytes), g.blocks, g.site.as_deref().unwrap_or(&g.label));
        }
    }
    if all || mode == "fragment" {
        println!();
        for f in &a.fragment.at {
            println!(
                "fragmentation at {} ({}): {} free of {} reserved in {} pieces, largest {}, rounding waste {}, pending free {}",
                f.label.replace('_', " "),
                event(f.event.map(|e| e as u32)),
                bytes(f.free_bytes),
                bytes(f.reserved),
                f.free_blocks,
                bytes(f.largest_free),
                bytes(f.rounding_waste),
                bytes(f.pending_free_bytes)
            );
        }
    }
    if let Some(l) = a.leak.as_ref().filter(|_| all || mode == "leak") {
        println!(
            "\nleak candidates: {} blocks, {} (pending free {}, from before the window {}); floor growth {}{}",
            l.candidates,
            bytes(l.candidate_bytes),
            bytes(l.pending_free_bytes),
            bytes(l.before_window_bytes),
            bytes(l.floor_growth),
            if l.floor_rises_steadily { " (steady)" } else { "" }
        );
        for c in l.candidates_by_stack.iter().take(5) {
            println!("  {:>11} {:>6} blocks  {}", bytes(c.bytes), c.blocks, c.site.as_deref().unwrap_or(&c.label));
        }
    }
    if all || mode == "oom" {
        if a.oom.ooms.is_empty() && mode == "oom" {
            println!("no OOM events on this device");
        }
        for c in &a.oom.ooms {
            println!("\nOOM at event {}: {} — {}", c.event, c.verdict, c.explanation);
            for s in &c.suggestions {
                println!("  - {s}");
            }
        }
    }
    if all || mode == "overview" {
        println!();
        for f in &a.findings {
            println!("[{}] {}: {}\n    evidence: {}\n    try: {}", f.priority, f.category, f.title, f.evidence, f.suggestion);
        }
    }
    println!();
}
