//! Network block storage reached from userspace: NBD exports through libnbd ([`nbd`]) and
//! iSCSI LUNs through libiscsi ([`iscsi`]), each protocol's own well-kept client library,
//! loaded at run time so that building iogauge needs only Rust.
//!
//! Each protocol's module reads its URLs into a [`Locator`] (which server, export or IQN and
//! LUN: what names the target whatever the URL's spelling); this one keeps the passwords URLs
//! may carry out of every name iogauge writes ([`Secrets::take`]). The protocols are offered to
//! the rest of iogauge by `engine::network`.

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
pub mod nbd;

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

/// The passwords taken out of a job's URLs ([`Secrets::take`]), by the `USER@HOST[:PORT]`
/// they were given for: a value the job carries to the targets' inspection (which hands each
/// its own to the connections that log in), not a store of the process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Secrets(Vec<(String, Secret)>);

impl Secrets {
    /// `url` without the password it may carry (`iscsi://USER%PASSWORD@HOST/...`, libiscsi's
    /// form, or `iscsi://USER:PASSWORD@HOST/...`, the URI's, become `iscsi://USER@HOST/...`),
    /// which is kept here for [`Secrets::of`]. Every target a test names passes through here
    /// as the test is read. Anything else is returned as it is.
    pub fn take(&mut self, url: &str) -> String {
        let Some((Some(userinfo), after)) = iscsi_userinfo(url) else { return url.to_string() };
        let Some((user, password)) = userinfo.split_once(['%', ':']) else { return url.to_string() };
        let host = after.split_once('/').map_or(after, |(h, _)| h);
        let key = format!("{user}@{host}");
        self.0.retain(|(k, _)| *k != key);
        self.0.push((key, Secret(percent_decode(password))));
        format!("iscsi://{user}@{after}")
    }

    /// The password taken for `url`'s user and server.
    pub fn of(&self, url: &str) -> Option<&Secret> {
        let (Some(user), after) = iscsi_userinfo(url)? else { return None };
        let key = format!("{user}@{}", after.split_once('/').map_or(after, |(h, _)| h));
        self.0.iter().find(|(k, _)| *k == key).map(|(_, p)| p)
    }
}

/// The user an `iscsi://USER@...` URL names.
pub fn user(url: &str) -> Option<String> {
    let userinfo = iscsi_userinfo(url)?.0?;
    Some(percent_decode(userinfo.split(['%', ':']).next().unwrap_or(userinfo))).filter(|u| !u.is_empty())
}

/// An `iscsi://` URL's userinfo (`USER[%PASSWORD]`, if any) and what follows it
/// (`HOST[:PORT]/IQN/LUN`). The userinfo ends at the URL's last `@` (an IQN holds none), so a
/// password with an unencoded `/` or `?` is still read as the password, never as the host.
fn iscsi_userinfo(url: &str) -> Option<(Option<&str>, &str)> {
    let rest = url.strip_prefix("iscsi://")?;
    Some(rest.rsplit_once('@').map_or((None, rest), |(u, after)| (Some(u), after)))
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

    #[test]
    fn passwords_are_taken_out_of_urls_and_kept_for_the_login() {
        let mut s = Secrets::default();
        let u = s.take("iscsi://alice%p%40ss@127.0.0.1:3261/iqn.2026-11.x:y/1");
        assert_eq!(u, "iscsi://alice@127.0.0.1:3261/iqn.2026-11.x:y/1");
        assert_eq!(s.of(&u).map(Secret::expose), Some("p@ss"));
        assert_eq!(user(&u).as_deref(), Some("alice"));
        // Taken once: the URL without it stays as it is, and so does the secret.
        assert_eq!(s.take(&u), u);
        assert_eq!(s.of(&u).map(Secret::expose), Some("p@ss"));
        assert_eq!(s.of("iscsi://bob@127.0.0.1:3261/iqn.2026-11.x:y/1"), None);
        // A value, not a store of the process: another job's secrets are its own.
        assert_eq!(Secrets::default().of(&u), None);
        assert_eq!(s.take("nbd://alice%x@h/e"), "nbd://alice%x@h/e");
        assert_eq!(iscsi::locate(&u).unwrap().server, "127.0.0.1:3261");
        // A password holding an unencoded '/', '?' or '@', and the URI's USER:PASSWORD form.
        let u = s.take("iscsi://carol%a/b?c@d@127.0.0.1:3262/iqn.2026-11.x:y/2");
        assert_eq!(u, "iscsi://carol@127.0.0.1:3262/iqn.2026-11.x:y/2");
        assert_eq!((user(&u).as_deref(), s.of(&u).map(Secret::expose)), (Some("carol"), Some("a/b?c@d")));
        let u = s.take("iscsi://dave:s3%2Fcret@127.0.0.1:3263/iqn.2026-11.x:y/0");
        assert_eq!(u, "iscsi://dave@127.0.0.1:3263/iqn.2026-11.x:y/0");
        assert_eq!((user(&u).as_deref(), s.of(&u).map(Secret::expose)), (Some("dave"), Some("s3/cret")));
        let l = iscsi::locate("iscsi://erin%x/y@127.0.0.1:3264/iqn.2026-11.x:y/5").unwrap();
        assert_eq!((l.server.as_str(), l.export.as_str(), l.lun), ("127.0.0.1:3264", "iqn.2026-11.x:y", Some(5)));
        // Never shown: not in Debug.
        assert!(!format!("{s:?}").contains("s3/cret") && format!("{s:?}").contains("***"));
    }
}
