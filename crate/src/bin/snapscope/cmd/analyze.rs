use crate::emit::Out;
use crate::focus::resolve;
use snapscope::analysis::categories::CategoryBreakdown;
use snapscope::analysis::steps::StepsAnalysis;
use snapscope::analysis::DeviceAnalysis;
use snapscope::codes::ErrorCode;
use snapscope::engine::{Answer, At, Mode, ANALYSES};
use snapscope::format::{bytes, count, event};
use snapscope::{Error, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
    #[arg(long, default_value = "all", value_parser = ANALYSES)]
    mode: String,
    /// The other snapshot or DB for --mode compare.
    #[arg(long = "ref")]
    reference: Option<PathBuf>,
    /// Event for peak/tree (default: the allocated peak).
    #[arg(long)]
    event: Option<i64>,
    #[arg(long)]
    device: Option<i64>,
    /// Device capacity for the simulated OOM verdicts (--mode tune, what_if; e.g. 80GiB); default: seen at a recorded OOM.
    #[arg(long = "device-memory", value_name = "BYTES")]
    device_memory: Option<String>,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, a.device)?;
    let engine = crate::rules::open(&target.path)?;
    let devices = engine.devices_or(target.device)?;
    let at = At::event_or_peak(a.event);
    let memory = crate::cmd::simulate::device_memory(a.device_memory.as_deref())?;
    engine.set_device_memory(memory);
    if a.mode == "compare" {
        let other = a.reference.ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidParameter,
                "--mode compare needs --ref OTHER",
                "snapscope analyze A.pickle --mode compare --ref B.pickle",
            )
        })?;
        let c = engine.compare_with(&crate::rules::open(&other)?.compare_side()?)?;
        out.answer(serde_json::json!({"mode": "compare", "comparison": c}), |_| {
            for d in &c.devices {
                let figure = |label: &str| d.figures.iter().find(|f| f.label == label);
                let side = |v: Option<i64>| v.map_or("— (no trace)".to_string(), bytes);
                let peak_row = figure("peak allocated");
                say!(
                    "device {}: allocated peak {} → {} ({})",
                    d.device,
                    side(peak_row.and_then(|f| f.a)),
                    side(peak_row.and_then(|f| f.b)),
                    d.allocated_peak_delta.map_or("—".into(), bytes)
                );
                // Categories of a dump without stacks are all "unknown": no comparison by category then.
                let events = figure("events");
                let both_traced = events.is_some_and(|f| f.a.unwrap_or(0) > 0 && f.b.unwrap_or(0) > 0);
                for c in d.categories.iter().filter(|c| c.delta != 0 && both_traced).take(5) {
                    let sign = if c.delta > 0 { "+" } else { "−" };
                    say!("  {:>22} {sign}{} ({} → {})", c.category, bytes(c.delta.abs()), bytes(c.bytes_a), bytes(c.bytes_b));
                }
                for st in d.stacks.iter().take(10) {
                    say!("  {:>9} {:>12}  {}", st.change, bytes(st.delta), shown(&st.label, &st.detail));
                }
            }
        });
        return Ok(());
    }
    let mode = Mode::parse(&a.mode)?;
    let mut results = Vec::new();
    for d in devices {
        let answer = engine.answer(mode, d, at)?;
        if !out.json {
            print_answer(&answer, d);
        }
        results.push(answer.device_json(mode, d));
    }
    let rules = if mode == Mode::Categories { Some(engine.category_rules().unwrap_or_default()) } else { None };
    out.answer(serde_json::json!({"mode": a.mode, "devices": results, "rules": rules}), |_| {});
    Ok(())
}

/// One device's answer as text.
fn print_answer(answer: &Answer, device: i64) {
    // The parts printed alone have a device heading and a blank line after them.
    let alone = |print: &dyn Fn()| {
        say!("== device {device} ==");
        print();
        say!();
    };
    match answer {
        Answer::All(x) => print_all(x),
        Answer::Overview(o, f) => {
            say!("== device {device} ==");
            print_overview(o);
            print_findings(f);
            say!();
        }
        Answer::Tree(t) => print_tree(t),
        Answer::Categories(c) => print_categories(c),
        Answer::Streams(s) => print_streams(s),
        Answer::Tune(t) => print_tune(t),
        Answer::Steps(s) => print_steps(s),
        Answer::Peak(p) => alone(&|| p.iter().for_each(print_peak)),
        Answer::Fragment(f) => alone(&|| print_fragment(f)),
        Answer::Leak(l) => alone(&|| l.iter().for_each(print_leak)),
        Answer::Oom(o) => alone(&|| print_oom(o, true)),
    }
}

