//! Bytes → [`Snapshot`]. Detects the encoding (pickle, gzip-compressed pickle, JSON), runs the
//! safe pickle VM or the JSON parser into the value arena, then decodes the snapshot shape.

use crate::codes::{ErrorCode, WarningCode};
pub mod arena;
pub mod decode;
pub mod entry;
pub mod json;
pub mod memo;
pub mod pickle;
pub mod recycle;
pub mod stack_cache;

use crate::error::{Error, Result};
use crate::model::{Snapshot, Warning};
use std::io::Read;

/// Input arrives in chunks (the browser feeds `File.stream()`). A pickle is decoded as the
/// chunks arrive ([`pickle::StreamVm`]); JSON and gzip input is gathered first.
pub struct ChunkReader {
    mode: Mode,
    read: u64,
    limits: Limits,
    /// The inflated content of a gzip stream: gzip again is refused.
    nested: bool,
    /// [`ChunkReader::room`]'s bytes before the encoding is known or when the input is gathered.
    staged: Vec<u8>,
}

enum Mode {
    /// Not enough bytes yet to tell the encoding.
    Detect(Vec<u8>),
    Pickle(Box<pickle::StreamVm>),
    Gathered(Vec<u8>),
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest input accepted (compressed inputs are checked after inflating).
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // wasm32 has 4 GiB of linear memory, and the engine holds about 0.7x a large file's
        // bytes (a 3.4 GiB file took 2.2 GiB, README "Benchmarks"): inputs up to 4 GiB are read,
        // and one that needs more memory fails as OUT_OF_MEMORY naming the CLI. Natively the
        // machine's memory is the limit.
        Limits { max_bytes: if cfg!(target_arch = "wasm32") { 4 << 30 } else { 64 << 30 } }
    }
}

impl Default for ChunkReader {
    fn default() -> Self {
        ChunkReader::new(Limits::default())
    }
}

impl ChunkReader {
    pub fn new(limits: Limits) -> Self {
        ChunkReader { mode: Mode::Detect(Vec::new()), read: 0, limits, nested: false, staged: Vec::new() }
    }

    /// The input's whole size, when the caller knows it before reading (a file's length): an
    /// input the reader would refuse once past its limit is refused now, without reading the
    /// gigabytes before it.
    pub fn declare_size(&self, total: u64) -> Result<()> {
        if total > self.limits.max_bytes {
            return Err(too_large_declared(total, self.limits.max_bytes));
        }
        Ok(())
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        // The VM keeps what it has not consumed; bounded pieces keep that copy small when a
        // caller hands over a whole file at once.
        for piece in chunk.chunks(1 << 20) {
            self.push_piece(piece)?;
        }
        Ok(())
    }

    /// Where the caller writes the next `n` bytes of input in place, then calls
    /// [`ChunkReader::filled`]: the page copies each chunk of the file from JavaScript into the
    /// engine's memory once, straight into the pickle VM's buffer (with [`ChunkReader::push`],
    /// wasm-bindgen copies it into memory of its own first).
    pub fn room(&mut self, n: usize) -> *mut u8 {
        let buf = match &mut self.mode {
            Mode::Pickle(vm) => vm.room(n),
            Mode::Detect(_) | Mode::Gathered(_) => {
                self.staged.clear();
                self.staged.reserve(n);
                &mut self.staged
            }
        };
        buf.as_mut_ptr().wrapping_add(buf.len())
    }

    /// The `n` bytes written at [`ChunkReader::room`]`(n)` are the input's next ones.
    ///
    /// # Safety
    /// `room(n)` was called last (no other call on this reader since) and `n` bytes were written
    /// at the address it returned.
    pub unsafe fn filled(&mut self, n: usize) -> Result<()> {
        match &mut self.mode {
            Mode::Pickle(vm) => {
                self.read += n as u64;
                if self.read > self.limits.max_bytes {
                    return Err(too_large(self.limits.max_bytes));
                }
                // SAFETY: the contract above is the VM's.
                unsafe { vm.filled(n) }
            }
            Mode::Detect(_) | Mode::Gathered(_) => {
                assert!(n <= self.staged.capacity(), "more bytes than the room made");
                // SAFETY: the caller wrote these n bytes, within the capacity room(n) reserved.
                unsafe { self.staged.set_len(n) };
                let staged = std::mem::take(&mut self.staged);
                let pushed = self.push(&staged);
                self.staged = staged;
                pushed
            }
        }
    }

