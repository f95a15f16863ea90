//! Where workers run (issue 23): `cpus` pins a worker's thread, and the result says the CPUs
//! and NUMA nodes of each worker and the node of each target. Checked against the kernel's
//! own record of where each thread last ran (/proc/PID/task/TID/stat, field 39) and sysfs.

use crate::common;

use std::time::Duration;

use common::*;

/// The CPU each of `pid`'s worker threads last ran on, by the kernel's account.
fn worker_cpus(pid: u32) -> Vec<u32> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
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
