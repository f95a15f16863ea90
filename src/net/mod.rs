//! Network block storage reached from userspace: NBD exports through libnbd ([`nbd`]) and
//! iSCSI LUNs through libiscsi ([`iscsi`]), each protocol's own well-kept client library,
//! loaded at run time so that building iogauge needs only Rust.
//!
//! Each protocol's module reads its URLs into a [`Locator`] (which server, export or IQN and
//! LUN: what names the target whatever the URL's spelling). A target's name is read once into a
//! [`TargetName`], the password a URL may carry taken out of it as it is read, and a network
//! target's inspection reads that name once into an [`Address`], which every connection takes
//! (`name.rs`). The protocols are offered to the rest of iogauge by `engine::network`.

/// Loads a protocol's client library `file` (from Debian package `package`), or says what to
/// install; then `symbol!(lib, "name")` resolves one of its functions.
///
/// # Safety
/// Loading runs the library's initialisers: only well-kept protocol libraries are loaded.
unsafe fn load(file: &str, package: &str) -> Result<libloading::Library> {
    // SAFETY: see above.
    unsafe { libloading::Library::new(file) }.map_err(|e| {
        runtime(format!(
            "cannot load {file} ({e}): install {} (Debian: {package})",
            file.split('.').next().unwrap_or(file)
        ))
    })
}

/// A function of a library [`load`]ed, typed by where it is stored; a missing symbol says
/// which library lacks it.
macro_rules! symbol {
    ($lib:ident, $name:literal) => {
        *$lib
            .get(concat!($name, "\0").as_bytes())
            .map_err(|e| crate::error::runtime(format!("{}: {e}", stringify!($lib))))?
    };
}

pub mod iscsi;
mod name;
pub mod nbd;

pub use name::{Address, TargetName, without_passwords};

use std::net::ToSocketAddrs;
use std::time::{Duration, Instant};

use crate::error::{Result, input, runtime};

/// What a network target is, whatever the URL's spelling: the protocol, the server (its
/// resolved address, or the socket's path), and the export (NBD) or IQN and LUN (iSCSI).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Locator {
    /// The protocol's name, as results say it (`nbd`, `iscsi`).
    pub protocol: &'static str,
    /// `ADDRESS:PORT` as resolved, or `unix:PATH`.
    pub server: String,
    /// The NBD export's name, or the iSCSI target's IQN.
    pub export: String,
    /// The iSCSI LUN (NBD: none).
    pub lun: Option<u32>,
}

/// `url`'s scheme and what follows `://`, or "not a URL".
fn split_url(url: &str) -> Result<(&str, &str)> {
    url.split_once("://").ok_or_else(|| input(format!("target {url}: not a URL")))
}

/// A password, held as a value where it is needed (the login) and never shown: its Debug is
/// `***` and it cannot be serialised, so no message, result or history entry holds it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Secret {
    /// The password itself, for the library that logs in with it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// `host[:port]` (an IPv6 address in brackets) as its first resolved address.
fn resolve(url: &str, host_port: &str, default_port: u16) -> Result<String> {
    if host_port.is_empty() {
        return Ok(format!("localhost:{default_port}"));
    }
    let with_port = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && p.chars().all(|c| c.is_ascii_digit()) => host_port.to_string(),
        _ => format!("{host_port}:{default_port}"),
    };
    let mut addrs =
        with_port.to_socket_addrs().map_err(|e| input(format!("target {url}: cannot resolve {host_port}: {e}")))?;
    addrs
        .next()
        .map(|a| a.to_string())
        .ok_or_else(|| input(format!("target {url}: {host_port} resolves to no address")))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).and_then(|&c| hex(c)), b.get(i + 2).and_then(|&c| hex(c))) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, ..) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A point in time to give up at.
pub struct Deadline(Instant);

impl Deadline {
    /// `d` from now.
    pub fn after(d: Duration) -> Deadline {
        Deadline(Instant::now() + d)
    }

    /// What is left, None once it has passed.
    pub fn left(&self) -> Option<Duration> {
        self.0.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())
    }
}

/// Polls one socket for `events` for at most `timeout` (None: forever); returns what it saw
/// (0 on a timeout or an interruption by a signal).
pub fn poll_one(fd: i32, events: i16, timeout: Option<Duration>) -> std::io::Result<i16> {
    let mut p = [libc::pollfd { fd, events, revents: 0 }];
    poll(&mut p, timeout)?;
    Ok(p[0].revents)
}

/// poll(2) over `fds` for at most `timeout` (None: forever; rounded up to a millisecond).
/// Ok(0) on a timeout or when a signal interrupted the wait (the test stops: see
/// `worker::wake`).
pub fn poll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> std::io::Result<usize> {
    let ms = timeout.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
    // SAFETY: fds is a valid array of pollfd of the given length.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::EINTR) { Ok(0) } else { Err(e) };
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_their_protocol_server_and_export() {
        let l = nbd::locate("nbd://127.0.0.1:10900/disk%201").unwrap();
        assert_eq!(
            (l.protocol, l.server.as_str(), l.export.as_str(), l.lun),
            ("nbd", "127.0.0.1:10900", "disk 1", None)
        );
        assert_eq!(nbd::locate("nbd://127.0.0.1").unwrap().server, "127.0.0.1:10809");
        let u = nbd::locate("nbd+unix:///e?socket=/tmp/s.sock").unwrap();
        assert_eq!((u.server.as_str(), u.export.as_str()), ("unix:/tmp/s.sock", "e"));
        let i = iscsi::locate("iscsi://u@127.0.0.1/iqn.2026-11.org.example:disk/3").unwrap();
        assert_eq!(
            (i.server.as_str(), i.export.as_str(), i.lun),
            ("127.0.0.1:3260", "iqn.2026-11.org.example:disk", Some(3))
        );
        let e = iscsi::locate("iscsi://127.0.0.1/iqn.x/lun").unwrap_err();
        assert!(e.to_string().contains("LUN 'lun' is not a number") && e.exit_code() == 2, "{e}");
        assert!(nbd::locate("nbd+unix:///e").unwrap_err().to_string().contains("socket"));
    }
}
