//! Where workers run (issue 23): `cpus` pins a worker's thread, and the result says the CPUs
//! and NUMA nodes of each worker and the node of each target. Checked against the kernel's
//! own record of where each thread last ran (/proc/PID/task/TID/stat, field 39) and sysfs.

use crate::common;

use std::time::Duration;

use common::*;

/// The NUMA node of `cpu`, as sysfs links it.
fn node_of(cpu: u32) -> u32 {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .unwrap()
        .flatten()
        .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .unwrap()
}

#[test]
fn pinned_workers_run_only_on_their_cpus() {
    for cpu in [0u32, 1] {
        let dir = scratch("pin");
        let mut child = command_in(
            &dir,
            &[
                "run",
                "--target",
                "null",
                "--workers",
                "2",
                "--cpus",
                &cpu.to_string(),
                "--time",
                "2s",
                "--ramp",
                "0s",
                "--json",
                "out.json",
                "--no-history",
            ],
        )
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
        // Sampled through the run: a thread that may use only `cpu` is never seen elsewhere.
        let mut seen = Vec::new();
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(150));
            seen.extend(worker_cpus(child.id()));
        }
        assert!(child.wait().unwrap().success());
        assert!(!seen.is_empty(), "the worker threads were seen running");
        assert!(seen.iter().all(|&c| c == cpu), "pinned to CPU {cpu}, seen on {seen:?}");
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
        for w in doc["results"][0]["workers"].as_array().unwrap() {
            assert_eq!(w["cpus"], serde_json::json!([cpu]), "{w}");
            assert_eq!(w["numa_nodes"], serde_json::json!([node_of(cpu)]), "{w}");
        }
        assert_eq!(doc["config"]["worker"][0]["cpus"], serde_json::json!([cpu]));
    }
}

