//! iSCSI LUNs ([`crate::net::iscsi::Session`]) as connections of the network engine: reads are
//! READ(16) and writes WRITE(16) straight from and to the worker's buffers (an iovec per slot),
//! FUA writes set WRITE(16)'s FUA bit, trims are UNMAP, flushes SYNCHRONIZE CACHE(16) (the
//! plan refuses what the LUN said it has not).

use std::ffi::{c_int, c_void};

use super::Io;
use super::network::{Connection, Pending};
use crate::net::iscsi::{Session, Task, finish};
use crate::stats::Op;

/// libiscsi's completion callback: the command of a slot ended with `status`.
unsafe extern "C" fn completed(_ctx: *mut c_void, status: c_int, task: Task, private: *mut c_void) {
    // SAFETY: the task is the callback's (freed by finish); private is one of the engine's
    // `Pending`s, which outlive every session.
    unsafe { (*(private as *const Pending)).complete(finish(status, task)) };
}

impl Connection for Session {
    fn driver(&self) -> &'static str {
        "iscsi (libiscsi"
    }

    fn fd(&self) -> c_int {
        Session::fd(self)
    }

    fn wants(&self) -> i16 {
        Session::wants(self)
    }

    fn notify(&self, revents: i16) -> Result<(), String> {
        Session::notify(self, revents)
    }

    #[inline]
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> Result<(), i32> {
        // SAFETY: the caller keeps io.buf and pending (whose iovec points at io.buf) valid
        // (this function's contract), and dropping the session ends every command.
        unsafe {
            let iov = &raw mut (*pending).iov;
            let private = pending.cast();
            match io.op {
                Op::Read => self.read16(iov, io.offset, completed, private),
                Op::Write => self.write16(iov, io.offset, io.fua, completed, private),
                Op::Trim => self.unmap(io.offset, io.len as u64, completed, private),
                // SCSI's one cache flush: SYNCHRONIZE CACHE of the whole LUN.
                Op::Flush => self.synchronize_cache(completed, private),
            }
        }
    }
}
