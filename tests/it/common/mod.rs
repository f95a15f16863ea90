//! Helpers for tests that run the real binary on real devices.
#![allow(dead_code)] // each test file uses a different part

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The iogauge binary built for this test run.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_iogauge")
}

/// Open MPI's `mpirun`, told not to fail a job whose rank exited 0 before the launcher took
/// in its finalize. A rank's `MPI_Finalize` waits 2 s at most for the launcher's answer (PMIx's
/// client, a fixed time) and then exits; a launcher held off its CPU longer by the rest of the
/// suite (four tests at once on two CPUs, each iogauge in a session of its own) then reports
/// a rank that finished and wrote its part as "exiting improperly", exit 1 (seen once in a
/// full suite; made at will by stopping mpirun for 3 s as its ranks finalize). A rank that
/// fails, is killed or hangs still fails the job (non-zero status, signal, watchdog).
pub fn mpirun() -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--mca", "orte_allowed_exit_without_sync", "1"]);
    c
}

/// iogauge run with `args` in `dir`, its history in this test process's own directory (not
/// the user's).
pub fn command_in(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", std::env::temp_dir().join(format!("iogauge-test-{}-data", std::process::id())));
    c
}

/// Flags that have a command write its JSON lines to `lines.jsonl` in its directory every
/// 100 ms, for `wait_for_line`.
pub const LINES: [&str; 4] = ["--interval", "100ms", "--live-json", "lines.jsonl"];

