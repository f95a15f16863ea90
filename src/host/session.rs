//! The session a test runs in, and so the group its CPU time is shared in.
//!
//! Where the kernel groups CPU time by session (autogroups: `kernel.sched_autogroup_enabled`,
//! on in Debian's and Ubuntu's kernels), the scheduler shares the CPUs fairly between sessions
//! first and between the tasks of a session second: a worker started from the same shell as a
//! build or two CPU burners gets a third of what they leave, while fio, which runs each job in
//! a session of its own (`setsid()` in its backend), competes as a group of its own. On this
//! project's 2-CPU machine with two burners, a loop device at 32 outstanding I/Os: iogauge
//! 79-163 K IOPS in the shell's session, 146-200 K in one of its own (issue 45; fio 187-213 K).
//! That holds only for processes in the root CPU cgroup: one in another (systemd's slices and
//! scopes once it enables the CPU controller, a container) gets no autogroup (sched(7)), and
//! shares CPU time as a task of its cgroup whatever its session; there fio's session gains it
//! nothing, and iogauge starts no session of its own.
//!
//! So a test runs in a child process that leads a session of its own, as fio's jobs do. The
//! process the user started stays where it was (in the terminal's foreground, the one a script
//! or test harness holds), forwards Ctrl-C, SIGTERM, SIGHUP and Ctrl-Z to the child and exits
//! as the child does; killed, it takes the child with it. `IOGAUGE_SESSION=shared` keeps the
//! test in the caller's session, one process. Under an MPI launcher, which tracks the
//! processes it started, the test stays in the caller's session whatever the variable says.
//! The result document says which (`host.autogroup`).
//!
//! A server the test depends on, started from the same shell (nbdkit, a FUSE file system),
//! stays in that shell's session and shares its group's CPU time with whatever else runs
//! there, while the test has a group of its own. This project's suite found it so: on 2 CPUs
//! beside two burners in the suite's session, its open loops missed their rates in 2 of 3
//! passes (an NBD curve point at 1,074 of 1,144 IOPS, a FUSE device's mean at 23 ms against
//! a bound of 20); with its servers in sessions of their own, as daemons run, the NBD curve
//! held in 6 of 6 and the FUSE device missed once (22.6 ms), a bound 3.7 ms over the 16.3 ms
//! it measures idle in either session (docs/performance.md, change 8). With this the default
//! once before, the suite missed open-loop rates in 4 of 5 passes, its servers in its session.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};

use crate::error::{Result, input};
use crate::host::cpu_groups;

/// Where the workers' CPU time was grouped, for the result document.
static GROUPED: OnceLock<&'static str> = OnceLock::new();

/// The child the signal handlers forward to.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// `host.autogroup`: `own` (a session of the test's own), `shared` (the caller's session),
/// `cgroup` (the kernel groups the test's CPU time by its CPU cgroup, not by session) or `off`
/// (the kernel groups no sessions).
pub fn autogroup() -> &'static str {
    GROUPED.get().copied().unwrap_or_else(|| ungrouped().unwrap_or("shared"))
}

/// Why a session of its own would change nothing: `off` where the kernel has no autogroups,
/// `cgroup` where this process is in a CPU cgroup other than the root (systemd's slices and
/// scopes once it enables the CPU controller, a container), which overrides autogroups
/// (sched(7)); None where sessions group CPU time.
fn ungrouped() -> Option<&'static str> {
    if in_cpu_cgroup() {
        return Some("cgroup");
    }
    let on = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() == "1");
    (!on).then_some("off")
}

/// Whether this process's CPU time is grouped by a CPU cgroup other than the root, as far as
/// it can see (under cgroup v1, a container's own cgroup namespace reads as the root).
fn in_cpu_cgroup() -> bool {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    cpu_cgroup_below_root(&cgroup, cgroup2_mount().as_deref())
}

/// Whether `cgroup` (a /proc/PID/cgroup) places its process in a CPU cgroup below the root;
/// `cgroup2` is where the v2 hierarchy is mounted.
fn cpu_cgroup_below_root(cgroup: &str, cgroup2: Option<&std::path::Path>) -> bool {
    // cgroup v1: "ID:cpu,cpuacct:/path", the CPU controller on a hierarchy of its own.
    if let Some(path) = cpu_groups::v1_cpu_path(cgroup) {
        return path != "/";
    }
    // cgroup v2: "0::/path". The root has no cpu.weight; a cgroup that has the CPU controller
    // does, and so does every ancestor it inherits the controller from.
    let (Some(path), Some(mount)) = (cgroup.lines().find_map(|l| l.strip_prefix("0::")), cgroup2) else {
        return false;
    };
    let mut dir = mount.join(path.trim_start_matches('/'));
    while dir.starts_with(mount) {
        if dir.join("cpu.weight").exists() {
            return true;
        }
        if !dir.pop() {
            break;
        }
    }
    false
}

