//! The null target as ground truth: exact counts, the spec's mix, totals that add up, and the
//! documents (JSON against its schema, Iometer's CSV).

use crate::common;

use common::*;
use serde_json::Value;

#[test]
fn counts_are_exact_and_totals_are_sums() {
    // 1,000,003 I/Os over 3 workers x 2 null targets: shares of 333,335 + 333,334 + 333,334.
    let doc =
        json(&["run", "--target", "null", "--workers", "3", "--qd", "7", "--ios", "1000003", "--spec", "oltp-8k"]);
    let r = &doc["results"][0];
    assert_eq!(num(r, "totals/ios"), 1_000_003.0);
    let workers = r["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 3);
    let per_worker: Vec<f64> = workers.iter().map(|w| num(w, "ios")).collect();
    assert_eq!(per_worker, [333_335.0, 333_334.0, 333_334.0]);
    for key in ["ios", "read_ios", "write_ios", "bytes", "read_bytes", "write_bytes"] {
        let total = num(r, &format!("totals/{key}"));
        let by_workers: f64 = workers.iter().map(|w| num(w, key)).sum();
        let by_targets: f64 = r["targets"].as_array().unwrap().iter().map(|t| num(t, key)).sum();
        assert_eq!(total, by_workers, "{key}");
        assert_eq!(total, by_targets, "{key}");
    }
    assert_eq!(num(r, "totals/bytes"), 1_000_003.0 * 8192.0);
    assert_eq!(num(r, "totals/errors"), 0.0);
    assert_eq!(num(r, "totals/outstanding"), 21.0);
    // The histograms hold every I/O.
    let hist_total: f64 = ["read", "write"]
        .iter()
        .flat_map(|d| r["totals"]["raw"][d]["histogram"]["buckets"].as_array().unwrap())
        .map(|b| b[1].as_f64().unwrap())
        .sum();
    assert_eq!(hist_total, 1_000_003.0);
}

#[test]
fn read_share_and_size_mix_follow_the_spec() {
    // file-server: 80 % reads; sizes 512..64K with the seed's shares: mean size 7,833.6 bytes.
    let doc = json(&["run", "--target", "null", "--qd", "32", "--ios", "2000000", "--spec", "file-server"]);
    let t = &doc["results"][0]["totals"];
    let ios = num(t, "ios");
    assert_eq!(ios, 2_000_000.0);
    let read_share = num(t, "read_ios") / ios;
    assert!((read_share - 0.80).abs() < 0.005, "read share {read_share}");
    let expected_mean = 0.10 * 512.0
        + 0.05 * 1024.0
        + 0.05 * 2048.0
        + 0.60 * 4096.0
        + 0.02 * 8192.0
        + 0.04 * 16384.0
        + 0.04 * 32768.0
        + 0.10 * 65536.0;
    let mean = num(t, "bytes") / ios;
    assert!((mean / expected_mean - 1.0).abs() < 0.005, "mean size {mean}, expected {expected_mean}");
}

#[test]
fn timed_run_records_its_window() {
    let doc = json(&["run", "--target", "null", "--qd", "8", "--ramp", "200ms", "--time", "1s", "--interval", "250ms"]);
    let r = &doc["results"][0];
    assert_eq!(num(r, "duration_s"), 1.0);
    assert_eq!(num(r, "ramp_s"), 0.2);
    let iv = r["intervals"].as_array().unwrap();
    // Four of 250 ms, unless the monitor woke late (a longer interval, and then fewer): they
    // tile the window, to its end, whatever the host did.
    assert!((1..=4).contains(&assert_intervals_tile(r)), "{iv:?}");
    // Rates are counts over the window.
    assert!((num(r, "totals/iops") - num(r, "totals/ios")).abs() < 1.0);
    // The samples add up to the totals: none counts the I/Os drained after the window.
    let sum = |rate: &str, scale: f64| iv.iter().map(|i| num(i, rate) * num(i, "duration_s") * scale).sum::<f64>();
    let (ios, bytes) = (num(r, "totals/ios"), num(r, "totals/bytes"));
    assert!((sum("iops", 1.0) - ios).abs() < 1e-6 * ios, "intervals sum to {} I/Os, totals {ios}", sum("iops", 1.0));
    assert!(
        (sum("mbps", 1e6) - bytes).abs() < 1e-6 * bytes,
        "intervals sum to {} bytes, totals {bytes}",
        sum("mbps", 1e6)
    );
    let cpu = &r["totals"]["cpu"];
    assert!(num(cpu, "utilization_pct") > 0.0 && num(cpu, "own_us_per_io") > 0.0);
    assert_eq!(cpu["per_cpu"].as_array().unwrap().len(), std::thread::available_parallelism().unwrap().get());
}

/// An interval holds the I/Os of the time it spans. A monitor that samples late (its thread
/// held here for 700 ms, as a busy host can hold it, or a late MPI meeting) stamps its sample
/// when it read the counters: stamped at the boundary it had missed, a run paced at 2,000 IOPS
/// showed one interval at 2.4 times the rate and the next at none (issue 45).
#[test]
fn a_late_sample_spans_the_time_it_counts() {
    let dir = scratch("late-sample");
    let args =
        ["run", "--target", "null", "--rate-iops", "2000", "--ramp", "0s", "--time", "3s", "--interval", "500ms"];
    let mut child = command_in(&dir, &args)
        .args(["--json", "out.json", "--no-history", "-q"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for_workers(&mut child);
    // The test's main thread samples: the process's first, in the child that leads a session
    // of its own where there is one.
    let monitor = test_process(child.id()) as i32;
    std::thread::sleep(std::time::Duration::from_millis(300));
    hold_thread(monitor, std::time::Duration::from_millis(700));
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    let iv = doc["results"][0]["intervals"].as_array().unwrap();
    // The held sample spans more than an interval: the hold fell across a boundary.
    assert!(iv.iter().any(|i| num(i, "duration_s") > 0.6), "{iv:?}");
    for i in iv {
        // The paced worker went on: each span holds 2,000 I/Os a second of it. A worker held
        // up by a loaded host across a span's end moves 2 I/Os a millisecond into the next:
        // the bound allows 125 ms of that in a span of 0.5 s (stamped at its boundary, the
        // held span had 2.4 times its count, the next none).
        let (n, d) = (num(i, "iops") * num(i, "duration_s"), num(i, "duration_s"));
        assert!((n - 2000.0 * d).abs() <= 20.0 + 0.25 * 2000.0 * d, "{n:.0} I/Os in {d:.3} s: {iv:?}");
    }
}

/// Stops thread `tid` alone for `d`: ptrace stops the one thread it is attached to, not its
/// process.
fn hold_thread(tid: i32, d: std::time::Duration) {
    let null = std::ptr::null_mut::<libc::c_void>();
    // SAFETY: ptrace and waitpid on a thread of a process this test started; it is detached
    // before returning.
    unsafe {
        assert_eq!(libc::ptrace(libc::PTRACE_SEIZE, tid, null, null), 0, "{}", std::io::Error::last_os_error());
        assert_eq!(libc::ptrace(libc::PTRACE_INTERRUPT, tid, null, null), 0);
        let mut status = 0;
        assert_eq!(libc::waitpid(tid, &mut status, libc::__WALL), tid);
    }
    std::thread::sleep(d);
    // SAFETY: as above.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, tid, null, null) };
}

#[test]
fn several_specs_give_one_result_each() {
    let doc = json(&["run", "--target", "null", "--ios", "10000", "--spec", "oltp-4k", "--spec", "web-server"]);
    let specs: Vec<&str> = doc["results"].as_array().unwrap().iter().map(|r| r["spec"].as_str().unwrap()).collect();
    assert_eq!(specs, ["oltp-4k", "web-server"]);
    assert_eq!(num(&doc, "results/1/totals/write_ios"), 0.0);
}

#[test]
fn json_document_validates_against_the_schema() {
    let doc = json(&["run", "--target", "null", "--workers", "2", "--ios", "100000", "--spec", "oltp-8k"]);
    let dir = scratch("schema");
    let path = dir.join("doc.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    validate_result(&path).unwrap();
    // A document missing a required field does not validate: the check can fail.
    let mut broken = doc.clone();
    broken["results"][0]["totals"].as_object_mut().unwrap().remove("iops");
    std::fs::write(&path, serde_json::to_vec(&broken).unwrap()).unwrap();
    assert!(validate_result(&path).is_err());
}

#[test]
fn csv_is_iometers() {
    let dir = scratch("csv");
    let out = iogauge_in(
        &dir,
        &["run", "--target", "null", "--workers", "2", "--ios", "50000", "--iometer-csv", "r.csv", "-q"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "--quiet prints nothing on stdout");
    let text = std::fs::read_to_string(dir.join("r.csv")).unwrap();
    let header = "'Target Type,Target Name,Access Specification Name,# Managers,# Workers,# Disks,IOps,Read IOps,Write IOps,MiBps (Binary),Read MiBps (Binary),Write MiBps (Binary),MBps (Decimal),Read MBps (Decimal),Write MBps (Decimal),Transactions per Second,Connections per Second,Average Response Time,Average Read Response Time,Average Write Response Time,Average Transaction Time,Average Connection Time,Maximum Response Time,Maximum Read Response Time,Maximum Write Response Time,Maximum Transaction Time,Maximum Connection Time,Errors,Read Errors,Write Errors,Bytes Read,Bytes Written,Read I/Os,Write I/Os,Connections,Transactions per Connection,Total Raw Read Response Time,Total Raw Write Response Time,Total Raw Transaction Time,Total Raw Connection Time,Maximum Raw Read Response Time,Maximum Raw Write Response Time,Maximum Raw Transaction Time,Maximum Raw Connection Time,Total Raw Run Time,Starting Sector,Maximum Size,Queue Depth,% CPU Utilization,% User Time,% Privileged Time,% DPC Time,% Interrupt Time,Processor Speed,Interrupts per Second,CPU Effectiveness,Packets/Second,Packet Errors,Segments Retransmitted/Second,0 to 50 uS,50 to 100 uS,100 to 200 uS,200 to 500 uS,0.5 to 1 mS,1 to 2 mS,2 to 5 mS,5 to 10 mS,10 to 15 mS,15 to 20 mS,20 to 30 mS,30 to 50 mS,50 to 100 mS,100 to 200 mS,200 to 500 mS,0.5 to 1 S,1 to 2 s,2 to 4.7 s,4.7 to 5 s,5 to 10 s, >= 10 s";
    let lines: Vec<&str> = text.lines().collect();
    let h = lines.iter().position(|l| *l == header).expect("Iometer's header verbatim");
    for marker in ["'Test Type,Test Description", "'Version", "'Access specifications", "'Results", "'End Test"] {
        assert!(lines.contains(&marker), "{marker}");
    }
    let rows: Vec<Vec<&str>> =
        lines[h + 1..].iter().take_while(|l| !l.starts_with('\'')).map(|l| l.split(',').collect()).collect();
    let kinds: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let mut expect = vec!["ALL", "MANAGER"];
    expect.extend(std::iter::repeat_n("PROCESSOR", cpus));
    expect.extend(["WORKER", "DISK", "WORKER", "DISK"]);
    assert_eq!(kinds, expect);
    for r in &rows {
        // Iometer ends a PROCESSOR row after the network columns (Manager.cpp).
        assert_eq!(r.len(), if r[0] == "PROCESSOR" { 59 } else { 80 });
    }
    // ALL: I/Os read + written = 50,000; latency bins hold them all.
    let all = &rows[0];
    let ios: u64 = all[32].parse::<u64>().unwrap() + all[33].parse::<u64>().unwrap();
    assert_eq!(ios, 50_000);
    let binned: u64 = all[59..80].iter().map(|v| v.parse::<u64>().unwrap()).sum();
    assert_eq!(binned, 50_000);
    assert!(rows[2][1].starts_with("CPU 0") && rows[2][6].is_empty() && !rows[2][48].is_empty());
}

#[test]
fn stdout_is_only_the_document_with_json_dash() {
    let out = ok(&["run", "--target", "null", "--ios", "1000", "--json", "-"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "iogauge.result/2");
}

#[test]
fn burstiness_paces_the_worker() {
    // Iometer's burstiness: 4 I/Os, then a 20 ms delay: 200 IOPS whatever the depth.
    let dir = scratch("burst");
    let job = dir.join("burst.toml");
    std::fs::write(
        &job,
        r#"
[test]
ramp = "100ms"
time = "2s"
run = ["paced"]
[[spec]]
name = "paced"
lines = [{ size = "4K", share = 100, read = 100, random = 100, delay_ms = 20, burst = 4 }]
[[worker]]
outstanding = 16
targets = ["null"]
"#,
    )
    .unwrap();
    let doc = json(&["run", job.to_str().unwrap()]);
    let r = &doc["results"][0];
    let (ios, window) = (num(r, "totals/ios"), num(r, "duration_s"));
    // Bursts start 20 ms apart, each counted from when it was due (worker/drive.rs), and the
    // null target completes a burst as it is issued. A burst woken late keeps the schedule
    // unless it is a whole delay late: the schedule then starts again from it, losing that
    // lateness. The worker is late only when it does not run: waiting for a CPU (the kernel's
    // run delay, workers[].waited_for_cpu_ms, a wait across the end included) or its CPU the
    // hypervisor's (at most the host's steal time over all its CPUs). So the window holds at
    // most one burst a delay and one more at its edge, and at least one a delay of the window
    // less that held time, less one at each edge (a busy CI host once counted 184 IOPS).
    let cpu = &r["totals"]["cpu"];
    let steal_s = num(cpu, "steal_pct") / 100.0 * window * cpu["per_cpu"].as_array().unwrap().len() as f64;
    let held_s = num(&r["workers"][0], "waited_for_cpu_ms") / 1e3 + steal_s;
    let bursts = |s: f64| (s / 0.020).floor();
    let (lo, hi) = (4.0 * (bursts(window - held_s) - 2.0), 4.0 * (bursts(window) + 1.0));
    assert!(lo <= ios && ios <= hi, "{ios} I/Os in {window} s, not in [{lo}, {hi}] (held {held_s:.3} s)");
}

#[test]
fn specs_lists_and_shows() {
    let out = ok(&["specs"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for name in iogauge::spec::builtin().iter().map(|s| s.name.clone()) {
        assert!(names.contains(&name.as_str()), "{name} missing");
    }
    // The seeds the descriptions cite are said.
    for (n, _) in iogauge::spec::SEEDS {
        assert!(text.lines().any(|l| l.trim_start().starts_with(n)), "seed {n} not described: {text}");
    }
    let out = iogauge(&["specs", "web-server"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2 + 10, "{text}");
    assert!(text.contains("512K") && text.contains("22%"), "{text}");
}

/// `--csv` is one table on run and study alike: a run is a study's one point, a row per
/// workload, the study's columns, its figures the document's.
#[test]
fn csv_means_the_same_on_run_and_study() {
    let dir = scratch("csv-same");
    let run = ["run", "--target", "null", "--spec", "random-read-4k", "--spec", "random-write-4k", "--ios", "20000"];
    ok_in(&dir, &[&run[..], &["--csv", "r.csv", "--json", "r.json", "-q", "--no-history"]].concat());
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nios = 20000\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n[study]\noutstanding = [1, 2]\n",
    )
    .unwrap();
    ok_in(&dir, &["study", "s.toml", "--csv", "s.csv", "-q", "--no-history"]);
    let (r, s) =
        (std::fs::read_to_string(dir.join("r.csv")).unwrap(), std::fs::read_to_string(dir.join("s.csv")).unwrap());
    assert_eq!(r.lines().next(), s.lines().next(), "the same columns");
    let header: Vec<&str> = r.lines().next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = r.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{r}");
    assert_eq!(s.lines().count(), 3, "{s}");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for (row, result) in rows.iter().zip(doc["results"].as_array().unwrap()) {
        assert_eq!(row[col("spec")], result["spec"].as_str().unwrap());
        assert_eq!(row[col("point")], "1");
        let iops: f64 = row[col("iops_median")].parse().unwrap();
        assert_eq!(iops, result["totals"]["iops"].as_f64().unwrap());
    }
}

/// Every percentile of the document is the nearest-rank quantile (the sample of rank
/// ceil(q x n), as fio takes it) of the I/Os the per-I/O log holds, as the histogram gives it
/// back: the midpoint of that sample's bucket, clamped to the fastest and slowest response.
/// Counts where q x n is not whole (the p99 of 150 is the 149th, the p99.99 of 1,000 the
/// largest): a rank one low gives the sample below, in another bucket wherever the two are
/// more than a bucket (1/64) apart, as a null target's tail is.
#[test]
fn percentiles_are_the_exact_quantiles_of_the_logged_ios() {
    let dir = scratch("percentiles");
    for n in ["150", "333", "1000"] {
        let args = ["run", "--target", "null", "--spec", "oltp-8k", "--ios", n, "--log-dir", n, "--json", "r.json"];
        ok_in(&dir, &[&args[..], &["-q", "--no-history"]].concat());
        let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
        let t = &doc["results"][0]["totals"];
        // Lines: completion ms, response ns, direction (0 read, 1 write), size, offset.
        let log = std::fs::read_to_string(dir.join(n).join("worker_1_lat.1.log")).unwrap();
        let ios: Vec<(u64, u64)> = log
            .lines()
            .map(|l| {
                let f: Vec<u64> = l.split(", ").map(|v| v.parse().unwrap()).collect();
                (f[2], f[1])
            })
            .collect();
        assert_eq!(ios.len().to_string(), n, "a line per I/O");
        for (key, dir) in
            [("percentiles_ms", None), ("read_percentiles_ms", Some(0)), ("write_percentiles_ms", Some(1))]
        {
            let mut ns: Vec<u64> = ios.iter().filter(|io| dir.is_none_or(|d| io.0 == d)).map(|io| io.1).collect();
            ns.sort_unstable();
            for (name, value) in t[key].as_object().unwrap() {
                // "p99.9" is 99,900 parts in 100,000: the rank in integers, apart from floats.
                let parts = (name[1..].parse::<f64>().unwrap() * 1000.0).round() as u64;
                let rank = (parts * ns.len() as u64).div_ceil(100_000).max(1) as usize;
                let want = bucket_midpoint(ns[rank - 1]).clamp(ns[0], ns[ns.len() - 1]) as f64 / 1e6;
                assert_eq!(value.as_f64().unwrap(), want, "{key} {name} of {}: the sample of rank {rank}", ns.len());
            }
        }
    }
}

/// The midpoint of the histogram bucket that holds `ns` (the document's histogram layout).
fn bucket_midpoint(ns: u64) -> u64 {
    let mut one = iogauge::stats::Histogram::default();
    one.record(ns);
    let (lo, hi, _) = one.buckets().next().unwrap();
    lo + (hi - lo) / 2
}