fn print_streams(s: &snapscope::analysis::streams::StreamAnalysis) {
    say!("== device {} ==", s.device);
    for x in &s.streams {
        let pending = if x.peak_pending_free.bytes == 0 {
            "no frees waited on other streams".to_string()
        } else {
            format!(
                "frees waiting on other streams peak at {} at {} ({} at the dump)",
                bytes(x.peak_pending_free.bytes),
                event(x.peak_pending_free.event.map(i64::from)),
                bytes(x.pending_free_at_dump)
            )
        };
        say!(
            "  stream {:#x}: {} allocations · peak active {} at {} · {} at the allocated peak · {pending}",
            x.stream,
            count(x.allocations as i64),
            bytes(x.peak_active.bytes),
            event(x.peak_active.event.map(i64::from)),
            bytes(x.at_allocated_peak),
        );
    }
}

fn print_tune(t: &snapscope::simulate::tune::Tuning) {
    say!("== device {} · allocator settings simulated: those that run out of memory last, then by reserved peak ==", t.device);
    if let Some(h) = &t.health {
        say!("{h}");
    }
    say!("  {:>11} {:>12}  {:<18} settings", "reserved", "change", "out of memory");
    for r in &t.rows {
        let oom = match &r.oom {
            serde_json::Value::Number(n) => format!("OOM at event {n}"),
            serde_json::Value::String(s) => s.clone(),
            _ => "no OOM".into(),
        };
        let change = if r.change == 0 {
            "±0".to_string()
        } else if r.change > 0 {
            format!("+{}", bytes(r.change))
        } else {
            bytes(r.change)
        };
        say!("  {:>11} {:>12}  {:<18} {}", bytes(r.reserved_peak as i64), change, oom, r.label);
    }
    say!("{}", t.verdict);
}

fn print_categories(c: &CategoryBreakdown) {
    let at = if c.at_dump { "at the dump".to_string() } else { format!("after {}", event(c.event)) };
    say!("== device {} · active {} {at} ==", c.device, bytes(c.active));
    for x in &c.categories {
        say!("  {:5.1}% {:>11} {:>7} blocks  {}", x.share * 100.0, bytes(x.bytes), count(x.blocks), x.category);
        for r in &x.rules {
            say!("          {:>11}  rule {}: {}", bytes(r.bytes), r.rule, r.why);
        }
        for s in &x.top_sites {
            say!("          {:>11}  at {}", bytes(s.bytes), s.label);
        }
    }
    if let Some(f) = &c.finding {
        say!("\n{f}");
    }
}

fn print_steps(s: &StepsAnalysis) {
    say!("== device {} ==", s.device);
    let runs: Vec<String> = s
        .phases
        .iter()
        .filter(|p| p.kind == "run")
        .map(|p| format!("{} {}–{}", p.name, p.start_event.unwrap_or(0), p.end_event.unwrap_or(0)))
        .collect();
    say!("phases: {}", if runs.is_empty() { "none (no events)".to_string() } else { runs.join(" · ") });
    let ranges: Vec<&snapscope::analysis::steps::PhaseSpan> =
        s.phases.iter().filter(|p| p.kind == "range" && p.group != "framework").collect();
    for r in &ranges {
        let at = match (r.start_event, r.end_event) {
            (Some(a), Some(b)) => format!("events {a}–{b}"),
            _ => "no events inside".to_string(),
        };
        say!("  range {} ({}): {at}{}", r.name, r.group, if r.open { ", still open at the end" } else { "" });
    }
    if s.framework_ranges > 0 {
        say!("  {} framework ranges (dynamo / inductor / AOT) hidden; --json lists them", count(s.framework_ranges as i64));
    }
    match &s.step_source {
        Some(src) => say!("steps (from {src}):"),
        None => say!("steps: none found"),
    }
    for st in &s.steps {
        say!(
            "  step {:>3}  events {}–{}{}  peak allocated {} at {} ({}) · reserved {} · end {}{}",
            st.step,
            st.first_event,
            st.last_event,
            st.cut_short().map_or(String::new(), |c| format!(" ({c})")),
            bytes(st.peak_allocated.bytes),
            event(st.peak_allocated.event.map(i64::from)),
            st.peak_phase,
            bytes(st.peak_reserved.bytes),
            bytes(st.end_allocated),
            st.change_end_allocated.map_or(String::new(), |c| format!(" ({}{})", if c >= 0 { "+" } else { "−" }, bytes(c.abs())))
        );
    }
    say!("{}", s.growth.text);
}

/// A group's label with its second line (the caller, or where memory from before the window was freed).
fn shown(label: &str, detail: &Option<String>) -> String {
    match detail {
        Some(d) if d.starts_with("freed at") => format!("{label} {d}"),
        Some(d) => format!("{label} ← {d}"),
        None => label.to_string(),
    }
}

