//! Slices: a smaller, valid snapshot pickle holding the events A..B of one device and
//! the segments/blocks as they stand after B, so it replays to the same counters over A..B.
//! Written with serde-pickle (writing is where it works well); CPython's pickle loads it.

use crate::analysis::state::AllocatorState;
use crate::codes::ErrorCode;
use crate::model::{BlockState, DeviceTrace, Event, Snapshot};
use crate::{Error, Loaded, Result};
use serde_pickle::{HashableValue as H, Value as V};
use std::collections::BTreeMap;

fn s(x: &str) -> V {
    V::String(x.to_string())
}
fn k(x: &str) -> H {
    H::String(x.to_string())
}
fn i(x: i64) -> V {
    V::I64(x)
}
fn u(x: u64) -> V {
    i64::try_from(x).map(V::I64).unwrap_or_else(|_| V::Int(x.into()))
}

fn json_to_pickle(v: &serde_json::Value) -> V {
    match v {
        serde_json::Value::Null => V::None,
        serde_json::Value::Bool(b) => V::Bool(*b),
        serde_json::Value::Number(n) => {
            n.as_i64().map(V::I64).or_else(|| n.as_u64().map(u)).unwrap_or_else(|| V::F64(n.as_f64().unwrap_or(0.0)))
        }
        serde_json::Value::String(x) => s(x),
        serde_json::Value::Array(a) => V::List(a.iter().map(json_to_pickle).collect()),
        serde_json::Value::Object(o) => V::Dict(o.iter().map(|(key, v)| (k(key), json_to_pickle(v))).collect()),
    }
}

fn frames(snap: &Snapshot, stack: Option<u32>) -> V {
    let list = stack.map(|st| snap.interner.stacks[st as usize].clone()).unwrap_or_default();
    V::List(
        list.iter()
            .map(|&f| {
                let fr = &snap.interner.frames[f as usize];
                let mut d = BTreeMap::from([(k("filename"), s(&fr.filename)), (k("line"), i(fr.line)), (k("name"), s(&fr.name))]);
                if let Some(fx) = fr.fx.as_deref() {
                    let keys = [
                        ("fx_node_op", &fx.op),
                        ("fx_node_name", &fx.name),
                        ("fx_node_target", &fx.target),
                        ("fx_original_trace", &fx.original_trace),
                    ];
                    for (key, v) in keys {
                        if let Some(v) = v {
                            d.insert(k(key), s(v));
                        }
                    }
                }
                V::Dict(d)
            })
            .collect(),
    )
}

fn event(snap: &Snapshot, trace: &DeviceTrace, e: &Event) -> V {
    let x = trace.extra(e);
    let mut d = BTreeMap::new();
    d.insert(k("action"), s(x.and_then(|x| x.action_name.as_deref()).unwrap_or(e.action().name())));
    match x.and_then(|x| x.device_free) {
        Some(free) => d.insert(k("device_free"), u(free)),
        None => d.insert(k("addr"), u(e.addr)),
    };
    d.insert(k("size"), u(e.size));
    d.insert(k("stream"), u(trace.stream(e)));
    d.insert(k("frames"), frames(snap, e.stack()));
    if let Some(t) = e.time_us() {
        d.insert(k("time_us"), i(t));
    }
    if let Some(x) = x {
        for (key, val) in [
            ("compile_context", x.compile_context.as_deref()),
            ("user_metadata", x.user_metadata.as_deref()),
            ("internal_metadata", x.internal_metadata.as_deref()),
            ("category", x.category.as_deref()),
        ] {
            if let Some(v) = val {
                d.insert(k(key), s(v));
            }
        }
        if let Some(f) = &x.forward_frames {
            d.insert(k("forward_frames"), V::List(vec![s(f)]));
        }
        if let Some((a, b)) = x.pool_id {
            d.insert(k("pool_id"), V::Tuple(vec![i(a), i(b)]));
        }
        for (key, v) in &x.other {
            d.insert(k(key), json_to_pickle(v));
        }
    }
    V::Dict(d)
}

