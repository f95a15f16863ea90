//! CPU cgroups: where this process sits in them, and a group of its own for each worker.
//!
//! The kernel shares CPU time between task groups (a session's autogroup, a CPU cgroup) before
//! it shares it between the threads of a group. A test's workers are threads of one process,
//! so of one group, and a worker on zram hands over to its io-wq thread every few µs: two
//! such workers, one on each CPU, kept a process of another session that sleeps 10 ms at a
//! time off both CPUs for 0.2-2.9 s in 7 of 12 runs on this project's 2-CPU VM (Linux 6.18),
//! a shell's `ps` waiting for the run's end. fio's jobs are processes, each leading a session
//! of its own, so a group each: 2-9 ms; fio's jobs as threads (`--thread`) hold it as
//! iogauge's workers did. All four threads in one cgroup held it too, and so did the workers
//! pinned one to each CPU; a cgroup for each worker, its io-wq threads with it, held it
//! 0.15-17 ms, at the same IOPS (docs/performance.md, issue 45's entry 26).
//!
//! So where the kernel groups the test's CPU time (autogroups, or a CPU cgroup other than the root)
//! and this process may make CPU cgroups (root, the CPU controller on a cgroup v1 hierarchy), each
//! worker runs in a cgroup of its own directly below the process's, `iogauge-PID-N-wI` (one group
//! holding them all would weigh all the workers as one), weighted as the test's `nice` weighs a
//! thread, and removed when the test ends (those of a process that was killed, by the next test
//! that makes its own). Under cgroup v2 a thread can have a cgroup of its own only inside a
//! threaded subtree, which would change the cgroup systemd made for the user's session: not done.
//! There, and wherever none can be made, the workers share the test's group as before (`nice` and
//! `completion_batch` keep other sessions served: docs/performance.md); the document's
//! `host.worker_cgroups` says which.
//!
//! The test's own thread, which keeps its clock, gets a group too: left in the group of the
//! caller's other work (under an MPI launcher the test keeps the caller's session) while the
//! workers had groups of their own, it waited for that work's turns, and a loaded suite's run
//! of two ranks read its intervals late (docs/testing.md).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// The kernel's weight of a thread of each nice value, -20 to 19 (`sched_prio_to_weight`): a
/// group's `cpu.shares` of the same weight competes as such a thread does.
const WEIGHTS: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// Tests of this process that made groups, so that each test's are its own.
static MADE: AtomicU32 = AtomicU32::new(0);

/// This process's own cgroup, read once: the test's thread is moved out of it and back.
static HOME: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The cgroup v1 path of the CPU controller's hierarchy in `cgroup` (a /proc/PID/cgroup:
/// "ID:cpu,cpuacct:/path"); None where the CPU controller is on no v1 hierarchy.
pub fn v1_cpu_path(cgroup: &str) -> Option<&str> {
    cgroup.lines().find_map(|line| {
        let mut f = line.splitn(3, ':');
        let (controllers, path) = (f.nth(1)?, f.next()?);
        controllers.split(',').any(|c| c == "cpu").then_some(path)
    })
}

/// Each mounted cgroup hierarchy of type `fstype` (`cgroup` for v1, `cgroup2`) in `mountinfo`
/// (a /proc/PID/mountinfo): (the hierarchy's path mounted, where, its super options).
pub fn cgroup_mounts<'a>(mountinfo: &'a str, fstype: &'a str) -> impl Iterator<Item = (&'a str, &'a str, &'a str)> {
    mountinfo.lines().filter_map(move |l| {
        let (before, after) = l.split_once(" - ")?;
        let f: Vec<&str> = before.split(' ').collect();
        let mut a = after.split(' ');
        (a.next()? == fstype).then_some(())?;
        Some((*f.get(3)?, *f.get(4)?, a.nth(1)?))
    })
}

/// The directory of this process's cgroup on the v1 hierarchy of the CPU controller, where
/// that hierarchy is mounted.
fn own_v1_cpu_dir() -> Option<PathBuf> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = v1_cpu_path(&cgroup)?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let (root, at, opts) =
        cgroup_mounts(&mountinfo, "cgroup").find(|(_, _, opts)| opts.split(',').any(|o| o == "cpu"))?;
    // With cpuset on the same hierarchy a new group has no CPUs until given some: not ours to
    // choose.
    if opts.split(',').any(|o| o == "cpuset") {
        return None;
    }
    // A mount of a subtree (a container's) shows the paths below its root.
    let below = Path::new(path).strip_prefix(root).ok()?;
    Some(Path::new(at).join(below))
}

/// A CPU cgroup for each worker of a test, and one for the thread that keeps its clock,
/// removed when dropped.
#[derive(Debug)]
pub struct WorkerGroups {
    /// This process's own cgroup, where threads go back; the groups are made below it.
    home: PathBuf,
    /// The test's groups' names, less each one's `-wI` or `-main`.
    name: String,
    /// Workers' groups made, `w0` up.
    made: usize,
    /// Whether the group of the test's own thread was made.
    main: bool,
}

