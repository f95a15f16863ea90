//! Operations beyond reads and writes (issue 23): trims, flushes and FUA writes, checked
//! against what the kernel counted on a real loop device (/sys/block/DEV/stat: discards in
//! fields 12-15, flushes in 16-17) and, for the order of operations, against the per-I/O log.

use crate::common;

use common::{FaultFs, LoopDev, iogauge, json, num, scratch};
use std::os::unix::fs::MetadataExt;

/// The kernel's counters of a block device: (writes, discards, discarded sectors, flushes).
fn kernel(name: &str) -> (u64, u64, u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = s.split_whitespace().map(|v| v.parse().unwrap()).collect();
    (f[4], f[11], f[13], f[15])
}

fn delta(a: (u64, u64, u64, u64), b: (u64, u64, u64, u64)) -> (u64, u64, u64, u64) {
    (b.0 - a.0, b.1 - a.1, b.2 - a.2, b.3 - a.3)
}

/// Runs a one-line specification `line` (TOML) on `dev` with `engine` for `ios` I/Os at
/// `outstanding`; returns the totals and what the kernel counted meanwhile.
fn run_line(
    dev: &LoopDev,
    line: &str,
    engine: &str,
    ios: u64,
    outstanding: u32,
) -> (serde_json::Value, (u64, u64, u64, u64)) {
    let dir = scratch("ops");
    let job = dir.join("job.toml");
    std::fs::write(
        &job,
        format!(
            "[test]\nios = {ios}\nengine = \"{engine}\"\nrun = [\"s\"]\n[[spec]]\nname = \"s\"\nlines = [ {{ {line} }} ]\n\
             [[worker]]\noutstanding = {outstanding}\ntargets = [\"{}\"]\n",
            dev.dev
        ),
    )
    .unwrap();
    let before = kernel(dev.name());
    let doc = json(&["run", job.to_str().unwrap(), "--allow-write", &dev.dev]);
    let after = kernel(dev.name());
    (doc["results"][0]["totals"].clone(), delta(before, after))
}

#[test]
fn trims_are_the_kernels_discards_on_both_engines() {
    let dev = LoopDev::new(64 << 20);
    for engine in ["io_uring", "psync"] {
        let before = kernel(dev.name());
        let doc = json(&[
            "run",
            "--target",
            &dev.dev,
            "--rw",
            "randtrim",
            "--bs",
            "64K",
            "--ios",
            "500",
            "--engine",
            engine,
            "--allow-write",
            &dev.dev,
        ]);
        let (_, discards, sectors, _) = delta(before, kernel(dev.name()));
        let t = &doc["results"][0]["totals"];
        assert_eq!(doc["results"][0]["spec"], "random-trim-64k");
        assert_eq!((num(t, "trim_ios"), num(t, "ios"), num(t, "trim_bytes")), (500.0, 500.0, 500.0 * 65536.0));
        // Nothing transferred: a trim's bytes are not MB/s.
        assert_eq!((num(t, "bytes"), num(t, "read_ios"), num(t, "write_ios")), (0.0, 0.0, 0.0));
        assert!(num(t, "avg_trim_response_ms") > 0.0 && t["trim_percentiles_ms"]["p99"].is_number());
        assert_eq!((discards, sectors), (500, 500 * 128), "{engine}: the kernel's discards");
    }
    // Sequential trims then writes of the same blocks (fio's trimwrite): half of each.
    let before = kernel(dev.name());
    let doc = json(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "trimwrite",
        "--bs",
        "16K",
        "--ios",
        "1000",
        "--allow-write",
        &dev.dev,
    ]);
    let (writes, discards, sectors, _) = delta(before, kernel(dev.name()));
    let t = &doc["results"][0]["totals"];
    assert_eq!((num(t, "trim_ios"), num(t, "write_ios")), (500.0, 500.0));
    assert_eq!((discards, sectors), (500, 500 * 32));
    assert!(writes >= 500, "{writes} writes reached the kernel");
}

