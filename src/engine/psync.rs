//! pread/pwrite, one I/O at a time: for kernels without io_uring, and for io_uring's workers
//! of one outstanding I/O on a RAM disk (mod.rs). A worker using it keeps one I/O in flight
//! whatever its outstanding I/Os say; the result carries a warning saying so.
//! Trims are `BLKDISCARD` or a punched hole, flushes fdatasync or fsync, FUA writes pwritev2
//! with `RWF_DSYNC`.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

use super::{Completion, Engine, Io, is_block_device, trim_now};
use crate::stats::Op;

/// Synchronous positional I/O.
pub struct PsyncEngine {
    /// The targets' descriptors, of `_files`, which the engine owns.
    fds: Vec<RawFd>,
    _files: Vec<File>,
    /// Per target: a block device.
    block: Vec<bool>,
    queued: Option<Io>,
    /// The RAM disk it serves in io_uring's stead, in words (None: asked for by name).
    instead_of_io_wq: Option<&'static str>,
}

impl PsyncEngine {
    /// An engine over the worker's open targets (indexed by [`Io::target`]).
    pub fn new(files: Vec<File>) -> Self {
        let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        let block = fds.iter().map(|&fd| is_block_device(fd)).collect();
        PsyncEngine { fds, _files: files, block, queued: None, instead_of_io_wq: None }
    }

    /// The engine of an io_uring worker's one outstanding I/O on RAM disk `disk` (in words).
    pub fn instead_of_io_wq(files: Vec<File>, disk: &'static str) -> Self {
        PsyncEngine { instead_of_io_wq: Some(disk), ..PsyncEngine::new(files) }
    }
}

/// Does `io` on `fd` now: bytes transferred (0 for a trim or flush), or -errno.
fn do_io(fd: RawFd, block: bool, io: &Io) -> i32 {
    let (buf, len, off) = (io.buf, io.len as usize, io.offset as libc::off_t);
    // SAFETY: io.buf points at io.len bytes of the worker's buffers, which outlive the call.
    let n = unsafe {
        match io.op {
            Op::Read => libc::pread(fd, buf.cast(), len, off),
            Op::Write if io.fua => {
                let iov = libc::iovec { iov_base: buf.cast(), iov_len: len };
                libc::pwritev2(fd, &iov, 1, off, libc::RWF_DSYNC)
            }
            Op::Write => libc::pwrite(fd, buf.cast(), len, off),
            Op::Trim => return trim_now(fd, block, io.offset, io.len),
            Op::Flush if io.fsync => libc::fsync(fd) as isize,
            Op::Flush => libc::fdatasync(fd) as isize,
        }
    };
    if n < 0 { -std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) } else { n as i32 }
}

impl Engine for PsyncEngine {
    fn max_in_flight(&self) -> usize {
        1
    }

    /// # Safety
    /// See [`Engine::queue`]: `io.buf` is used during the next `submit_and_wait` only.
    unsafe fn queue(&mut self, io: &Io) {
        debug_assert!(self.queued.is_none(), "psync keeps one I/O in flight");
        self.queued = Some(*io);
    }

    fn submit_and_wait(
        &mut self,
        _min_complete: usize,
        _timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        let Some(io) = self.queued.take() else {
            return Ok(());
        };
        let (fd, block) = (self.fds[io.target as usize], self.block[io.target as usize]);
        let result = loop {
            let n = do_io(fd, block, &io);
            // The signal that wakes workers at the end of a test may interrupt a slow file
            // system's transfer: that is not the storage failing, so do it again.
            if n != -libc::EINTR {
                break n;
            }
        };
        out.push(Completion { slot: io.slot, result });
        Ok(())
    }

    fn describe(&self) -> String {
        match self.instead_of_io_wq {
            None => "psync".into(),
            Some(disk) => format!(
                "psync: one outstanding I/O on {disk}, done on the worker's thread (io_uring would hand each to \
                 an io-wq thread and back)"
            ),
        }
    }
}
