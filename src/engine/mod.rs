//! I/O engines: one file each, behind one interface (fio's `engines/`).
//!
//! A worker hands [`drive`] its open targets ([`Target`]) and buffers; the engine of the
//! targets' kind is made here (io_uring or psync for files and block devices, as the test
//! asks; null; the network engine for NBD exports and iSCSI LUNs), driven by the worker's loop (queue I/Os, submit them and
//! wait for some completions), and torn down here, including when the kernel still holds I/Os
//! the worker gave up ([`Engine::abandon`]). An engine owns its targets and closes them.
//! Engines never allocate or lock per I/O. A new engine is a file here and its line in
//! [`drive`]; a new kind of target is also a [`Target`] variant, which `targets::open` makes (a
//! new network protocol is not: it is a file in `network/`, a [`network::Protocol`]).

pub mod io_uring;
pub mod io_wq;
pub mod network;
pub mod null;
pub mod psync;
mod spin;

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

use serde::{Deserialize, Serialize};

use crate::error::Unreadable;
use crate::host::sysblock;
use crate::stats::Op;

/// Which I/O engine the workers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    /// io_uring, batched, with registered files and buffers where the kernel has them.
    #[serde(rename = "io_uring")]
    IoUring,
    /// pread/pwrite, one I/O at a time per worker.
    #[serde(rename = "psync")]
    Psync,
}

impl std::str::FromStr for EngineKind {
    type Err = Unreadable;
    fn from_str(s: &str) -> Result<Self, Unreadable> {
        match s {
            "io_uring" | "io-uring" | "uring" => Ok(EngineKind::IoUring),
            "psync" => Ok(EngineKind::Psync),
            _ => Err(Unreadable(format!("unknown engine '{s}': use io_uring or psync"))),
        }
    }
}

/// One I/O for an engine to do.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    /// The worker's slot that owns this I/O; returned with the completion.
    pub slot: u32,
    /// Index of the target in the worker's list.
    pub target: u32,
    /// What it does.
    pub op: Op,
    /// A write that is on stable media when it completes (RWF_DSYNC: a FUA write where the
    /// device has FUA, else a write and a cache flush).
    pub fua: bool,
    /// A flush that is a full fsync (metadata too), not an fdatasync.
    pub fsync: bool,
    /// Byte offset on the target (reads, writes, trims).
    pub offset: u64,
    /// Bytes to transfer or trim (0 for a flush).
    pub len: u32,
    /// Memory to transfer from or to; inside buffer region `region`.
    pub buf: *mut u8,
    /// Which registered buffer region `buf` lies in (0: read slots, 1: write data).
    pub region: u16,
}

/// A finished I/O: the slot and the kernel's result (bytes, or a negative errno; a trim
/// gives 0 or its length, a flush 0).
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// The slot given in [`Io::slot`].
    pub slot: u32,
    /// Bytes transferred, or -errno.
    pub result: i32,
}