fn print_tree(t: &snapscope::analysis::tree::MemoryTree) {
    say!("device {}:", t.device);
    for n in &t.nodes {
        say!("{}{}: {} / self {} / {} blocks", "  ".repeat(n.depth as usize), n.label, bytes(n.total_bytes), bytes(n.self_bytes), n.blocks);
    }
}

/// Every part (`--mode all`).
fn print_all(a: &DeviceAnalysis) {
    say!("== device {} ==", a.device);
    print_overview(&a.overview);
    if let Some(p) = &a.peak {
        print_peak(p);
    }
    if let Some(f) = &a.categories.finding {
        say!("\nwhat it is: {f}");
    }
    if let Some(s) = &a.steps {
        say!("steps: {}", s.growth.text);
    }
    print_fragment(&a.fragment);
    if let Some(l) = &a.leak {
        print_leak(l);
    }
    print_oom(&a.oom, false);
    print_findings(&a.findings);
    say!();
}

fn print_overview(d: &snapscope::analysis::overview::DeviceOverview) {
    let peak = if d.events == 0 {
        "no trace events: the dump only".to_string()
    } else {
        format!(
            "peak allocated {} at {} · reserved peak {}",
            bytes(d.peaks.allocated.bytes),
            event(d.peaks.allocated.event.map(i64::from)),
            bytes(d.peaks.reserved.bytes)
        )
    };
    say!(
        "{peak} · at dump {} of {} reserved · replay {}",
        bytes(d.at_dump.allocated as i64),
        bytes(d.at_dump.reserved as i64),
        if d.consistency.ok { "exact" } else { "PARTIAL" }
    );
}

fn print_findings(findings: &[snapscope::analysis::findings::Finding]) {
    say!();
    for f in findings {
        let try_line = if f.suggestion.is_empty() { String::new() } else { format!("\n    try: {}", f.suggestion) };
        say!("[{}] {}: {}\n    evidence: {}{try_line}", f.priority, f.category, f.title, f.evidence);
    }
}

fn print_peak(p: &snapscope::analysis::peak::PeakAnalysis) {
    let at = if p.at_dump { "the dump".to_string() } else { event(p.event) };
    say!("\nwho holds {} at {at} (reserved − allocated {}):", bytes(p.live_bytes), bytes(p.reserved_minus_allocated));
    say!("by site (stacks named by the same frame merged):");
    for g in &p.by_site {
        say!("  {:5.1}% {:>11} {:>6} blocks  {}", g.share * 100.0, bytes(g.bytes), count(g.blocks), shown(&g.label, &g.detail));
    }
    say!("  {}", p.site_rows.text);
}

fn print_fragment(fr: &snapscope::analysis::fragment::Fragmentation) {
    say!();
    for f in &fr.at {
        let at = match (f.label.as_str(), f.event) {
            ("dump", None) => "the dump".to_string(),
            ("dump", Some(e)) => format!("the dump (after event {e})"),
            (label, e) => format!("the {} ({})", label.replace('_', " "), event(e)),
        };
        say!(
            "fragmentation at {at}: {} free in reserved segments (pending frees excluded) of {} reserved in {} pieces, largest {}, rounding waste {}, pending free {}",
            bytes(f.free_bytes),
            bytes(f.reserved),
            f.free_blocks,
            bytes(f.largest_free),
            bytes(f.rounding_waste),
            bytes(f.pending_free_bytes)
        );
    }
}

fn print_leak(l: &snapscope::analysis::leak::LeakAnalysis) {
    say!(
        "\nleak candidates: {} blocks, {} (pending free {}, from before the window {}); floor change {}{}",
        count(l.candidates),
        bytes(l.candidate_bytes),
        bytes(l.pending_free_bytes),
        bytes(l.before_window_bytes),
        bytes(l.floor_growth),
        if l.floor_rises_steadily { " (steady)" } else { "" }
    );
    for c in l.candidates_by_stack.iter().take(5) {
        say!("  {:>11} {:>6} blocks  {}", bytes(c.bytes), count(c.blocks), shown(&c.label, &c.detail));
    }
}

fn print_oom(o: &snapscope::analysis::oom::OomAnalysis, alone: bool) {
    if let Some(room) = o.at_dump.as_ref().filter(|_| alone) {
        say!("{}", room.summary);
    }
    for c in &o.ooms {
        say!("\nOOM at event {}: {} — {}", c.event, c.verdict, c.explanation);
        for s in &c.suggestions {
            say!("  - {s}");
        }
    }
}
