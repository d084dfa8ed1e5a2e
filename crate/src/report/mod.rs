//! The self-contained HTML report: one file, no scripts, no network. Top-down: health and
//! headline cards, then per device the findings, peak attribution, fragmentation, leaks, OOMs.

use crate::analysis::overview::Overview;
use crate::analysis::timeline::Timeline;
use crate::analysis::DeviceAnalysis;
use crate::format::{bytes as b, count};
use crate::simulate::tune::Tuning;
use std::fmt::Write;

/// HTML text: markup escaped, and bidirectional controls and control characters but line breaks
/// shown as escapes (a name must not reorder the report's text).
fn esc(s: &str) -> String {
    let bad = |c: char| crate::format::is_bidi_control(c) || (c.is_control() && c != '\n' && c != '\t');
    let shown: std::borrow::Cow<str> = if s.chars().any(bad) {
        s.chars().map(|c| if bad(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect::<String>().into()
    } else {
        s.into()
    };
    shown.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Frames a report shows of one stack behind "all frames" (deep stacks run to hundreds).
const STACK_LINES: usize = 40;

/// A stack's cell: its label, the second line, and the whole stack folded (no scripts needed).
fn site_cell(label: &str, detail: Option<&str>, stack: Option<&str>) -> String {
    let mut c = format!("<b>{}</b>", esc(label));
    if let Some(d) = detail {
        let _ = write!(c, "<div class=\"muted\">{}</div>", esc(d));
    }
    if let Some(st) = stack {
        let lines: Vec<&str> = st.lines().collect();
        let cut = lines.len().saturating_sub(STACK_LINES);
        let more = if cut > 0 { format!("… {} outer frames\n", count(cut as i64)) } else { String::new() };
        let _ =
            write!(c, "<details><summary>all {} frames</summary><pre>{more}{}</pre></details>", lines.len(), esc(&lines[cut..].join("\n")));
    }
    c
}

fn bytes(v: i64) -> String {
    format!("<span title=\"{v} B\">{}</span>", b(v))
}

fn ev(e: Option<i64>) -> String {
    crate::format::event(e)
}

/// Where a peak of a device was: its event, or the dump when the device has no trace.
fn peak_at(events: usize, e: Option<u32>) -> String {
    if events == 0 {
        "the dump (no trace events)".into()
    } else {
        ev(e.map(i64::from))
    }
}

fn sparkline(t: &Timeline) -> String {
    if t.index.is_empty() {
        return String::new();
    }
    let (w, h) = (900.0, 160.0);
    let max = t.reserved_max.iter().chain(&t.active_max).copied().max().unwrap_or(1).max(1) as f64;
    let n = t.index.len().max(2) as f64 - 1.0;
    let pts = |v: &[i64]| {
        v.iter()
            .enumerate()
            .map(|(i, &y)| format!("{:.1},{:.1}", i as f64 / n * w, h - y as f64 / max * (h - 4.0)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "<svg viewBox=\"0 0 {w} {h}\" preserveAspectRatio=\"none\" class=\"spark\" role=\"img\" aria-label=\"memory over the trace\"><polygon fill=\"#cbd5e1\" points=\"0,{h} {} {w},{h}\"/><polyline fill=\"none\" stroke=\"#2563eb\" stroke-width=\"1.5\" points=\"{}\"/></svg><div class=\"muted\">grey: reserved · blue: allocated · x: event 0 … {} · y: 0 … {}</div>",
        pts(&t.reserved_max),
        pts(&t.allocated_max),
        t.to,
        b(max as i64)
    )
}

const CSS: &str = "body{font-family:system-ui,sans-serif;color:#0f172a;background:#f8fafc;margin:0;padding:24px 32px;max-width:1200px}h1{margin:0 0 4px}h2{margin-top:32px;border-bottom:2px solid #e2e8f0;padding-bottom:4px}h3{margin:20px 0 8px}.muted{color:#64748b;font-size:13px}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:10px;margin:12px 0}.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:10px 14px}.card .t{font-size:12px;color:#64748b;text-transform:uppercase}.card .v{font-size:22px;font-weight:650}.ok{background:#ecfdf5;border:1px solid #a7f3d0;padding:10px 14px;border-radius:10px}.warn{background:#fffbeb;border:1px solid #fde68a;padding:10px 14px;border-radius:10px}table{border-collapse:collapse;background:#fff;width:100%;font-size:13px}td,th{border-bottom:1px solid #e2e8f0;padding:5px 8px;text-align:left;vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.bar{background:#dbeafe;height:10px;border-radius:3px}.f{border-left:4px solid #94a3b8;background:#fff;padding:8px 12px;margin:8px 0;border-radius:6px}.f.high{border-color:#dc2626}.f.medium{border-color:#f59e0b}.f.low{border-color:#2563eb}pre{white-space:pre-wrap;font-size:12px;margin:0}.spark{width:100%;height:160px;background:#fff;border:1px solid #e2e8f0;border-radius:8px}";

/// The report of one snapshot: its overview, every device's analyses and a timeline of each
/// (in the order of `ov.devices`).
pub fn html(title: &str, ov: &Overview, analyses: &[DeviceAnalysis], timelines: &[Timeline], tunings: &[Option<Tuning>]) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><title>snapscope report: {t}</title><style>{CSS}</style></head><body><h1>Memory report: {t}</h1><div class=\"muted\">snapscope {v} · {f} snapshot, {enc}, {sz} · {n} device(s)</div>",
        t = esc(title),
        v = crate::VERSION,
        f = match ov.format {
            Some(crate::model::Format::List) => "list",
            _ => "dict",
        },
        enc = esc(&ov.encoding),
        sz = b(ov.source_bytes as i64),
        n = ov.devices.len()
    );
    if ov.devices.is_empty() {
        o.push_str("<p class=\"ok\">The snapshot holds no segments and no trace events.</p>");
    }
    // Headline cards across devices.
    o.push_str("<div class=\"cards\">");
    for a in analyses {
        let d = &a.overview;
        let health = if d.consistency.ok { "exact replay" } else { "partial: trace does not fit the dump" };
        let _ = write!(
            o,
            "<div class=\"card\"><div class=\"t\">device {} · {}</div><div class=\"v\">{}</div><div class=\"muted\">peak allocated at {} · reserved peak {} · {} findings</div></div>",
            d.device,
            health,
            bytes(d.peaks.allocated.bytes),
            peak_at(d.events, d.peaks.allocated.event),
            b(d.peaks.reserved.bytes),
            count(a.findings.len() as i64)
        );
    }
    o.push_str("</div>");
    for ((a, t), tune) in analyses.iter().zip(timelines).zip(tunings) {
        device_section(&mut o, a, t);
        if let Some(tune) = tune {
            what_if_section(&mut o, a, tune);
        }
    }
    o.push_str("<p class=\"muted\">Generated by snapscope. Sizes are allocator block bytes; hover a size for the exact byte count.</p></body></html>");
    o
}

fn device_section(o: &mut String, a: &DeviceAnalysis, timeline: &Timeline) {
    let d = &a.overview;
    let _ = write!(o, "<h2>Device {}</h2>", d.device);
    if d.consistency.ok {
        let _ = write!(
            o,
            "<p class=\"ok\">The allocator replay reproduces the dump exactly ({}/{} blocks; rules: {}).</p>",
            d.consistency.dump_blocks_matched[0],
            d.consistency.dump_blocks_matched[1],
            esc(&d.allocator_rules)
        );
    } else {
        let _ = write!(
            o,
            "<div class=\"warn\">Partial analysis: {} events do not fit the allocator state. First: {}</div>",
            d.consistency.issues.len() as u64 + d.consistency.more_issues,
            d.consistency.issues.first().map(|i| esc(&i.message)).unwrap_or_default()
        );
    }
    let _ = write!(
        o,
        "<div class=\"cards\"><div class=\"card\"><div class=\"t\">peak allocated</div><div class=\"v\">{}</div><div class=\"muted\">at {}</div></div><div class=\"card\"><div class=\"t\">peak reserved</div><div class=\"v\">{}</div><div class=\"muted\">at {}</div></div><div class=\"card\"><div class=\"t\">at dump</div><div class=\"v\">{}</div><div class=\"muted\">allocated of {} reserved</div></div><div class=\"card\"><div class=\"t\">trace</div><div class=\"v\">{}</div><div class=\"muted\">events · {} OOM</div></div></div>",
        bytes(d.peaks.allocated.bytes),
        peak_at(d.events, d.peaks.allocated.event),
        bytes(d.peaks.reserved.bytes),
        peak_at(d.events, d.peaks.reserved.event),
        bytes(d.at_dump.allocated as i64),
        b(d.at_dump.reserved as i64),
        d.events,
        a.oom.ooms.len()
    );
    if d.events > 0 {
        o.push_str(&sparkline(timeline));
    }
    o.push_str("<h3>Suggestions, by priority</h3>");
    if a.findings.is_empty() {
        o.push_str("<p class=\"muted\">Nothing stands out.</p>");
    }
    for f in &a.findings {
        // A finding that only informs has nothing to try.
        let try_line = if f.suggestion.is_empty() {
            String::new()
        } else {
            format!(
                "<div><i>Try:</i> {}{}</div>",
                esc(&f.suggestion),
                if f.expected_effect.is_empty() { String::new() } else { format!(" — expected: {}", esc(&f.expected_effect)) }
            )
        };
        let _ = write!(
            o,
            "<div class=\"f {}\"><b>[{}] {}</b><div>{}</div>{try_line}</div>",
            f.priority,
            f.priority,
            esc(&f.title),
            esc(&f.evidence),
        );
    }
    if let Some(p) = &a.peak {
        let at = if p.at_dump { "the dump".to_string() } else { ev(p.event) };
        let _ = write!(o, "<h3>Who holds the memory at {at} (top stacks)</h3><table><tr><th>share</th><th class=\"n\">bytes</th><th class=\"n\">blocks</th><th>where</th></tr>");
        for g in &p.by_stack {
            let _ = write!(o, "<tr><td style=\"width:120px\"><div class=\"bar\" style=\"width:{:.0}%\"></div>{:.1}%</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>", g.share * 100.0, g.share * 100.0, bytes(g.bytes), count(g.blocks), site_cell(&g.label, g.detail.as_deref(), g.stack.as_deref()));
        }
        let _ = write!(o, "</table><p class=\"muted\">These groups sum to {} = {:.1}% of the active counter at that event; reserved − allocated there: {}.</p>", b(p.live_bytes), p.coverage * 100.0, b(p.reserved_minus_allocated));
    }
    categories_section(o, &a.categories);
    if let Some(s) = &a.steps {
        steps_section(o, s);
    }
    o.push_str("<h3>Fragmentation</h3><table><tr><th>when</th><th class=\"n\">reserved</th><th class=\"n\">free</th><th class=\"n\">free pieces</th><th class=\"n\">largest free</th><th class=\"n\">rounding waste</th><th class=\"n\">pending free</th></tr>");
    for f in &a.fragment.at {
        let _ = write!(o, "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>", match (f.label.as_str(), f.event) { ("dump", None) => "the dump".to_string(), ("dump", Some(e)) => format!("the dump (after event {})", count(e)), (l, e) => format!("{} ({})", l.replace('_', " "), ev(e)) }, bytes(f.reserved), bytes(f.free_bytes), count(f.free_blocks), bytes(f.largest_free), bytes(f.rounding_waste), bytes(f.pending_free_bytes));
    }
    o.push_str("</table>");
    if let Some(l) = &a.leak {
        let _ = write!(o, "<h3>Leaks</h3><p>{} blocks ({}) allocated in the window are still allocated at the dump; {} pending free ({}); {} blocks ({}) from before the window. Allocated floor per tenth of the window: {}{}.</p>", count(l.candidates), b(l.candidate_bytes), count(l.pending_free_blocks), b(l.pending_free_bytes), count(l.before_window_blocks), b(l.before_window_bytes), l.floor.iter().map(|v| b(*v)).collect::<Vec<_>>().join(" → "), if l.floor_rises_steadily { " (rising steadily)" } else { "" });
        if !l.candidates_by_stack.is_empty() {
            o.push_str("<table><tr><th class=\"n\">bytes</th><th class=\"n\">blocks</th><th>allocated at events</th><th>where</th></tr>");
            for c in &l.candidates_by_stack {
                let _ = write!(
                    o,
                    "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}…{}</td><td>{}</td></tr>",
                    bytes(c.bytes),
                    count(c.blocks),
                    c.first_event.map_or("—".into(), count),
                    c.last_event.map_or("—".into(), count),
                    site_cell(&c.label, c.detail.as_deref(), c.stack.as_deref())
                );
            }
            o.push_str("</table>");
        }
    }
    for c in &a.oom.ooms {
        let _ = write!(o, "<h3>Out of memory at event {} — {}</h3><p>{}</p><p>Request {}; device free {}; largest free block in reserved memory {}.</p><ul>{}</ul>", c.event, c.verdict.replace('_', " "), esc(&c.explanation), bytes(c.requested), c.device_free.map(b).unwrap_or_else(|| "unknown".into()), b(c.largest_free_block), c.suggestions.iter().map(|x| format!("<li>{}</li>", esc(x))).collect::<String>());
    }
}

/// The allocator simulated under other settings: the self-check, the toggle of expandable
/// segments and the standard set.
fn what_if_section(o: &mut String, a: &DeviceAnalysis, t: &Tuning) {
    o.push_str("<h3>What if: other allocator settings (simulated)</h3>");
    if let Some(h) = &t.health {
        let class = if t.reproduces_recording == Some(false) { "warn" } else { "ok" };
        let _ = write!(o, "<p class=\"{class}\">{}</p>", esc(h));
    }
    if let Some(w) = &a.what_if {
        let _ = write!(o, "<p>{}</p>", esc(&w.sentence));
        for x in &w.ooms {
            let _ = write!(o, "<p>Out of memory at event {}: {}</p>", count(x.event as i64), esc(&x.sentence));
        }
    }
    o.push_str("<table><tr><th>settings</th><th class=\"n\">reserved peak</th><th class=\"n\">change</th><th>out of memory</th><th class=\"n\">segment allocations</th></tr>");
    for r in &t.rows {
        let oom = match &r.oom {
            serde_json::Value::Number(n) => format!("at event {}", count(n.as_i64().unwrap_or(0))),
            serde_json::Value::String(s) => s.clone(),
            _ => "none".into(),
        };
        let strong = t.try_first.as_deref() == Some(r.conf.as_str());
        let _ = write!(
            o,
            "<tr><td>{}{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            if strong { "<b>" } else { "" },
            esc(&r.label),
            if strong { "</b>" } else { "" },
            b(r.reserved_peak as i64),
            match r.change {
                0 => "±0".to_string(),
                c if c > 0 => format!("+{}", b(c)),
                c => b(c),
            },
            esc(&oom),
            count(r.segment_allocs as i64)
        );
    }
    let _ = write!(o, "</table><p>{}</p>", esc(&t.verdict));
}

fn categories_section(o: &mut String, c: &crate::analysis::categories::CategoryBreakdown) {
    let _ = write!(o, "<h3>What the memory is at {} (by category)</h3>", ev(c.event));
    if let Some(f) = &c.finding {
        let _ = write!(o, "<p>{}</p>", esc(f));
    }
    o.push_str("<table><tr><th>share</th><th class=\"n\">bytes</th><th class=\"n\">blocks</th><th>category</th><th>why (rule)</th><th>largest sites</th></tr>");
    for x in &c.categories {
        let rules: Vec<String> = x.rules.iter().map(|r| format!("<b>{}</b> ({}): {}", esc(&r.rule), bytes(r.bytes), esc(&r.why))).collect();
        let sites: Vec<String> = x.top_sites.iter().map(|s| format!("{} {}", bytes(s.bytes), esc(&s.label))).collect();
        let _ = write!(
            o,
            "<tr><td style=\"width:120px\"><div class=\"bar\" style=\"width:{:.0}%\"></div>{:.1}%</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            x.share.clamp(0.0, 1.0) * 100.0,
            x.share * 100.0,
            bytes(x.bytes),
            count(x.blocks),
            esc(&x.category),
            rules.join("<br>"),
            sites.join("<br>")
        );
    }
    let _ = write!(
        o,
        "</table><p class=\"muted\">The categories sum to the active counter at that event ({}). The rules that decide them, in the order they are tried, are listed (and can be edited) in the Categories view of the snapscope page.</p>",
        b(c.active)
    );
}

fn steps_section(o: &mut String, s: &crate::analysis::steps::StepsAnalysis) {
    o.push_str("<h3>Steps and phases</h3>");
    let runs: Vec<String> = s
        .phases
        .iter()
        .filter(|p| p.kind == "run")
        .map(|p| {
            format!(
                "{} {}–{}",
                esc(&p.name),
                p.start_event.map_or("—".into(), |e| count(e as i64)),
                p.end_event.map_or("—".into(), |e| count(e as i64))
            )
        })
        .collect();
    let _ = write!(o, "<p class=\"muted\">Phases by event: {}.</p>", runs.join(" · "));
    let Some(src) = &s.step_source else {
        let _ = write!(o, "<p>{}</p>", esc(&s.growth.text));
        return;
    };
    let _ = write!(o, "<p>{} <span class=\"muted\">(steps from {})</span></p>", esc(&s.growth.text), esc(src));
    o.push_str("<table><tr><th>step</th><th>events</th><th class=\"n\">peak allocated</th><th>at (phase)</th><th class=\"n\">peak reserved</th><th class=\"n\">allocated at end</th><th class=\"n\">change</th></tr>");
    for st in &s.steps {
        let _ = write!(
            o,
            "<tr><td>{}{}</td><td>{}–{}</td><td class=\"n\">{}</td><td>{} ({})</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            st.step,
            st.cut_short().map_or(String::new(), |c| format!(" ({})", esc(&c))),
            count(st.first_event as i64),
            count(st.last_event as i64),
            bytes(st.peak_allocated.bytes),
            ev(st.peak_allocated.event.map(i64::from)),
            esc(&st.peak_phase),
            bytes(st.peak_reserved.bytes),
            bytes(st.end_allocated),
            st.change_end_allocated.map_or("—".into(), |c| format!("{}{}", if c >= 0 { "+" } else { "−" }, bytes(c.abs())))
        );
    }
    o.push_str("</table>");
}

/// One self-contained page for a distributed run (`snapscope report A B C` or a folder): the
/// peaks rank by rank, the spread, the outliers and why the worst rank differs from the median.
pub fn ranks_html(title: &str, r: &crate::ranks::RanksReport) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>snapscope ranks: {t}</title><style>{CSS}</style></head><body><h1>Memory across ranks: {t}</h1><div class=\"muted\">snapscope {v} · {n} files</div>",
        t = esc(title),
        v = crate::VERSION,
        n = r.files.len()
    );
    let s = &r.summary;
    let fig = |a: &Option<crate::ranks::combine::At>| {
        a.as_ref().map_or("—".to_string(), |a| format!("{} <span class=\"muted\">rank {}</span>", b(a.bytes), count(a.rank)))
    };
    o.push_str("<div class=\"cards\">");
    for (label, both) in [("max", &s.max), ("median", &s.median), ("min", &s.min)] {
        let _ = write!(o, "<div class=\"card\"><div class=\"t\">{label} peak allocated</div><div class=\"v\">{}</div><div class=\"muted\">reserved {}</div></div>", fig(&both.allocated), fig(&both.reserved));
    }
    if let Some(i) = s.imbalance.allocated {
        let _ = write!(o, "<div class=\"card\"><div class=\"t\">imbalance (max / median)</div><div class=\"v\">{i:.3}</div><div class=\"muted\">{} outlier rank(s)</div></div>", s.outliers.len());
    }
    o.push_str("</div>");
    if let Some(w) = &s.worst {
        let _ = write!(o, "<h2>Why rank {} differs</h2><p class=\"warn\">{}</p><table><tr><th>where</th><th class=\"n\">rank {}</th><th class=\"n\">median rank {}</th><th class=\"n\">more</th></tr>", count(w.rank), esc(&w.sentence), count(w.rank), count(w.median_rank));
        for d in w.top_sites.iter().chain(w.categories.iter()) {
            let _ = write!(
                o,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&d.label),
                b(d.worst as i64),
                b(d.median as i64),
                b(d.delta)
            );
        }
        o.push_str("</table>");
    }
    if !s.outliers.is_empty() {
        let _ = write!(o, "<h2>Outliers</h2><p class=\"muted\">{}</p><ul>", esc(&s.outlier_rule));
        for x in &s.outliers {
            let _ = write!(o, "<li>rank {}: {} ({} against the median)</li>", count(x.rank), b(x.bytes), b(x.above_median));
        }
        o.push_str("</ul>");
    }
    o.push_str("<h2>Every rank</h2><table><tr><th class=\"n\">rank</th><th>file</th><th class=\"n\">peak allocated</th><th>at</th><th class=\"n\">peak reserved</th><th class=\"n\">OOMs</th><th class=\"n\">steps</th></tr>");
    let max = s.max.allocated.as_ref().map_or(1, |a| a.bytes.max(1));
    for f in &r.files {
        for d in &f.devices {
            let share = d.peaks.allocated.bytes as f64 / max as f64 * 100.0;
            let _ = write!(
                o,
                "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\" style=\"width:180px\"><div class=\"bar\" style=\"width:{share:.0}%\"></div>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                count(f.rank),
                esc(&f.file),
                b(d.peaks.allocated.bytes),
                ev(d.peaks.allocated.event.map(i64::from)),
                b(d.peaks.reserved.bytes),
                count(d.oom_events as i64),
                d.steps.map_or("—".to_string(), |n| count(n as i64))
            );
        }
    }
    o.push_str("</table>");
    for e in &r.errors {
        let _ = write!(o, "<p class=\"warn\">Could not read {}: {} {}</p>", esc(&e.file), esc(&e.code), esc(&e.message));
    }
    o.push_str("<p class=\"muted\">Generated by snapscope ranks.</p></body></html>");
    o
}
