//! iSCSI LUNs through libiscsi, the userspace iSCSI initiator QEMU and fio's `libiscsi` engine
//! use: login (CHAP too), PDUs, R2T and data segments are libiscsi's, none of it written here.
//! SCSI commands iogauge sends are READ(16), WRITE(16) (its FUA bit), UNMAP, SYNCHRONIZE
//! CACHE(16), and at login READ CAPACITY(16), INQUIRY and MODE SENSE(6), whose replies are read
//! as SPC and SBC define their bytes.
//!
//! libiscsi is loaded at run time (`libiscsi.so.7`) so that building iogauge needs nothing but
//! Rust; without the library an `iscsi://` target is refused in one line. A [`Session`] is one
//! login (libiscsi has one connection per session), driven by its owner's loop as an NBD
//! handle is: the socket is polled by the caller ([`Session::fd`], [`Session::wants`]) and
//! libiscsi serviced when it is ready ([`Session::notify`]), which runs the completion
//! callbacks on the caller's thread.
//!
//! The CHAP password comes from the URL (`iscsi://USER%PASSWORD@...`, taken out of it as soon
//! as iogauge reads the target's [`super::TargetName`], and handed to [`Session::connect`] in
//! the target's [`Address`]) or from `LIBISCSI_CHAP_PASSWORD`, the variable libiscsi's own tools
//! read; the user from the URL or `LIBISCSI_CHAP_USERNAME`.

use std::cell::UnsafeCell;
use std::ffi::{CStr, CString, c_char, c_int, c_uchar, c_void};
use std::sync::OnceLock;
use std::time::Duration;

use libloading::Library;

use super::{Address, Deadline, Locator, poll_one};
use crate::error::{Result, input, runtime};

type Ctx = *mut c_void;
/// A libiscsi `struct scsi_task *`.
pub type Task = *mut c_void;

/// libiscsi's `iscsi_command_cb`: a command ended with `status` (`SCSI_STATUS_*`); `task` is
/// its `struct scsi_task *` (the callback's to free), `private` what was given with it.
pub type CommandCb = unsafe extern "C" fn(iscsi: Ctx, status: c_int, task: Task, private: *mut c_void);

/// `struct scsi_iovec`, which "follows the POSIX struct iovec and must never change".
pub type Iovec = libc::iovec;

/// `struct unmap_list`: one range of logical blocks to unmap.
#[repr(C)]
struct UnmapList {
    lba: u64,
    num: u32,
}

/// `SCSI_STATUS_GOOD`, `_CHECK_CONDITION`, `_CANCELLED`, `_TIMEOUT` (iscsi.h).
const STATUS_GOOD: c_int = 0;
const STATUS_CHECK_CONDITION: c_int = 2;
const STATUS_CANCELLED: c_int = 0x0f00_0000;
const STATUS_TIMEOUT: c_int = 0x0f00_0002;
/// `ISCSI_SESSION_NORMAL`.
const SESSION_NORMAL: c_int = 2;

/// The head of libiscsi's `struct scsi_task` (scsi-lowlevel.h), as far as the sense key and
/// the data-in buffer: offsets 48 (sense) and 64 (datain) on x86-64, measured with
/// `offsetof` against libiscsi 1.19's headers; the layout is part of libiscsi.so.7's ABI.
#[repr(C)]
struct TaskHead {
    status: c_int,
    cdb_size: c_int,
    xfer_dir: c_int,
    expxferlen: c_int,
    cdb: [u8; 16],
    residual_status: c_int,
    residual: usize,
    sense: Sense,
    datain_size: c_int,
    datain: *const u8,
}

/// `struct scsi_sense`: the error type, the sense key, the additional sense code and
/// qualifier, then bit fields and pointers iogauge does not read.
#[repr(C)]
struct Sense {
    error_type: u8,
    key: c_int,
    ascq: c_int,
    rest: [u8; 4],
}