/// Events of `device` whose time_us lies in [t0, t1].
pub fn time_range(snap: &Snapshot, device: i64, t0: i64, t1: i64) -> Result<(i64, i64)> {
    let t = snap.trace(device).ok_or_else(|| Error::no_device(device))?;
    let idx: Vec<usize> =
        t.events.iter().enumerate().filter(|(_, e)| e.time_us().is_some_and(|x| x >= t0 && x <= t1)).map(|(i, _)| i).collect();
    match (idx.first(), idx.last()) {
        (Some(&a), Some(&b)) => Ok((a as i64, b as i64)),
        _ => Err(Error::new(
            ErrorCode::InvalidParameter,
            format!("no event of device {device} has time_us in {t0}..{t1}"),
            "the trace has no time_us (torch_npu, PyTorch < 2.2) or the range misses it",
        )),
    }
}

/// The events a..=b of `device` (a range `check_range` accepted) with `state`, the allocator
/// state after b, as pickle bytes. `lifetime_base` is the id of the device's first lifetime.
pub fn pickle(loaded: &Loaded, device: i64, a: i64, b: i64, state: &AllocatorState, lifetime_base: i64) -> Result<Vec<u8>> {
    let snap = &loaded.snapshot;
    let trace = snap.trace(device).ok_or_else(|| Error::no_device(device))?;
    let stack_of: BTreeMap<i64, Option<u32>> =
        loaded.device(device).map(|d| d.lifetimes.iter().enumerate().map(|(i, l)| (i as i64, l.stack())).collect()).unwrap_or_default();
    let base = lifetime_base;
    let segments: Vec<V> = state
        .segments
        .iter()
        .map(|sg| {
            let blocks: Vec<V> = sg
                .blocks
                .iter()
                .map(|bl| {
                    let stack = bl.lifetime_id.and_then(|l| stack_of.get(&(l - base)).copied().flatten());
                    V::Dict(BTreeMap::from([
                        (k("address"), i(bl.address)),
                        (k("size"), i(bl.size)),
                        (k("requested_size"), i(bl.requested)),
                        (k("state"), s(bl.state.name())),
                        (k("frames"), frames(snap, stack)),
                    ]))
                })
                .collect();
            let sum = |f: &dyn Fn(BlockState) -> bool| sg.blocks.iter().filter(|x| f(x.state)).map(|x| x.size).sum::<i64>();
            V::Dict(BTreeMap::from([
                (k("device"), i(device)),
                (k("address"), i(sg.address)),
                (k("total_size"), i(sg.size)),
                (k("allocated_size"), i(sum(&|st| st == BlockState::ActiveAllocated))),
                (k("active_size"), i(sum(&|st| st != BlockState::Inactive))),
                (k("requested_size"), i(sg.blocks.iter().filter(|x| x.state != BlockState::Inactive).map(|x| x.requested).sum())),
                (k("stream"), i(sg.stream)),
                (k("segment_type"), s(sg.segment_type.name())),
                (k("segment_pool_id"), V::Tuple(vec![i(0), i(0)])),
                (k("is_expandable"), V::Bool(sg.is_expandable)),
                (k("frames"), V::List(vec![])),
                (k("blocks"), V::List(blocks)),
            ]))
        })
        .collect();
    let events: Vec<V> = (a as usize..=b as usize).map(|i| event(snap, trace, &trace.events[i])).collect();
    let mut traces: Vec<V> = (0..device).map(|_| V::List(vec![])).collect();
    traces.push(V::List(events));
    let mut top = BTreeMap::from([(k("segments"), V::List(segments)), (k("device_traces"), V::List(traces))]);
    if let Some(settings) = &snap.allocator_settings {
        top.insert(k("allocator_settings"), json_to_pickle(settings));
    }
    serde_pickle::value_to_vec(&V::Dict(top), serde_pickle::SerOptions::new())
        .map_err(|e| Error::new(ErrorCode::ExportFailed, e.to_string(), "report this as a bug"))
}

/// Checks that a..=b lies within `device`'s trace.
pub fn check_range(snap: &Snapshot, device: i64, a: i64, b: i64) -> Result<()> {
    let trace = snap.trace(device).ok_or_else(|| Error::no_device(device))?;
    let n = trace.events.len() as i64;
    if a < 0 || b >= n {
        return Err(Error::new(
            ErrorCode::EventOutOfRange,
            format!("{a}..{b} is outside device {device}'s {n} events"),
            format!("use a range within 0..{}", n - 1),
        ));
    }
    Ok(())
}