/// fio's `cpus_allowed_policy=split` (`--cpus-policy split`, `cpus_policy = "split"` in a job
/// file): each worker may run on one CPU of the list, in turn, by the kernel's own record of
/// each thread's affinity (`Cpus_allowed_list`), and the document says each worker's CPU. A
/// split with no CPUs to split is refused in one line.
#[test]
fn split_workers_each_keep_one_cpu_of_the_list() {
    let args = ["run", "--target", "null", "--workers", "3", "--cpus", "1,0", "--cpus-policy", "split"];
    // Each worker pins itself as it starts: looked at once it records I/Os.
    let dir = scratch("split");
    let child = spawn_recording(&dir, &[&args[..], &["--time", "2s", "--json", "-", "--no-history"]].concat());
    let mut allowed: Vec<(String, String)> = std::fs::read_dir(format!("/proc/{}/task", test_process(child.id())))
        .unwrap()
        .filter_map(|t| {
            let dir = t.unwrap().path();
            let comm = std::fs::read_to_string(dir.join("comm")).ok().filter(|c| c.starts_with("iogauge-w"))?;
            let status = std::fs::read_to_string(dir.join("status")).ok()?;
            let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            Some((comm.trim().to_string(), cpus.trim().to_string()))
        })
        .collect();
    allowed.sort();
    let out = output_of(child);
    assert!(out.status.success());
    // The list as given, sorted (as a job's `cpus` are): 0, 1, then round again.
    let want = [("iogauge-w0", "0"), ("iogauge-w1", "1"), ("iogauge-w2", "0")].map(|(w, c)| (w.into(), c.into()));
    assert_eq!(allowed, want);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cpus: Vec<_> = doc["results"][0]["workers"].as_array().unwrap().iter().map(|w| w["cpus"].clone()).collect();
    assert_eq!(cpus, [serde_json::json!([0]), serde_json::json!([1]), serde_json::json!([0])]);

    let dir = scratch("split-none");
    std::fs::write(dir.join("j.toml"), "[[worker]]\ncount = 2\ncpus_policy = \"split\"\ntargets = [\"t.tst\"]\n")
        .unwrap();
    for args in [&["run", "j.toml"][..], &["run", "--target", "t.tst", "--workers", "2", "--cpus-policy", "split"]] {
        let out = iogauge_in(&dir, &[args, &["--ios", "10", "--no-history"]].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // In the words of what was given: the job file's keys, or the flags.
        let said = [
            "a split `cpus_policy` needs the CPUs to split: give `cpus` too",
            "--cpus-policy: a split --cpus-policy needs the CPUs to split: give --cpus too",
        ];
        assert!(said.iter().any(|s| err.contains(s)) && err.lines().count() == 1, "{err}");
        assert!(!dir.join("t.tst").exists(), "nothing written");
    }
}

/// Workers given no CPUs that outnumber those the process may use (held to two here, as a
/// 2-CPU host's) each keep one of them in turn, as a split does, by the kernel's record of each
/// worker thread's affinity, and the document says each one's CPU; as many workers as CPUs
/// stay free on both.
#[test]
fn workers_that_outnumber_the_processes_cpus_keep_one_each_in_turn() {
    use std::os::unix::process::CommandExt;
    let own: Vec<u32> = (0..libc::CPU_SETSIZE as u32).filter(|&c| allowed(std::process::id(), c)).collect();
    let cpus: Vec<u32> = own.iter().copied().take(2).collect();
    for workers in [cpus.len() + 1, cpus.len()] {
        let dir = scratch("outnumbered");
        let n = workers.to_string();
        let args = ["run", "--target", "null", "--workers", &n, "--time", "2s", "--json", "-", "--no-history"];
        let mut c = command_in(&dir, &args);
        c.args(LINES).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        let set = cpus.clone();
        // SAFETY: sched_setaffinity(2) is async-signal-safe and changes only the child.
        unsafe {
            c.pre_exec(move || {
                let mut mask: libc::cpu_set_t = std::mem::zeroed();
                set.iter().for_each(|&c| libc::CPU_SET(c as usize, &mut mask));
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mask);
                Ok(())
            })
        };
        let mut child = c.spawn().unwrap();
        wait_for_line(&dir, &mut child, recording);
        let test = test_process(child.id());
        let mut seen: Vec<(String, Vec<u32>)> = std::fs::read_dir(format!("/proc/{test}/task"))
            .unwrap()
            .filter_map(|t| {
                let tid: u32 = t.ok()?.file_name().to_str()?.parse().ok()?;
                let comm = std::fs::read_to_string(format!("/proc/{test}/task/{tid}/comm")).ok()?;
                let comm = comm.trim().strip_prefix("iogauge-w")?.to_string();
                Some((comm, cpus.iter().copied().filter(|&c| allowed(tid, c)).collect()))
            })
            .collect();
        seen.sort();
        let out = output_of(child);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let want: Vec<Vec<u32>> = match workers > cpus.len() {
            true => (0..workers).map(|i| vec![cpus[i % cpus.len()]]).collect(),
            false => vec![cpus.clone(); workers],
        };
        let got: Vec<Vec<u32>> = seen.iter().map(|(_, c)| c.clone()).collect();
        assert_eq!(got, want, "{workers} workers on CPUs {cpus:?}: {seen:?}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let said: Vec<serde_json::Value> =
            doc["results"][0]["workers"].as_array().unwrap().iter().map(|w| w["cpus"].clone()).collect();
        assert_eq!(said, want.iter().map(|c| serde_json::json!(c)).collect::<Vec<_>>(), "{workers} workers");
    }
}

/// Whether thread `tid` may run on `cpu`, by the kernel's record (`Cpus_allowed_list`).
fn allowed(tid: u32, cpu: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap().trim();
    list.split(',').any(|r| match r.split_once('-') {
        Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).contains(&cpu),
        None => r.parse::<u32>().unwrap() == cpu,
    })
}

#[test]
fn unpinned_workers_report_the_process_cpus_and_targets_their_node() {
    let lo = LoopDev::new(16 << 20);
    let dir = scratch("numa");
    let job = dir.join("j.toml");
    std::fs::write(
        &job,
        format!(
            "[test]\nrun = [\"random-read-4k\"]\nios = 2000\n[[worker]]\ntargets = [\"{}\"]\n\
             [[worker]]\ntargets = [\"{}\"]\ncpus = [1, 0]\n",
            lo.dev,
            dir.join("f.tst").display()
        ),
    )
    .unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--file-size", "8M", "--no-history"]);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let n: u32 = online.trim().rsplit(['-', ',']).next().unwrap().parse::<u32>().unwrap() + 1;
    let workers = doc["results"][0]["workers"].as_array().unwrap();
    let all: Vec<u32> = (0..n).collect();
    assert_eq!(workers[0]["cpus"], serde_json::json!(all), "unpinned: every CPU of the process");
    assert_eq!(workers[1]["cpus"], serde_json::json!([0, 1]), "a job's list, sorted");
    // The nodes the machine has: a loop device has no bus of its own, so its node is known only
    // on a machine of one node (this one's, said by sysfs).
    let nodes = std::fs::read_to_string("/sys/devices/system/node/online").unwrap();
    for t in doc["target_info"].as_array().unwrap() {
        if nodes.trim() == "0" {
            assert_eq!(t["numa_node"], 0, "{t}");
        }
    }
}