/// The functions iogauge calls, resolved once.
struct Lib {
    create_context: unsafe extern "C" fn(*const c_char) -> Ctx,
    destroy_context: unsafe extern "C" fn(Ctx) -> c_int,
    get_error: unsafe extern "C" fn(Ctx) -> *const c_char,
    set_targetname: unsafe extern "C" fn(Ctx, *const c_char) -> c_int,
    set_session_type: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    set_initiator_username_pwd: unsafe extern "C" fn(Ctx, *const c_char, *const c_char) -> c_int,
    set_noautoreconnect: unsafe extern "C" fn(Ctx, c_int),
    full_connect_async: unsafe extern "C" fn(Ctx, *const c_char, c_int, CommandCb, *mut c_void) -> c_int,
    get_fd: unsafe extern "C" fn(Ctx) -> c_int,
    which_events: unsafe extern "C" fn(Ctx) -> c_int,
    service: unsafe extern "C" fn(Ctx, c_int) -> c_int,
    #[allow(clippy::type_complexity)]
    read16_iov_task: unsafe extern "C" fn(
        Ctx,
        c_int,
        u64,
        u32,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        CommandCb,
        *mut c_void,
        *mut Iovec,
        c_int,
    ) -> Task,
    #[allow(clippy::type_complexity)]
    write16_iov_task: unsafe extern "C" fn(
        Ctx,
        c_int,
        u64,
        *mut u8,
        u32,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        c_int,
        CommandCb,
        *mut c_void,
        *mut Iovec,
        c_int,
    ) -> Task,
    synchronizecache16_task: unsafe extern "C" fn(Ctx, c_int, u64, u32, c_int, c_int, CommandCb, *mut c_void) -> Task,
    unmap_task: unsafe extern "C" fn(Ctx, c_int, c_int, c_int, *mut UnmapList, c_int, CommandCb, *mut c_void) -> Task,
    readcapacity16_task: unsafe extern "C" fn(Ctx, c_int, CommandCb, *mut c_void) -> Task,
    inquiry_task: unsafe extern "C" fn(Ctx, c_int, c_int, c_int, c_int, CommandCb, *mut c_void) -> Task,
    modesense6_task:
        unsafe extern "C" fn(Ctx, c_int, c_int, c_int, c_int, c_int, c_uchar, CommandCb, *mut c_void) -> Task,
    free_scsi_task: unsafe extern "C" fn(Task),
    /// Kept loaded for as long as the functions above are used (the whole process).
    _lib: Library,
}

// SAFETY: the struct holds function pointers into a library that stays loaded; libiscsi's
// functions may be called from any thread (a context is used by one thread at a time here).
unsafe impl Sync for Lib {}
// SAFETY: as for Sync above.
unsafe impl Send for Lib {}

