//! Output files, written one way (native only): an exclusive temporary file beside the target
//! (never an existing file, never a planted symlink), renamed over the target when complete (a
//! device or a pipe such as `/dev/null` is written in place, never replaced by a file), with
//! the target's permissions kept (a 0600 report stays 0600). The temporary file is removed when
//! the write fails, when the [`TempOut`] is dropped unfinished, and — once the CLI called
//! [`remove_on_signal`] — when the process is stopped by SIGINT, SIGTERM or SIGHUP (a killed
//! import once left up to 1.5 GB behind).

use crate::codes::ErrorCode;
use crate::error::{Error, Result};
use std::ffi::{c_char, CString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Temporary files alive at once that a signal removes (a CLI writes one or two at a time; a
/// `ranks --summary-out` one per thread).
const SLOTS: usize = 256;
static LIVE: [AtomicPtr<c_char>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// A temporary file beside `target`, removed unless [`TempOut::commit`] renames it.
pub struct TempOut {
    path: PathBuf,
    target: PathBuf,
    slot: Option<usize>,
    done: bool,
}

impl TempOut {
    /// Create the temporary file exclusively (`O_CREAT | O_EXCL`). A target that is a device or
    /// a pipe is refused: what is written through a `TempOut` (a database) must be a file.
    pub fn create(target: &Path) -> Result<(TempOut, File)> {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let shown = target.display().to_string();
        if is_device_or_pipe(target) {
            return Err(Error::new(
                ErrorCode::IoError,
                format!("{shown}: not a regular file (a device or a pipe)"),
                "name a file path with -o: a database is written as a file and renamed into place",
            ));
        }
        let mut last = None;
        for attempt in 0..16u32 {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
            let path = target.with_file_name(format!(".{name}.tmp-{}-{nanos}-{attempt}", std::process::id()));
            // Registered before it exists: a signal between the create and the registration
            // would otherwise leave the file behind (the name holds our pid, so a file that is
            // already there is not another live process's).
            let slot = register(&path);
            match std::fs::OpenOptions::new().write(true).read(true).create_new(true).open(&path) {
                Ok(file) => return Ok((TempOut { path, target: target.to_path_buf(), slot, done: false }, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    unregister(slot);
                    last = Some(e)
                }
                Err(e) => {
                    unregister(slot);
                    return Err(io_error(&shown, &e));
                }
            }
        }
        Err(io_error(&shown, &last.unwrap_or_else(|| std::io::Error::other("no free temporary name"))))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Give the file the target's permissions (if the target exists) and rename it over the target.
    pub fn commit(mut self) -> Result<()> {
        let shown = self.target.display().to_string();
        if let Ok(m) = std::fs::metadata(&self.target) {
            std::fs::set_permissions(&self.path, m.permissions()).map_err(|e| io_error(&shown, &e))?;
        }
        std::fs::rename(&self.path, &self.target).map_err(|e| io_error(&shown, &e))?;
        self.done = true;
        unregister(self.slot.take());
        Ok(())
    }
}

impl Drop for TempOut {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
        unregister(self.slot.take());
    }
}

/// Write `data` to `target` through a [`TempOut`]; into a device or a pipe (`-o /dev/stdout`,
/// `/dev/null`, a FIFO) directly, since renaming over it would replace it with a file.
pub fn write_atomic(target: &Path, data: &[u8]) -> Result<()> {
    use std::io::Write;
    if is_device_or_pipe(target) {
        let shown = target.display().to_string();
        let mut out = std::fs::OpenOptions::new().write(true).open(target).map_err(|e| io_error(&shown, &e))?;
        return out.write_all(data).and_then(|_| out.flush()).map_err(|e| io_error(&shown, &e));
    }
    let (tmp, mut file) = TempOut::create(target)?;
    file.write_all(data).and_then(|_| file.flush()).map_err(|e| io_error(&target.display().to_string(), &e))?;
    drop(file);
    tmp.commit()
}

/// Whether `target` exists and is a character or block device, a FIFO or a socket (its link
/// followed, as writing would).
fn is_device_or_pipe(target: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(target).is_ok_and(|m| {
        let t = m.file_type();
        t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
    })
}

/// An IO error on a file, said as such (with what to check for a full disk or a refusal).
pub fn io_error(path: &str, e: &std::io::Error) -> Error {
    let hint = match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EFBIG) | Some(libc::EDQUOT) => "free disk space (or raise the file size limit) and run it again",
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => "write somewhere you may write (-o PATH)",
        _ => "check the path and its permissions",
    };
    Error::new(ErrorCode::IoError, format!("{path}: {e}"), hint)
}

fn register(path: &Path) -> Option<usize> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).ok()?.into_raw();
    for (i, slot) in LIVE.iter().enumerate() {
        if slot.compare_exchange(std::ptr::null_mut(), c, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Some(i);
        }
    }
    // SAFETY: `c` came from `CString::into_raw` just above and was not stored anywhere.
    drop(unsafe { CString::from_raw(c) });
    None
}

fn unregister(slot: Option<usize>) {
    if let Some(i) = slot {
        let p = LIVE[i].swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: every non-null slot holds a pointer from `CString::into_raw` in `register`,
            // taken out of the slot exactly once by this swap.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &LIVE {
        let p = slot.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: unlink is async-signal-safe; `p` is a NUL-terminated path kept alive while
            // it is in the slot.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: restoring the default action and raising the signal again ends the process as
    // the signal would have (both async-signal-safe).
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Remove the live temporary files when SIGINT, SIGTERM or SIGHUP stops the process (the CLI
/// calls this once at start-up).
pub fn remove_on_signal() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installing a handler that only calls async-signal-safe functions.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}