#[test]
fn cpus_the_process_cannot_use_are_refused() {
    let dir = scratch("badcpu");
    for (list, want) in [
        ("4096", "CPU 4096 of its cpus is not one this process may use"),
        ("3-1", "'3-1' for '--cpus <LIST>': '3-1': a range goes from low to high"),
        ("x", "'x' for '--cpus <LIST>': 'x' is not a CPU number or range"),
    ] {
        let out = iogauge_in(&dir, &["run", "--target", "t.tst", "--cpus", list, "--ios", "10", "--no-history"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{err}");
        assert!(!dir.join("t.tst").exists(), "nothing written");
    }
}

/// The session id of process `pid` (/proc/PID/stat, field 6).
fn session_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 2..].split(' ').nth(6 - 3).unwrap().parse().unwrap()
}

/// Whether the kernel groups CPU time by session at all.
fn autogroups_on() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() == "1")
}

/// Starts a 20 s null-target run in `dir` (`place` adjusts the command), returned once its
/// worker thread is there.
fn long_run(dir: &std::path::Path, place: impl FnOnce(&mut std::process::Command)) -> std::process::Child {
    let mut c = command_in(
        dir,
        &["run", "--target", "null", "--ramp", "0s", "--time", "20s", "--json", "out.json", "--no-history"],
    );
    place(&mut c);
    let mut child = c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_for_workers(&mut child);
    child
}

/// Stops a `long_run` with Ctrl-C's signal: it exits 130 and keeps its results, returned.
fn stopped(mut child: std::process::Child, dir: &std::path::Path) -> serde_json::Value {
    // SAFETY: kill(2) on a process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    doc
}

