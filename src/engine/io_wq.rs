//! io-wq: the kernel threads that serve a ring's I/Os which cannot be issued without blocking.
//!
//! A target without non-blocking I/O (zram: the kernel's `FMODE_NOWAIT` is unset) sends every
//! I/O to io-wq anyway, after a try on the worker's thread that fails (straight there at one
//! outstanding I/O, and files on FUSE always: see io_uring.rs). io-wq then runs one thread for
//! the worker and adds another only while one sleeps: one thread's worth of CPU, as fio's jobs
//! get. An earlier iogauge sent such I/Os straight there (`IOSQE_ASYNC`), where io-wq starts a
//! thread for each I/O it finds no idle thread for, and held them to one per CPU of the host:
//! one worker of 32 outstanding I/Os on zram ran 16 io-wq threads on a 16-core machine and
//! four workers 64, taking 4.1x fio's CPU per I/O and, with several workers, losing IOPS to
//! the crowd. Holding them to one thread instead lost a third of the IOPS of four workers on
//! one zram (a thread that blocks on the device's locks then has no other to take over), so
//! the kernel's own rule is the default (docs/performance.md has the figures).
//!
//! Spreading one worker over more CPUs is the user's choice, `io_wq_threads = N`: its I/Os go
//! straight to io-wq, up to N threads at once ([`IoWq::hold`]). A device that sleeps (a FUSE
//! server, a network or replicated block device) would then have only N I/Os at the device,
//! whatever the outstanding I/Os asked. [`IoWq::watch`] looks at the io-wq threads a few
//! times a second; when every one of them is asleep inside an I/O twice running, the device
//! sleeps, and the limit becomes one thread per outstanding I/O, for the rest of the run. A
//! worker's `cpus` hold its io-wq threads to the same CPUs ([`run_on`]).

use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::IoUring;

use super::AlignedBuf;

/// How often the io-wq threads are looked at, while they are held.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Whether `fd` takes non-blocking I/O (`RWF_NOWAIT`), as io_uring asks before issuing on the
/// submitting thread. Probed with a read at the end of the target, which transfers nothing.
pub fn supports_nowait(fd: RawFd) -> bool {
    let buf = AlignedBuf::new(4096);
    // SAFETY: plain system calls on our fd; the iovec points at a live 4096-byte buffer.
    let err = unsafe {
        let end = libc::lseek(fd, 0, libc::SEEK_END);
        if end < 0 {
            return true;
        }
        // Past the end, rounded up to the block size O_DIRECT wants: the kernel checks the flag
        // first, then finds nothing to read.
        let at = (end + 4095) & !4095;
        let iov = libc::iovec { iov_base: buf.as_ptr().cast(), iov_len: 4096 };
        if libc::preadv2(fd, &iov, 1, at, libc::RWF_NOWAIT) >= 0 {
            return true;
        }
        *libc::__errno_location()
    };
    // Anything else (EAGAIN: it would block this time) means the flag was accepted.
    err != libc::EOPNOTSUPP
}

/// The limit on a worker's io-wq threads, and the watch that lifts it.
pub struct IoWq {
    /// The worker thread: its io-wq threads are named `iou-wrk-<tid>`.
    owner: libc::pid_t,
    /// Threads allowed while held (`io_wq_threads`), and once lifted (the worker's
    /// outstanding I/Os).
    held: u32,
    per_io: u32,
    lifted: bool,
    /// Consecutive looks that found every io-wq thread asleep inside an I/O.
    asleep_looks: u32,
    /// Looks so far (a search of /proc for new io-wq threads is made every tenth).
    looks: u32,
    /// When to look next, on [`coarse_now`]'s clock.
    next_look: Duration,
    /// Thread ids of the owner's io-wq threads, found by name.
    threads: Vec<libc::pid_t>,
}

impl IoWq {
    /// Holds the calling thread's io-wq to `threads` threads (where the kernel takes it: 5.15
    /// and later) for `slots` outstanding I/Os. None when there are no more I/Os than threads.
    pub fn hold(ring: &IoUring, slots: usize, threads: u32) -> Option<IoWq> {
        let (held, per_io) = (threads.max(1), slots as u32);
        // [bounded, unbounded]: both, because an IOSQE_ASYNC I/O on a registered file reaches
        // io-wq before its file is looked up, and io-wq then counts it as unbounded work.
        if per_io <= held || ring.submitter().register_iowq_max_workers(&mut [held, held]).is_err() {
            return None;
        }
        // SAFETY: gettid has no preconditions.
        let owner = unsafe { libc::gettid() };
        Some(IoWq {
            owner,
            held,
            per_io,
            lifted: false,
            asleep_looks: 0,
            looks: 0,
            next_look: coarse_now() + WATCH_EVERY,
            threads: Vec::new(),
        })
    }

