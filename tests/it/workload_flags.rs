//! The workload on the command line (issue 20): Iometer's and fio's words build the access
//! specification, and the I/Os done follow it (exact counts on the null target, rates paced).

use crate::common;

use common::*;
use serde_json::Value;

fn totals(doc: &Value) -> &Value {
    &doc["results"][0]["totals"]
}

#[test]
fn iometer_flags_build_the_mix_that_runs() {
    let n = 200_000;
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--ios",
        &n.to_string(),
        "--bs",
        "4K:60,64K:40",
        "--read",
        "70",
        "--random",
        "100",
        "--qd",
        "32",
        "--no-history",
    ]);
    assert_eq!(doc["results"][0]["spec"], "4k:60,64k:40-read70-random100");
    let t = totals(&doc);
    let ios = t["ios"].as_u64().unwrap();
    assert_eq!(ios, n);
    let reads = t["read_ios"].as_f64().unwrap() / ios as f64;
    assert!((reads - 0.70).abs() < 0.01, "read share {reads}");
    let mean = t["bytes"].as_f64().unwrap() / ios as f64;
    let want = 0.6 * 4096.0 + 0.4 * 65536.0;
    assert!((mean / want - 1.0).abs() < 0.02, "mean transfer {mean}, want {want}");
    // The spec is kept in the result, so the run can be repeated from its config.
    assert_eq!(doc["config"]["spec"][0]["lines"][1]["size"], 65536);
}

#[test]
fn fio_words_are_the_same_workload() {
    let a = json(&[
        "run",
        "--target",
        "null",
        "--ios",
        "1000",
        "--bs",
        "16K",
        "--read",
        "70",
        "--random",
        "100",
        "--no-history",
    ]);
    let b = json(&[
        "run",
        "--target",
        "null",
        "--ios",
        "1000",
        "--bs",
        "16k",
        "--rw",
        "randrw",
        "--rwmixread",
        "70",
        "--no-history",
    ]);
    assert_eq!(a["config"]["spec"], b["config"]["spec"]);
    assert_eq!(a["results"][0]["totals"]["read_ios"], b["results"][0]["totals"]["read_ios"], "same seed, same draws");
    // A plain pattern is a built-in family, at any size.
    let c = json(&["run", "--target", "null", "--ios", "1000", "--rw", "write", "--bs", "128K", "--no-history"]);
    assert_eq!(c["results"][0]["spec"], "streaming-write-128k");
    assert_eq!(c["results"][0]["totals"]["write_bytes"], 1000 * 131072);
    let d = json(&["run", "--target", "null", "--ios", "1000", "--spec", "Random-Write-24K", "--no-history"]);
    assert_eq!(d["results"][0]["spec"], "random-write-24k");
    assert_eq!(d["results"][0]["totals"]["write_bytes"], 1000 * 24576);
    // fio's :N: runs of N I/Os per seek, or holes (negative: backwards), named by what they do.
    for (rw, name, field, value) in [
        ("randread:8", "4k-read100-random100-seek8", "seek_every", 8),
        ("read:-8K", "4k-read100-random0-skip-8k", "skip", -8192),
        ("write:4K", "4k-read0-random0-skip4k", "skip", 4096),
    ] {
        let e = json(&["run", "--target", "null", "--ios", "1000", "--rw", rw, "--no-history"]);
        assert_eq!(e["results"][0]["spec"], name, "{rw}");
        assert_eq!(e["config"]["spec"][0]["lines"][0][field], value, "{rw}");
    }
    // fio's sequential mix keeps fio's place per direction, named so; Iometer's flags its one.
    let fio = json(&["run", "--target", "null", "--ios", "1000", "--rw", "rw", "--rwmixread", "70", "--no-history"]);
    assert_eq!(fio["results"][0]["spec"], "4k-read70-random0-per-direction");
    assert_eq!(fio["config"]["spec"][0]["sequential_per_direction"], true);
    let iometer = json(&["run", "--target", "null", "--ios", "1000", "--read", "70", "--random", "0", "--no-history"]);
    assert_eq!(iometer["results"][0]["spec"], "4k-read70-random0");
    assert!(iometer["config"]["spec"][0].get("sequential_per_direction").is_none());
}

#[test]
fn rate_flags_cap_each_worker() {
    // 1 MiB I/Os capped at 50 MB/s: 47.7 I/Os per second, whatever the depth.
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--rw",
        "read",
        "--bs",
        "1M",
        "--qd",
        "8",
        "--rate-mbps",
        "50",
        "--ramp",
        "200ms",
        "--time",
        "3s",
        "--no-history",
    ]);
    let mbps = totals(&doc)["mbps"].as_f64().unwrap();
    assert!((mbps / 50.0 - 1.0).abs() < 0.05, "{mbps} MB/s");
    assert_eq!(doc["config"]["worker"][0]["rate_mbps"], 50.0);
    // Two workers at 300 I/Os per second each; with both caps the slower one paces.
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--workers",
        "2",
        "--rate-iops",
        "300",
        "--rate-mbps",
        "100",
        "--ramp",
        "200ms",
        "--time",
        "2s",
        "--no-history",
    ]);
    let iops = totals(&doc)["iops"].as_f64().unwrap();
    assert!((iops / 600.0 - 1.0).abs() < 0.05, "{iops} IOPS");
}

