//! `--fio-json`: a run in the shape of fio's JSON, checked against iogauge's own document, the
//! kernel's counters, and read by fio's tools (fio_jsonplus_clat2csv from Debian's fio) and by
//! fio-plot (PyPI) drawing IOPS and latency over queue depth from a study.

use crate::common;

use std::process::Command;

use common::*;
use serde_json::Value;

/// Runs the real fio-plot in `dir` with `args`; the PNG it drew.
fn fio_plot(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("fio-plot")
        .args(args)
        .args(["-T", "iogauge", "-o", "plot.png"])
        .current_dir(dir)
        .output()
        .expect("fio-plot is installed (scripts/test installs it from PyPI)");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "fio-plot {args:?}: {said}");
    let png = std::fs::read(dir.join("plot.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "fio-plot wrote a PNG");
    png
}

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_run_in_fios_json_holds_what_iogauge_measured() {
    let lo = LoopDev::new(64 << 20);
    let dir = scratch("fio-json");
    let name = lo.dev.trim_start_matches("/dev/");
    let before = kernel_ios(name);
    let args = [
        "run",
        "--target",
        &lo.dev,
        "--allow-write",
        &lo.dev,
        "--spec",
        "oltp-8k",
        "--workers",
        "2",
        "--qd",
        "4",
        "--ios",
        "40000",
        "--json",
        "r.json",
        "--fio-json",
        "f.json",
        "-q",
        "--no-history",
    ];
    ok_in(&dir, &args);
    let after = kernel_ios(name);
    let (ours, fio) = (read(&dir.join("r.json")), read(&dir.join("f.json")));
    assert!(fio["fio version"].as_str().unwrap().starts_with("iogauge-"));
    let r = &ours["results"][0];
    let secs = num(r, "duration_s");
    let jobs = fio["jobs"].as_array().unwrap();
    let workers = r["workers"].as_array().unwrap();
    assert_eq!(jobs.len(), workers.len());
    let mut reads = 0;
    for (j, w) in jobs.iter().zip(workers) {
        assert_eq!(j["jobname"], w["name"]);
        let o = &j["job options"];
        assert_eq!(
            (o["rw"].as_str(), o["bs"].as_str(), o["iodepth"].as_str()),
            (Some("randrw"), Some("8k"), Some("4"))
        );
        assert_eq!((o["rwmixread"].as_str(), o["numjobs"].as_str()), (Some("67"), Some("2")));
        for (dir, ours_dir) in [("read", "read"), ("write", "write")] {
            let d = &j[dir];
            let raw = &w["raw"][ours_dir];
            assert_eq!(d["total_ios"], raw["ios"], "{dir}: every I/O");
            assert_eq!(d["io_bytes"], raw["bytes"]);
            let bytes = num(raw, "bytes");
            assert_eq!(num(d, "bw"), (bytes / secs / 1024.0).round(), "{dir}: bw in KiB/s");
            assert_eq!(num(d, "runtime"), (secs * 1000.0).round());
            let mean_ms = num(w, &format!("avg_{dir}_response_ms"));
            assert!((num(d, "lat_ns/mean") / 1e6 - mean_ms).abs() <= 1e-9 * mean_ms.max(1.0));
            assert_eq!(d["clat_ns"]["N"], raw["ios"]);
            // fio's percentile keys, in order, rising, and iogauge's own p99 among them.
            let pct: Vec<(String, f64)> = d["clat_ns"]["percentile"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
                .collect();
            let p99 = pct.iter().find(|(k, _)| k == "99.000000").expect("fio's 99.000000 key").1;
            assert!((p99 / 1e6 - num(w, &format!("{dir}_percentiles_ms/p99"))).abs() < 1e-6);
            let mut sorted = pct.clone();
            sorted.sort_by(|a, b| a.0.parse::<f64>().unwrap().total_cmp(&b.0.parse::<f64>().unwrap()));
            assert!(sorted.windows(2).all(|p| p[0].1 <= p[1].1), "percentiles rise");
        }
        reads += j["read"]["total_ios"].as_u64().unwrap();
        let share: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|k| j[*k].as_object().unwrap().values().map(|v| v.as_f64().unwrap()))
            .sum();
        assert!((share - 100.0).abs() < 1e-6, "the latency buckets hold every I/O: {share} %");
    }
    assert!(after.0 + after.1 - before.0 - before.1 >= reads, "the kernel saw the reads fio's JSON counts");

    // fio's own json+ reader turns the bins into CSV and checks them against the JSON.
    for args in [vec!["f.json", "lat.csv"], vec!["--validate", "f.json", "lat.csv"]] {
        let out = Command::new("fio_jsonplus_clat2csv").args(&args).current_dir(&dir).output().expect("fio's tools");
        assert!(out.status.success(), "fio_jsonplus_clat2csv {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let csv = std::fs::read_to_string(dir.join("lat_job0.csv")).unwrap();
    // read_clat_ns_cumulative is the 6th column (blank on a row of a write-only latency): at
    // its largest, every read of job 0.
    let reads = csv.lines().skip(1).filter_map(|l| l.split(", ").nth(5)?.parse::<u64>().ok()).max();
    assert_eq!(reads, jobs[0]["read"]["total_ios"].as_u64());
}

#[test]
fn fio_plot_draws_a_study_over_queue_depth() {
    let dir = scratch("fio-plot");
    std::fs::write(
        dir.join("qd.toml"),
        "[test]\nios = 20000\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n[study]\noutstanding = [1, 4, 16]\n",
    )
    .unwrap();
    ok_in(&dir, &["study", "qd.toml", "--fio-json", "fio", "--json", "s.json", "-q", "--no-history"]);
    let study = read(&dir.join("s.json"));
    let files: Vec<_> = std::fs::read_dir(dir.join("fio")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 3, "a file per point");
    for p in study["points"].as_array().unwrap() {
        let depth = p["params"]["outstanding"].as_u64().unwrap();
        let f = files.iter().find(|f| f.to_string_lossy().contains(&format!("-iodepth-{depth}-"))).unwrap();
        let v = read(f);
        assert_eq!(num(&v, "jobs/0/read/total_ios"), 20000.0);
        assert!((num(&v, "jobs/0/read/iops") - num(p, "runs/0/results/0/totals/iops")).abs() < 1e-6);
    }
    let png = fio_plot(&dir, &["-i", "fio", "-l", "-r", "randread", "-d", "1", "4", "16", "-n", "1"]);
    assert!(png.len() > 10_000, "fio-plot drew the graph");
}

/// The lines of a fio log: (time ms, value, ddir, bs, offset).
fn log_lines(path: &std::path::Path) -> Vec<[u64; 5]> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let v: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3], v[4]]
        })
        .collect()
}

