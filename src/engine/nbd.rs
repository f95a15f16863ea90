//! NBD exports ([`crate::net::nbd::Handle`]) as connections of the network engine. Trims are
//! NBD_CMD_TRIM, flushes NBD_CMD_FLUSH, FUA writes carry NBD_CMD_FLAG_FUA (the plan refuses
//! them where the server said it has not).

use std::ffi::{c_int, c_void};

use super::Io;
use super::network::{Connection, Pending};
use crate::net::nbd::{Callback, FLAG_FUA, Handle};
use crate::stats::Op;

/// libnbd's completion callback: the command's slot ended with `*error` (0: its length).
unsafe extern "C" fn completed(user_data: *mut c_void, error: *mut c_int) -> c_int {
    // SAFETY: user_data is one of the engine's `Pending`s, which outlive every connection;
    // libnbd passes a valid error pointer.
    unsafe { (*(user_data as *const Pending)).complete(*error) };
    // 1: libnbd retires the command now (no nbd_aio_command_completed needed).
    1
}

impl Connection for Handle {
    fn driver(&self) -> &'static str {
        "nbd (libnbd"
    }

    fn fd(&self) -> c_int {
        Handle::fd(self)
    }

    fn wants(&self) -> i16 {
        Handle::wants(self)
    }

    fn notify(&self, revents: i16) -> Result<(), String> {
        Handle::notify(self, revents)
    }

    #[inline]
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> Result<(), i32> {
        let done = Callback { callback: Some(completed), user_data: pending.cast(), free: None };
        // SAFETY: the caller keeps io.buf and pending valid (this function's contract), and
        // closing the handle ends every command.
        unsafe {
            match io.op {
                Op::Read => self.pread(io.buf, io.len as usize, io.offset, done),
                Op::Write => self.pwrite(io.buf, io.len as usize, io.offset, done, if io.fua { FLAG_FUA } else { 0 }),
                Op::Trim => self.trim(io.len as u64, io.offset, done),
                // NBD has one flush: it makes every completed write durable (fsync's metadata
                // is the server's business).
                Op::Flush => self.flush(done),
            }
        }
    }
}