/// Where the cgroup v2 hierarchy is mounted (its root mounted, not a subtree bound elsewhere).
fn cgroup2_mount() -> Option<std::path::PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cpu_groups::cgroup_mounts(&info, "cgroup2").find(|(root, ..)| *root == "/").map(|(_, at, _)| at.into())
}

/// Sets the test's nice value to `n` (the setting `nice`): this thread's, which the threads it
/// starts after (the workers, and the io-wq threads they start) take with them, and, where the
/// test leads a session of its own, that session's group's, by which the kernel shares CPU time
/// between sessions before it shares it between a session's threads (each worker's own CPU
/// cgroup, where one is made, is weighted as `n` by `cpu_groups`). The caller's session
/// (`shared`) is the user's to nice, not the test's. Refused in one line where the kernel will
/// not lower a nice value for this process (not root).
pub fn nice(n: i32) -> Result<()> {
    let before = current_nice();
    let refused = |what: &str, e: std::io::Error| {
        input(format!(
            "nice = {n}: cannot set {what}'s nice value ({e}): below this process's own it needs root \
             (CAP_SYS_NICE) or an RLIMIT_NICE that allows it; give {} to 19",
            before.max(0)
        ))
    };
    // SAFETY: setpriority with `who` 0 changes only the calling thread's nice value (Linux).
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, n) } != 0 {
        return Err(refused("the test's threads", std::io::Error::last_os_error()));
    }
    if autogroup() == "own" {
        std::fs::write("/proc/self/autogroup", n.to_string()).map_err(|e| refused("the test's session", e))?;
    }
    Ok(())
}

/// This thread's nice value.
fn current_nice() -> i32 {
    // SAFETY: getpriority only reads; -1 is also a valid nice value, so errno is not looked at
    // (with `who` 0 it cannot fail).
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

/// Runs the rest of the program in a session of its own unless `IOGAUGE_SESSION=shared` (see
/// the module's notes): returns in the child, or at once where that is not asked or gains nothing; the
/// calling process waits for the child and exits as it did. Must be called before any thread
/// starts (fork copies only the caller), and not under an MPI launcher (not called, the test
/// stays in the caller's session). Fails on a value of the variable it does not know.
pub fn apart() -> Result<()> {
    let own = match std::env::var("IOGAUGE_SESSION").as_deref() {
        Ok("own") | Ok("") | Err(_) => true,
        Ok("shared") => false,
        Ok(other) => {
            return Err(input(format!(
                "IOGAUGE_SESSION={other}: give own (the test in a session of its own, as fio's jobs: the default) or shared (the caller's)"
            )));
        }
    };
    // SAFETY: getsid and getpid only read this process's ids.
    let leads = unsafe { libc::getsid(0) == libc::getpid() };
    let grouped = match ungrouped() {
        Some(why) => why,
        None if leads => "own",
        None if own => {
            fork_into_own_session();
            "own"
        }
        None => "shared",
    };
    let _ = GROUPED.set(grouped);
    Ok(())
}

/// Forks; the child leads a new session and returns, the parent never returns.
fn fork_into_own_session() {
    // With the signals a test ignores (interrupt.rs: a user's SIGUSR1, SIGUSR2, SIGALRM): sent
    // to this process by hand, each does to the test what it does to one in the caller's
    // session, rather than end this process, and so the test, unsaved.
    const FORWARDED: [libc::c_int; 8] = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGTSTP,
        libc::SIGCONT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
    ];
    // The signals to forward are held from before the fork until the parent forwards them: a
    // Ctrl-C that came between the two (the child already running its test, the parent not
    // yet scheduled on a loaded host) ended the parent alone, or was lost where it was ignored.
    // SAFETY: sigset_t is plain bits, filled by sigemptyset and sigaddset; sigprocmask changes
    // only this thread's mask, the process's only thread.
    let held = unsafe {
        let (mut set, mut before): (libc::sigset_t, libc::sigset_t) = (std::mem::zeroed(), std::mem::zeroed());
        libc::sigemptyset(&mut set);
        for s in FORWARDED {
            libc::sigaddset(&mut set, s);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut before);
        before
    };
    // SAFETY: as above, `held` is the mask as it was.
    let release = || unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, &held, std::ptr::null_mut());
    };
    // SAFETY: no other thread exists (the caller's promise), so the child is a whole copy.
    let parent = unsafe { libc::getpid() };
    // SAFETY: as above.
    let child = unsafe { libc::fork() };
    if child < 0 {
        // No process to spare: the test runs in the caller's session, as it would without this.
        release();
        return;
    }
    if child == 0 {
        // SAFETY: setsid and prctl change only this process; a parent that died before the
        // prctl took effect would leave the child running alone, so that is checked after it.
        unsafe {
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            if libc::getppid() != parent {
                libc::_exit(137);
            }
        }
        // A Ctrl-Z forwarded from now on is timed (stops.rs); nothing else is pending in a new
        // process: the child takes signals as the caller did.
        crate::host::stops::time_stops();
        release();
        return;
    }
    CHILD.store(child, Relaxed);
    // This process writes nothing: a SIGPIPE sent to it by hand means nothing to the test.
    // SAFETY: sets one signal's disposition to the kernel's own "ignore".
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    for sig in FORWARDED {
        // SAFETY: the handler calls only async-signal-safe functions (kill, signal, raise).
        unsafe { libc::signal(sig, forward as *const () as libc::sighandler_t) };
    }
    // A signal held since the fork is forwarded now.
    release();
    let mut status = 0;
    // SAFETY: waitpid writes the status of our own child; EINTR (a forwarded signal) retries.
    while unsafe { libc::waitpid(child, &mut status, 0) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            std::process::exit(1);
        }
    }
    if libc::WIFSIGNALED(status) {
        // Ended by a signal (SIGPIPE under `| head`, a SIGKILL): so does this process, for the
        // shell to see the same.
        let sig = libc::WTERMSIG(status);
        // SAFETY: restores the default action and raises it on this, the only, thread.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
    std::process::exit(libc::WEXITSTATUS(status));
}

