//! NBD exports through libnbd, the NBD project's own client library (the one qemu-img, nbdcopy
//! and fio's `nbd` engine use): URIs, the handshake, structured replies and TLS are libnbd's,
//! none of it written here.
//!
//! libnbd is loaded at run time (`libnbd.so.0`, whose ABI is stable across 1.x) so that building
//! iogauge needs nothing but Rust; without the library an `nbd://` target is refused in one line.
//! Each [`Handle`] is one connection, driven by its owner's loop: commands are queued with the
//! `aio_` calls, the socket is polled by the caller ([`Handle::fd`], [`Handle::wants`]) and
//! libnbd is told when it is ready ([`Handle::notify`]), which runs the completion callbacks on
//! the caller's thread.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;
use std::time::Duration;

use libloading::Library;

use super::{Deadline, Locator, poll_one};
use crate::error::{Result, runtime};

/// libnbd's `nbd_completion_callback`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Callback {
    /// Called once when the command completes, `*error` its errno (0: success).
    pub callback: Option<unsafe extern "C" fn(user_data: *mut c_void, error: *mut c_int) -> c_int>,
    /// Handed to `callback`.
    pub user_data: *mut c_void,
    /// Called when libnbd is done with `user_data` (unused: iogauge owns it).
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// `LIBNBD_CMD_FLAG_FUA`.
pub const FLAG_FUA: u32 = 1;
/// `LIBNBD_AIO_DIRECTION_READ` / `_WRITE`.
const DIRECTION_READ: c_uint = 1;
const DIRECTION_WRITE: c_uint = 2;
/// `LIBNBD_SIZE_MINIMUM`.
const SIZE_MINIMUM: c_int = 0;

type H = *mut c_void;

/// The functions iogauge calls, resolved once.
struct Lib {
    create: unsafe extern "C" fn() -> H,
    close: unsafe extern "C" fn(H),
    get_error: unsafe extern "C" fn() -> *const c_char,
    get_errno: unsafe extern "C" fn() -> c_int,
    aio_connect_uri: unsafe extern "C" fn(H, *const c_char) -> c_int,
    aio_is_ready: unsafe extern "C" fn(H) -> c_int,
    aio_is_dead: unsafe extern "C" fn(H) -> c_int,
    aio_is_closed: unsafe extern "C" fn(H) -> c_int,
    aio_get_fd: unsafe extern "C" fn(H) -> c_int,
    aio_get_direction: unsafe extern "C" fn(H) -> c_uint,
    aio_notify_read: unsafe extern "C" fn(H) -> c_int,
    aio_notify_write: unsafe extern "C" fn(H) -> c_int,
    aio_pread: unsafe extern "C" fn(H, *mut c_void, usize, u64, Callback, u32) -> i64,
    aio_pwrite: unsafe extern "C" fn(H, *const c_void, usize, u64, Callback, u32) -> i64,
    aio_trim: unsafe extern "C" fn(H, u64, u64, Callback, u32) -> i64,
    aio_flush: unsafe extern "C" fn(H, Callback, u32) -> i64,
    aio_command_completed: unsafe extern "C" fn(H, u64) -> c_int,
    get_size: unsafe extern "C" fn(H) -> i64,
    get_block_size: unsafe extern "C" fn(H, c_int) -> i64,
    can_trim: unsafe extern "C" fn(H) -> c_int,
    can_flush: unsafe extern "C" fn(H) -> c_int,
    can_fua: unsafe extern "C" fn(H) -> c_int,
    can_multi_conn: unsafe extern "C" fn(H) -> c_int,
    is_read_only: unsafe extern "C" fn(H) -> c_int,
    get_export_name: unsafe extern "C" fn(H) -> *mut c_char,
    get_protocol: unsafe extern "C" fn(H) -> *const c_char,
    /// Kept loaded for as long as the functions above are used (the whole process).
    _lib: Library,
}

// SAFETY: the struct holds function pointers into a library that stays loaded; libnbd's
// functions may be called from any thread (a handle is used by one thread at a time here).
unsafe impl Sync for Lib {}
// SAFETY: as for Sync above.
unsafe impl Send for Lib {}