#[test]
fn logs_in_fios_format_hold_every_io() {
    let dir = scratch("fio-logs");
    // One line per I/O: exact on the null target, reads and writes as counted, latencies
    // summing to the response times the document holds.
    let args = ["run", "--target", "null", "--spec", "oltp-8k", "--workers", "2", "--ios", "30000", "--json", "r.json"];
    ok_in(&dir, &[&args[..], &["--log-dir", "logs", "-q", "--no-history"]].concat());
    let doc = read(&dir.join("r.json"));
    for w in doc["results"][0]["workers"].as_array().unwrap() {
        let stem = w["name"].as_str().unwrap().replace(' ', "_");
        let lat = log_lines(&dir.join("logs").join(format!("{stem}_lat.1.log")));
        let iops = log_lines(&dir.join("logs").join(format!("{stem}_iops.1.log")));
        assert_eq!(lat.len() as f64, num(w, "ios"), "a line per I/O");
        assert!(iops.iter().all(|l| l[1] == 1 && l[3] == 8192), "one 8 KiB I/O per line");
        for (ddir, key) in [(0, "read"), (1, "write")] {
            let mine: Vec<&[u64; 5]> = lat.iter().filter(|l| l[2] == ddir).collect();
            assert_eq!(mine.len() as f64, num(w, &format!("raw/{key}/ios")));
            let sum: u64 = mine.iter().map(|l| l[1]).sum();
            assert_eq!(sum as f64, num(w, &format!("raw/{key}/response_sum_ns")), "{key} latencies");
        }
    }

    // Averaged over 250 ms windows on a 2 s run: every window's I/Os per second times its
    // length add up to the I/Os recorded.
    let args = ["run", "--target", "null", "--spec", "oltp-8k", "--time", "2s", "--ramp", "0s", "--json", "t.json"];
    ok_in(&dir, &[&args[..], &["--log-dir", "avg", "--log-avg", "250", "-q", "--no-history"]].concat());
    let doc = read(&dir.join("t.json"));
    let iops = log_lines(&dir.join("avg/worker_1_iops.1.log"));
    let times: Vec<u64> = iops.iter().filter(|l| l[2] == 0).map(|l| l[0]).collect();
    assert_eq!(times, (1..=8).map(|k| k * 250).collect::<Vec<_>>(), "a line per window, at its end");
    for (ddir, key) in [(0, "read_ios"), (1, "write_ios")] {
        let ios: u64 = iops.iter().filter(|l| l[2] == ddir).map(|l| l[1] / 4).sum();
        assert_eq!(ios as f64, num(&doc, &format!("results/0/totals/{key}")), "{key}");
    }

    // A fio job file's write_*_log and log_avg_msec do the same.
    std::fs::write(
        dir.join("j.fio"),
        "[a]\nioengine=null\nrw=randread\nbs=4k\nnumber_ios=5000\nwrite_lat_log=fiologs/a\nwrite_iops_log=fiologs/a\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("fiologs")).unwrap();
    ok_in(&dir, &["run", "j.fio", "-q", "--no-history"]);
    assert_eq!(log_lines(&dir.join("fiologs/a_lat.1.log")).len(), 5000);
}

#[test]
fn fio_plot_draws_iogauges_logs() {
    // fio-plot finds logs by fio-plot's benchmark names: a worker named so is found.
    let dir = scratch("fio-plot-logs");
    std::fs::write(
        dir.join("j.toml"),
        "[test]\ntime = \"2s\"\nramp = \"0s\"\nrun = [\"random-read-4k\"]\n[[worker]]\n\
         name = \"randread-iodepth-1-numjobs-1\"\ntargets = [\"null\"]\nrate_iops = 20000\n",
    )
    .unwrap();
    ok_in(&dir, &["run", "j.toml", "--log-dir", "logs", "--log-avg", "500", "--json", "r.json", "-q", "--no-history"]);
    let iops = log_lines(&dir.join("logs/randread-iodepth-1-numjobs-1_iops.1.log"));
    // A line per window with I/Os, at its end: four windows of 500 ms, each with a line unless
    // the worker was held through it (fio writes none for such a window either; a loaded pass
    // once held the worker through one).
    let ends: Vec<u64> = iops.iter().map(|l| l[0]).collect();
    assert!(
        !ends.is_empty() && ends.windows(2).all(|w| w[0] < w[1]) && ends.iter().all(|t| t % 500 == 0 && *t <= 2000),
        "a line per window, at its end: {iops:?}"
    );
    // Each window's line is its I/Os per second: its I/Os are half of it, and the windows hold
    // every I/O recorded.
    let counts: Vec<u64> = iops.iter().map(|l| l[1] / 2).collect();
    assert_eq!(counts.iter().sum::<u64>() as f64, num(&read(&dir.join("r.json")), "results/0/totals/ios"));
    // An open loop is never ahead of its schedule: by a window's end, at most the 20 I/Os due
    // in each ms since the start (its arrivals count from the worker's start, after the test's). Behind
    // it after a stall, it catches up in the next window (a 70 ms stall, four tests and two
    // burners beside it, left a window 1,400 short and the next 1,200 over), so only a stall at
    // the very end is not made up (a loaded pass: 4,400 of the last window's 10,000): at most
    // the arrivals of the time the worker waited for a CPU, as the result says it, and 1 %.
    for (end_ms, c) in ends.iter().zip(counts.iter().scan(0, |sum, c| Some(*sum + c))) {
        let due_by = 20 * end_ms;
        assert!(c <= due_by + 1, "{c} I/Os by {end_ms} ms, {due_by} due: {iops:?}");
    }
    let all: u64 = counts.iter().sum();
    let held_s = num(&read(&dir.join("r.json")), "results/0/workers/0/waited_for_cpu_ms") / 1e3;
    assert!(all as f64 >= 40_000.0 * 0.99 - 20_000.0 * held_s, "paced at 20,000 per second, {held_s} s held: {iops:?}");
    fio_plot(&dir, &["-i", "logs", "-g", "-t", "iops", "lat", "-r", "randread", "-d", "1", "-n", "1"]);
}
