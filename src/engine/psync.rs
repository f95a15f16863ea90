//! pread/pwrite, one I/O at a time: for kernels without io_uring. A worker using it keeps one
//! I/O in flight whatever its outstanding I/Os say; the result carries a warning saying so.

use std::os::fd::RawFd;

use super::{Completion, Engine, Io};

/// Synchronous positional I/O.
pub struct PsyncEngine {
    fds: Vec<RawFd>,
    queued: Option<Io>,
}

impl PsyncEngine {
    /// An engine over the worker's open targets (`fds` indexed by [`Io::target`]).
    pub fn new(fds: Vec<RawFd>) -> Self {
        PsyncEngine { fds, queued: None }
    }
}

impl Engine for PsyncEngine {
    fn max_in_flight(&self) -> usize {
        1
    }

    fn queue(&mut self, io: &Io) {
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
        let fd = self.fds[io.target as usize];
        let n = loop {
            // SAFETY: io.buf points at io.len bytes of the worker's buffers, which outlive the call.
            let n = unsafe {
                if io.write {
                    libc::pwrite(fd, io.buf.cast(), io.len as usize, io.offset as libc::off_t)
                } else {
                    libc::pread(fd, io.buf.cast(), io.len as usize, io.offset as libc::off_t)
                }
            };
            // The signal that wakes workers at the end of a test may interrupt a slow file
            // system's transfer: that is not the storage failing, so do it again.
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        let result =
            if n < 0 { -std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) } else { n as i32 };
        out.push(Completion { slot: io.slot, result });
        Ok(())
    }

    fn describe(&self) -> String {
        "psync".into()
    }
}