#[test]
fn flushes_come_every_n_writes_and_as_a_share() {
    let dev = LoopDev::new(64 << 20);
    // One I/O at a time, each fdatasync of the device is one flush the kernel counts.
    let (t, (_, _, _, flushes)) =
        run_line(&dev, "size = \"16K\", read = 0, random = 100, flush_every = 4", "psync", 1000, 1);
    assert_eq!((num(&t, "write_ios"), num(&t, "flush_ios")), (800.0, 200.0));
    assert_eq!(flushes, 200, "the kernel's flushes");
    assert!(num(&t, "avg_flush_response_ms") > 0.0);
    let (t, (_, _, _, flushes)) =
        run_line(&dev, "size = \"16K\", read = 50, flush = 10, random = 100", "psync", 4000, 1);
    // Each I/O a flush with chance 0.1, from the default seed (so the same every run): 0.025 is
    // 5.3 standard deviations of the binomial share, which any seed stays within but once in ten
    // million.
    let share = num(&t, "flush_ios") / 4000.0;
    assert!((share - 0.10).abs() < 0.025, "{share}");
    assert_eq!(flushes as f64, num(&t, "flush_ios"));
    // io_uring: flushes in flight beside writes; the block layer may merge concurrent ones.
    let (t, (_, _, _, flushes)) =
        run_line(&dev, "size = \"16K\", read = 0, random = 100, flush_every = 8, fsync = true", "io_uring", 2000, 4);
    assert_eq!(num(&t, "flush_ios"), (2000 / 9) as f64);
    assert!(flushes > 0 && flushes as f64 <= num(&t, "flush_ios"), "{flushes}");
}

#[test]
fn fua_writes_are_made_stable_by_the_device() {
    let dev = LoopDev::new(64 << 20);
    // A loop device has no FUA: the kernel follows each RWF_DSYNC write with a cache flush.
    let (t, (_, _, _, flushes)) = run_line(&dev, "size = \"64K\", read = 0, random = 0", "psync", 300, 1);
    assert_eq!((num(&t, "write_ios"), flushes), (300.0, 0));
    let (t, (_, _, _, flushes)) = run_line(&dev, "size = \"64K\", read = 0, random = 0, fua = true", "psync", 300, 1);
    assert_eq!(num(&t, "write_ios"), 300.0);
    assert!(flushes >= 300, "{flushes} flushes for 300 FUA writes");
    let (_, (_, _, _, flushes)) =
        run_line(&dev, "size = \"64K\", read = 0, random = 0, fua = true", "io_uring", 300, 4);
    assert!(flushes > 0, "io_uring's FUA writes made no flush");
}

