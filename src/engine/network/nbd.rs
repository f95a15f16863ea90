//! NBD exports ([`crate::net::nbd::Handle`]) as connections of the network engine. Trims are
//! NBD_CMD_TRIM, flushes NBD_CMD_FLUSH, FUA writes carry NBD_CMD_FLAG_FUA (the plan refuses
//! them where the server said it has not).

use std::ffi::{c_int, c_void};
use std::time::Duration;

use super::{Connection, Export, Pending, Protocol};
use crate::engine::Io;
use crate::error::{Result, input};
use crate::net::nbd::{self, Callback, FLAG_FUA, Handle};
use crate::net::{Address, Locator, TargetName};
use crate::stats::Op;

/// NBD, through libnbd.
pub struct Nbd;

impl Protocol for Nbd {
    fn name(&self) -> &'static str {
        "nbd"
    }

    fn schemes(&self) -> &'static [&'static str] {
        nbd::SCHEMES
    }

    fn noun(&self) -> &'static str {
        "NBD export"
    }

    fn speaker(&self) -> &'static str {
        "the NBD server"
    }

    fn locate(&self, url: &str) -> Result<Locator> {
        nbd::locate(url)
    }

    /// NBD has no login with a password (TLS keys are libnbd's URI parameters): a URL that
    /// gave one is refused, rather than the password silently dropped.
    fn address(&self, name: &TargetName) -> Result<Address> {
        if name.secret().is_some() {
            return Err(input(format!(
                "target {name}: NBD has no login with a password: leave it out of the URL (libnbd's TLS keys \
                 are its URI's tls-psk-file parameter)"
            )));
        }
        Ok(Address { locator: self.locate(name)?, user: name.user(), name: name.clone() })
    }

    fn connect(&self, at: &Address, timeout: Duration) -> Result<Box<dyn Connection>> {
        Ok(Box::new(Handle::connect(&resolved(at), timeout)?))
    }
}

/// The URI libnbd connects to for `at`: its name's, the host of an `nbd://` URL replaced by
/// the address the inspection resolved it to, so that no connection looks the name up again
/// nor reaches another server the name has come to mean. An `nbds://` URL keeps its host name,
/// which TLS checks the server's certificate against (each connection resolves it; the size
/// check of `targets::network::open` stands guard); a socket's path needs no lookup.
fn resolved(at: &Address) -> String {
    let url = at.name.as_str();
    let Some(rest) = url.strip_prefix("nbd://") else { return url.to_string() };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end].rfind('@').map_or(0, |at| at + 1);
    format!("nbd://{}{}{}", &rest[..host], at.locator.server, &rest[end..])
}

/// libnbd's completion callback: the command's slot ended with `*error` (0: its length).
unsafe extern "C" fn completed(user_data: *mut c_void, error: *mut c_int) -> c_int {
    // SAFETY: user_data is one of the engine's `Pending`s, which outlive every connection;
    // libnbd passes a valid error pointer.
    unsafe { (*(user_data as *const Pending)).complete(*error) };
    // 1: libnbd retires the command now (no nbd_aio_command_completed needed).
    1
}

impl Connection for Handle {
    fn export(&self, at: &Locator) -> Export {
        let e = Handle::export(self);
        let name = if e.name.is_empty() { "(default)".to_string() } else { format!("'{}'", e.name) };
        Export {
            size: e.size,
            block: e.min_block,
            model: format!("NBD export {name} on {} ({}, libnbd)", at.server, e.protocol),
            device: None,
            can_trim: e.can_trim,
            can_flush: e.can_flush,
            can_fua: e.can_fua,
            multi_conn: e.multi_conn,
            read_only: e.read_only,
        }
    }

    fn read_now(&mut self, buf: &mut [u8], at: u64, timeout: Duration) -> Result<()> {
        self.read(buf, at, timeout)
    }

    fn driver(&self) -> &'static str {
        "nbd (libnbd"
    }

    fn fd(&self) -> c_int {
        Handle::fd(self)
    }

    fn wants(&self) -> i16 {
        Handle::wants(self)
    }

    fn notify(&self, revents: i16) -> Result<()> {
        Handle::notify(self, revents)
    }

    #[inline]
    unsafe fn queue(&self, io: &Io, pending: *mut Pending) -> std::result::Result<(), i32> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_reaches_the_address_resolved_at_the_inspection() {
        let at = |url: &str, server: &str| Address {
            name: TargetName::read(url),
            locator: Locator { protocol: "nbd", server: server.into(), export: "e".into(), lun: None },
            user: None,
        };
        let cases = [
            ("nbd://disks.example/e?tls=off", "192.0.2.7:10809", "nbd://192.0.2.7:10809/e?tls=off"),
            ("nbd://alice@disks.example:10900", "[2001:db8::7]:10900", "nbd://alice@[2001:db8::7]:10900"),
            // TLS checks the certificate against the name; a socket has no name to look up.
            ("nbds://disks.example/e", "192.0.2.7:10809", "nbds://disks.example/e"),
            ("nbd+unix:///e?socket=/run/s.sock", "unix:/run/s.sock", "nbd+unix:///e?socket=/run/s.sock"),
        ];
        for (url, server, uri) in cases {
            assert_eq!(resolved(&at(url, server)), uri, "{url}");
        }
    }
}