/// An open loop records on schedule: arrivals the ramp-up fell behind on are not issued in a
/// burst inside the recorded window. The device is slow (100 ms per I/O, 4 in flight: 40 IOPS)
/// while the test ramps up at 200 IOPS asked, some 160 arrivals behind at its end, then fast.
#[test]
fn an_open_loop_does_not_carry_the_ramp_ups_backlog_into_recording() {
    let fs = FaultFs::new(&["--delay", "100", "--delay-until", "1"]);
    let disk = fs.disk();
    let args = ["run", "--target", &disk, "--spec", "random-read-4k", "--qd", "4", "--rate-iops", "200"];
    let doc = json(&args.into_iter().chain(["--ramp", "1s", "--time", "1s", "--no-history"]).collect::<Vec<_>>());
    let t = totals(&doc);
    // 200 arrivals in the window, give or take the 4 in flight at either end (carried over,
    // the ramp-up's backlog would make it some 360).
    let (iops, ms) = (num(t, "iops"), num(t, "avg_response_ms"));
    assert!((iops / 200.0 - 1.0).abs() < 0.1, "{iops} IOPS recorded at 200 asked");
    // Only the ramp-up's last 4 I/Os took 100 ms, and the arrivals of those 100 ms waited for
    // them: a mean of 16.3 ms idle (the same in either session), 22.6 and 23.1 ms in two
    // loaded passes, where the FUSE server's every answer waits for a CPU. The backlog would
    // have waited hundreds: the bound sits between, not at the idle figure's edge.
    assert!(ms < 50.0, "mean response {ms} ms");
}

#[test]
fn a_total_rate_caps_all_workers_together() {
    // Three workers share 60 MB/s evenly; a worker's own cap below its share still paces it.
    let dir = scratch("totalrate");
    let job = dir.join("j.toml");
    std::fs::write(
        &job,
        "[test]\nrate_mbps = 60\nramp = \"200ms\"\ntime = \"3s\"\n\
         [[worker]]\ncount = 2\ntargets = [\"null\"]\nspec = \"random-read-64k\"\noutstanding = 4\n\
         [[worker]]\nname = \"slow\"\ntargets = [\"null\"]\nspec = \"random-read-8k\"\nrate_mbps = 5\n",
    )
    .unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--no-history"]);
    let mbps = |w: &Value| w["mbps"].as_f64().unwrap();
    let workers = doc["results"][0]["workers"].as_array().unwrap();
    for w in &workers[..2] {
        assert!((mbps(w) / 20.0 - 1.0).abs() < 0.05, "a third of 60 MB/s: {w}");
    }
    assert!((mbps(&workers[2]) / 5.0 - 1.0).abs() < 0.05, "its own 5 MB/s: {}", workers[2]);
    assert_eq!(doc["config"]["test"]["rate_mbps"], 60.0);
    // On the command line, over the flags' workers; the table says what was asked of all.
    let out = ok(&[
        "run",
        "--target",
        "null",
        "--workers",
        "4",
        "--total-rate-iops",
        "2000",
        "--ramp",
        "200ms",
        "--time",
        "2s",
        "--no-history",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rate asked 2,000 IOPS, achieved"), "{text}");
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--workers",
        "4",
        "--total-rate-iops",
        "2000",
        "--ramp",
        "200ms",
        "--time",
        "2s",
        "--no-history",
    ]);
    let iops = totals(&doc)["iops"].as_f64().unwrap();
    assert!((iops / 2000.0 - 1.0).abs() < 0.03, "{iops} IOPS in all");
}

#[test]
fn a_job_file_takes_the_workload_flags() {
    let dir = scratch("jobflags");
    let job = dir.join("j.toml");
    std::fs::write(&job, "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\ntargets = [\"null\"]\noutstanding = 4\n").unwrap();
    let doc = json(&[
        "run",
        job.to_str().unwrap(),
        "--ios",
        "1000",
        "--bs",
        "8K",
        "--read",
        "0",
        "--random",
        "0",
        "--no-history",
    ]);
    assert_eq!(doc["results"][0]["spec"], "streaming-write-8k");
    assert_eq!(doc["results"][0]["totals"]["outstanding"], 4);
}

/// How often each 4 KiB place of the first `places` was hit, from a per-I/O log.
fn hits(dir: &std::path::Path, places: usize) -> Vec<u64> {
    let mut n = vec![0u64; places];
    for offset in logged_offsets(dir) {
        n[(offset / 4096) as usize] += 1;
    }
    n
}