    fn push_piece(&mut self, chunk: &[u8]) -> Result<()> {
        self.read += chunk.len() as u64;
        if self.read > self.limits.max_bytes {
            return Err(too_large(self.limits.max_bytes));
        }
        match &mut self.mode {
            Mode::Pickle(vm) => vm.feed(chunk),
            Mode::Gathered(buf) => {
                buf.extend_from_slice(chunk);
                Ok(())
            }
            Mode::Detect(buf) => {
                buf.extend_from_slice(chunk);
                let first = buf.iter().copied().find(|b| !b.is_ascii_whitespace());
                match first {
                    None => Ok(()),
                    Some(0x1f) if buf.len() < 2 => Ok(()),
                    Some(b'{') | Some(b'[') => {
                        self.mode = Mode::Gathered(std::mem::take(buf));
                        Ok(())
                    }
                    Some(_) if buf.starts_with(&[0x1f, 0x8b]) && self.nested => Err(nested_gzip()),
                    Some(_) if buf.starts_with(&[0x1f, 0x8b]) => {
                        self.mode = Mode::Gathered(std::mem::take(buf));
                        Ok(())
                    }
                    Some(_) => {
                        let mut vm = Box::new(pickle::StreamVm::new());
                        vm.feed(buf)?;
                        self.mode = Mode::Pickle(vm);
                        Ok(())
                    }
                }
            }
        }
    }

    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    pub fn finish(self) -> Result<Snapshot> {
        let mut snap = match self.mode {
            Mode::Pickle(vm) => finish_pickle(*vm)?,
            Mode::Detect(buf) | Mode::Gathered(buf) if buf.starts_with(&[0x1f, 0x8b]) => {
                let mut snap = gunzip_into(&buf, self.limits)?.finish()?;
                snap.encoding = format!("gzip+{}", snap.encoding);
                snap
            }
            Mode::Detect(buf) | Mode::Gathered(buf) => read_gathered(&buf)?,
        };
        snap.source_bytes = self.read;
        Ok(snap)
    }
}

pub fn read_snapshot(bytes: &[u8]) -> Result<Snapshot> {
    read_snapshot_limited(bytes, Limits::default())
}

pub fn read_snapshot_limited(bytes: &[u8], limits: Limits) -> Result<Snapshot> {
    let mut reader = ChunkReader::new(limits);
    reader.push(bytes)?;
    reader.finish()
}

fn finish_pickle(vm: pickle::StreamVm) -> Result<Snapshot> {
    let (arena, root, info, state) = vm.finish()?;
    let mut snap = decode::decode(&arena, root, state)?;
    snap.encoding = format!("pickle protocol {}", info.protocol);
    if info.trailing_bytes > 0 {
        let zeros = info.trailing_zeros;
        let message = format!(
            "{} {} after the pickle's end at byte {} were ignored{}",
            info.trailing_bytes,
            if zeros { "NUL bytes" } else { "bytes" },
            info.end,
            if zeros { "" } else { " (an older torch_npu re-dump over a longer file leaves these)" }
        );
        snap.warnings.insert(0, Warning { code: WarningCode::TrailingBytes, message, device: None, event: None });
    }
    Ok(snap)
}