/// Passes a signal on to the child. Ctrl-Z stops the child, then this process as the terminal
/// asked; continued, both go on.
extern "C" fn forward(sig: libc::c_int) {
    let child = CHILD.load(Relaxed);
    // SAFETY: kill, signal and raise are async-signal-safe; `child` is our own child.
    unsafe {
        match sig {
            libc::SIGTSTP => {
                // The child times its stop (stops.rs) and stops itself.
                libc::kill(child, libc::SIGTSTP);
                libc::signal(libc::SIGTSTP, libc::SIG_DFL);
                libc::raise(libc::SIGTSTP);
            }
            libc::SIGCONT => {
                libc::signal(libc::SIGTSTP, forward as *const () as libc::sighandler_t);
                libc::kill(child, libc::SIGCONT);
            }
            _ => {
                libc::kill(child, sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cpu_cgroup_below_root;

    /// systemd's layout under cgroup v2: the root enables the CPU controller down to
    /// user-1000.slice, not in it, so the session's scope shares its slice's group; and a
    /// hierarchy whose root enables none.
    #[test]
    fn a_cpu_cgroup_is_found_on_either_hierarchy() {
        let root = std::env::temp_dir().join(format!("iogauge-cgroup2-{}", std::process::id()));
        let (on, off) = (root.join("on"), root.join("off"));
        let slice = on.join("user.slice/user-1000.slice");
        std::fs::create_dir_all(slice.join("session-3.scope")).unwrap();
        std::fs::write(on.join("user.slice/cpu.weight"), "100").unwrap();
        std::fs::write(slice.join("cpu.weight"), "100").unwrap();
        std::fs::create_dir_all(off.join("user.slice/user-1000.slice/session-3.scope")).unwrap();
        let v2 = |mount: &std::path::Path, path: &str| cpu_cgroup_below_root(&format!("0::{path}\n"), Some(mount));
        assert!(v2(&on, "/user.slice/user-1000.slice/session-3.scope"));
        assert!(v2(&on, "/user.slice"));
        assert!(!v2(&on, "/"), "the root");
        assert!(!v2(&off, "/user.slice/user-1000.slice/session-3.scope"), "no CPU controller below the root");
        // cgroup v1's cpu hierarchy decides where it is mounted, whatever v2 says.
        let hybrid = |cpu: &str| format!("4:memory:/x\n1:cpu,cpuacct:{cpu}\n0::/user.slice\n");
        assert!(!cpu_cgroup_below_root(&hybrid("/"), Some(&on)));
        assert!(cpu_cgroup_below_root(&hybrid("/docker/0123"), None));
        assert!(!cpu_cgroup_below_root("0::/user.slice\n", None), "no v2 mount to look in");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