/// Each of `passes` consecutive runs of `places` offsets takes every 4 KiB place exactly once.
fn each_pass_covers(offsets: &[u64], places: usize, passes: usize) {
    assert_eq!(offsets.len(), places * passes);
    for (i, pass) in offsets.chunks(places).enumerate() {
        let mut seen = vec![false; places];
        for &o in pass {
            assert!(!std::mem::replace(&mut seen[(o / 4096) as usize], true), "pass {i} repeats offset {o}");
        }
    }
    assert_ne!(offsets[..places], offsets[places..2 * places], "each pass has its own order");
}

#[test]
fn lfsr_takes_every_block_once_per_pass() {
    // 2^20 random reads over 2^18 places: four passes, read back from the per-I/O log.
    let dir = scratch("lfsr");
    let logs = dir.join("flags");
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--rw",
        "randread",
        "--bs",
        "4K",
        "--distribution",
        "lfsr",
        "--ios",
        "1048576",
        "--working-set",
        "1G",
        "--log-dir",
        logs.to_str().unwrap(),
        "--no-history",
    ]);
    assert_eq!(doc["results"][0]["spec"], "random-read-4k@lfsr");
    each_pass_covers(&logged_offsets(&logs), 1 << 18, 4);
    // fio's random_generator=lfsr in a job file, on a line that writes too.
    let logs = dir.join("fio");
    let job = dir.join("l.fio");
    let text = format!(
        "[l]\nioengine=null\nrw=randrw\nbs=4k\nsize=4m\nnumber_ios=3072\nrandom_generator=lfsr\n\
         write_lat_log={}/l\nlog_offset=1\n",
        logs.display()
    );
    std::fs::write(&job, text).unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--no-history"]);
    assert_eq!(doc["config"]["spec"][0]["lines"][0]["distribution"], "lfsr");
    each_pass_covers(&logged_offsets(&logs), 1024, 3);
}

/// `--random-map` (fio's default): uniform draws, each 4 KiB place once per pass, pass after
/// pass, on every specification the test runs, named for it.
#[test]
fn the_random_map_takes_every_block_once_per_pass() {
    let logs = scratch("random-map").join("logs");
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--spec",
        "oltp-4k",
        "--random-map",
        "--ios",
        "4096",
        "--working-set",
        "4M",
        "--log-dir",
        logs.to_str().unwrap(),
        "--no-history",
    ]);
    assert_eq!(doc["results"][0]["spec"], "oltp-4k@random-map");
    assert_eq!(doc["config"]["spec"][0]["random_map"], true);
    each_pass_covers(&logged_offsets(&logs), 1024, 4);
}

#[test]
fn skewed_offsets_follow_their_law() {
    // A million random reads on the null target, each place's hits read back from the log.
    let dir = scratch("distribution");
    let logs = dir.join("zoned");
    let doc = json(&[
        "run",
        "--target",
        "null",
        "--rw",
        "randread",
        "--bs",
        "4K",
        "--distribution",
        "zoned:80/20:20/80",
        "--ios",
        "1000000",
        "--working-set",
        "4M",
        "--log-dir",
        logs.to_str().unwrap(),
        "--no-history",
    ]);
    assert_eq!(doc["results"][0]["spec"], "random-read-4k@zoned:80/20:20/80");
    let n = hits(&logs, 1024);
    assert_eq!(n.iter().sum::<u64>(), 1_000_000);
    let hot = n[..205].iter().sum::<u64>() as f64 / 1e6;
    assert!((hot - 0.8).abs() < 0.005, "the first 20 % took {hot} of the I/Os");
    // fio's random_distribution, from a job file: zipf's hottest tenth takes its share.
    let logs = dir.join("zipf");
    let job = dir.join("z.fio");
    let text = format!(
        "[z]\nioengine=null\nrw=randread\nbs=4k\nsize=4m\nnumber_ios=1000000\nrandom_distribution=zipf:1.2\n\
         write_lat_log={}/z\nlog_offset=1\n",
        logs.display()
    );
    std::fs::write(&job, text).unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--no-history"]);
    assert_eq!(doc["config"]["spec"][0]["lines"][0]["distribution"], "zipf:1.2");
    let mut n = hits(&logs, 1024);
    n.sort_unstable_by(|a, b| b.cmp(a));
    let weights: Vec<f64> = (1..=1024).map(|k| (k as f64).powf(-1.2)).collect();
    let predicted = weights[..102].iter().sum::<f64>() / weights.iter().sum::<f64>();
    let hot = n[..102].iter().sum::<u64>() as f64 / 1e6;
    assert!((hot - predicted).abs() < 0.005, "hottest tenth: {hot}, zipf's law {predicted}");
    // Refused in one line: a law that is not one.
    for (law, says) in [("zipf:0", "above 0"), ("zipf:1e9", "at most 100"), ("zipf:inf", "not a finite number")] {
        let out = iogauge(&["run", "--target", "null", "--distribution", law, "--no-history"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{law}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