/// Whole-input formats: JSON, or a pickle too short to have been streamed.
fn read_gathered(bytes: &[u8]) -> Result<Snapshot> {
    match bytes.iter().copied().find(|b| !b.is_ascii_whitespace()) {
        None => Err(Error::snapshot("the file is empty")),
        Some(b'{') | Some(b'[') => {
            let mut arena = arena::Arena::default();
            let root = json::parse(bytes, &mut arena)?;
            let mut snap = decode::decode(&arena, root, decode::DecodeState::default())?;
            snap.encoding = "json".into();
            Ok(snap)
        }
        Some(_) => {
            let mut vm = pickle::StreamVm::new();
            vm.feed(bytes)?;
            finish_pickle(vm)
        }
    }
}

/// Inflate gzip input into a reader of the plain snapshot, a piece at a time, under one budget
/// for the whole decompressed size (every member of a multi-member stream counts). A snapshot is
/// never gzip inside gzip: an inflated stream that is gzip again is refused, not opened.
fn gunzip_into(bytes: &[u8], limits: Limits) -> Result<ChunkReader> {
    use crate::budget::DECOMPRESSED_BYTES;
    // A gzip bomb must fail fast: cap the output (by default the larger of 64 MiB and 200x the
    // compressed size, never above the input limit).
    let cap = if DECOMPRESSED_BYTES.overridden() {
        DECOMPRESSED_BYTES.limit()
    } else {
        limits.max_bytes.min((bytes.len() as u64).saturating_mul(200).max(64 << 20))
    };
    let mut inner = ChunkReader::new(Limits { max_bytes: u64::MAX });
    inner.nested = true;
    let mut dec = flate2::read::MultiGzDecoder::new(bytes);
    let mut piece = vec![0u8; 1 << 20];
    // A bomb is reported as such even when its content is not a pickle: keep counting.
    let mut inner_error = None;
    let mut inflated = 0u64;
    loop {
        let n = dec.read(&mut piece).map_err(|e| {
            Error::new(
                ErrorCode::GzipInvalid,
                format!("the gzip stream is corrupt: {e}"),
                "check that the .gz download is complete (gzip -t FILE)",
            )
        })?;
        if n == 0 {
            return inner_error.map_or(Ok(inner), Err);
        }
        inflated += n as u64;
        if inflated > cap {
            return Err(DECOMPRESSED_BYTES
                .exceeded(cap, format_args!("the gzip stream of {} bytes inflates beyond {cap} bytes, a likely gzip bomb", bytes.len())));
        }
        if inner_error.is_none() {
            inner_error = inner.push(&piece[..n]).err();
            if inner_error.as_ref().is_some_and(|e| e.code == ErrorCode::GzipNested) {
                return Err(inner_error.unwrap_or_else(nested_gzip));
            }
        }
    }
}

fn nested_gzip() -> Error {
    Error::new(
        ErrorCode::GzipNested,
        "the gzip stream holds another gzip stream; a snapshot is compressed once, so it is refused unopened",
        "if it is genuine, decompress it yourself (gunzip -c FILE | gunzip -c > plain.pickle) and open the plain pickle",
    )
}

const TOO_LARGE_HINT: &str = "record fewer events (max_entries in _record_memory_history) or open the file with the native snapscope CLI";

fn too_large(max: u64) -> Error {
    Error::new(
        ErrorCode::InputTooLarge,
        format!("the input exceeds the {} this engine reads", crate::format::exact_bytes(max as i64)),
        TOO_LARGE_HINT,
    )
}

fn too_large_declared(total: u64, max: u64) -> Error {
    Error::new(
        ErrorCode::InputTooLarge,
        format!(
            "the file is {}, more than the {} this engine reads; nothing of it was read",
            crate::format::exact_bytes(total as i64),
            crate::format::exact_bytes(max as i64)
        ),
        TOO_LARGE_HINT,
    )
}

#[cfg(test)]
mod tests {
    use crate::codes::WarningCode;

