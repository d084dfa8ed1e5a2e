//! Bytes → [`Snapshot`]. Detects the encoding (pickle, gzip-compressed pickle, JSON), runs the
//! safe pickle VM or the JSON parser into the value arena, then decodes the snapshot shape.

pub mod arena;
pub mod decode;
pub mod json;
pub mod pickle;

use crate::error::{Error, Result};
use crate::model::{Snapshot, Warning};
use std::io::Read;

/// Input arrives in chunks (the browser feeds `File.stream()`); this reader gathers them and
/// decodes once the last one is in.
#[derive(Default)]
pub struct ChunkReader {
    buf: Vec<u8>,
    limits: Limits,
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest input accepted (compressed inputs are checked after inflating).
    pub max_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // wasm32 has 4 GiB of linear memory; natively the machine's memory is the limit.
        Limits { max_bytes: if cfg!(target_arch = "wasm32") { 3 << 30 } else { 64 << 30 } }
    }
}

impl ChunkReader {
    pub fn new(limits: Limits) -> Self {
        ChunkReader { buf: Vec::new(), limits }
    }

    pub fn with_capacity(bytes: usize) -> Self {
        ChunkReader { buf: Vec::with_capacity(bytes), limits: Limits::default() }
    }

    pub fn push(&mut self, chunk: &[u8]) -> Result<()> {
        if (self.buf.len() + chunk.len()) as u64 > self.limits.max_bytes {
            return Err(too_large(self.limits.max_bytes));
        }
        self.buf.extend_from_slice(chunk);
        Ok(())
    }

    pub fn bytes_read(&self) -> u64 {
        self.buf.len() as u64
    }

    pub fn finish(self) -> Result<Snapshot> {
        read_snapshot_limited(&self.buf, self.limits)
    }
}

pub fn read_snapshot(bytes: &[u8]) -> Result<Snapshot> {
    read_snapshot_limited(bytes, Limits::default())
}

pub fn read_snapshot_limited(bytes: &[u8], limits: Limits) -> Result<Snapshot> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let inflated = gunzip(bytes, limits)?;
        let mut snap = read_plain(&inflated)?;
        snap.encoding = format!("gzip+{}", snap.encoding);
        snap.source_bytes = bytes.len() as u64;
        return Ok(snap);
    }
    read_plain(bytes)
}

fn read_plain(bytes: &[u8]) -> Result<Snapshot> {
    let mut snap = Snapshot { source_bytes: bytes.len() as u64, ..Default::default() };
    let mut arena = arena::Arena::default();
    let first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
    let root = match first {
        None => return Err(Error::snapshot("the file is empty")),
        Some(b'{') | Some(b'[') => {
            snap.encoding = "json".into();
            json::parse(bytes, &mut arena)?
        }
        Some(_) => {
            let (root, info) = pickle::parse(bytes, &mut arena)?;
            snap.encoding = format!("pickle protocol {}", info.protocol);
            if info.trailing_bytes > 0 {
                let zeros = bytes[info.end..].iter().all(|&b| b == 0);
                snap.warnings.push(Warning {
                    code: "TRAILING_BYTES".into(),
                    message: format!(
                        "{} {} after the pickle's end at byte {} were ignored{}",
                        info.trailing_bytes,
                        if zeros { "NUL bytes" } else { "bytes" },
                        info.end,
                        if zeros { "" } else { " (an older torch_npu re-dump over a longer file leaves these)" }
                    ),
                    device: None,
                    event: None,
                });
            }
            root
        }
    };
    decode::decode(&arena, root, &mut snap)?;
    Ok(snap)
}

fn gunzip(bytes: &[u8], limits: Limits) -> Result<Vec<u8>> {
    // A gzip bomb must fail fast: cap the output, and refuse absurd ratios early.
    let cap = limits.max_bytes.min((bytes.len() as u64).saturating_mul(200).max(64 << 20));
    let mut out = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(bytes).take(cap + 1);
    dec.read_to_end(&mut out).map_err(|e| {
        Error::new("GZIP_INVALID", format!("the gzip stream is corrupt: {e}"), "check that the .gz download is complete (gzip -t FILE)")
    })?;
    if out.len() as u64 > cap {
        return Err(Error::new(
            "INPUT_TOO_LARGE",
            format!(
                "the gzip stream inflates beyond {cap} bytes ({}x its compressed size); refused as a likely gzip bomb",
                cap / bytes.len().max(1) as u64
            ),
            "decompress it yourself if it is genuine (gunzip FILE) and open the plain pickle",
        ));
    }
    Ok(out)
}

fn too_large(max: u64) -> Error {
    Error::new(
        "INPUT_TOO_LARGE",
        format!("the input exceeds {max} bytes"),
        "record fewer events (max_entries in _record_memory_history) or open the file with the native snapscope CLI",
    )
}
