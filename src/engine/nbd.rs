//! NBD exports from userspace: every target's connections ([`crate::net::nbd::Handle`]), many
//! commands in flight on each, driven from the worker's own loop. I/Os are spread round-robin
//! over a target's connections (seed 000's connections per session); one poll(2) over every
//! socket waits for replies, and libnbd runs each command's completion callback on this thread,
//! which appends it to the completions handed back. No thread per I/O, no lock.
//!
//! Trims are NBD_CMD_TRIM, flushes NBD_CMD_FLUSH, FUA writes carry NBD_CMD_FLAG_FUA (the plan
//! refuses them where the server said it has not).

use std::ffi::{c_int, c_void};
use std::time::Duration;

use super::{Completion, Engine, Io};
use crate::net::nbd::{Callback, FLAG_FUA, Handle};
use crate::net::{Deadline, poll};
use crate::stats::Op;

/// What a command's completion callback needs: its slot and length, and where to put it.
struct Pending {
    slot: u32,
    len: u32,
    done: *mut Vec<Completion>,
}

/// The connections of a worker's NBD targets.
pub struct NbdEngine {
    /// Every connection; dropped (closed) first, so that no callback runs after `pending` and
    /// `done` are gone.
    conns: Vec<Handle>,
    /// Per target: its connections' range in `conns`, and the next one to use.
    targets: Vec<(usize, usize, usize)>,
    /// Per slot, at a fixed address (boxed): the callback's `user_data`.
    pending: Box<[Pending]>,
    /// Completions the callbacks appended, at a fixed address (the callbacks hold a pointer
    /// to the Vec itself, so it is boxed, not just its elements); at most one per slot, so
    /// pushing never allocates.
    #[allow(clippy::box_collection)]
    done: Box<Vec<Completion>>,
    /// poll(2)'s array, one entry per connection.
    fds: Vec<libc::pollfd>,
}

/// libnbd's completion callback: the command's slot completed with `*error` (0: its length).
unsafe extern "C" fn completed(user_data: *mut c_void, error: *mut c_int) -> c_int {
    // SAFETY: user_data is one of the engine's boxed `Pending`s, which outlive every
    // connection; `done` has room for every slot; libnbd passes a valid error pointer.
    unsafe {
        let p = &*(user_data as *const Pending);
        let e = *error;
        (*p.done).push(Completion { slot: p.slot, result: if e == 0 { p.len as i32 } else { -e } });
    }
    // 1: libnbd retires the command now (no nbd_aio_command_completed needed).
    1
}

impl NbdEngine {
    /// An engine over each target's open connections (`targets[i]` for [`Io::target`] `i`)
    /// for `slots` I/Os in flight.
    pub fn new(targets: Vec<Vec<Handle>>, slots: usize) -> Self {
        let mut done = Box::new(Vec::with_capacity(slots));
        let done_ptr: *mut Vec<Completion> = &mut *done;
        let pending = (0..slots).map(|_| Pending { slot: 0, len: 0, done: done_ptr }).collect();
        let mut conns = Vec::new();
        let mut ranges = Vec::new();
        for t in targets {
            ranges.push((conns.len(), t.len(), 0));
            conns.extend(t);
        }
        let fds = conns.iter().map(|c| libc::pollfd { fd: c.fd(), events: 0, revents: 0 }).collect();
        NbdEngine { conns, targets: ranges, pending, done, fds }
    }

    /// Moves every reply the connections have into `out`, waiting up to `timeout` (None:
    /// until one socket is ready) for them; false when the wait was interrupted or timed out.
    fn pump(&mut self, timeout: Option<Duration>) -> std::io::Result<bool> {
        for (p, c) in self.fds.iter_mut().zip(&self.conns) {
            p.events = c.wants();
            p.revents = 0;
        }
        if poll(&mut self.fds, timeout)? == 0 {
            return Ok(false);
        }
        // A connection that fails here is gone: libnbd fails its commands in flight (their
        // callbacks run with the error) and every later one at once, so its I/Os count as
        // failed, as a dead device's do.
        for (p, c) in self.fds.iter().zip(&self.conns) {
            if p.revents != 0 {
                let _ = c.notify(p.revents);
            }
        }
        Ok(true)
    }
}

impl Engine for NbdEngine {
    fn max_in_flight(&self) -> usize {
        usize::MAX
    }

    /// # Safety
    /// See [`Engine::queue`]: `io.buf` stays valid until the completion is handed back or the
    /// engine is dropped (dropping closes every connection first).
    #[inline]
    unsafe fn queue(&mut self, io: &Io) {
        let (first, n, next) = &mut self.targets[io.target as usize];
        let conn = &self.conns[*first + *next];
        *next = if *next + 1 == *n { 0 } else { *next + 1 };
        let p = &mut self.pending[io.slot as usize];
        (p.slot, p.len) = (io.slot, io.len);
        let done = Callback { callback: Some(completed), user_data: (p as *mut Pending).cast(), free: None };
        // SAFETY: the caller keeps io.buf valid (this function's contract); `p` is boxed and
        // outlives every connection.
        let queued = unsafe {
            match io.op {
                Op::Read => conn.pread(io.buf, io.len as usize, io.offset, done),
                Op::Write => conn.pwrite(io.buf, io.len as usize, io.offset, done, if io.fua { FLAG_FUA } else { 0 }),
                Op::Trim => conn.trim(io.len as u64, io.offset, done),
                // NBD has one flush: it makes every completed write durable (fsync's metadata
                // is the server's business).
                Op::Flush => conn.flush(done),
            }
        };
        if let Err(errno) = queued {
            // Not queued (a connection lost): the callback will not run, so it fails here.
            self.done.push(Completion { slot: io.slot, result: -errno });
        }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        let deadline = timeout.map(Deadline::after);
        loop {
            out.append(&mut self.done);
            if out.len() >= min_complete.max(1) {
                return Ok(());
            }
            let left = match &deadline {
                Some(d) => match d.left() {
                    Some(l) => Some(l),
                    None => return Ok(()),
                },
                None => None,
            };
            if !self.pump(left)? && self.done.is_empty() {
                // Timed out, or a signal (the test stops): back with what has completed.
                out.append(&mut self.done);
                return Ok(());
            }
        }
    }

    fn describe(&self) -> String {
        let per = self.targets.first().map_or(1, |t| t.1);
        format!("nbd (libnbd; {per} connection{} per target)", if per == 1 { "" } else { "s" })
    }
}
