//! iSCSI LUNs ([`crate::net::iscsi::Session`]) as connections of the network engine: reads are
//! READ(16) and writes WRITE(16) straight from and to the worker's buffers (an iovec per slot),
//! FUA writes set WRITE(16)'s FUA bit, trims are UNMAP, flushes SYNCHRONIZE CACHE(16) (the
//! plan refuses what the LUN said it has not).

use std::ffi::{c_int, c_void};
use std::time::Duration;

use super::{Connection, Export, Pending, Protocol};
use crate::engine::Io;
use crate::error::Result;
use crate::net::iscsi::{self, Session, Task, finish};
use crate::net::{Address, Locator};
use crate::stats::Op;

/// iSCSI, through libiscsi.
pub struct Iscsi;

impl Protocol for Iscsi {
    fn name(&self) -> &'static str {
        "iscsi"
    }

    fn schemes(&self) -> &'static [&'static str] {
        &["iscsi"]
    }

    fn noun(&self) -> &'static str {
        "iSCSI LUN"
    }

    fn speaker(&self) -> &'static str {
        "the iSCSI LUN"
    }

    fn locate(&self, url: &str) -> Result<Locator> {
        iscsi::locate(url)
    }

    fn connect(&self, at: &Address, timeout: Duration) -> Result<Box<dyn Connection>> {
        Ok(Box::new(Session::connect(at, timeout)?))
    }
}

/// libiscsi's completion callback: the command of a slot ended with `status`.
unsafe extern "C" fn completed(_ctx: *mut c_void, status: c_int, task: Task, private: *mut c_void) {
    // SAFETY: the task is the callback's (freed by finish); private is one of the engine's
    // `Pending`s, which outlive every session.
    unsafe { (*(private as *const Pending)).complete(finish(status, task)) };
}

impl Connection for Session {
    fn export(&self, at: &Locator) -> Export {
        let l = &self.info;
        Export {
            size: l.size,
            block: l.block as u64,
            model: format!(
                "iSCSI LUN {} of {} on {}: {} (libiscsi)",
                at.lun.unwrap_or(0),
                at.export,
                at.server,
                l.device
            ),
            device: Some(l.device.clone()),
            can_trim: l.can_unmap,
            // SYNCHRONIZE CACHE is every SCSI disk's; a LUN's sessions see each other's writes.
            can_flush: true,
            can_fua: l.can_fua,
            multi_conn: true,
            read_only: l.read_only,
        }
    }

    fn read_now(&mut self, buf: &mut [u8], at: u64, timeout: Duration) -> Result<()> {
        self.read(buf, at, timeout)
    }

    fn driver(&self) -> &'static str {
        "iscsi (libiscsi"
    }

    fn fd(&self) -> c_int {
        Session::fd(self)
    }

    fn wants(&self) -> i16 {
        Session::wants(self)
    }

    fn notify(&self, revents: i16) -> Result<()> {
        Session::notify(self, revents)
    }

    #[inline]
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> std::result::Result<(), i32> {
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
