//! Where workers run (issue 23): `cpus` pins a worker's thread, and the result says the CPUs
//! and NUMA nodes of each worker and the node of each target. Checked against the kernel's
//! own record of where each thread last ran (/proc/PID/task/TID/stat, field 39) and sysfs.

use crate::common;

use std::time::Duration;

use common::*;

/// The CPU each of `pid`'s worker threads last ran on, by the kernel's account.
fn worker_cpus(pid: u32) -> Vec<u32> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{}/task", test_process(pid))).unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with("iogauge-w") {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap();
        // Fields after the command name's closing parenthesis start at field 3.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        cpus.push(rest.split(' ').nth(39 - 3).unwrap().parse().unwrap());
    }
    cpus
}

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
        ("3-1", "--cpus 3-1: '3-1': a range goes from low to high"),
        ("x", "--cpus x: 'x' is not a CPU number or range"),
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

/// With `IOGAUGE_SESSION=own` a test runs in a session of its own, as fio's jobs do (issue
/// 45): where the kernel shares CPU time between sessions first (autogroups), the workers then
/// compete as a group of their own, not as three tasks among the caller's CPU burners. The
/// process the caller started forwards its signals (Ctrl-C still stops and keeps the results,
/// exit 130) and takes the test with it when killed. By default the test stays in the caller's
/// session, one process. The document says which.
#[test]
fn a_test_runs_in_a_session_of_its_own_when_asked_and_answers_for_it() {
    let autogroups = std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled").is_ok_and(|s| s.trim() == "1");
    let run = ["run", "--target", "null", "--ramp", "0s", "--time", "20s", "--json", "out.json", "--no-history"];
    let started = |dir: &std::path::Path, own: bool| {
        let mut c = command_in(dir, &run);
        if own {
            c.env("IOGAUGE_SESSION", "own");
        }
        let child = c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
        // Running once its worker thread is there.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while worker_cpus(child.id()).is_empty() {
            assert!(std::time::Instant::now() < deadline, "no worker thread seen");
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    };
    let ours = session_of(std::process::id());
    let stopped = |mut child: std::process::Child, dir: &std::path::Path| {
        // SAFETY: kill(2) on a process this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        assert_eq!(child.wait().unwrap().code(), Some(130));
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
        assert_eq!(doc["interrupted"], true);
        doc
    };

    // By default: one process, in the caller's session.
    let dir = scratch("session-shared");
    let child = started(&dir, false);
    assert_eq!(test_process(child.id()), child.id());
    assert_eq!(session_of(child.id()), ours);
    let doc = stopped(child, &dir);
    assert_eq!(doc["host"]["autogroup"], if autogroups { "shared" } else { "off" });

    // Asked: Ctrl-C to the process the caller holds stops the test in the other session.
    let dir = scratch("session");
    let child = started(&dir, true);
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
        let mut child = started(&scratch("session-kill"), true);
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
