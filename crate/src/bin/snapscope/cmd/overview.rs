use crate::emit::Out;
use crate::focus::resolve;
use snapscope::analysis::overview::Overview;
use snapscope::format::{bytes, event};
use snapscope::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    input: Option<PathBuf>,
}

pub fn run(a: Args, out: Out) -> Result<()> {
    let target = resolve(a.input, None)?;
    let engine = crate::rules::open(&target.path)?;
    Out { from_focus: target.from_focus, ..out }.answer(engine.overview()?, |ov| print(ov));
    Ok(())
}

fn print(ov: &Overview) {
    say!("{} ({}, {} bytes)", ov.format.map(|f| format!("{f:?}")).unwrap_or_default(), ov.encoding, ov.source_bytes);
    if ov.devices.is_empty() {
        say!("no devices: the snapshot has no segments and no trace events");
    }
    for d in &ov.devices {
        say!(
            "\ndevice {}: {} events, {} segments at dump ({} expandable)",
            d.device,
            d.events,
            d.segments_at_dump,
            d.expandable_segments_at_dump
        );
        say!(
            "  at dump     allocated {:>12}  active {:>12}  reserved {:>12}",
            bytes(d.at_dump.allocated as i64),
            bytes(d.at_dump.active as i64),
            bytes(d.at_dump.reserved as i64)
        );
        if d.events > 0 {
            for (name, p) in [
                ("allocated", d.peaks.allocated),
                ("active", d.peaks.active),
                ("reserved", d.peaks.reserved),
                ("requested", d.peaks.requested),
            ] {
                say!("  peak {name:<10} {:>12}  ({} B) at {}", bytes(p.bytes), p.bytes, event(p.event.map(i64::from)));
            }
        }
        let c = &d.consistency;
        if c.ok {
            say!(
                "  replay: consistent ({}/{} dump blocks reproduced; rules: {})",
                c.dump_blocks_matched[0],
                c.dump_blocks_matched[1],
                d.allocator_rules
            );
        } else {
            say!("  replay: INCONSISTENT, {} issues; figures are partial", c.issues.len() as u64 + c.more_issues);
            for i in c.issues.iter().take(5) {
                let at = i.event.map_or("at the dump".to_string(), |e| format!("event {e}"));
                say!("    {at}: {} {}", i.code, i.message);
            }
        }
        if c.ambiguous_bytes > 0 {
            say!(
                "  note: counters before some frees may be low by up to {} (blocks allocated before the window)",
                bytes(c.ambiguous_bytes as i64)
            );
        }
    }
    for w in &ov.warnings {
        say!("warning: {} {}", w.code, w.message);
    }
}