#[test]
fn a_target_that_cannot_trim_is_refused_before_any_io() {
    // A file on a file system without holes (tests/faultfs.py: a FUSE server with no
    // fallocate). (A block device that cannot discard is refused from sysfs the same way;
    // none is at hand here: zeroing a loop device's discard_max_bytes cannot be undone.)
    let fuse = FaultFs::new(&[]);
    let f = fuse.disk();
    let before = std::fs::read(&f).unwrap();
    let out = iogauge(&["run", "--target", &f, "--rw", "trim", "--bs", "64K", "--ios", "4", "--allow-write", &f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot trim") && err.contains("punches no holes"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(std::fs::read(&f).unwrap() == before, "the file changed");
    let dev = LoopDev::new(16 << 20);
    // And --verify refuses trims in one line.
    let out = iogauge(&[
        "run",
        "--target",
        &dev.dev,
        "--rw",
        "randtrim",
        "--ios",
        "10",
        "--verify",
        "--allow-write",
        &dev.dev,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--verify") && err.contains("trims"), "{err}");
}

#[test]
fn trims_punch_holes_in_files() {
    let dir = scratch("holes");
    let file = dir.join("data.bin");
    std::fs::write(&file, vec![0x5au8; 8 << 20]).unwrap();
    let f = file.to_str().unwrap();
    let allocated = || std::fs::metadata(&file).unwrap().blocks() * 512;
    assert!(allocated() >= 8 << 20);
    let doc = json(&["run", "--target", f, "--rw", "trim", "--bs", "1M", "--ios", "4", "--allow-write", f]);
    assert_eq!(num(&doc["results"][0]["totals"], "trim_ios"), 4.0);
    // The first 4 MiB are holes (reading back zeroes), the rest still data; the size is kept.
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 8 << 20);
    assert!(data[..4 << 20].iter().all(|&b| b == 0) && data[4 << 20..].iter().all(|&b| b == 0x5a));
    assert!(allocated() <= 5 << 20, "{} bytes still allocated", allocated());
}

#[test]
fn each_trimmed_block_is_written_next_in_the_log() {
    let dir = scratch("trimwrite-log");
    let logs = dir.join("logs");
    let job = dir.join("job.fio");
    std::fs::write(&job, "[tw]\nfilename=null\nrw=randtrimwrite\nbs=8k\nsize=64m\nnumber_ios=20000\n").unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--log-dir", logs.to_str().unwrap()]);
    let t = &doc["results"][0]["totals"];
    assert_eq!((num(t, "trim_ios"), num(t, "write_ios")), (10_000.0, 10_000.0));
    let log = std::fs::read_to_string(logs.join("tw_clat.1.log")).unwrap();
    let rows: Vec<(u32, u64)> = log
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            (f[2].parse().unwrap(), f[4].parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 20_000);
    for pair in rows.chunks(2) {
        // fio's ddir: 2 a trim, then 1 the write of the same offset.
        assert_eq!((pair[0].0, pair[1].0, pair[1].1), (2, 1, pair[0].1));
    }
}

#[test]
fn fio_jobs_trim_flush_and_sync_and_fio_json_counts_them() {
    let dir = scratch("fio-ops");
    let job = dir.join("ops.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=null\nsize=64m\nnumber_ios=9000\nfdatasync=8\n\n[commits]\nrw=randrw\nrwmixread=50\n\
         sync=dsync\n\n[lookups]\nrw=randread\n\n[discards]\nrw=randtrim\nbs=64k\n",
    )
    .unwrap();
    let toml = String::from_utf8(common::ok(&["convert", job.to_str().unwrap()]).stdout).unwrap();
    // fio flushes and syncs what writes: the read job keeps none of [global]'s fdatasync.
    assert!(toml.contains("flush_every = 8") && toml.contains("fua = true"), "{toml}");
    assert_eq!(toml.matches("flush_every").count(), 1, "{toml}");
    assert!(toml.contains("trim = 100"), "{toml}");
    let fio_json = dir.join("fio.json");
    let doc = json(&["run", job.to_str().unwrap(), "--fio-json", fio_json.to_str().unwrap()]);
    let worker = |name: &str| {
        let workers = doc["results"][0]["workers"].as_array().unwrap();
        workers.iter().find(|w| w["name"].as_str().unwrap().starts_with(name)).unwrap().clone()
    };
    // After every 8 writes a flush (the count may end between the 8th write and its flush).
    let commits = worker("commits");
    let (writes, flushes) = (num(&commits, "write_ios"), num(&commits, "flush_ios"));
    assert!((0.0..=8.0).contains(&(writes - 8.0 * flushes)), "{writes} writes, {flushes} flushes");
    assert_eq!(num(&worker("lookups"), "flush_ios"), 0.0);
    assert_eq!(num(&worker("discards"), "trim_ios"), 9000.0);
    let fio: serde_json::Value = serde_json::from_slice(&std::fs::read(&fio_json).unwrap()).unwrap();
    let jobs = fio["jobs"].as_array().unwrap();
    let job = |name: &str| jobs.iter().find(|j| j["jobname"].as_str().unwrap().starts_with(name)).unwrap();
    assert_eq!(num(job("commits"), "sync/total_ios"), flushes);
    let trims = job("discards");
    assert_eq!((num(trims, "trim/total_ios"), num(trims, "trim/io_bytes")), (9000.0, 9000.0 * 65536.0));
    assert_eq!(trims["job options"]["rw"], "randtrim");
}
