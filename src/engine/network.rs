//! Network targets from userspace (NBD, iSCSI): every target's connections, many commands in
//! flight on each, driven from the worker's own loop. I/Os are spread round-robin over a
//! target's connections (seed 000's connections per session); one poll(2) over every socket
//! waits for replies, and the protocol's library runs each command's completion callback on
//! this thread, which appends it to the completions handed back. No thread per I/O, no lock.
//! A protocol is a [`Connection`]: how it queues an I/O and services its socket (`nbd.rs`,
//! `iscsi.rs`).

use std::time::Duration;

use super::{Completion, Engine, Io};
use crate::net::{Deadline, poll};

/// What a command's completion callback needs, at a fixed address per slot: the slot and its
/// length, where to put the completion, and the I/O's buffer as an iovec (for a library that
/// keeps a pointer to one until the command ends).
pub struct Pending {
    slot: u32,
    len: u32,
    done: *mut Vec<Completion>,
    /// The I/O's memory, for [`Connection::queue`] to hand the library.
    pub iov: libc::iovec,
}

impl Pending {
    /// Records the command's end: 0 (its length transferred) or an errno.
    ///
    /// # Safety
    /// `self` is one of a live engine's slots (its completion list outlives every connection).
    pub unsafe fn complete(&self, errno: i32) {
        // SAFETY: see above; the list has room for every slot, so this never allocates.
        unsafe {
            (*self.done).push(Completion { slot: self.slot, result: if errno == 0 { self.len as i32 } else { -errno } })
        };
    }
}

/// One connection of a protocol, as the engine drives it. A protocol's connections reach the
/// engine as trait objects ([`super::Target::Network`]): a new protocol is a file here with its
/// implementation, and no edit to the engine's list of targets (the indirect call per I/O is
/// nothing beside a network round trip).
pub trait Connection {
    /// The engine's name and library, for the result ("nbd (libnbd").
    fn driver(&self) -> &'static str;
    /// The socket to poll.
    fn fd(&self) -> libc::c_int;
    /// The poll events the library waits for.
    fn wants(&self) -> i16;
    /// Hands the library what poll saw; it reads replies (running callbacks) and sends.
    fn notify(&self, revents: i16) -> Result<(), String>;
    /// Queues `io`; the library calls back, on a later [`Connection::notify`], through
    /// `pending` ([`Pending::complete`]). Err(errno) when it cannot be queued (no callback).
    ///
    /// # Safety
    /// `io.buf` and `pending` stay valid until the callback has run or the connection is
    /// dropped, whose drop must end every command (no callback after it).
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> Result<(), i32>;
}

/// The connections of a worker's network targets, all of one protocol.
pub struct NetworkEngine {
    /// Every connection; dropped (closed) first, so that no callback runs after `pending` and
    /// `done` are gone.
    conns: Vec<Box<dyn Connection>>,
    /// Per target: its connections' range in `conns`, and the next one to use.
    targets: Vec<(usize, usize, usize)>,
    /// Per slot, at a fixed address (boxed): the callback's data.
    pending: Box<[Pending]>,
    /// Completions the callbacks appended, at a fixed address (the callbacks hold a pointer
    /// to the Vec itself, so it is boxed, not just its elements); at most one per slot, so
    /// pushing never allocates.
    #[allow(clippy::box_collection)]
    done: Box<Vec<Completion>>,
    /// poll(2)'s array, one entry per connection.
    fds: Vec<libc::pollfd>,
}

impl NetworkEngine {
    /// An engine over each target's open connections (`targets[i]` for [`Io::target`] `i`)
    /// for `slots` I/Os in flight.
    pub fn new(targets: Vec<Vec<Box<dyn Connection>>>, slots: usize) -> Self {
        let mut done = Box::new(Vec::with_capacity(slots));
        let done_ptr: *mut Vec<Completion> = &mut *done;
        let empty = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
        let pending = (0..slots).map(|_| Pending { slot: 0, len: 0, done: done_ptr, iov: empty }).collect();
        let mut conns = Vec::new();
        let mut ranges = Vec::new();
        for t in targets {
            ranges.push((conns.len(), t.len(), 0));
            conns.extend(t);
        }
        let fds = conns.iter().map(|c| libc::pollfd { fd: c.fd(), events: 0, revents: 0 }).collect();
        NetworkEngine { conns, targets: ranges, pending, done, fds }
    }

    /// Moves every reply the connections have into `out`, waiting up to `timeout` (None:
    /// until one socket is ready) for them; false when the wait was interrupted or timed out.
    fn pump(&mut self, timeout: Option<Duration>) -> std::io::Result<bool> {
        for (p, c) in self.fds.iter_mut().zip(&self.conns) {
            // A library closes its socket when the connection is lost (libiscsi's fd is then
            // -1, which poll skips): poll the one it has now, never a number since reused.
            p.fd = c.fd();
            p.events = c.wants();
            p.revents = 0;
        }
        if poll(&mut self.fds, timeout)? == 0 {
            return Ok(false);
        }
        // A connection that fails here is gone: the library fails its commands in flight
        // (their callbacks run with the error), so its I/Os count as failed, as a dead
        // device's do; later ones fail or wait for io_timeout.
        for (p, c) in self.fds.iter().zip(&self.conns) {
            if p.revents != 0 {
                let _ = c.notify(p.revents);
            }
        }
        Ok(true)
    }
}

impl Engine for NetworkEngine {
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
        p.iov = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
        // SAFETY: the caller keeps io.buf valid (this function's contract); `p` is boxed and
        // outlives every connection.
        if let Err(errno) = unsafe { conn.queue(io, p) } {
            // Not queued (a connection lost): no callback will run, so it fails here.
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
        let driver = self.conns.first().map_or("network", |c| c.driver());
        format!("{driver}; {per} connection{} per target)", if per == 1 { "" } else { "s" })
    }
}
