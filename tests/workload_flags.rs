//! The workload on the command line (issue 20): Iometer's and fio's words build the access
//! specification, and the I/Os done follow it (exact counts on the null target, rates paced).

mod common;

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
