//! A synthetic snapshot to warm the engine up with. Browsers first run WebAssembly as baseline
//! code and optimize a function only once it has run for a while, and a function called once
//! per load (a device's replay) is never optimized in time. The page's next worker runs this
//! snapshot through the reader, the replay and the overview while the page waits for a file
//! (`AHEAD_EVENTS`), and a worker started for a large file runs a shorter one first
//! (`ON_LOAD_EVENTS`), so that the file meets optimized code (see the README's benchmarks).
//!
//! The pickle is written the way PyTorch writes one: protocol 4, every dict, list and string
//! memoized, frame dicts and frames lists shared by reference, entries appended in batches.
//! Its trace is consistent with its dump: blocks are allocated from the start of one segment and
//! freed in reverse order, so the replay runs its normal path, not its error paths.

use std::collections::HashMap;

const SEGMENT_ADDR: u64 = 0x7f00_0000_0000;
const SEGMENT_SIZE: u64 = 64 << 20;
const MIB: u64 = 1 << 20;
/// Distinct frame dicts, and frames per stack.
const FRAMES: usize = 64;
const STACK_DEPTH: usize = 12;

/// The snapshot's largest allocated total: 4 blocks of 3 MiB (see `cycle_shape`).
pub const PEAK_ALLOCATED: u64 = 12 * MIB;

/// Blocks per cycle and their size: cycle `c` allocates `1 + c % 4` blocks of `(1 + c % 3)` MiB.
fn cycle_shape(c: usize) -> (usize, u64) {
    (1 + c % 4, (1 + (c % 3) as u64) * MIB)
}

/// Events of the warm-up run while the page waits for a file (about 4 MB, ~0.3 s): off the
/// load's path, so long enough for the browser to optimize every hot function.
pub const AHEAD_EVENTS: usize = 80_000;
/// Events of the warm-up run on a load's path, before a large file (about 1 MB, ~0.1 s).
pub const ON_LOAD_EVENTS: usize = 20_000;

/// Read, replay and summarize a warm-up snapshot of about `events` events, as a load does.
pub fn run(events: usize) -> crate::Result<()> {
    let mut reader = crate::reader::ChunkReader::default();
    // In pieces the size of the worker's reads, so that the streaming path is the one warmed.
    for piece in snapshot_pickle(events).chunks(1 << 20) {
        reader.push(piece)?;
    }
    let loaded = crate::Loaded::from_snapshot(reader.finish()?);
    crate::analysis::overview::overview(&loaded);
    Ok(())
}

/// A snapshot of one device with about `events` trace events (whole cycles of alloc,
/// free_requested and free_completed).
pub fn snapshot_pickle(events: usize) -> Vec<u8> {
    let mut p = Pickler::default();
    p.out.extend([0x80, 4]);
    p.dict_start();
    p.str("segments");
    p.list_start();
    p.out.push(b'(');
    segment(&mut p);
    p.out.push(b'e'); // APPENDS
    p.str("device_traces");
    p.list_start();
    p.out.push(b'(');
    trace(&mut p, events);
    p.out.push(b'e');
    p.out.push(b'u'); // SETITEMS of the top dict
    p.out.push(b'.');
    p.out
}

fn segment(p: &mut Pickler) {
    p.dict_start();
    for (k, v) in [("device", 0), ("address", SEGMENT_ADDR), ("total_size", SEGMENT_SIZE), ("allocated_size", 0), ("active_size", 0)] {
        p.str(k);
        p.int(v);
    }
    p.str("stream");
    p.int(0);
    p.str("segment_type");
    p.str("large");
    p.str("blocks");
    p.list_start();
    p.out.push(b'(');
    p.dict_start();
    for (k, v) in [("address", SEGMENT_ADDR), ("size", SEGMENT_SIZE), ("requested_size", 0)] {
        p.str(k);
        p.int(v);
    }
    p.str("state");
    p.str("inactive");
    p.out.push(b'u');
    p.out.push(b'e');
    p.out.push(b'u');
}

