//! io_uring: batched submission and completion, registered files and buffers, and the
//! cheapest task-running mode the kernel offers. Every optional feature is probed and dropped
//! if the kernel refuses it; none is a reason to fail.
//!
//! Flushes are `IORING_OP_FSYNC`, FUA writes carry `RWF_DSYNC`. Trims are the block layer's
//! own discard command (`BLOCK_URING_CMD_DISCARD`, Linux 6.12) on a device whose kernel has
//! it, a punched hole (`IORING_OP_FALLOCATE`) in a file, else `BLKDISCARD` on the worker's
//! thread, completing at once.

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};

use io_uring::{IoUring, opcode, squeue, types};

use super::io_wq::{self, IoWq};
use super::spin::Spin;
use super::{Abandoned, Completion, Engine, Io, IoWqLimit, is_block_device, trim_now};
use crate::stats::Op;

/// The kernel's limit on submission-queue entries.
const MAX_SQ: u32 = 32768;

/// From this many slots on, a worker whose I/Os all go to io-wq after a failed try here (zram)
/// hands the kernel those it issues together, in a call just before its wait, instead of each
/// in a call of its own: io-wq gets them as the kernel reads them either way (they are not
/// issued here, so no plug holds them back), and a worker that keeps up with io-wq then wakes
/// its thread once per batch instead of once per I/O. 4 KiB random reads on zram, medians:
/// 16 cores (2026-11-28, 3 pairs each against fio 3.42 tuned), 4 workers at 32 outstanding
/// 0.83-0.87x fio's IOPS in calls of one, 1.14x together (CPU per I/O 1.24x to 1.00x), 16
/// workers 0.92x to 0.97x, 1 worker 1.05x and 0.89x (fio's own IOPS moved 20 % between those
/// runs); 2 CPUs, 1 worker (5 runs each): 8 outstanding 311 K IOPS at 7.26 µs of CPU per I/O
/// to 316 K at 6.82, 16 375 K at 6.52 to 393 K at 6.09, 32 415 K at 5.32 to 431 K at 5.29; but
/// 4 outstanding 99-103 K to 84-93 K: the io-wq thread idles while the worker finishes its
/// round before submitting, so below this each I/O still goes at once.
const SUBMIT_AT_WAIT_FROM: usize = 8;

/// `statfs` f_type of a FUSE filesystem.
const FUSE_SUPER_MAGIC: libc::__fsword_t = 0x6573_5546;

/// `BLOCK_URING_CMD_DISCARD` (linux/fs.h: `_IO(0x12, 0)`).
const BLOCK_URING_CMD_DISCARD: u32 = 0x1200;

/// How a target's trims are done.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TrimBy {
    /// The block layer's discard command, asynchronous.
    Command,
    /// A hole punched in a file, asynchronous.
    Hole,
    /// `BLKDISCARD` on the worker's thread (a kernel without the command).
    Ioctl,
}

/// An io_uring instance owned by one worker thread.
pub struct UringEngine {
    ring: IoUring,
    fds: Vec<RawFd>,
    fixed_files: bool,
    fixed_buffers: bool,
    /// Per target: issued straight to the kernel's io-wq threads (see `new`).
    straight: Vec<bool>,
    /// Submit in one system call and wait in the next (see `new`).
    wait_apart: bool,
    /// Whether a wait looks for completions before it sleeps (spin.rs).
    spin: Spin,
    /// Queued I/Os are handed to the kernel, in one call, as soon as this many wait
    /// (`test.submit_batch`; usize::MAX: all at the next wait).
    submit_batch: usize,
    /// Some target's I/Os are served by io-wq threads.
    via_io_wq: bool,
    /// The limit on those threads, when the worker spreads over them (`io_wq_threads`).
    io_wq: Option<IoWq>,
    /// Entries built by `queue`, pushed to the ring in one go at submit (one ring sync per batch).
    pending: Vec<squeue::Entry>,
    /// Per target: how it is trimmed.
    trim_by: Vec<TrimBy>,
    /// Trims done on this thread at queue time, handed back at the next submit.
    done_now: Vec<Completion>,
    features: Vec<&'static str>,
    /// The targets `fds` are of, closed after the ring (fields drop in order).
    _files: Vec<File>,
}