impl WorkerGroups {
    /// A group for each of `workers` workers, each weighted as a thread of nice value `nice`,
    /// and one more that the calling thread (the test's, which keeps its clock) moves to: left
    /// in the group of the user's other work while the workers have groups of their own, it
    /// would wait for that work's turns (under an MPI launcher the test keeps the caller's
    /// session). None where this process cannot make them (see the module's notes) or runs
    /// under a real-time policy, which the kernel's task groups do not share out.
    pub fn make(workers: usize, nice: i32) -> Option<WorkerGroups> {
        // SAFETY: sched_getscheduler only reads.
        let policy = unsafe { libc::sched_getscheduler(0) };
        if ![libc::SCHED_OTHER, libc::SCHED_BATCH, libc::SCHED_IDLE].contains(&policy) {
            return None;
        }
        let home = HOME.get_or_init(own_v1_cpu_dir).clone()?;
        remove_abandoned(&home);
        let name = format!("iogauge-{}-{}", std::process::id(), MADE.fetch_add(1, Relaxed));
        let mut groups = WorkerGroups { home, name, made: 0, main: false };
        let shares = WEIGHTS[(nice.clamp(-20, 19) + 20) as usize].to_string();
        let weighed = |g: &Path| std::fs::write(g.join("cpu.shares"), &shares).ok();
        while groups.made < workers {
            let g = groups.group(groups.made);
            std::fs::create_dir(&g).ok()?;
            groups.made += 1;
            weighed(&g)?;
        }
        let main = groups.main_group();
        std::fs::create_dir(&main).ok()?;
        groups.main = true;
        weighed(&main)?;
        // SAFETY: gettid has no preconditions.
        std::fs::write(main.join("tasks"), unsafe { libc::gettid() }.to_string()).ok()?;
        Some(groups)
    }

    fn group(&self, worker: usize) -> PathBuf {
        self.home.join(format!("{}-w{worker}", self.name))
    }

    fn main_group(&self) -> PathBuf {
        self.home.join(format!("{}-main", self.name))
    }

    /// Moves thread `tid` into the group of worker `worker`; the io-wq threads it starts
    /// after are made in its group.
    pub fn place(&self, worker: usize, tid: u32) -> std::io::Result<()> {
        // The kernel reads 0 as the thread that writes it.
        if tid == 0 {
            return Err(std::io::Error::other("its thread has not started"));
        }
        std::fs::write(self.group(worker).join("tasks"), tid.to_string())
    }
}

impl Drop for WorkerGroups {
    fn drop(&mut self) {
        // A worker that could not end (its I/Os given up in io-wq) goes back with its io-wq
        // threads; a thread that cannot leaves its group to `remove_abandoned`.
        for g in (0..self.made).map(|i| self.group(i)).chain(self.main.then(|| self.main_group())) {
            for tid in std::fs::read_to_string(g.join("tasks")).unwrap_or_default().lines() {
                let _ = std::fs::write(self.home.join("tasks"), tid);
            }
            let _ = std::fs::remove_dir(g);
        }
    }
}

/// Removes the groups of tests whose process is gone (killed before its groups were removed):
/// the kernel removes only empty cgroups, so nothing running is touched.
fn remove_abandoned(home: &Path) {
    let Ok(entries) = std::fs::read_dir(home) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("iogauge-")?.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_hierarchy_and_its_mounts_are_read_as_the_kernel_writes_them() {
        let cgroup = "9:name=systemd:/\n4:memory:/x\n1:cpu,cpuacct:/user.slice\n0::/\n";
        assert_eq!(v1_cpu_path(cgroup), Some("/user.slice"));
        assert_eq!(v1_cpu_path("4:cpuset:/\n0::/user.slice\n"), None, "cpuset is not cpu");
        let info = "35 25 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:11 - cgroup cgroup rw,cpu\n\
                    36 25 0:31 /docker/01 /sys/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n\
                    44 25 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let v1: Vec<_> = cgroup_mounts(info, "cgroup").collect();
        assert_eq!(v1, [("/", "/sys/fs/cgroup/cpu", "rw,cpu"), ("/docker/01", "/sys/fs/cgroup/cpuacct", "rw,cpuacct")]);
        assert_eq!(cgroup_mounts(info, "cgroup2").collect::<Vec<_>>(), [("/", "/sys/fs/cgroup/unified", "rw")]);
    }

    #[test]
    fn a_group_weighs_as_a_thread_of_the_nice_value() {
        assert_eq!((WEIGHTS[20], WEIGHTS[25], WEIGHTS[0], WEIGHTS[39]), (1024, 335, 88761, 15));
        // Each step of nice is about 1.25x in weight, as the kernel's table makes it.
        assert!(WEIGHTS.windows(2).all(|w| (1.2..1.3).contains(&(w[0] as f64 / w[1] as f64))));
    }
}