    /// Whether the limit has been lifted (the device sleeps).
    pub fn lifted(&self) -> bool {
        self.lifted
    }

    /// The threads allowed now.
    pub fn limit(&self) -> u32 {
        if self.lifted { self.per_io } else { self.held }
    }

    /// Looks at the io-wq threads if it is time, and lifts the limit when the device sleeps.
    /// Returns how long a wait may last before the next look (None once lifted: no more looks).
    pub fn watch(&mut self, ring: &IoUring) -> Option<Duration> {
        if self.lifted {
            return None;
        }
        let now = coarse_now();
        if now < self.next_look {
            return Some(self.next_look - now);
        }
        self.next_look = now + WATCH_EVERY;
        let asleep = self.asleep_in_io();
        self.asleep_looks = if asleep >= self.held as usize { self.asleep_looks + 1 } else { 0 };
        if self.asleep_looks >= 2 && ring.submitter().register_iowq_max_workers(&mut [self.per_io, self.per_io]).is_ok()
        {
            self.lifted = true;
            return None;
        }
        Some(WATCH_EVERY)
    }

    /// How many of the owner's io-wq threads sleep inside an I/O now.
    fn asleep_in_io(&mut self) -> usize {
        let mut asleep = 0;
        for &tid in &self.threads {
            match thread_state(tid) {
                Some(ThreadState::InIo) => asleep += 1,
                Some(_) => {}
                // Gone (io-wq ends threads idle for a while): find them again.
                None => {
                    self.threads.clear();
                    break;
                }
            }
        }
        // Fewer threads than allowed cannot all be held: look for new ones, but not at every look
        // (a search reads every thread's name, and a run may have many workers).
        self.looks += 1;
        if self.threads.is_empty() || (self.threads.len() < self.held as usize && self.looks % 10 == 0) {
            self.threads = io_wq_threads(self.owner);
            asleep = self.threads.iter().filter(|&&t| thread_state(t) == Some(ThreadState::InIo)).count();
        }
        asleep
    }
}

/// The monotonic clock at the kernel's tick (a few ms): enough for looks 100 ms apart, and a
/// third of a precise read's cost, paid at every wait on the I/O path, beside the worker's own.
fn coarse_now() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `ring`'s io-wq threads on `cpus` only (none: wherever the process may, as where the
/// kernel refuses: before 5.14).
pub fn run_on(ring: &IoUring, cpus: &[u32]) {
    if !cpus.is_empty() {
        let _ = ring.submitter().register_iowq_aff(&crate::host::cpu::cpu_set(cpus));
    }
}

#[derive(PartialEq)]
enum ThreadState {
    Running,
    /// Asleep waiting for work (in io-wq's own loop).
    Idle,
    /// Asleep anywhere else: inside the I/O it serves.
    InIo,
}

/// The state of thread `tid` of this process, from /proc (None if it is gone).
fn thread_state(tid: libc::pid_t) -> Option<ThreadState> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses.
    let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
    if !matches!(state, 'S' | 'D') {
        return Some(ThreadState::Running);
    }
    // Where it sleeps; without kernel symbols this reads "0" and only D (uninterruptible
    // sleep, as in a block device's or NFS's wait) counts.
    let wchan = std::fs::read_to_string(format!("/proc/self/task/{tid}/wchan")).unwrap_or_default();
    Some(match wchan.as_str() {
        "io_wq_worker" => ThreadState::Idle,
        "0" | "" if state == 'S' => ThreadState::Idle,
        _ => ThreadState::InIo,
    })
}

/// The io-wq threads serving thread `owner`'s rings.
fn io_wq_threads(owner: libc::pid_t) -> Vec<libc::pid_t> {
    let name = format!("iou-wrk-{owner}\n");
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|tid| std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).is_ok_and(|c| c == name))
        .collect()
}