    /// A declared size beyond the limit is refused before any byte is read, naming the CLI; at
    /// the limit it is not (the read itself still counts every byte, and refuses past it).
    #[test]
    fn a_declared_size_beyond_the_limit_is_refused_at_once() {
        let reader = super::ChunkReader::new(super::Limits { max_bytes: 4096 });
        assert!(reader.declare_size(4096).is_ok());
        let e = reader.declare_size(5000).unwrap_err();
        assert_eq!(e.code, crate::codes::ErrorCode::InputTooLarge);
        assert!(e.message.contains("is 4.88 KiB (5,000 B), more than the 4.00 KiB (4,096 B)"), "{}", e.message);
        assert!(e.hint.contains("native snapscope CLI"), "{}", e.hint);
        // A stream of unknown size is refused once past the limit.
        let mut stream = super::ChunkReader::new(super::Limits { max_bytes: 4096 });
        let e = stream.push(&[b'('; 5000]).unwrap_err();
        assert_eq!(e.code, crate::codes::ErrorCode::InputTooLarge);
        assert!(e.message.contains("exceeds the 4.00 KiB (4,096 B)"), "{}", e.message);
    }

    /// Input written in place (`room` then `filled`, as the page does) reads as the same input
    /// pushed, in chunks of every size from 1 byte (the encoding not yet told) to the whole, for
    /// a pickle and for JSON (gathered); a `filled` beyond the room made panics.
    #[test]
    fn input_written_in_place_reads_as_pushed() {
        let pickle = crate::warmup::snapshot_pickle(300);
        let json = br#"{"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "frames": []}]]}"#;
        for input in [&pickle[..], &json[..]] {
            let pushed = format!("{:?}", super::read_snapshot(input).unwrap());
            for size in [1, 7, 4096, input.len()] {
                let mut reader = super::ChunkReader::default();
                for chunk in input.chunks(size) {
                    let at = reader.room(chunk.len());
                    // SAFETY: the room holds chunk.len() bytes; filled follows at once.
                    unsafe {
                        std::ptr::copy_nonoverlapping(chunk.as_ptr(), at, chunk.len());
                        reader.filled(chunk.len()).unwrap();
                    }
                }
                assert_eq!(format!("{:?}", reader.finish().unwrap()), pushed, "chunks of {size}");
            }
        }
        let overfilled = std::panic::catch_unwind(|| {
            let mut reader = super::ChunkReader::default();
            reader.room(8);
            // SAFETY: not kept (the call panics before it sets the length).
            let _ = unsafe { reader.filled(1 << 20) };
        });
        assert!(overfilled.is_err());
    }

    /// What an event cannot hold is said, not misread: a time beyond ±2^55 µs is dropped with
    /// a warning (its neighbours keep theirs), and hundreds of streams all read back.
    #[test]
    fn times_out_of_range_warn_and_many_streams_read_back() {
        let times = [1_757_253_257_271_411i64, 1 << 60, -(1 << 60), -5];
        let mut events: Vec<String> = times
            .iter()
            .map(|t| format!(r#"{{"action": "snapshot", "addr": 0, "size": 0, "stream": 7, "time_us": {t}, "frames": []}}"#))
            .collect();
        events.extend(
            (0..600).map(|i| format!(r#"{{"action": "snapshot", "addr": 0, "size": 0, "stream": {}, "frames": []}}"#, 1000 + i % 300)),
        );
        let json = format!(r#"{{"segments": [], "device_traces": [[{}]]}}"#, events.join(","));
        let snap = super::read_snapshot(json.as_bytes()).unwrap();
        let trace = &snap.traces[0];
        let read: Vec<Option<i64>> = trace.events.iter().take(4).map(|e| e.time_us()).collect();
        assert_eq!(read, [Some(1_757_253_257_271_411), None, None, Some(-5)]);
        let warned = snap.warnings.iter().filter(|w| w.code == WarningCode::EventInvalid && w.message.contains("time_us")).count();
        assert_eq!(warned, 2, "{:?}", snap.warnings);
        let streams: Vec<u64> = trace.events.iter().map(|e| trace.stream(e)).collect();
        let expected: Vec<u64> = [7; 4].into_iter().chain((0..600).map(|i| 1000 + i % 300)).collect();
        assert_eq!(streams, expected);
    }
}