fn lib() -> Result<&'static Lib> {
    static LIB: OnceLock<Result<Lib>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading libnbd runs no initialisers with preconditions; each symbol below is
        // declared with the signature <libnbd.h> (1.14) gives it.
        unsafe {
            let libnbd = super::load("libnbd.so.0", "libnbd0")?;
            Ok(Lib {
                create: symbol!(libnbd, "nbd_create"),
                close: symbol!(libnbd, "nbd_close"),
                get_error: symbol!(libnbd, "nbd_get_error"),
                get_errno: symbol!(libnbd, "nbd_get_errno"),
                aio_connect_uri: symbol!(libnbd, "nbd_aio_connect_uri"),
                aio_is_ready: symbol!(libnbd, "nbd_aio_is_ready"),
                aio_is_dead: symbol!(libnbd, "nbd_aio_is_dead"),
                aio_is_closed: symbol!(libnbd, "nbd_aio_is_closed"),
                aio_get_fd: symbol!(libnbd, "nbd_aio_get_fd"),
                aio_get_direction: symbol!(libnbd, "nbd_aio_get_direction"),
                aio_notify_read: symbol!(libnbd, "nbd_aio_notify_read"),
                aio_notify_write: symbol!(libnbd, "nbd_aio_notify_write"),
                aio_pread: symbol!(libnbd, "nbd_aio_pread"),
                aio_pwrite: symbol!(libnbd, "nbd_aio_pwrite"),
                aio_trim: symbol!(libnbd, "nbd_aio_trim"),
                aio_flush: symbol!(libnbd, "nbd_aio_flush"),
                aio_command_completed: symbol!(libnbd, "nbd_aio_command_completed"),
                get_size: symbol!(libnbd, "nbd_get_size"),
                get_block_size: symbol!(libnbd, "nbd_get_block_size"),
                can_trim: symbol!(libnbd, "nbd_can_trim"),
                can_flush: symbol!(libnbd, "nbd_can_flush"),
                can_fua: symbol!(libnbd, "nbd_can_fua"),
                can_multi_conn: symbol!(libnbd, "nbd_can_multi_conn"),
                is_read_only: symbol!(libnbd, "nbd_is_read_only"),
                get_export_name: symbol!(libnbd, "nbd_get_export_name"),
                get_protocol: symbol!(libnbd, "nbd_get_protocol"),
                _lib: libnbd,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// libnbd's message for the last failed call on this thread.
fn last_error(l: &Lib) -> String {
    // SAFETY: nbd_get_error returns a thread-local string valid until the next libnbd call.
    let p = unsafe { (l.get_error)() };
    if p.is_null() {
        "unknown libnbd error".into()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The URL schemes libnbd reaches (its URI forms).
pub const SCHEMES: &[&str] = &["nbd", "nbds", "nbd+unix", "nbds+unix", "nbd+vsock", "nbds+vsock"];

/// Reads an `nbd://` URL (any of [`SCHEMES`]) into what it names: the server resolved (or the
/// socket's path) and the export.
pub fn locate(url: &str) -> Result<Locator> {
    let (scheme, rest) = super::split_url(url)?;
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = before_query.split_once('/').unwrap_or((before_query, ""));
    let server = if scheme.ends_with("+unix") {
        let socket = query.split('&').find_map(|kv| kv.strip_prefix("socket="));
        let socket = socket
            .ok_or_else(|| crate::error::input(format!("target {url}: an nbd+unix:// URL needs ?socket=PATH")))?;
        format!("unix:{socket}")
    } else {
        super::resolve(url, authority.rsplit_once('@').map_or(authority, |(_, h)| h), 10809)?
    };
    Ok(Locator { protocol: "nbd", server, export: super::percent_decode(path), lun: None })
}

/// One connection to an NBD export.
pub struct Handle {
    h: H,
    lib: &'static Lib,
}

// SAFETY: a handle is used by one thread at a time (made by the planner or a worker, then
// owned by that worker's engine); libnbd handles may move between threads.
unsafe impl Send for Handle {}

/// What the server said of its export at the handshake.
#[derive(Debug, Clone)]
pub struct Export {
    /// Bytes.
    pub size: u64,
    /// The smallest block the server accepts without read-modify-write (1 if it says nothing).
    pub min_block: u64,
    /// The export's name.
    pub name: String,
    /// "newstyle-fixed" or "oldstyle".
    pub protocol: String,
    /// NBD_CMD_TRIM, NBD_CMD_FLUSH, NBD_CMD_FLAG_FUA, consistent results over several
    /// connections, a read-only export.
    pub can_trim: bool,
    /// See above.
    pub can_flush: bool,
    /// See above.
    pub can_fua: bool,
    /// See above.
    pub multi_conn: bool,
    /// See above.
    pub read_only: bool,
}

impl Handle {
    /// Connects to `uri` (libnbd's URI forms), giving up after `timeout`: a server that accepts
    /// the connection and then says nothing must not hold iogauge.
    pub fn connect(uri: &str, timeout: Duration) -> Result<Handle> {
        let lib = lib()?;
        let c = CString::new(uri).map_err(|_| runtime("the URI holds a NUL byte"))?;
        // SAFETY: nbd_create has no preconditions; a null return is an error.
        let h = unsafe { (lib.create)() };
        if h.is_null() {
            return Err(runtime(last_error(lib)));
        }
        let handle = Handle { h, lib };
        // SAFETY: a live handle and a NUL-terminated string libnbd copies.
        if unsafe { (lib.aio_connect_uri)(h, c.as_ptr()) } < 0 {
            return Err(runtime(last_error(lib)));
        }
        let deadline = Deadline::after(timeout);
        // SAFETY (each call below): the handle is live and used only on this thread.
        // SAFETY: as above.
        while unsafe { (lib.aio_is_ready)(h) } == 0 {
            // SAFETY: as above.
            if unsafe { (lib.aio_is_dead)(h) | (lib.aio_is_closed)(h) } != 0 {
                return Err(runtime(last_error(lib)));
            }
            let Some(left) = deadline.left() else {
                return Err(runtime(format!("no answer within {} s (io_timeout)", timeout.as_secs_f64())));
            };
            handle.step(Some(left))?;
        }
        Ok(handle)
    }

    /// Waits up to `timeout` for the socket, then lets libnbd read or write what it can.
    fn step(&self, timeout: Option<Duration>) -> Result<()> {
        let revents = poll_one(self.fd(), self.wants(), timeout).map_err(|e| runtime(e.to_string()))?;
        self.notify(revents)
    }

    /// What the server said of its export.
    pub fn export(&self) -> Export {
        let l = self.lib;
        // SAFETY: each call takes the live handle; strings returned by get_export_name are the
        // caller's to free, get_protocol's are static.
        unsafe {
            let name = (l.get_export_name)(self.h);
            let export = if name.is_null() {
                String::new()
            } else {
                let s = CStr::from_ptr(name).to_string_lossy().into_owned();
                libc::free(name.cast());
                s
            };
            let protocol = (l.get_protocol)(self.h);
            Export {
                size: (l.get_size)(self.h).max(0) as u64,
                min_block: (l.get_block_size)(self.h, SIZE_MINIMUM).max(1) as u64,
                name: export,
                protocol: if protocol.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(protocol).to_string_lossy().into_owned()
                },
                can_trim: (l.can_trim)(self.h) == 1,
                can_flush: (l.can_flush)(self.h) == 1,
                can_fua: (l.can_fua)(self.h) == 1,
                multi_conn: (l.can_multi_conn)(self.h) == 1,
                read_only: (l.is_read_only)(self.h) == 1,
            }
        }
    }

    /// Reads `buf.len()` bytes at `offset` now, waiting at most `timeout`.
    pub fn read(&self, buf: &mut [u8], offset: u64, timeout: Duration) -> Result<()> {
        let none = Callback { callback: None, user_data: std::ptr::null_mut(), free: None };
        // SAFETY: buf outlives every call that may fill it: this function waits for the read
        // to complete, or returns an error after which the handle is only dropped (below).
        let cookie = unsafe { (self.lib.aio_pread)(self.h, buf.as_mut_ptr().cast(), buf.len(), offset, none, 0) };
        if cookie < 0 {
            return Err(runtime(last_error(self.lib)));
        }
        let deadline = Deadline::after(timeout);
        loop {
            // SAFETY: a live handle and a cookie it gave.
            match unsafe { (self.lib.aio_command_completed)(self.h, cookie as u64) } {
                1 => return Ok(()),
                0 => {}
                _ => return Err(runtime(last_error(self.lib))),
            }
            let Some(left) = deadline.left() else {
                // The read is still in flight; libnbd would put its reply into `buf` only
                // when told to read from the socket again, which no caller does after an
                // error: they drop the handle.
                return Err(runtime(format!("no answer within {} s (io_timeout)", timeout.as_secs_f64())));
            };
            self.step(Some(left))?;
        }
    }

    /// The socket to poll.
    pub fn fd(&self) -> c_int {
        // SAFETY: a live handle.
        unsafe { (self.lib.aio_get_fd)(self.h) }
    }

    /// The poll events libnbd waits for (POLLIN, and POLLOUT while it has bytes to send).
    pub fn wants(&self) -> i16 {
        // SAFETY: a live handle.
        let d = unsafe { (self.lib.aio_get_direction)(self.h) };
        let mut ev = 0;
        if d & DIRECTION_READ != 0 {
            ev |= libc::POLLIN;
        }
        if d & DIRECTION_WRITE != 0 {
            ev |= libc::POLLOUT;
        }
        ev
    }

    /// Tells libnbd what poll saw on its socket: it reads replies (running their completion
    /// callbacks) and sends what is queued. An error means the connection is gone.
    pub fn notify(&self, revents: i16) -> Result<()> {
        // SAFETY: a live handle, used on this thread.
        unsafe {
            if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && (self.lib.aio_notify_read)(self.h) < 0 {
                return Err(runtime(last_error(self.lib)));
            }
            if revents & libc::POLLOUT != 0 && (self.lib.aio_notify_write)(self.h) < 0 {
                return Err(runtime(last_error(self.lib)));
            }
        }
        Ok(())
    }

    /// Queues a read of `len` bytes at `offset` into `buf`; `done` is called when it completes.
    /// Returns -errno when it cannot be queued (then `done` is never called).
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes, and `done.user_data` for the callback, until the
    /// callback has run or the handle is closed.
    pub unsafe fn pread(&self, buf: *mut u8, len: usize, offset: u64, done: Callback) -> std::result::Result<(), i32> {
        // SAFETY: the caller keeps buf and the callback's data alive (see above).
        self.queued(unsafe { (self.lib.aio_pread)(self.h, buf.cast(), len, offset, done, 0) })
    }

    /// Queues a write; see [`Handle::pread`]. `flags` may hold [`FLAG_FUA`].
    ///
    /// # Safety
    /// As [`Handle::pread`].
    pub unsafe fn pwrite(
        &self,
        buf: *const u8,
        len: usize,
        offset: u64,
        done: Callback,
        flags: u32,
    ) -> std::result::Result<(), i32> {
        // SAFETY: as pread.
        self.queued(unsafe { (self.lib.aio_pwrite)(self.h, buf.cast(), len, offset, done, flags) })
    }

    /// Queues a trim (NBD_CMD_TRIM); see [`Handle::pread`].
    ///
    /// # Safety
    /// `done.user_data` must stay valid until the callback has run or the handle is closed.
    pub unsafe fn trim(&self, len: u64, offset: u64, done: Callback) -> std::result::Result<(), i32> {
        // SAFETY: as pread.
        self.queued(unsafe { (self.lib.aio_trim)(self.h, len, offset, done, 0) })
    }

    /// Queues a flush (NBD_CMD_FLUSH); see [`Handle::pread`].
    ///
    /// # Safety
    /// As [`Handle::trim`].
    pub unsafe fn flush(&self, done: Callback) -> std::result::Result<(), i32> {
        // SAFETY: as pread.
        self.queued(unsafe { (self.lib.aio_flush)(self.h, done, 0) })
    }

    fn queued(&self, cookie: i64) -> std::result::Result<(), i32> {
        if cookie >= 0 {
            return Ok(());
        }
        // SAFETY: no preconditions; thread-local.
        let errno = unsafe { (self.lib.get_errno)() };
        Err(if errno > 0 { errno } else { libc::EIO })
    }
}

impl Drop for Handle {
    /// Closes the connection: libnbd forgets every command in flight (their buffers are no
    /// longer written) and the socket is closed.
    fn drop(&mut self) {
        // SAFETY: the handle is live and not used after this.
        unsafe { (self.lib.close)(self.h) }
    }
}