fn trace(p: &mut Pickler, events: usize) {
    p.list_start();
    // Memo index of each frame dict once written (inline, at its first use).
    let mut frames: Vec<Option<usize>> = vec![None; FRAMES];
    let (mut written, mut batch, mut time_us) = (0, 0, 1_700_000_000_000_000u64);
    // Writes one entry; returns the memo index of a new frames list.
    let mut entry = |p: &mut Pickler, action: &str, addr: u64, size: u64, stack: Stack| -> usize {
        if batch == 0 {
            p.out.push(b'(');
        }
        time_us += 7;
        p.dict_start();
        p.str("action");
        p.str(action);
        for (k, v) in [("addr", addr), ("size", size), ("stream", 0), ("time_us", time_us)] {
            p.str(k);
            p.int(v);
        }
        p.str("frames");
        let list = match stack {
            Stack::New(seed) => {
                let list = p.list_start();
                p.out.push(b'(');
                for d in 0..STACK_DEPTH {
                    let k = (seed * 7 + d * 13) % FRAMES;
                    match frames[k] {
                        Some(i) => p.get(i),
                        None => frames[k] = Some(frame(p, k)),
                    }
                }
                p.out.push(b'e');
                list
            }
            Stack::Memo(i) => {
                p.get(i);
                i
            }
        };
        p.out.push(b'u');
        batch += 1;
        if batch == 1000 {
            p.out.push(b'e');
            batch = 0;
        }
        list
    };
    let mut cycle = 0;
    while written < events {
        let (blocks, size) = cycle_shape(cycle);
        let mut stacks = Vec::with_capacity(blocks);
        for b in 0..blocks {
            stacks.push(entry(p, "alloc", SEGMENT_ADDR + b as u64 * size, size, Stack::New(cycle + b)));
        }
        for b in (0..blocks).rev() {
            entry(p, "free_requested", SEGMENT_ADDR + b as u64 * size, size, Stack::Memo(stacks[b]));
            entry(p, "free_completed", SEGMENT_ADDR + b as u64 * size, size, Stack::Memo(stacks[b]));
        }
        written += 3 * blocks;
        cycle += 1;
    }
    if batch > 0 {
        p.out.push(b'e');
    }
}

enum Stack {
    /// A new frames list (seeded choice of frames).
    New(usize),
    /// The memoized frames list of the block's alloc entry.
    Memo(usize),
}

/// Writes frame dict `k` and returns its memo index.
fn frame(p: &mut Pickler, k: usize) -> usize {
    let at = p.dict_start();
    p.str("filename");
    p.str(&format!("/workspace/model/layer{}.py", k % 8));
    p.str("line");
    p.int(10 + k as u64 * 3);
    p.str("name");
    p.str(&format!("forward_{k}"));
    p.out.push(b'u');
    at
}

#[derive(Default)]
struct Pickler {
    out: Vec<u8>,
    /// Memo slots used so far.
    memo: usize,
    strings: HashMap<String, usize>,
}

impl Pickler {
    fn memoize(&mut self) -> usize {
        self.out.push(0x94);
        self.memo += 1;
        self.memo - 1
    }

    /// EMPTY_DICT, MEMOIZE, MARK: the caller writes pairs and SETITEMS.
    fn dict_start(&mut self) -> usize {
        self.out.push(b'}');
        let at = self.memoize();
        self.out.push(b'(');
        at
    }

    /// EMPTY_LIST, MEMOIZE: the caller writes MARK, items and APPENDS. Returns the memo index.
    fn list_start(&mut self) -> usize {
        self.out.push(b']');
        self.memoize()
    }

    fn get(&mut self, i: usize) {
        match u8::try_from(i) {
            Ok(small) => self.out.extend([b'h', small]),
            Err(_) => {
                self.out.push(b'j');
                self.out.extend((i as u32).to_le_bytes());
            }
        }
    }

    fn str(&mut self, s: &str) {
        if let Some(&i) = self.strings.get(s) {
            return self.get(i);
        }
        self.out.extend([0x8c, s.len() as u8]);
        self.out.extend(s.as_bytes());
        let i = self.memoize();
        self.strings.insert(s.to_string(), i);
    }

    /// BININT1, BININT or LONG1, as Python picks.
    fn int(&mut self, v: u64) {
        if v < 256 {
            self.out.extend([b'K', v as u8]);
        } else if v < 1 << 31 {
            self.out.push(b'J');
            self.out.extend((v as u32).to_le_bytes());
        } else {
            // Little-endian two's complement, minimal: a high bit set needs a zero byte after.
            let bytes = v.to_le_bytes();
            let n = 8 - bytes.iter().rev().take_while(|&&b| b == 0).count();
            let sign_byte = bytes[n - 1] & 0x80 != 0;
            self.out.extend([0x8a, (n + sign_byte as usize) as u8]);
            self.out.extend(&bytes[..n]);
            if sign_byte {
                self.out.push(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::first_max;
    use crate::Loaded;

    #[test]
    fn replays_consistently_to_its_known_peak() {
        let bytes = snapshot_pickle(10_000);
        let loaded = Loaded::from_bytes(&bytes).expect("the synthetic snapshot reads");
        let d = &loaded.devices[0];
        assert!(d.events >= 10_000 && d.events < 10_030, "{} events", d.events);
        assert!(d.consistency.ok, "{:?}", d.consistency.issues);
        assert_eq!(first_max(d.series.allocated.iter()).map(|(v, _)| v), Some(PEAK_ALLOCATED as i64));
        assert!(loaded.snapshot.warnings.is_empty(), "{:?}", loaded.snapshot.warnings);
        // Stacks are shared as PyTorch shares them: one interned stack per distinct seed.
        assert!(loaded.snapshot.interner.stacks.len() < 200);
    }
}