/// A test runs in a session of its own, as fio's jobs do (issue 45): where the kernel shares
/// CPU time between sessions first (autogroups), the workers then compete as a group of their
/// own, not as three tasks among the caller's CPU burners. The process the caller started
/// forwards its signals (Ctrl-C still stops and keeps the results, exit 130) and takes the
/// test with it when killed. `IOGAUGE_SESSION=shared` keeps the test in the caller's session,
/// one process. The document says which.
#[test]
fn a_test_runs_in_a_session_of_its_own_and_answers_for_it() {
    let autogroups = autogroups_on();
    let started = |dir: &std::path::Path, shared: bool| {
        long_run(dir, |c| {
            if shared {
                c.env("IOGAUGE_SESSION", "shared");
            }
        })
    };
    let ours = session_of(std::process::id());

    // Asked to stay: one process, in the caller's session.
    let dir = scratch("session-shared");
    let child = started(&dir, true);
    assert_eq!(test_process(child.id()), child.id());
    assert_eq!(session_of(child.id()), ours);
    let doc = stopped(child, &dir);
    assert_eq!(doc["host"]["autogroup"], if autogroups { "shared" } else { "off" });

    // By default: Ctrl-C to the process the caller holds stops the test in the other session.
    let dir = scratch("session");
    let child = started(&dir, false);
    let test = test_process(child.id());
    assert_eq!(test != child.id(), autogroups, "a child of its own only where sessions group CPU time");
    if autogroups {
        assert_eq!(session_of(test), test, "the test leads a session of its own");
        assert_eq!(session_of(child.id()), ours, "the process the caller started stays in the caller's");
    }
    let doc = stopped(child, &dir);
    assert_eq!(doc["host"]["autogroup"], if autogroups { "own" } else { "off" });

    // A value it does not know: one line, exit 2, nothing run.
    let out = command_in(&scratch("session-bad"), &["run", "--target", "null", "--ios", "10", "--no-history"])
        .env("IOGAUGE_SESSION", "mine")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("iogauge: IOGAUGE_SESSION=mine: give own") && err.lines().count() == 1, "{err}");
    assert!(out.stdout.is_empty());

    // Killed, the caller's process takes the test with it.
    if autogroups {
        let mut child = started(&scratch("session-kill"), false);
        let test = test_process(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(format!("/proc/{test}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
            assert!(std::time::Instant::now() < deadline, "the test outlived the process that started it");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A CPU cgroup of the test's own, on cgroup v1's cpu hierarchy or v2's (its root made to
/// enable the CPU controller), removed on drop.
struct CpuCgroup(std::path::PathBuf);

impl CpuCgroup {
    fn new(tag: &str) -> CpuCgroup {
        let root = match cgroup_mount("cgroup", Some("cpu")) {
            Some(v1) => v1,
            None => {
                let v2 = cgroup_mount("cgroup2", None).expect("a cgroup hierarchy with the CPU controller");
                let enabled = std::fs::read_to_string(v2.join("cgroup.subtree_control")).unwrap();
                if !enabled.split_whitespace().any(|c| c == "cpu") {
                    std::fs::write(v2.join("cgroup.subtree_control"), "+cpu").unwrap();
                }
                v2
            }
        };
        let dir = root.join(format!("iogauge-test-{}-{tag}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        CpuCgroup(dir)
    }

    /// Starts `c` in this cgroup: the child moves itself in before it runs iogauge.
    fn place(&self, c: &mut std::process::Command) {
        use std::os::unix::{io::AsRawFd, process::CommandExt};
        let procs = std::fs::OpenOptions::new().write(true).open(self.0.join("cgroup.procs")).unwrap();
        // SAFETY: write(2) is async-signal-safe; "0" names the writing process; the file
        // stays open in the closure, which Command keeps until it spawns.
        unsafe {
            c.pre_exec(move || match libc::write(procs.as_raw_fd(), b"0".as_ptr().cast(), 1) {
                1 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            });
        }
    }
}

impl Drop for CpuCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Where a test sits in a CPU cgroup other than the root (systemd's slices and scopes once it
/// enables the CPU controller, a container), the kernel shares CPU time by cgroup, not session
/// (sched(7)): fio's session of its own gains it nothing there, and iogauge says so
/// (`host.autogroup` = `cgroup`) and starts no child, by default or when asked.
#[test]
fn in_a_cpu_cgroup_the_session_changes_nothing_and_the_document_says_so() {
    let autogroups = autogroups_on();
    let group = CpuCgroup::new("session");
    for session in ["shared", "own", ""] {
        let dir = scratch("cgroup");
        let child = long_run(&dir, |c| {
            c.env("IOGAUGE_SESSION", session);
            group.place(c)
        });
        // Every thread in the cgroup, or in a group of the test's below it (cpu_groups.rs).
        let name = format!("/{}", group.0.file_name().unwrap().to_str().unwrap());
        let cgroup_of = |task: std::path::PathBuf| {
            let text = std::fs::read_to_string(task.join("cgroup")).unwrap_or_default();
            let line = text.lines().find(|l| l.split(':').nth(1).is_some_and(|c| c.split(',').any(|c| c == "cpu")));
            line.or_else(|| text.lines().find(|l| l.starts_with("0::")))
                .map(|l| l.splitn(3, ':').nth(2).unwrap().to_string())
        };
        let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
        let groups: Vec<String> = tasks.flatten().filter_map(|t| cgroup_of(t.path())).collect();
        assert!(
            !groups.is_empty() && groups.iter().all(|g| g == &name || g.starts_with(&format!("{name}/"))),
            "{groups:?}"
        );
        assert_eq!(test_process(child.id()), child.id(), "no child: a session would change nothing");
        let doc = stopped(child, &dir);
        assert_eq!(doc["host"]["autogroup"], if autogroups { "cgroup" } else { "off" }, "IOGAUGE_SESSION={session}");
    }
}

/// The kernel's CPU latency limit now (/dev/cpu_dma_latency: the least any process holds, µs).
/// The nice value of thread `task` (a /proc/PID/task/TID path): its stat's field 19.
fn nice_of(task: &std::path::Path) -> i32 {
    let stat = std::fs::read_to_string(task.join("stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 2..].split(' ').nth(19 - 3).unwrap().parse().unwrap()
}

/// `nice` (fio's): the test's threads run at it, each worker's included, and where the test
/// leads a session of its own so does that session's group, by which the kernel shares CPU
/// time between sessions before a session's threads; the caller's session is left as it was
/// (`IOGAUGE_SESSION=shared`: the threads alone). Out of range, or below 0 for a user who may
/// not: refused in one line, before the test file is made.
#[test]
fn nice_is_the_tests_threads_and_its_sessions_not_the_callers() {
    let dir = scratch("nice");
    let callers = std::fs::read_to_string("/proc/self/autogroup").unwrap_or_default();
    for shared in [false, true] {
        let child = long_run(&dir, |c| {
            c.args(["--nice", "7", "--workers", "2"]);
            if shared {
                c.env("IOGAUGE_SESSION", "shared");
            }
        });
        let test = test_process(child.id());
        let workers = || -> Vec<_> {
            let tasks = std::fs::read_dir(format!("/proc/{test}/task")).unwrap().flatten().map(|t| t.path());
            tasks
                .filter(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.starts_with("iogauge-w")))
                .collect()
        };
        // The first worker is started when the second may not be yet.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while workers().len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let workers = workers();
        assert_eq!(workers.len(), 2, "shared {shared}");
        for w in &workers {
            assert_eq!(nice_of(w), 7, "shared {shared}: {}", w.display());
        }
        if autogroups_on() {
            let group = std::fs::read_to_string(format!("/proc/{test}/autogroup")).unwrap();
            assert_eq!(group.trim_end().ends_with(" nice 7"), !shared, "shared {shared}: {group}");
        }
        assert_eq!(
            std::fs::read_to_string("/proc/self/autogroup").unwrap_or_default(),
            callers,
            "the caller's session"
        );
        let doc = stopped(child, &dir);
        assert_eq!(doc["config"]["test"]["nice"], 7, "the document records it");
    }

    let file = dir.join("never.tst");
    let run = |nice: &str, user: &[&str]| {
        let mut c = std::process::Command::new(if user.is_empty() { bin() } else { "setpriv" });
        c.args(user).args(if user.is_empty() { vec![] } else { vec![bin()] });
        c.args(["run", "--nice", nice, "--target", file.to_str().unwrap(), "--file-size", "1M", "--time", "1s"]);
        let out = c.arg("--no-history").output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    for (nice, user, says) in [("20", &[][..], "give -20"), ("-21", &[], "give -20"), ("-5", &nobody, "needs root")] {
        let (code, err) = run(nice, user);
        assert_eq!(code, Some(2), "nice {nice}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        // The flag as typed where the value is refused as read; the key where setting it fails.
        let named = err.contains(&format!("--nice {nice}: ")) || err.contains(&format!("nice = {nice}: "));
        assert!(named && err.contains(says), "{err}");
        assert!(!file.exists(), "a refused test created its file");
    }
}

fn cpu_latency_limit_us() -> i32 {
    let mut b = [0u8; 4];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/cpu_dma_latency").unwrap(), &mut b).unwrap();
    i32::from_ne_bytes(b)
}

/// `cpu_latency` holds the host's CPUs awake while the test runs and not a moment after (the
/// kernel's own aggregate of the requests says so), and no CPU sleeps while it holds (the
/// kernel's cpuidle counts, `totals.cpu.sleeps_per_sec`: 0 exactly, where a loop device at 1
/// outstanding sleeps them 1-3 times per I/O unheld); where the kernel refuses the hold, the
/// test is refused in one line before anything is created. Nothing else in the suite holds it.
#[test]
fn cpus_are_held_awake_while_the_test_runs_and_only_then() {
    let free = cpu_latency_limit_us();
    assert!(free > 0, "something already holds the CPUs awake ({free} µs)");
    let dir = scratch("cpu-latency");
    let l = LoopDev::new(64 << 20);
    let args = ["run", "--target", &l.dev, "--qd", "1", "--cpu-latency", "0us", "--ramp", "0s", "--time", "2s"];
    let child = spawn_recording(&dir, &[&args[..], &["--json", "-", "--no-history"]].concat());
    assert_eq!(cpu_latency_limit_us(), 0, "while the test records, the CPUs are held to 0 µs");
    let out = output_of(child);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(cpu_latency_limit_us(), free, "the hold ended with the test");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["config"]["test"]["cpu_latency"], "0s", "the document records the hold");
    let idle = doc["host"]["cpu_idle"].as_str().unwrap();
    assert!(idle.ends_with(", held to wake within 0 µs"), "host.cpu_idle: {idle}");
    assert_eq!(num(&doc["results"][0]["totals"]["cpu"], "sleeps_per_sec"), 0.0, "a CPU slept while held");
    assert!(!doc["warnings"].to_string().contains("went to sleep"), "{}", doc["warnings"]);
    let unheld = json(&["run", "--target", "null", "--ios", "1000", "--no-history"]);
    let idle = unheld["host"]["cpu_idle"].as_str().unwrap();
    assert!(!idle.is_empty() && !idle.contains("held"), "host.cpu_idle without a hold: {idle}");

    // Not root: the kernel's file is root's alone. The test file is not created.
    let file = dir.join("never.tst");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin(), "run", "--cpu-latency", "0us"])
        .args(["--target", file.to_str().unwrap(), "--file-size", "1M", "--time", "1s", "--no-history"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("cpu_latency") && err.contains("/dev/cpu_dma_latency") && err.contains("write access"),
        "{err}"
    );
    assert!(!file.exists(), "a refused test created its file");
}