fn lib() -> Result<&'static Lib> {
    static LIB: OnceLock<Result<Lib>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading libiscsi runs no initialisers with preconditions; each symbol below
        // is declared with the signature <iscsi/iscsi.h> (1.19) gives it.
        unsafe {
            let libiscsi = super::load("libiscsi.so.7", "libiscsi7")?;
            Ok(Lib {
                create_context: symbol!(libiscsi, "iscsi_create_context"),
                destroy_context: symbol!(libiscsi, "iscsi_destroy_context"),
                get_error: symbol!(libiscsi, "iscsi_get_error"),
                set_targetname: symbol!(libiscsi, "iscsi_set_targetname"),
                set_session_type: symbol!(libiscsi, "iscsi_set_session_type"),
                set_initiator_username_pwd: symbol!(libiscsi, "iscsi_set_initiator_username_pwd"),
                set_noautoreconnect: symbol!(libiscsi, "iscsi_set_noautoreconnect"),
                full_connect_async: symbol!(libiscsi, "iscsi_full_connect_async"),
                get_fd: symbol!(libiscsi, "iscsi_get_fd"),
                which_events: symbol!(libiscsi, "iscsi_which_events"),
                service: symbol!(libiscsi, "iscsi_service"),
                read16_iov_task: symbol!(libiscsi, "iscsi_read16_iov_task"),
                write16_iov_task: symbol!(libiscsi, "iscsi_write16_iov_task"),
                synchronizecache16_task: symbol!(libiscsi, "iscsi_synchronizecache16_task"),
                unmap_task: symbol!(libiscsi, "iscsi_unmap_task"),
                readcapacity16_task: symbol!(libiscsi, "iscsi_readcapacity16_task"),
                inquiry_task: symbol!(libiscsi, "iscsi_inquiry_task"),
                modesense6_task: symbol!(libiscsi, "iscsi_modesense6_task"),
                free_scsi_task: symbol!(libiscsi, "scsi_free_scsi_task"),
                _lib: libiscsi,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The errno a finished command stands for: 0 when it succeeded, else what a kernel
/// initiator would have returned for its status and sense key; and frees the task.
///
/// # Safety
/// `task` is the `struct scsi_task *` libiscsi handed a completion callback, not yet freed.
pub unsafe fn finish(status: c_int, task: Task) -> c_int {
    let errno = match status {
        STATUS_GOOD => 0,
        // SAFETY: the task is live (this function's contract) and its head is TaskHead.
        STATUS_CHECK_CONDITION if !task.is_null() => match unsafe { (*(task as *const TaskHead)).sense.key } {
            // DATA PROTECT: a write-protected LUN.
            0x7 => libc::EROFS,
            // ILLEGAL REQUEST: a command or range the LUN refuses.
            0x5 => libc::EINVAL,
            // NOT READY, MEDIUM ERROR, HARDWARE ERROR, ABORTED COMMAND and the rest.
            _ => libc::EIO,
        },
        // libiscsi cancels the commands in flight when the session's connection is lost (it
        // is told not to log in again) or at logout, after the test.
        STATUS_CANCELLED => libc::ECONNRESET,
        STATUS_TIMEOUT => libc::ETIMEDOUT,
        // SCSI_STATUS_ERROR: the session failed (a lost connection), and anything else.
        _ => libc::EIO,
    };
    // SAFETY: as this function's.
    unsafe { free(task) };
    errno
}

/// Frees a task (null: nothing).
///
/// # Safety
/// `task` is a `struct scsi_task *` libiscsi handed a callback, freed nowhere else.
unsafe fn free(task: Task) {
    if let (false, Ok(l)) = (task.is_null(), lib()) {
        // SAFETY: see above.
        unsafe { (l.free_scsi_task)(task) };
    }
}

/// What a command run to its end ([`Session::wait`]) left: its status and task.
struct Reply {
    done: bool,
    status: c_int,
    task: Task,
    /// The data-in buffer of a read run this way (libiscsi keeps a pointer to it).
    iov: Iovec,
}

unsafe extern "C" fn replied(_ctx: Ctx, status: c_int, task: Task, private: *mut c_void) {
    // SAFETY: private is the session's own Reply, which outlives its context (Session's drop).
    let s = unsafe { &mut *(private as *mut Reply) };
    (s.done, s.status, s.task) = (true, status, task);
}

/// What READ CAPACITY(16), INQUIRY and MODE SENSE(6) said of the LUN at login.
#[derive(Debug, Clone)]
pub struct Lun {
    /// Bytes.
    pub size: u64,
    /// The logical block: every offset and length is a multiple of it.
    pub block: u32,
    /// Logical block provisioning is enabled (LBPME): the LUN takes UNMAP.
    pub can_unmap: bool,
    /// The LUN honours FUA (MODE SENSE's DPOFUA).
    pub can_fua: bool,
    /// The LUN is write-protected (MODE SENSE's WP).
    pub read_only: bool,
    /// INQUIRY's vendor and product, and the unit serial number (VPD page 0x80) if it has one.
    pub device: String,
}

/// Reads an `iscsi://[USER[%PASSWORD]@]HOST[:PORT]/IQN/LUN` URL into what it names: the
/// server resolved, the target's IQN and the LUN.
pub fn locate(url: &str) -> Result<Locator> {
    let bad = |why: &str| input(format!("target {url}: {why}"));
    let Some(rest) = url.strip_prefix("iscsi://") else { return Err(bad("not an iscsi:// URL")) };
    // The server starts after the userinfo, at the URL's last `@` (an IQN holds none).
    let after = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    let after = after.split_once('?').map_or(after, |(a, _)| a);
    let (host_port, path) = after.split_once('/').unwrap_or((after, ""));
    let (iqn, lun) =
        path.rsplit_once('/').ok_or_else(|| bad("an iscsi:// URL is iscsi://[USER@]HOST[:PORT]/IQN/LUN"))?;
    let lun = lun.parse::<u32>().map_err(|_| bad(&format!("LUN '{lun}' is not a number")))?;
    if iqn.is_empty() {
        return Err(bad("an iscsi:// URL names its target's IQN: iscsi://HOST[:PORT]/IQN/LUN"));
    }
    let server = super::resolve(url, host_port, 3260)?;
    Ok(Locator { protocol: "iscsi", server, export: iqn.to_string(), lun: Some(lun) })
}

/// One iSCSI session (one TCP connection) logged in to one LUN.
pub struct Session {
    ctx: Ctx,
    lib: &'static Lib,
    lun: c_int,
    /// The LUN as READ CAPACITY(16) and friends found it at login.
    pub info: Lun,
    /// State of the command run to its end, at a fixed address libiscsi may write to until
    /// the context is destroyed (dropped after it: fields drop after `Drop::drop`).
    reply: Box<UnsafeCell<Reply>>,
}

// SAFETY: a session is used by one thread at a time (made by the planner or a worker, then
// owned by that worker's engine); a libiscsi context may move between threads.
unsafe impl Send for Session {}

impl Session {
    /// Logs in to the LUN `at` names, at the portal its inspection resolved (no name is looked
    /// up again), as its user with its password (or the environment's), and learns what it is,
    /// giving up after `timeout`.
    pub fn connect(at: &Address, timeout: Duration) -> Result<Session> {
        let lib = lib()?;
        let loc = &at.locator;
        let cstr = |s: &str| CString::new(s).map_err(|_| runtime("a NUL byte in the URL"));
        let initiator = cstr(&initiator_name())?;
        // SAFETY: a NUL-terminated name libiscsi copies; a null return is an error.
        let ctx = unsafe { (lib.create_context)(initiator.as_ptr()) };
        if ctx.is_null() {
            return Err(runtime("libiscsi cannot make a context (out of memory)"));
        }
        let reply = Reply {
            done: false,
            status: 0,
            task: std::ptr::null_mut(),
            iov: Iovec { iov_base: std::ptr::null_mut(), iov_len: 0 },
        };
        let mut s = Session {
            ctx,
            lib,
            lun: loc.lun.unwrap_or(0) as c_int,
            info: Lun {
                size: 0,
                block: 512,
                can_unmap: false,
                can_fua: false,
                read_only: false,
                device: String::new(),
            },
            reply: Box::new(UnsafeCell::new(reply)),
        };
        let target = cstr(&loc.export)?;
        // libiscsi's portal is HOST:PORT, an IPv6 address in brackets: the resolved server's form.
        let portal = cstr(&loc.server)?;
        let (user, password) = credentials(at);
        // SAFETY: a live context; strings libiscsi copies.
        unsafe {
            (lib.set_targetname)(ctx, target.as_ptr());
            (lib.set_session_type)(ctx, SESSION_NORMAL);
            // A lost connection fails the commands in flight (their callbacks run with an
            // error) instead of logging in again behind the test's back.
            (lib.set_noautoreconnect)(ctx, 1);
            if let (Some(u), Some(p)) = (&user, &password) {
                (lib.set_initiator_username_pwd)(ctx, cstr(u)?.as_ptr(), cstr(p)?.as_ptr());
            }
        }
        let deadline = Deadline::after(timeout);
        s.reset();
        // SAFETY: a live context; the callback's data is the session's own Reply.
        if unsafe { (lib.full_connect_async)(ctx, portal.as_ptr(), s.lun, replied, s.reply.get().cast()) } != 0 {
            return Err(runtime(s.error()));
        }
        s.wait(&deadline, timeout).map_err(|e| {
            let hint = match (e.to_string().contains("Authentication failure"), &user, &password) {
                (false, ..) => "",
                (true, None, _) => " (the target asks for CHAP: give iscsi://USER@... and LIBISCSI_CHAP_PASSWORD)",
                (true, Some(_), None) => " (no password: give LIBISCSI_CHAP_PASSWORD, or iscsi://USER%PASSWORD@...)",
                (true, Some(_), Some(_)) => " (check the CHAP user and password)",
            };
            runtime(format!("{e}{hint}"))
        })?;
        s.info = s.learn(&deadline, timeout)?;
        Ok(s)
    }

    /// Clears the reply for the next command run to its end.
    fn reset(&mut self) {
        let s = self.reply.get_mut();
        (s.done, s.status, s.task) = (false, 0, std::ptr::null_mut());
    }

    /// Services the session until the command started last has ended, or `deadline`. The
    /// task is left in the reply for the caller to read and free.
    fn wait(&mut self, deadline: &Deadline, timeout: Duration) -> Result<()> {
        loop {
            // SAFETY: read through the cell; libiscsi writes it only inside service().
            if unsafe { (*self.reply.get()).done } {
                break;
            }
            let Some(left) = deadline.left() else {
                return Err(runtime(format!("no answer within {} s (io_timeout)", timeout.as_secs_f64())));
            };
            let revents = poll_one(self.fd(), self.wants(), Some(left)).map_err(|e| runtime(e.to_string()))?;
            if revents != 0 {
                self.notify(revents)?;
            }
        }
        let s = self.reply.get_mut();
        if s.status == STATUS_GOOD {
            return Ok(());
        }
        let why = if s.status == STATUS_CHECK_CONDITION && !s.task.is_null() {
            // SAFETY: the task is live until freed below.
            let sense = unsafe { &(*(s.task as *const TaskHead)).sense };
            format!("the LUN answered CHECK CONDITION (sense key {:#x}, ASC/ASCQ {:#06x})", sense.key, sense.ascq)
        } else {
            self.error()
        };
        let task = std::mem::replace(&mut self.reply.get_mut().task, std::ptr::null_mut());
        // SAFETY: a task handed to replied, freed once.
        unsafe { free(task) };
        Err(runtime(why))
    }

    /// Runs a command started by `start` (given the callback and its data) to its end and
    /// returns its data-in bytes.
    fn query(
        &mut self,
        deadline: &Deadline,
        timeout: Duration,
        start: impl FnOnce(&Lib, Ctx, *mut c_void) -> Task,
    ) -> Result<Vec<u8>> {
        self.reset();
        if start(self.lib, self.ctx, self.reply.get().cast()).is_null() {
            return Err(runtime(self.error()));
        }
        self.wait(deadline, timeout)?;
        let task = std::mem::replace(&mut self.reply.get_mut().task, std::ptr::null_mut());
        // SAFETY: a live task whose head is TaskHead; datain holds datain_size bytes.
        let data = unsafe {
            let head = &*(task as *const TaskHead);
            if head.datain.is_null() || head.datain_size <= 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(head.datain, head.datain_size as usize).to_vec()
            }
        };
        // SAFETY: freed once, here.
        unsafe { free(task) };
        Ok(data)
    }

    /// Asks the LUN what it is: a disk (INQUIRY's peripheral type), its size and block
    /// (READ CAPACITY(16)), whether it unmaps, honours FUA, is write-protected.
    fn learn(&mut self, deadline: &Deadline, timeout: Duration) -> Result<Lun> {
        let lun = self.lun;
        // SAFETY (each start): a live context; the callback's data is the session's Reply.
        let inquiry =
            // SAFETY: as above.
            self.query(deadline, timeout, |l, c, p| unsafe { (l.inquiry_task)(c, lun, 0, 0, 96, replied, p) })?;
        let kind = inquiry.first().map_or(0x1f, |b| b & 0x1f);
        if kind != 0 {
            return Err(input(format!(
                "LUN {lun} is not a disk (SCSI peripheral device type {kind:#04x}{}); name a disk's LUN",
                if kind == 0x0c { ": the target's controller" } else { "" }
            )));
        }
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
        let mut device =
            format!("{} {}", text(inquiry.get(8..16).unwrap_or(&[])), text(inquiry.get(16..32).unwrap_or(&[])));
        // VPD 0x80, the unit serial number: not every LUN has one.
        let serial =
            // SAFETY: as above.
            self.query(deadline, timeout, |l, c, p| unsafe { (l.inquiry_task)(c, lun, 1, 0x80, 255, replied, p) });
        if let Ok(page) = serial {
            let n = page.get(3).map_or(0, |&n| n as usize);
            let s = text(page.get(4..4 + n).unwrap_or(&[]));
            if !s.is_empty() {
                device = format!("{device}, serial {s}");
            }
        }
        // SAFETY: as above.
        let cap = self.query(deadline, timeout, |l, c, p| unsafe { (l.readcapacity16_task)(c, lun, replied, p) })?;
        if cap.len() < 15 {
            return Err(runtime("READ CAPACITY(16) answered in fewer than 15 bytes"));
        }
        let last = u64::from_be_bytes(cap[0..8].try_into().expect("8 bytes"));
        let block = u32::from_be_bytes(cap[8..12].try_into().expect("4 bytes"));
        // MODE SENSE(6), all pages; only the header's device-specific byte is read.
        let mode = self
            // SAFETY: as above.
            .query(deadline, timeout, |l, c, p| unsafe { (l.modesense6_task)(c, lun, 1, 0, 0x3f, 0, 255, replied, p) })
            .unwrap_or_default();
        let specific = mode.get(2).copied().unwrap_or(0);
        Ok(Lun {
            size: (last + 1) * block as u64,
            block,
            can_unmap: cap[14] & 0x80 != 0,
            can_fua: specific & 0x10 != 0,
            read_only: specific & 0x80 != 0,
            device,
        })
    }

    /// libiscsi's message for the last failure on this session.
    fn error(&self) -> String {
        // SAFETY: a live context; the string is valid until the next call on it.
        let p = unsafe { (self.lib.get_error)(self.ctx) };
        let text =
            // SAFETY: as above.
            if p.is_null() { String::new() } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
        let text = text.trim().trim_end_matches('.').to_string();
        if text.contains("Can not reconnect") {
            // libiscsi's words when the socket failed before a login.
            return "the connection failed (refused, reset or closed by the other end)".into();
        }
        if text.is_empty() { "unknown libiscsi error".into() } else { text }
    }

    /// Reads `buf.len()` bytes at `offset` (block multiples) now, waiting at most `timeout`.
    pub fn read(&mut self, buf: &mut [u8], offset: u64, timeout: Duration) -> Result<()> {
        let (lun, block) = (self.lun, self.info.block);
        let deadline = Deadline::after(timeout);
        self.reply.get_mut().iov = Iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let iov: *mut Iovec = &mut self.reply.get_mut().iov;
        let len = buf.len() as u32;
        // SAFETY: buf and the iovec outlive every call that may fill the buffer: this
        // function waits for the read to end, or fails, after which the session is only
        // dropped (libiscsi writes into buffers only from service()).
        self.query(&deadline, timeout, |l, c, p| unsafe {
            (l.read16_iov_task)(c, lun, offset / block as u64, len, block as c_int, 0, 0, 0, 0, 0, replied, p, iov, 1)
        })
        .map(drop)
    }

    /// The socket to poll.
    pub fn fd(&self) -> c_int {
        // SAFETY: a live context.
        unsafe { (self.lib.get_fd)(self.ctx) }
    }

    /// The poll events libiscsi waits for (POLLIN, and POLLOUT while it has PDUs to send).
    pub fn wants(&self) -> i16 {
        // SAFETY: a live context.
        unsafe { (self.lib.which_events)(self.ctx) as i16 }
    }

    /// Tells libiscsi what poll saw on its socket: it reads responses (running their
    /// completion callbacks) and sends what is queued. An error means the session is gone.
    pub fn notify(&self, revents: i16) -> Result<()> {
        // SAFETY: a live context, used on this thread.
        if unsafe { (self.lib.service)(self.ctx, revents as c_int) } < 0 {
            return Err(runtime(self.error()));
        }
        Ok(())
    }

    /// Queues a READ(16) of `iov`'s bytes at byte `offset`; `done(private)` runs when it ends.
    /// Err(errno) when it cannot be queued (then `done` never runs).
    ///
    /// # Safety
    /// `iov`, the memory it points to, and `private` must stay valid until the callback has
    /// run or the session is dropped.
    pub unsafe fn read16(
        &self,
        iov: *mut Iovec,
        offset: u64,
        done: CommandCb,
        private: *mut c_void,
    ) -> std::result::Result<(), i32> {
        let b = self.info.block;
        // SAFETY: the caller keeps iov, its memory and private alive (see above).
        let len = unsafe { (*iov).iov_len as u32 };
        // SAFETY: as above.
        self.queued(unsafe {
            (self.lib.read16_iov_task)(
                self.ctx,
                self.lun,
                offset / b as u64,
                len,
                b as c_int,
                0,
                0,
                0,
                0,
                0,
                done,
                private,
                iov,
                1,
            )
        })
    }

    /// Queues a WRITE(16), its FUA bit set if `fua`; see [`Session::read16`].
    ///
    /// # Safety
    /// As [`Session::read16`].
    pub unsafe fn write16(
        &self,
        iov: *mut Iovec,
        offset: u64,
        fua: bool,
        done: CommandCb,
        private: *mut c_void,
    ) -> std::result::Result<(), i32> {
        let b = self.info.block;
        // SAFETY: as read16; the data goes out from the iovec (a null data pointer).
        let len = unsafe { (*iov).iov_len as u32 };
        // SAFETY: as above.
        self.queued(unsafe {
            (self.lib.write16_iov_task)(
                self.ctx,
                self.lun,
                offset / b as u64,
                std::ptr::null_mut(),
                len,
                b as c_int,
                0,
                0,
                fua as c_int,
                0,
                0,
                done,
                private,
                iov,
                1,
            )
        })
    }

    /// Queues an UNMAP of `len` bytes at `offset`; see [`Session::read16`].
    ///
    /// # Safety
    /// `private` must stay valid until the callback has run or the session is dropped.
    pub unsafe fn unmap(
        &self,
        offset: u64,
        len: u64,
        done: CommandCb,
        private: *mut c_void,
    ) -> std::result::Result<(), i32> {
        let b = self.info.block as u64;
        // libiscsi copies the list into the command's parameter data before returning.
        let mut range = UnmapList { lba: offset / b, num: (len / b) as u32 };
        // SAFETY: as read16.
        self.queued(unsafe { (self.lib.unmap_task)(self.ctx, self.lun, 0, 0, &mut range, 1, done, private) })
    }

    /// Queues a SYNCHRONIZE CACHE(16) of the whole LUN; see [`Session::unmap`].
    ///
    /// # Safety
    /// As [`Session::unmap`].
    pub unsafe fn synchronize_cache(&self, done: CommandCb, private: *mut c_void) -> std::result::Result<(), i32> {
        // SAFETY: as read16.
        self.queued(unsafe { (self.lib.synchronizecache16_task)(self.ctx, self.lun, 0, 0, 0, 0, done, private) })
    }

    fn queued(&self, task: Task) -> std::result::Result<(), i32> {
        if task.is_null() { Err(libc::EIO) } else { Ok(()) }
    }
}

impl Drop for Session {
    /// Logs out: libiscsi cancels every command in flight (their callbacks run with
    /// SCSI_STATUS_CANCELLED, and write into no buffer) and closes the socket.
    fn drop(&mut self) {
        // SAFETY: the context is live and not used after this; the Reply it may write to is
        // a field, dropped after this function.
        unsafe { (self.lib.destroy_context)(self.ctx) };
        let task = std::mem::replace(&mut self.reply.get_mut().task, std::ptr::null_mut());
        // SAFETY: a command run to its end whose task nobody took: freed once.
        unsafe { free(task) };
    }
}

/// The initiator's IQN: `IOGAUGE_ISCSI_INITIATOR`, where a target's ACL names initiators,
/// or one of iogauge's own naming this host.
fn initiator_name() -> String {
    std::env::var("IOGAUGE_ISCSI_INITIATOR").unwrap_or_else(|_| {
        let host = crate::host::name().to_ascii_lowercase();
        let host: String =
            host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '-' }).collect();
        format!("iqn.2026-11.io.iogauge:{host}")
    })
}

/// The CHAP user and password for `at`: the URL's user (or `LIBISCSI_CHAP_USERNAME`), and the
/// password taken out of the URL (or `LIBISCSI_CHAP_PASSWORD`).
fn credentials(at: &Address) -> (Option<String>, Option<String>) {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let user = at.user.clone().or_else(|| env("LIBISCSI_CHAP_USERNAME"));
    let password = at.name.secret().map(|p| p.expose().to_string()).or_else(|| env("LIBISCSI_CHAP_PASSWORD"));
    (user, password)
}