/// Closing a ring tears it down in a kernel worker, which keeps the registered files open for
/// 100-200 ms more: an `umount` of the target's filesystem right after iogauge exits would find
/// it busy. Unregistering waits for that here, before the ring closes. (An engine that gave
/// I/Os up is forgotten, not dropped: it must not wait for them.)
impl Drop for UringEngine {
    fn drop(&mut self) {
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
        if self.fixed_buffers {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

/// A ring of `entries` submissions and `cq` completions, with the best task-running mode the
/// kernel has (named in `features`).
fn build_ring(entries: u32, cq: u32, features: &mut Vec<&'static str>) -> std::io::Result<IoUring> {
    // DEFER_TASKRUN (6.1) runs completion work only when we reap, on our thread: no
    // interrupts of the worker, fewer wake-ups. COOP_TASKRUN (5.19) is the next best. With
    // either, the TASKRUN flag tells a wait that looks before it sleeps that completions
    // are waiting (spin.rs).
    let ring = match IoUring::builder()
        .setup_cqsize(cq)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_taskrun_flag()
        .build(entries)
    {
        Ok(r) => {
            features.extend(["single_issuer", "defer_taskrun"]);
            r
        }
        Err(_) => match IoUring::builder().setup_cqsize(cq).setup_coop_taskrun().setup_taskrun_flag().build(entries) {
            Ok(r) => {
                features.push("coop_taskrun");
                r
            }
            Err(_) => IoUring::builder().setup_cqsize(cq).build(entries)?,
        },
    };
    Ok(ring)
}

/// Registers the targets' files and the worker's buffers (`regions`: pointer, length) with the
/// ring where the kernel allows: whether each was (named in `features`).
fn register(
    ring: &mut IoUring,
    fds: &[RawFd],
    regions: &[(*mut u8, usize)],
    features: &mut Vec<&'static str>,
) -> (bool, bool) {
    let fixed_files = ring.submitter().register_files(fds).is_ok();
    if fixed_files {
        features.push("fixed_files");
    }
    let iovecs: Vec<libc::iovec> =
        regions.iter().map(|&(p, len)| libc::iovec { iov_base: p.cast(), iov_len: len }).collect();
    // SAFETY: the regions are the worker's buffers, which outlive this engine (the worker
    // drops the engine first); the kernel pins them until the ring is closed.
    let fixed_buffers = !iovecs.is_empty() && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
    if fixed_buffers {
        features.push("fixed_buffers");
    }
    (fixed_files, fixed_buffers)
}

/// Which targets' I/Os go to io-wq, and how they are submitted.
struct Routing {
    /// Per target: straight to io-wq (IOSQE_ASYNC), not tried on the worker's thread first.
    straight: Vec<bool>,
    /// Some target's I/Os go through io-wq.
    via_io_wq: bool,
    /// Every target's do.
    all_via_io_wq: bool,
    /// Submitted in one call and waited for in the next.
    wait_apart: bool,
}

impl Routing {
    fn of(
        fds: &[RawFd],
        slots: usize,
        io_wq_limit: &IoWqLimit,
        ring: &IoUring,
        features: &mut Vec<&'static str>,
    ) -> Routing {
        // A read or write of a FUSE file is issued inline and then waits for the filesystem's
        // server, uninterruptibly, on the submitting thread: a server that stops answering would
        // hold the worker for good, past io_timeout. IOSQE_ASYNC hands such I/Os to io-wq
        // threads instead, so the worker can give them up and report. (The probe would ask the
        // server, so FUSE is not probed.) A target without non-blocking I/O (zram) is tried on
        // this thread and then goes to io-wq: straight there, io-wq would look up each I/O's
        // registered file and buffer under the ring's lock, which this thread holds while it
        // submits and reaps (zram, 4 KiB at 32 outstanding, 2 CPUs, io-wq held to one thread:
        // 368 K IOPS straight there, 425 K tried first; fio 425 K). They go straight there when
        // one I/O is outstanding (no other to contend with; the failed try then cost 18 µs of
        // CPU per I/O in wake-ups: 24 K IOPS against 63 K on zram, 2 CPUs; a RAM disk's one I/O
        // is done on the worker's thread instead, mod.rs) or when the worker is spread over
        // several io-wq threads (`io_wq_threads`; see io_wq.rs).
        let fuse: Vec<bool> = fds.iter().map(|&fd| on_fuse(fd)).collect();
        let no_nowait: Vec<bool> = fds.iter().zip(&fuse).map(|(&fd, &f)| !f && !io_wq::supports_nowait(fd)).collect();
        let spread = io_wq_limit.threads.is_some() || slots == 1;
        let straight: Vec<bool> = fuse.iter().zip(&no_nowait).map(|(&f, &b)| f || (b && spread)).collect();
        if fuse.contains(&true) {
            features.push("io_wq_for_fuse");
        }
        let via_io_wq = fuse.contains(&true) || no_nowait.contains(&true);
        let all_via_io_wq = fuse.iter().zip(&no_nowait).all(|(&f, &b)| f || b);
        if via_io_wq {
            io_wq::run_on(ring, &io_wq_limit.cpus);
        }
        // An I/O issued on this thread is best submitted in one call and waited for in the next,
        // as fio does: in one call, a loop device over a /dev/shm file at 1 outstanding I/O
        // gave 34-36 K IOPS against fio's 43-48 K, apart 41-52 K against 44-61 K, its p50 that
        // of fio (2 CPUs, 2026-11-27; no difference at 4 and 32 outstanding). I/Os that all go
        // straight to io-wq lose by it (zram at 1 outstanding: 64 K and 57 K in one call, 49 K
        // and 51 K apart): they keep the one call.
        let wait_apart = straight.contains(&false);
        Routing { straight, via_io_wq, all_via_io_wq, wait_apart }
    }
}

/// How each target is trimmed: a hole punched in a file, the discard command where the kernel
/// has it for a block device, else the ioctl.
fn trims(ring: &mut IoUring, fds: &[RawFd], features: &mut Vec<&'static str>) -> Vec<TrimBy> {
    let trim_by: Vec<TrimBy> = fds
        .iter()
        .map(|&fd| match is_block_device(fd) {
            false => TrimBy::Hole,
            true if discard_command(ring, fd) => TrimBy::Command,
            true => TrimBy::Ioctl,
        })
        .collect();
    if trim_by.contains(&TrimBy::Command) {
        features.push("discard_command");
    }
    trim_by
}

impl UringEngine {
    /// Sets up a ring for `slots` I/Os in flight over `files`, registering `regions` (pointer,
    /// length) as fixed buffers when the kernel allows, that hands queued I/Os to the kernel
    /// `submit_batch` at a time.
    ///
    /// Must be called on the thread that will submit (the ring may be single-issuer).
    pub fn new(
        files: Vec<File>,
        regions: &[(*mut u8, usize)],
        slots: usize,
        io_wq_limit: &IoWqLimit,
        submit_batch: usize,
    ) -> std::io::Result<Self> {
        let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        let entries = (slots as u32).next_power_of_two().clamp(8, MAX_SQ);
        // The completion queue holds every I/O in flight, so it can never overflow.
        let cq = (slots as u32).next_power_of_two().max(2 * entries);
        let mut features = Vec::new();
        let mut ring = build_ring(entries, cq, &mut features)?;
        let (fixed_files, fixed_buffers) = register(&mut ring, &fds, regions, &mut features);
        let Routing { straight, via_io_wq, all_via_io_wq, wait_apart } =
            Routing::of(&fds, slots, io_wq_limit, &ring, &mut features);
        let io_wq = match io_wq_limit.threads {
            Some(n) if straight.contains(&true) => IoWq::hold(&ring, slots, n),
            _ => None,
        };
        let trim_by = trims(&mut ring, &fds, &mut features);
        let (pending, done_now) = (Vec::with_capacity(slots), Vec::with_capacity(slots));
        Ok(UringEngine {
            ring,
            fds,
            fixed_files,
            fixed_buffers,
            straight,
            wait_apart,
            spin: Spin::of_this_thread(),
            // I/Os that all go straight to io-wq go in one call, with the wait: the kernel hands
            // each to its threads as it reads it, holding none back, and calls of one cost IOPS
            // (zram at 32 outstanding over 4 io-wq threads, 2 CPUs: 447 K against 483 K). Those
            // that go there after a failed try go together too, in a call just before the wait,
            // from SUBMIT_AT_WAIT_FROM slots on.
            submit_batch: if !wait_apart || (all_via_io_wq && slots >= SUBMIT_AT_WAIT_FROM) {
                usize::MAX
            } else {
                submit_batch.max(1)
            },
            via_io_wq,
            io_wq,
            pending,
            trim_by,
            done_now,
            features,
            _files: files,
        })
    }

    fn entry(&self, io: &Io) -> squeue::Entry {
        let (buf, len, off) = (io.buf, io.len, io.offset);
        let dsync = if io.fua { libc::RWF_DSYNC } else { 0 };
        let datasync = if io.fsync { types::FsyncFlags::empty() } else { types::FsyncFlags::DATASYNC };
        macro_rules! op {
            ($fd:expr) => {
                match (io.op, self.fixed_buffers) {
                    (Op::Read, true) => opcode::ReadFixed::new($fd, buf, len, io.region).offset(off).build(),
                    (Op::Write, true) => {
                        opcode::WriteFixed::new($fd, buf, len, io.region).offset(off).rw_flags(dsync).build()
                    }
                    (Op::Read, false) => opcode::Read::new($fd, buf, len).offset(off).build(),
                    (Op::Write, false) => opcode::Write::new($fd, buf, len).offset(off).rw_flags(dsync).build(),
                    (Op::Flush, _) => opcode::Fsync::new($fd).flags(datasync).build(),
                    (Op::Trim, _) if self.trim_by[io.target as usize] == TrimBy::Command => {
                        discard(self.fds[io.target as usize], off, len)
                    }
                    (Op::Trim, _) => {
                        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
                        opcode::Fallocate::new($fd, len as u64).offset(off).mode(mode).build()
                    }
                }
            };
        }
        let e =
            if self.fixed_files { op!(types::Fixed(io.target)) } else { op!(types::Fd(self.fds[io.target as usize])) };
        let e = e.user_data(io.slot as u64);
        if self.straight[io.target as usize] { e.flags(squeue::Flags::ASYNC) } else { e }
    }
}

/// Why this process can set up no ring at all, in a line that says how to test anyway; None
/// where it can. Asked with the smallest ring before a test makes or writes anything: hosts
/// may forbid io_uring (`kernel.io_uring_disabled`, Linux 6.6), and so do containers' seccomp
/// profiles (Docker's default since 2023), which a worker would otherwise find only once the
/// test had started and its files were made.
pub fn unavailable() -> Option<String> {
    let err = IoUring::new(2).err()?;
    let disabled = || std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok()?.trim().parse::<u32>().ok();
    let why = match err.raw_os_error() {
        Some(libc::EPERM) => match disabled() {
            Some(2) => "this host disables it (sysctl kernel.io_uring_disabled = 2)".to_string(),
            Some(1) => "this host allows it only to the group sysctl kernel.io_uring_group names \
                        (kernel.io_uring_disabled = 1)"
                .to_string(),
            _ => "a seccomp filter forbids it (a container's default profile does)".to_string(),
        },
        Some(libc::ENOSYS) => "this kernel has none (Linux 5.1 and later have it)".to_string(),
        // Kernels before 5.12 count a ring's memory against RLIMIT_MEMLOCK.
        Some(libc::ENOMEM) => "the locked-memory limit leaves no room for a ring (ulimit -l)".to_string(),
        _ => err.to_string(),
    };
    Some(format!(
        "cannot set up io_uring: {why}: give --engine psync (engine = \"psync\" in a job file; one I/O in flight \
         per worker), or allow io_uring"
    ))
}

/// The block layer's discard of `len` bytes at `offset`: the start in `addr`, the length in
/// `addr3`, the first 8 bytes of the command area. (On the plain descriptor: a registered
/// one would need a type the io-uring crate does not name.)
fn discard(fd: RawFd, offset: u64, len: u32) -> squeue::Entry {
    let mut cmd = [0u8; 16];
    cmd[..8].copy_from_slice(&(len as u64).to_le_bytes());
    opcode::UringCmd16::new(types::Fd(fd), BLOCK_URING_CMD_DISCARD).addr(Some(offset)).cmd(cmd).build()
}

/// Whether the kernel has the block layer's discard command for `fd`: asked to discard
/// nothing, a kernel that has it refuses the empty range (EINVAL) and discards nothing; one
/// without answers EOPNOTSUPP (so does a device that cannot discard, or one opened read-only:
/// EBADF; their trims then fail as `BLKDISCARD` says).
fn discard_command(ring: &mut IoUring, fd: RawFd) -> bool {
    let probe = discard(fd, 0, 0).user_data(u64::MAX);
    // SAFETY: the entry points at no memory.
    if unsafe { ring.submission().push(&probe) }.is_err() || ring.submit_and_wait(1).is_err() {
        return false;
    }
    ring.completion().next().is_some_and(|c| c.result() == -libc::EINVAL)
}

impl UringEngine {
    /// A trim on a kernel without the discard command: done here, handed back at the submit.
    #[cold]
    fn trim_now(&mut self, io: &Io) {
        let result = trim_now(self.fds[io.target as usize], true, io.offset, io.len);
        self.done_now.push(Completion { slot: io.slot, result });
    }
}

fn on_fuse(fd: RawFd) -> bool {
    // SAFETY: statfs is plain data (all zeroes is valid); fstatfs only writes into it.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::fstatfs(fd, &mut st) == 0 && st.f_type == FUSE_SUPER_MAGIC
    }
}

impl Engine for UringEngine {
    fn max_in_flight(&self) -> usize {
        usize::MAX
    }

    /// # Safety
    /// See [`Engine::queue`]: the kernel holds `io.buf` until the completion is reaped.
    #[inline]
    unsafe fn queue(&mut self, io: &Io) {
        if io.op == Op::Trim && self.trim_by[io.target as usize] == TrimBy::Ioctl {
            return self.trim_now(io);
        }
        let e = self.entry(io);
        self.pending.push(e);
        // SAFETY: as for `submit_and_wait`'s pushes: the caller keeps the buffers valid until
        // the completions are reaped. Without room (a submit refused), the wait's call takes them.
        if self.pending.len() >= self.submit_batch
            // SAFETY: as above.
            && unsafe { self.ring.submission().push_multiple(&self.pending) }.is_ok()
        {
            self.pending.clear();
            // Failing (EAGAIN, EBUSY), the entries stay in the ring for the next call, the
            // wait's, which reports any error.
            let _ = self.ring.submit();
        }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: usize,
        timeout: Option<std::time::Duration>,
        out: &mut Vec<Completion>,
    ) -> std::io::Result<()> {
        out.append(&mut self.done_now);
        let mut start = 0;
        loop {
            // While io-wq is held, waits end in time to look at it again.
            let look = self.io_wq.as_mut().and_then(|w| w.watch(&self.ring));
            let wait = match (timeout, look) {
                (Some(t), Some(l)) => Some(t.min(l)),
                (t, l) => t.or(l),
            };
            let ts = wait.map(|t| types::Timespec::new().sec(t.as_secs()).nsec(t.subsec_nanos()));
            // SAFETY: every entry points at worker buffers that stay valid until its completion
            // is reaped (the worker owns them for the whole run).
            let end = unsafe {
                let mut sq = self.ring.submission();
                let room = sq.capacity() - sq.len();
                let end = self.pending.len().min(start + room);
                sq.push_multiple(&self.pending[start..end]).expect("room was checked");
                end
            };
            let pushed = end > start;
            start = end;
            // Wait only once everything is in the ring; until then, make room.
            let want = if start == self.pending.len() { min_complete.saturating_sub(out.len()) } else { 0 };
            if want > 0 && pushed && self.wait_apart {
                // Failing, the submit is retried by the wait below, which reports its error.
                let _ = self.ring.submit();
            }
            // Everything is with the kernel: look for a completion a while before sleeping
            // (spin.rs). A wait with a deadline (an arrival due, io-wq to look at) sleeps at once.
            if want > 0 && ts.is_none() && (self.wait_apart || !pushed) && self.ring.completion().is_empty() {
                let ring = &mut self.ring;
                // With DEFER_TASKRUN completions wait as task work until this thread enters the
                // kernel; the ring's TASKRUN flag says some do.
                self.spin.look(|| ring.submission().taskrun() || !ring.completion().is_empty());
            }
            let waited = match (&ts, want) {
                (Some(ts), 1..) => self.ring.submitter().submit_with_args(want, &types::SubmitArgs::new().timespec(ts)),
                _ => self.ring.submit_and_wait(want),
            };
            match waited {
                Ok(_) => {}
                // Interrupted (the test stops): return what has completed, maybe nothing.
                Err(e) if e.raw_os_error() == Some(libc::EINTR) && start == self.pending.len() => {
                    out.extend(
                        self.ring.completion().map(|c| Completion { slot: c.user_data() as u32, result: c.result() }),
                    );
                    break;
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN | libc::EBUSY | libc::ETIME)) => {}
                Err(e) => return Err(e),
            }
            out.extend(self.ring.completion().map(|c| Completion { slot: c.user_data() as u32, result: c.result() }));
            // A wait timed by the caller returns once everything is submitted, completions or not.
            if start == self.pending.len() && (timeout.is_some() || out.len() >= min_complete.max(1)) {
                break;
            }
        }
        self.pending.clear();
        Ok(())
    }

    /// I/Os given up are still the kernel's: it may yet write into their buffers or complete
    /// them on this ring. Neither is ever freed (the process ends soon; closing the ring would
    /// wait for them). Each holds the worker's thread: the kernel hands an I/O that would block
    /// (a frozen filesystem, a FUSE server) to io-wq threads, and a thread with io-wq work
    /// cannot end until it ends, whatever the target.
    fn abandon(self, targets: &[usize]) -> Abandoned {
        let held = targets.to_vec();
        std::mem::forget(self);
        Abandoned { held, pins_buffers: true }
    }

    fn hands_over_at_queue(&self) -> bool {
        self.submit_batch != usize::MAX
    }

    fn describe(&self) -> String {
        let io_wq = match &self.io_wq {
            Some(w) if w.lifted() => {
                format!("; io-wq: up to {} threads, one per outstanding I/O (they sleep)", w.limit())
            }
            Some(w) => format!("; io-wq: up to {} thread{} at once", w.limit(), if w.limit() == 1 { "" } else { "s" }),
            None if self.via_io_wq => "; io-wq: one thread at a time, another only while one sleeps".to_string(),
            None => String::new(),
        };
        let handed = match (self.submit_batch, self.wait_apart) {
            (usize::MAX, true) => "; the I/Os of a round handed to the kernel together, before its wait",
            (usize::MAX, false) => "; the I/Os of a round handed to the kernel with its wait",
            _ => "",
        };
        format!("io_uring ({}){io_wq}{handed}", self.features.join(", "))
    }
}