/// What every engine does.
pub trait Engine {
    /// Most I/Os it can have in flight at once (psync: 1).
    fn max_in_flight(&self) -> usize;
    /// Queues an I/O for the next [`Engine::submit_and_wait`] (an engine may start it now).
    ///
    /// # Safety
    /// `io.buf` must be valid for `io.len` bytes (read from for a write, written to for a
    /// read) and used by nothing else until the I/O's completion has been handed back by
    /// `submit_and_wait`, or, for an I/O given up, for as long as [`Engine::abandon`] says
    /// (`pins_buffers`: for good).
    unsafe fn queue(&mut self, io: &Io);
    /// Submits everything queued and waits until at least `min_complete` I/Os (at least one,
    /// at most the number in flight) have completed, `timeout` has passed, or a signal
    /// interrupted the wait ([`crate::worker::wake`]); appends the completions to `out`. Engines that complete at once (null, psync) may return more.
    /// Called only with I/Os in flight.
    fn submit_and_wait(
        &mut self,
        min_complete: usize,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()>;
    /// The engine and the kernel features it uses, for the result document.
    fn describe(&self) -> String;
    /// Whether [`Engine::queue`] hands I/Os to the kernel there and then (each, or a batch
    /// once it is whole): the worker then reads the clock for each I/O it issues, just before,
    /// instead of timing all it issues together from one reading.
    fn hands_over_at_queue(&self) -> bool {
        false
    }
    /// Ends the engine when I/Os on `targets` (indexes of [`Io::target`]) were given up and
    /// never completed. An engine whose I/Os complete before `submit_and_wait` returns has
    /// none and just ends; one that handed them to the kernel must not free what the kernel
    /// may still use, and says so.
    fn abandon(self, _targets: &[usize]) -> Abandoned
    where
        Self: Sized,
    {
        Abandoned::default()
    }
}

/// What a worker's given-up I/Os still hold after its engine has ended.
#[derive(Debug, Default)]
pub struct Abandoned {
    /// Targets whose I/Os wait in kernel threads that cannot end (nor can the process) until
    /// the target answers.
    pub held: Vec<usize>,
    /// The kernel may still write into the worker's buffers: they must never be freed.
    pub pins_buffers: bool,
}

/// A worker's target, open: what an engine does I/O on.
pub enum Target {
    /// The null target: nothing to open.
    Null,
    /// A block device or regular file.
    File(File),
    /// A network target (an NBD export, an iSCSI LUN): one connection or several
    /// (`connections`), of its protocol (network.rs).
    Network(Vec<Box<dyn network::Connection>>),
}

/// What an engine is made from: the worker's open targets (by [`Io::target`]; all of one kind,
/// which the plan checks), its buffer regions (pointer, length; [`Io::region`] indexes them),
/// and the most I/Os it keeps in flight.
pub struct Resources {
    /// The targets, which the engine owns from now on.
    pub targets: Vec<Target>,
    /// Buffer regions to register, if the engine can.
    pub regions: Vec<(*mut u8, usize)>,
    /// Slots: outstanding I/Os x targets.
    pub slots: usize,
    /// How far the kernel may spread the worker's I/Os that cannot be issued without blocking.
    pub io_wq: IoWqLimit,
    /// The most I/Os handed to the kernel in one call (io_uring; `test.submit_batch`).
    pub submit_batch: usize,
}

/// Where a worker's I/Os that cannot be issued without blocking run: the kernel's io-wq
/// threads, one at a time by default, as fio's (see io_wq.rs).
#[derive(Debug, Clone, Default)]
pub struct IoWqLimit {
    /// Spread over up to this many threads at once (`io_wq_threads`), straight to io-wq.
    pub threads: Option<u32>,
    /// On these CPUs (the worker's own; empty: wherever the process may run).
    pub cpus: Vec<u32>,
}

/// The loop that drives an engine (the worker's), generic so that each engine's calls inline.
pub trait Driver {
    /// What the loop returns.
    type Output;
    /// Runs the loop on `engine`; returns its output and the targets of the I/Os it gave up.
    fn drive<E: Engine>(self, engine: &mut E) -> (Self::Output, Vec<usize>);
}

/// A driven engine's end: the loop's output, and what given-up I/Os still hold.
pub struct Driven<T> {
    /// What the loop returned.
    pub output: T,
    /// See [`Abandoned`].
    pub abandoned: Abandoned,
}

/// Makes the engine for `res`'s targets (files and devices: the engine of `kind`) over `res`,
/// runs `driver` on it, and ends it. Fails only when the engine cannot be set up.
pub fn drive<D: Driver>(kind: EngineKind, res: Resources, driver: D) -> crate::error::Result<Driven<D::Output>> {
    fn end<E: Engine, D: Driver>(mut engine: E, driver: D) -> Driven<D::Output> {
        let (output, gave_up) = driver.drive(&mut engine);
        let abandoned = if gave_up.is_empty() { Abandoned::default() } else { engine.abandon(&gave_up) };
        Driven { output, abandoned }
    }
    let Resources { targets, regions, slots, io_wq, submit_batch } = res;
    // The plan gives a worker targets of one kind, so one variant takes them all.
    fn all<T>(targets: Vec<Target>, take: impl Fn(Target) -> Option<T>) -> Vec<T> {
        targets.into_iter().map(|t| take(t).expect("the plan gives a worker targets of one kind")).collect()
    }
    Ok(match targets.first() {
        None | Some(Target::Null) => end(null::NullEngine::default(), driver),
        Some(Target::Network(_)) => {
            let conns = all(targets, |t| if let Target::Network(c) = t { Some(c) } else { None });
            end(network::NetworkEngine::new(conns, slots), driver)
        }
        Some(Target::File(_)) => {
            let files = all(targets, |t| if let Target::File(f) = t { Some(f) } else { None });
            match kind {
                EngineKind::Psync => end(psync::PsyncEngine::new(files), driver),
                EngineKind::IoUring => match one_io_on_a_ram_disk(&files, slots, &io_wq) {
                    Some(disk) => end(psync::PsyncEngine::instead_of_io_wq(files, disk), driver),
                    None => {
                        let ring = io_uring::UringEngine::new(files, &regions, slots, &io_wq, submit_batch);
                        end(ring.map_err(|e| crate::error::runtime(format!("cannot set up io_uring: {e}")))?, driver)
                    }
                },
            }
        }
    })
}

/// The RAM disk under a worker's one outstanding I/O, if that is all it has, and the disk takes
/// no non-blocking I/O (zram): io_uring would hand each I/O to an io-wq thread, which wakes to
/// do it and then wakes the worker, two hand-overs between threads for a copy of memory. On
/// the worker's own thread, as fio's psync does, the I/O is the device's alone, and its
/// response time too: zram, 4 KiB random reads, 2 CPUs, 390 K IOPS at 2.6 µs of CPU per I/O
/// against 54 K at 14.4 µs through io-wq (fio's io_uring: 19 K). A RAM disk waits for nothing
/// but memory, so a worker blocked in its I/O is never held past the test's end; a device that
/// may (a FUSE server, a device-mapper target over a disk that stops answering, a zram that
/// reads pages written back to a disk) keeps io-wq, whose I/Os a worker can give up. A worker
/// spread over io-wq threads by name (`io_wq_threads`) keeps them too.
fn one_io_on_a_ram_disk(files: &[File], slots: usize, io_wq: &IoWqLimit) -> Option<&'static str> {
    let [file] = files else { return None };
    if slots != 1 || io_wq.threads.is_some() {
        return None;
    }
    let meta = file.metadata().ok()?;
    if !std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        return None;
    }
    let rdev = std::os::unix::fs::MetadataExt::rdev(&meta);
    // A zram that writes idle pages back to a disk reads them from there.
    let on_disk = sysblock::read(rdev, "backing_dev").is_some_and(|b| b != "none");
    sysblock::ram_disk(rdev).filter(|_| !on_disk && !io_wq::supports_nowait(file.as_raw_fd()))
}

