//! Network targets from userspace (NBD, iSCSI): every target's connections, many commands in
//! flight on each, driven from the worker's own loop. I/Os are spread round-robin over a
//! target's connections (seed 000's connections per session); one poll(2) over every socket
//! waits for replies, and the protocol's library runs each command's completion callback on
//! this thread, which appends it to the completions handed back. No thread per I/O, no lock.
//!
//! A protocol is one file here (`nbd.rs`, `iscsi.rs`) over its client in `crate::net`: a
//! [`Protocol`] (its URLs, how to connect) whose connections are [`Connection`]s (what the
//! server says the target is, how an I/O is queued and the socket serviced), and one line of
//! [`PROTOCOLS`]. Nothing else names a protocol: targets, the plan and the safety checks ask
//! these traits.

use std::time::Duration;

use super::{Completion, Engine, Io};
use crate::error::Result;
use crate::net::{Address, Deadline, Locator, TargetName, poll};

#[cfg(test)]
mod fake;
mod iscsi;
mod nbd;

/// Every protocol iogauge reaches targets over, found by their URLs' schemes. The unit tests
/// add one of their own (fake.rs), as a new protocol is added.
const PROTOCOLS: &[&dyn Protocol] = &[
    &nbd::Nbd,
    &iscsi::Iscsi,
    #[cfg(test)]
    &fake::Fake,
];

/// A protocol of network targets: the URLs it reads and the connections it makes.
pub trait Protocol: Sync {
    /// Its name, as results say it (`nbd`): a target's `kind`.
    fn name(&self) -> &'static str;
    /// The URL schemes that name its targets (`nbd`, `nbds`, `nbd+unix`...).
    fn schemes(&self) -> &'static [&'static str];
    /// What one of its targets is called in messages ("NBD export").
    fn noun(&self) -> &'static str;
    /// Who says what a target can do, in a refusal ("the NBD server").
    fn speaker(&self) -> &'static str;
    /// What `url` names, however spelt (the server resolved): input errors.
    fn locate(&self, url: &str) -> Result<Locator>;
    /// The target `name` names, read once (its server resolved) for every connection to it:
    /// input errors.
    fn address(&self, name: &TargetName) -> Result<Address> {
        Ok(Address { locator: self.locate(name)?, user: name.user(), name: name.clone() })
    }
    /// One connection to the target at `at`, logged in as its user where the protocol has
    /// logins, giving up after `timeout`: runtime errors (the caller says whose).
    fn connect(&self, at: &Address, timeout: Duration) -> Result<Box<dyn Connection>>;
}

/// The protocol whose scheme `url` has, if iogauge reaches it.
pub fn protocol_of(url: &str) -> Option<&'static dyn Protocol> {
    let scheme = url.split_once("://")?.0;
    PROTOCOLS.iter().copied().find(|p| p.schemes().contains(&scheme))
}

/// The protocol called `name` (a target's `kind` in a result).
pub fn protocol_named(name: &str) -> Option<&'static dyn Protocol> {
    PROTOCOLS.iter().copied().find(|p| p.name() == name)
}

/// Every scheme iogauge reaches, for a message ("nbd://, nbds://, ... or iscsi://").
pub fn schemes() -> Vec<String> {
    PROTOCOLS.iter().flat_map(|p| p.schemes()).map(|s| format!("{s}://")).collect()
}

// A protocol is its name: two targets of one protocol are of one kind.
impl PartialEq for dyn Protocol {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for dyn Protocol {}

impl std::fmt::Debug for dyn Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for dyn Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for &'static dyn Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        protocol_named(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown network protocol '{name}'")))
    }
}

/// What a connection's server says its target is.
#[derive(Debug, Clone)]
pub struct Export {
    /// Bytes.
    pub size: u64,
    /// The smallest block it takes (offsets and lengths are multiples of it).
    pub block: u64,
    /// What it is, for the result's `model` ("NBD export 'disk' on 127.0.0.1:10809 (...)").
    pub model: String,
    /// What the device says it is (SCSI INQUIRY's vendor, product, serial), if it says.
    pub device: Option<String>,
    /// It takes trims.
    pub can_trim: bool,
    /// It takes flushes.
    pub can_flush: bool,
    /// It takes FUA writes.
    pub can_fua: bool,
    /// Several connections see each other's writes at once.
    pub multi_conn: bool,
    /// It refuses writes.
    pub read_only: bool,
}

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

/// One connection of a protocol: what its server says, a read made now (the checks before a
/// write, `iogauge verify`), and the engine's driving. A protocol's connections reach the
/// engine as trait objects ([`super::Target::Network`]), so a new protocol needs no edit to the
/// engine's list of targets (the indirect call per I/O is nothing beside a network round trip).
pub trait Connection {
    /// What the server said at the connection of the target `at` names.
    fn export(&self, at: &Locator) -> Export;
    /// Reads `buf.len()` bytes at byte `at` now, waiting at most `timeout`.
    fn read_now(&mut self, buf: &mut [u8], at: u64, timeout: Duration) -> Result<()>;
    /// The engine's name and library, for the result ("nbd (libnbd").
    fn driver(&self) -> &'static str;
    /// The socket to poll.
    fn fd(&self) -> libc::c_int;
    /// The poll events the library waits for.
    fn wants(&self) -> i16;
    /// Hands the library what poll saw; it reads replies (running callbacks) and sends.
    fn notify(&self, revents: i16) -> Result<()>;
    /// Queues `io`; the library calls back, on a later [`Connection::notify`], through
    /// `pending` ([`Pending::complete`]). Err(errno) when it cannot be queued (no callback).
    ///
    /// # Safety
    /// `io.buf` and `pending` stay valid until the callback has run or the connection is
    /// dropped, whose drop must end every command (no callback after it).
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> std::result::Result<(), i32>;
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