/// Waits until a JSON line of `child` (started in `dir` with `LINES`) is `seen`: a test that
/// disturbs a run does so once the run provably does what is disturbed, not after a fixed
/// sleep that a loaded host's start-up may outlast. Panics if the command ends first, or after
/// 60 s.
pub fn wait_for_line(dir: &Path, child: &mut Child, seen: impl Fn(&Value) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let lines = std::fs::read_to_string(dir.join("lines.jsonl")).unwrap_or_default();
        // A line being written is not yet whole: it does not parse, and is read again next time.
        if lines.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).any(|l| seen(&l)) {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "the command ended before the line awaited:\n{lines}");
        assert!(Instant::now() < deadline, "no line awaited within 60 s:\n{lines}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the test of `child` (an iogauge run, spawned) has started its workers: its
/// targets are open and its I/Os begin, so a test can disturb it a known time into its run
/// wherever a loaded host's start-up left it. Panics if the command ends first, or after 60 s.
pub fn wait_for_workers(child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = |pid| {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
        tasks
            .into_iter()
            .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == "iogauge-w0"))
    };
    while !started(test_process(child.id())) {
        assert!(child.try_wait().unwrap().is_none(), "the command ended before its workers started");
        assert!(Instant::now() < deadline, "no workers within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A line of a recording interval that completed I/Os.
pub fn recording(line: &Value) -> bool {
    line["phase"] == "recording" && line["ios"].as_u64().is_some_and(|n| n > 0)
}

/// Starts `iogauge ARGS` in `dir` with `LINES`, its stdout and stderr piped (for
/// [`output_of`]), and returns it once it records I/Os.
pub fn spawn_recording(dir: &Path, args: &[&str]) -> Child {
    let mut child = command_in(dir, args).args(LINES).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_line(dir, &mut child, recording);
    child
}

/// How long a test waits for a command it started to end: no run of the suite lasts a minute,
/// so one still going after two hangs, and the test fails saying so rather than holding the
/// suite to CI's limit.
const ENDS_WITHIN: Duration = Duration::from_secs(120);

/// `child.wait_with_output()` within [`ENDS_WITHIN`]: a command still running then is killed
/// (with the child that runs its test in a session of its own), and the test fails.
pub fn output_of(mut child: Child) -> Output {
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        pipe.map(|mut p| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = p.read_to_end(&mut v);
                v
            })
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + ENDS_WITHIN;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            // What each process and thread was waiting in, for the failure to say what hung;
            // then every one of them goes (a stopped MPI rank too).
            let (pids, said) = process_tree(child.id());
            for pid in pids {
                // SAFETY: killing processes this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            let _ = child.wait();
            panic!("a command this test started did not end within {ENDS_WITHIN:?}; its processes then:\n{said}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let joined = |t: Option<std::thread::JoinHandle<Vec<u8>>>| t.map(|t| t.join().unwrap()).unwrap_or_default();
    Output { status, stdout: joined(stdout), stderr: joined(stderr) }
}

/// `pid` and its descendants, with each thread's name, state, wait channel and kernel stack
/// (/proc, as root) in words.
fn process_tree(pid: u32) -> (Vec<u32>, String) {
    let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap_or_default();
    let (mut pids, mut said, mut next) = (Vec::new(), String::new(), vec![pid]);
    while let Some(p) = next.pop() {
        pids.push(p);
        for task in std::fs::read_dir(format!("/proc/{p}/task")).into_iter().flatten().flatten() {
            let t = task.path();
            let state = read(&t.join("stat"));
            let state =
                state.rsplit_once(')').map_or("?", |(_, rest)| rest.trim_start().split(' ').next().unwrap_or("?"));
            let stack: Vec<String> = read(&t.join("stack"))
                .lines()
                .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
                .collect();
            said += &format!(
                "  pid {p} task {} {} state {state} in {} [{}]\n",
                task.file_name().to_string_lossy(),
                read(&t.join("comm")).trim(),
                read(&t.join("wchan")),
                stack.join(" < ")
            );
            next.extend(read(&t.join("children")).split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
    (pids, said)
}

/// The process of a running iogauge (`pid`, as spawned) that runs its test: the child it
/// starts in a session of its own (src/session.rs), or `pid` itself when it starts none.
pub fn test_process(pid: u32) -> u32 {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    children.split_whitespace().next().and_then(|c| c.parse().ok()).unwrap_or(pid)
}

/// The kernel's account of each of `pid`'s worker threads (/proc's stat): its fields from the
/// third on, after the command name (the state first). None before the test starts its workers.
pub fn worker_stats(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", test_process(pid))).into_iter().flatten().flatten();
    tasks
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("iogauge-w")))
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            Some(stat.rsplit_once(')')?.1.trim_start().to_string())
        })
        .collect()
}

/// The CPU each of `pid`'s worker threads last ran on, by the kernel's account (none yet:
/// the test has not started its workers).
pub fn worker_cpus(pid: u32) -> Vec<u32> {
    worker_stats(pid).iter().map(|fields| fields.split(' ').nth(39 - 3).unwrap().parse().unwrap()).collect()
}

/// Runs iogauge with `args` in `dir`.
pub fn iogauge_in(dir: &Path, args: &[&str]) -> Output {
    command_in(dir, args).output().expect("run iogauge")
}

/// Runs iogauge with `args` in `dir` and asserts it succeeded.
pub fn ok_in(dir: &Path, args: &[&str]) -> Output {
    let out = iogauge_in(dir, args);
    assert!(out.status.success(), "iogauge {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Runs iogauge with `args` in a scratch directory and asserts it succeeded.
pub fn ok(args: &[&str]) -> Output {
    ok_in(&scratch("cwd"), args)
}

/// Runs iogauge with `args` in a scratch directory.
pub fn iogauge(args: &[&str]) -> Output {
    iogauge_in(&scratch("cwd"), args)
}

/// Runs iogauge with `--json -` added and returns the parsed document; panics with stderr on failure.
pub fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--json", "-"]);
    let out = iogauge(&a);
    assert!(out.status.success(), "iogauge {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout holds only the JSON document")
}

/// A fresh directory under the system temp dir, unique per call. The first call of a test
/// process removes what earlier ones left (below).
pub fn scratch(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(remove_scratch_of_ended_runs);
    let d = std::env::temp_dir().join(format!(
        "iogauge-test-{}-{tag}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Which tests may read block devices that other tests made. The workbench's page lists the
/// machine's disks, reading each one's signatures (src/ui/topology.rs); a listing while a test
/// counts its device's I/Os in /sys/block/NAME/stat adds its reads to the count (a loaded pass:
/// a replay's loop device counted 48 reads and 2,088 sectors more than its trace). So
/// listings and devices whose reads are counted are held apart, each kind beside its own. (A
/// listing waiting does not go first: a test that makes a second device while holding one
/// would then wait for itself.)
#[derive(Clone, Copy, PartialEq)]
pub enum Disks {
    /// A workbench that may list every disk.
    Listed,
    /// A device a test made, whose reads it may count.
    Counted,
}

/// Held while `Disks` of its kind are in use (see [`Disks`]).
pub struct DisksHeld(Disks);

/// (listings, counted devices)
static DISKS: Mutex<(usize, usize)> = Mutex::new((0, 0));
static DISKS_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// Waits until no use of the other kind is held, then holds one of `kind`. A test that held
/// both kinds at once would wait for itself: it fails after 10 minutes, saying so, instead of
/// holding the suite.
pub fn hold_disks(kind: Disks) -> DisksHeld {
    let mut s = DISKS.lock().unwrap_or_else(|e| e.into_inner());
    let listed = kind == Disks::Listed;
    let deadline = Instant::now() + Duration::from_secs(600);
    while if listed { s.1 } else { s.0 } > 0 {
        let left = deadline.checked_duration_since(Instant::now()).unwrap_or_else(|| {
            panic!("waited 10 min for the other kind of common::Disks: does a test with a workbench make a LoopDev::new (not beside_listings)?")
        });
        s = DISKS_FREED.wait_timeout(s, left).unwrap_or_else(|e| e.into_inner()).0;
    }
    if listed {
        s.0 += 1
    } else {
        s.1 += 1
    }
    DisksHeld(kind)
}

impl Drop for DisksHeld {
    fn drop(&mut self) {
        let mut s = DISKS.lock().unwrap_or_else(|e| e.into_inner());
        match self.0 {
            Disks::Listed => s.0 -= 1,
            Disks::Counted => s.1 -= 1,
        }
        DISKS_FREED.notify_all();
    }
}

/// Starts `c` as a daemon runs, in a session of its own: where the kernel shares CPU time
/// between sessions first (autogroups), a server (nbdkit, tgtd, the FUSE file system, a
/// browser) then competes as a group, not as one of the suite's tasks beside its CPU burners.
/// A Ctrl-C of the suite no longer reaches it, so it is sent SIGTERM when the test's thread
/// ends, however it ends.
pub fn in_own_session(c: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid(2) and prctl(2) are async-signal-safe and change only the child.
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
            Ok(())
        })
    }
}

/// Held while a test attaches a loop device at the first free number, or rebinds one: a
/// rebind frees its number for a moment, and another test's attach would take it (seen: a
/// test's device became another's, and its end detached the other's).
static ATTACHING: Mutex<()> = Mutex::new(());

/// Attaches `file` at the first free loop device (`losetup -f`, with `options` such as
/// `--sector-size 4096` or `-o OFFSET`), returned as /dev/loopN. Every test attaches through
/// here.
pub fn attach_loop(file: impl AsRef<std::ffi::OsStr>, options: &[&str]) -> String {
    let _alone = ATTACHING.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("losetup").args(["-f", "--show"]).args(options).arg(file).output().expect("losetup");
    assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A tmpfs of `size` (mount's `size=`, `8M`) on a scratch directory, unmounted (lazily) when
/// dropped, however the test ends: a small file system to fill.
pub struct Tmpfs(pub PathBuf);

impl Tmpfs {
    pub fn mount(size: &str) -> Tmpfs {
        let dir = scratch("tmpfs");
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&dir).status();
        assert!(ok.unwrap().success(), "mount a tmpfs on {}", dir.display());
        Tmpfs(dir)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A loop device over a file of `size` bytes; detached and removed on drop.
pub struct LoopDev {
    /// /dev/loopN
    pub dev: String,
    /// The backing file.
    pub file: PathBuf,
    /// Kept from the workbench's listings while it lives (None: made beside one).
    _counted: Option<DisksHeld>,
}

impl LoopDev {
    /// A loop device over a new zero-filled file, whose reads no listing of the disks adds to.
    pub fn new(size: u64) -> LoopDev {
        let counted = hold_disks(Disks::Counted);
        let mut d = LoopDev::beside_listings(size);
        d._counted = Some(counted);
        d
    }

    /// A loop device for a test that lists the disks itself (a workbench's): a listing may read
    /// it, so only its writes count.
    pub fn beside_listings(size: u64) -> LoopDev {
        let file = scratch("loop").join("backing.img");
        let f = std::fs::File::create(&file).unwrap();
        f.set_len(size).unwrap();
        drop(f);
        let dev = attach_loop(&file, &[]);
        LoopDev { dev, file, _counted: None }
    }

    /// Puts `file` behind this device, under the same name: the number is free between the
    /// detach and the attach, so no other test attaches a device meanwhile (`attach_loop`).
    pub fn rebind(&self, file: &Path) {
        let _alone = ATTACHING.lock().unwrap_or_else(|e| e.into_inner());
        let detached = Command::new("losetup").arg("-d").arg(&self.dev).output().unwrap();
        assert!(detached.status.success(), "losetup -d: {}", String::from_utf8_lossy(&detached.stderr));
        // A detached loop device is busy for a moment: the attach is retried for 5 s.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let out = Command::new("losetup").arg(&self.dev).arg(file).output().unwrap();
            if out.status.success() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "losetup {} {file:?}: {}",
                self.dev,
                String::from_utf8_lossy(&out.stderr)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Runs `f` with this device detached (`losetup -d`), its number kept from the other tests'
    /// attaches meanwhile (`attach_loop`): it stays detached (its drop removes the file).
    pub fn detached<T>(&self, f: impl FnOnce() -> T) -> T {
        let _alone = ATTACHING.lock().unwrap_or_else(|e| e.into_inner());
        let detached = Command::new("losetup").arg("-d").arg(&self.dev).output().unwrap();
        assert!(detached.status.success(), "losetup -d: {}", String::from_utf8_lossy(&detached.stderr));
        f()
    }

    /// The device's name in /sys/block.
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_dir_all(self.file.parent().unwrap());
    }
}

/// Reads and writes the kernel completed on a block device, and merged: (reads, reads merged,
/// writes, writes merged), from /sys/block/NAME/stat.
pub fn kernel_ios(name: &str) -> (u64, u64, u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = s.split_whitespace().map(|v| v.parse().unwrap()).collect();
    (f[0], f[1], f[4], f[5])
}

/// Exclusive use of /dev/zram0 (one RAM disk for the whole machine): a lock within this
/// process and a file lock across processes (other test binaries, the benchmark).
pub struct Zram {
    _guard: MutexGuard<'static, ()>,
    _lock: std::fs::File,
    _counted: DisksHeld,
}

/// The zram device path.
pub const ZRAM: &str = "/dev/zram0";

/// Takes /dev/zram0, giving it a 2 GiB size if it has none.
pub fn zram() -> Zram {
    static LOCAL: Mutex<()> = Mutex::new(());
    let guard = LOCAL.lock().unwrap_or_else(|e| e.into_inner());
    let lock = std::fs::File::create("/tmp/iogauge-zram.lock").unwrap();
    // SAFETY: flock on a file we own; blocks until other processes release it.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let size = std::fs::read_to_string("/sys/block/zram0/disksize").expect("/dev/zram0 exists (modprobe zram)");
    if size.trim() == "0" {
        std::fs::write("/sys/block/zram0/disksize", "2G").expect("set zram0 disksize");
    }
    Zram { _guard: guard, _lock: lock, _counted: hold_disks(Disks::Counted) }
}

/// A number at a JSON path like `results/0/totals/ios`.
pub fn num(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for p in path.split('/') {
        cur = match p.parse::<usize>() {
            Ok(i) => &cur[i],
            Err(_) => &cur[p],
        };
    }
    cur.as_f64().unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// Asserts that the intervals of `result` (a result of a document) tile its recorded window,
/// and returns how many there are: each ends where the ones before it add up to, the last at
/// the window's end. A monitor woken late reads a longer interval, and one woken past the run's
/// end reads the rest of it as one: how many there are is the host's, that they tile is not.
pub fn assert_intervals_tile(result: &Value) -> usize {
    let intervals = result["intervals"].as_array().unwrap();
    let mut tiled = 0.0;
    for iv in intervals {
        tiled += num(iv, "duration_s");
        assert!((num(iv, "t_s") - tiled).abs() < 1e-6, "an interval ending at {} after {tiled} s", iv["t_s"]);
    }
    let window = num(result, "duration_s");
    assert!((tiled - window).abs() < 1e-6, "{tiled} s of intervals in a window of {window} s: {intervals:?}");
    intervals.len()
}

/// Validates the result document at `path` against docs/result-schema.json (python3-jsonschema).
pub fn validate_result(path: &Path) -> Result<(), String> {
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/result-schema.json");
    let check = format!(
        "import json,jsonschema; s=json.load(open('{schema}')); jsonschema.Draft202012Validator.check_schema(s); jsonschema.validate(json.load(open('{}')), s)",
        path.display()
    );
    let out = Command::new("/usr/bin/python3").args(["-c", &check]).output().unwrap();
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// Validates the study document at `path` against docs/study-schema.json, its runs against
/// docs/result-schema.json (python3-jsonschema).
pub fn validate_study(path: &Path) -> Result<(), String> {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");
    let script = format!(
        "import json,jsonschema; r=json.load(open('{docs}/result-schema.json')); s=json.load(open('{docs}/study-schema.json')); \
         jsonschema.Draft202012Validator.check_schema(s); \
         v=jsonschema.Draft202012Validator(s, resolver=jsonschema.RefResolver.from_schema(s, store={{r['$id']: r}})); \
         v.validate(json.load(open('{}')))",
        path.display()
    );
    let out = Command::new("/usr/bin/python3").args(["-c", &script]).output().unwrap();
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

/// Removes the scratch directories (`iogauge-test-PID-...`) of test processes that have ended:
/// a test leaves its files behind (logs, file-system images, traces), about 1 GB a run of the
/// suite, which filled this machine's disk after a day of runs. A directory with a mount under
/// it (a crashed test's FUSE file or file system) is left alone: removing it would go through
/// the mount.
fn remove_scratch_of_ended_runs() {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix("iogauge-test-")).and_then(|rest| rest.split('-').next());
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else { continue };
        let path = entry.path();
        let mounted = mounts.lines().filter_map(|l| l.split(' ').nth(1)).any(|m| Path::new(m).starts_with(&path));
        if !mounted && !Path::new(&format!("/proc/{pid}")).exists() {
            detach_loop_devices_under(&path);
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Detaches the loop devices whose backing file is under `dir` (a killed test's `LoopDev`).
fn detach_loop_devices_under(dir: &Path) {
    let Ok(devices) = std::fs::read_dir("/sys/block") else { return };
    for dev in devices.flatten() {
        let Ok(file) = std::fs::read_to_string(dev.path().join("loop/backing_file")) else { continue };
        if Path::new(file.trim_end()).starts_with(dir) {
            let _ = Command::new("losetup").arg("-d").arg(Path::new("/dev").join(dev.file_name())).status();
        }
    }
}

/// Standard deviations either side of a mean that a normal draw stays within in all but one run
/// in a million (two-sided tail 1.0e-6): the width of every statistical bound in the tests.
pub const ONE_IN_A_MILLION_SD: f64 = 4.9;

/// How far the share of `n` independent draws that each succeed with chance `p` may fall from
/// `p` by chance alone (binomial, at one false failure in a million).
pub fn share_bound(p: f64, n: f64) -> f64 {
    ONE_IN_A_MILLION_SD * (p * (1.0 - p) / n).sqrt()
}

/// Asserts Little's law on a counted closed-loop run (`--ios`) of workers with `qd`
/// outstanding I/Os each: IOPS x mean response time (the I/Os in flight on average over the run)
/// lies in [`floor`, qd x workers], bounds that hold whatever the machine's load. A timed window
/// cannot give such bounds: a device stalled across its end (a loop device's kernel worker went
/// 1.2 s without running here, two CPU burners beside the suite) leaves its I/Os out of the
/// window and IOPS short, with nothing in the result to say by how much. A counted run records
/// every I/O, from the epoch to the last completion (`duration_s`, D): never more than qd per
/// worker in flight, each I/O within [0, D], so the sum of response times is at most
/// qd x workers x D. The floor is the caller's (below).
fn assert_littles_law_within(doc: &Value, floor: f64, qd: u32) {
    let r = &doc["results"][0];
    let t = &r["totals"];
    let workers = r["workers"].as_array().unwrap().len();
    let in_flight = num(t, "iops") * num(t, "avg_response_ms") / 1000.0;
    // The upper bound's 1e-9: the document's decimal digits of IOPS and the mean.
    let hi = (qd * workers as u32) as f64 * (1.0 + 1e-9);
    assert!(
        floor <= in_flight && in_flight <= hi,
        "{workers} x qd {qd}: IOPS x mean response {in_flight}, not in [{floor}, {hi}]"
    );
}

/// Little's law ([`assert_littles_law_within`]) where the engine times the I/Os it issues
/// together from one clock reading, taken as it sees the completions that freed their slots
/// (the network engines): each worker has qd in flight from its first issue to its last, so
/// the sum of response times is at least the sum over workers of qd x (last issue - first
/// issue). An issue is a completion less its response time: the per-I/O logs in `logs`
/// (`--log-dir`, fio's format) give each completion to the millisecond below, so the first
/// issue is before min(at + 1 ms - response), the last after max(at - response).
pub fn assert_littles_law(doc: &Value, logs: &Path, qd: u32) {
    let r = &doc["results"][0];
    let d_ns = num(r, "duration_s") * 1e9;
    let (mut workers, mut kept_ns) = (0, 0.0);
    for entry in std::fs::read_dir(logs).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_str().unwrap().contains("_lat.") {
            continue;
        }
        // Lines: completion (ms from the start, rounded down), response (ns), direction, size, offset.
        let (mut first, mut last) = (f64::MAX, f64::MIN);
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let mut f = line.split(", ").map(|v| v.parse::<f64>().unwrap());
            let (at_ns, response_ns) = (f.next().unwrap() * 1e6, f.next().unwrap());
            first = first.min(at_ns + 1e6 - response_ns);
            last = last.max(at_ns - response_ns);
        }
        workers += 1;
        kept_ns += qd as f64 * (last - first).max(0.0);
    }
    assert_eq!(workers, r["workers"].as_array().unwrap().len(), "a log per worker in {}", logs.display());
    assert_littles_law_within(doc, kept_ns / d_ns, qd);
}

/// Milliseconds the kernel counted block device `name`'s reads and writes in flight, summed
/// over them (/sys/block/NAME/stat: read ticks + write ticks).
pub fn kernel_busy_ms(name: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = s.split_whitespace().map(|v| v.parse().unwrap()).collect();
    f[3] + f[7]
}

/// Little's law ([`assert_littles_law_within`]) on block device `name`, whose
/// [`kernel_busy_ms`] was `busy_before` when the run began, where each I/O is timed from just
/// before the system call that submits it to once the worker sees it complete: every I/O's
/// time in the kernel's block layer lies within its response time, so the sum of response
/// times is at least the kernel's sum (each of its two counters is a sum of nanoseconds shown
/// in whole milliseconds, so their difference overstates by less than 1 ms each).
pub fn assert_littles_law_over_kernel(doc: &Value, name: &str, busy_before: u64, qd: u32) {
    let busy_ms = (kernel_busy_ms(name) - busy_before).saturating_sub(2);
    let floor = busy_ms as f64 / 1000.0 / num(&doc["results"][0], "duration_s");
    assert!(floor > 0.0, "the kernel counted no time in flight on {name}");
    assert_littles_law_within(doc, floor, qd);
}

/// BLAKE2b of a file (via b2sum, 3.6x faster than sha256sum here) for byte-identity checks.
pub fn digest(path: &Path) -> String {
    let out = Command::new("b2sum").arg(path).output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_string()
}

/// An nbdkit server (tests/it/network.rs) on a Unix socket in a scratch directory, killed on
/// drop.
pub struct Nbdkit {
    child: Child,
    dir: PathBuf,
}

impl Nbdkit {
    /// Starts `nbdkit ARGS` (plugin, filters and their parameters) with the stats filter.
    pub fn start(args: &[&str]) -> Nbdkit {
        let dir = scratch("nbdkit");
        let (sock, pid, stats) = (dir.join("s.sock"), dir.join("pid"), dir.join("stats"));
        let child = in_own_session(&mut Command::new("nbdkit"))
            .args(["-f", "--exit-with-parent", "-U"])
            .arg(&sock)
            .arg("-P")
            .arg(&pid)
            .arg("--filter=stats")
            .args(args)
            .arg(format!("statsfile={}", stats.display()))
            .stdout(Stdio::null())
            .spawn()
            .expect("nbdkit (Debian: nbdkit) is installed");
        let started = Instant::now();
        while !pid.exists() {
            assert!(started.elapsed() < Duration::from_secs(20), "nbdkit did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nbdkit { child, dir }
    }

    /// The server's process id (to stop or kill it mid-run).
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Its export, as iogauge names a target.
    pub fn url(&self) -> String {
        format!("nbd+unix:///?socket={}", self.dir.join("s.sock").display())
    }

    /// Stops the server and returns what its stats filter counted: (ops, bytes as printed)
    /// of `what` ("read", "write", "trim", "flush").
    pub fn stop(mut self) -> impl Fn(&str) -> (u64, f64) {
        // SAFETY: kill with a pid we own; SIGTERM makes nbdkit write its stats and exit.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap();
        let text = std::fs::read_to_string(self.dir.join("stats")).unwrap_or_default();
        move |what: &str| {
            // "read: 94738 ops, 0.615453 s, 370.07 MiB, ...": the count, and the bytes as
            // printed (to 3 significant places in their unit).
            let Some(line) = text.lines().find(|l| l.starts_with(&format!("{what}:"))) else { return (0, 0.0) };
            let f: Vec<&str> = line.split_whitespace().collect();
            let unit = match f[6].trim_end_matches(',') {
                "bytes" => 1.0,
                "KiB" => 1024.0,
                "MiB" => 1048576.0,
                "GiB" => 1073741824.0,
                u => panic!("unit {u}"),
            };
            (f[1].parse().unwrap(), f[5].parse::<f64>().unwrap() * unit)
        }
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// tests/faultfs.py mounted on a scratch directory: one 64 MiB file, `disk`.
pub struct FaultFs {
    /// Where it is mounted.
    pub mount: PathBuf,
    /// The filesystem's server (kill it and the target is gone).
    pub child: Child,
}

impl FaultFs {
    /// Mounts it with faultfs.py's `args` (`--eio START-END`, `--hang START-END`).
    pub fn new(args: &[&str]) -> FaultFs {
        let mount = scratch("faultfs");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faultfs.py");
        // Debian's Python, which has python3-fusepy.
        let mut child = in_own_session(&mut Command::new("/usr/bin/python3"))
            .arg(script)
            .arg(&mount)
            .arg("64")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tests/faultfs.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "faultfs did not mount");
        FaultFs { mount, child }
    }

    /// The path of its file.
    pub fn disk(&self) -> String {
        self.mount.join("disk").to_str().unwrap().to_string()
    }
}

impl Drop for FaultFs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}

/// The offsets of a per-I/O latency log in `dir` (`*_clat.1.log`: fio's with `log_offset=1`,
/// or iogauge's), in log order.
pub fn logged_offsets(dir: &Path) -> Vec<u64> {
    let log = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_clat.1.log"))
        .unwrap_or_else(|| panic!("no _clat.1.log in {}", dir.display()));
    let text = std::fs::read_to_string(log).unwrap();
    text.lines().map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap()).collect()
}

/// CRC-32C (Castagnoli), bit by bit: the checksum of iogauge's block headers, written here
/// apart from iogauge's.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
        }
    }
    !crc
}

/// Asserts that `data`, written by one sequential pass of 4 KiB `--verify` writes from its
/// start, holds iogauge's stamp in every block: its own offset, the worker's write number
/// (block k is write k + 1) and a CRC-32C of itself that this function computes on its own.
pub fn assert_stamped_in_order(data: &[u8]) {
    let le = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap());
    for (k, block) in data.chunks(4096).enumerate() {
        assert_eq!(&block[..8], b"iogauge\x01", "block {k} has no header");
        assert_eq!(le(&block[8..16]), k as u64 * 4096, "block {k}'s offset");
        assert_eq!(le(&block[24..32]), k as u64 + 1, "block {k}'s write number");
        let stored = u32::from_le_bytes(block[44..48].try_into().unwrap());
        let whole: Vec<u8> = block[..44].iter().chain(&block[48..]).copied().collect();
        assert_eq!(crc32c(&whole), stored, "block {k}'s checksum");
    }
}

/// Headless chromium, its console on stderr.
pub fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    in_own_session(&mut Command::new("chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs (scripts/test installs it)")
}

/// How many CPUs the host has online (sysfs's list, `0-3,8`), whatever this process may use.
pub fn online_cpus() -> usize {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    list.trim()
        .split(',')
        .map(|r| r.split_once('-').map_or(1, |(a, b)| b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1))
        .sum()
}

/// Where a cgroup hierarchy of type `fs` (`cgroup` for v1, `cgroup2`) is mounted, the first
/// whose super options include `option` where one is named (`cpu`: the CPU controller's).
pub fn cgroup_mount(fs: &str, option: Option<&str>) -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines().find_map(|l| {
        let (before, after) = l.split_once(" - ")?;
        let f: Vec<&str> = after.split(' ').collect();
        let opts_match = option.is_none_or(|o| f.get(2).is_some_and(|s| s.split(',').any(|x| x == o)));
        (f[0] == fs && opts_match).then(|| PathBuf::from(before.split(' ').nth(4).unwrap()))
    })
}

/// Threads of this process that keep a CPU each busy until dropped, a panic included. Threads,
/// not processes: `sh -c 'while :; do :; done'` children outlived a killed test process and
/// burned two CPUs for 45 minutes of the next runs.
pub struct Burners(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl Burners {
    pub fn start(n: usize) -> Burners {
        let stop = Arc::new(AtomicBool::new(false));
        let spin = |stop: Arc<AtomicBool>| move || while !stop.load(Relaxed) {};
        Burners(stop.clone(), (0..n).map(|_| std::thread::spawn(spin(stop.clone()))).collect())
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        self.0.store(true, Relaxed);
        self.1.drain(..).for_each(|t| t.join().unwrap());
    }
}