/// `BLKDISCARD` (linux/fs.h: `_IO(0x12, 119)`): discard a byte range of a block device.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Whether `fd` is a block device (trims are discards there, punched holes in a file).
pub(crate) fn is_block_device(fd: RawFd) -> bool {
    // SAFETY: stat is plain data (all zeroes is valid); fstat only writes into it.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFBLK
    }
}

/// Trims `len` bytes at `offset` now, on the calling thread: `BLKDISCARD` on a block device,
/// a hole punched in a file (its size kept). Returns 0 or -errno, as the kernel's completions.
pub(crate) fn trim_now(fd: RawFd, block: bool, offset: u64, len: u32) -> i32 {
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer; fallocate takes plain
    // integers.
    let r = unsafe {
        if block {
            let range: [u64; 2] = [offset, len as u64];
            libc::ioctl(fd, BLKDISCARD, range.as_ptr())
        } else {
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t)
        }
    };
    if r < 0 { -std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) } else { 0 }
}

/// A zeroed, page-aligned allocation (O_DIRECT needs aligned memory), freed on drop.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    /// Allocates `len` bytes (at least one page), aligned to 4096.
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(4096), 4096).expect("valid layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, layout }
    }

    /// Start of the buffer.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// The bytes, for filling write data before the run.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

// SAFETY: AlignedBuf owns its memory exclusively; moving it to another thread is sound.
unsafe impl Send for AlignedBuf {}
