//! `iogauge fs` (seed 002, IOzone's throughput mode) on real file systems made here: ext4 and
//! xfs on loop devices, a small tmpfs, a slow FUSE device under ext4.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{LoopDev, iogauge, num, scratch};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// A file system made with `mkfs` on `dev` and mounted on a scratch directory; unmounted on drop.
struct Mounted {
    dir: PathBuf,
}

impl Mounted {
    fn new(mkfs: &[&str], dev: &str) -> Mounted {
        let out = Command::new(mkfs[0]).args(&mkfs[1..]).arg(dev).output().expect("mkfs");
        assert!(out.status.success(), "{mkfs:?}: {}", String::from_utf8_lossy(&out.stderr));
        Mounted::mount(&["mount", dev])
    }

    /// `mount ARGS... DIR`.
    fn mount(args: &[&str]) -> Mounted {
        let dir = scratch("mnt");
        let out = Command::new(args[0]).args(&args[1..]).arg(&dir).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        Mounted { dir }
    }

    fn path(&self) -> &str {
        self.dir.to_str().unwrap()
    }

    /// iogauge's files in it, name and size.
    fn files(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = std::fs::read_dir(&self.dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("iogauge-fs"))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
            .collect();
        v.sort();
        v
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Runs `iogauge fs ARGS --json FILE --no-history -q`: the exit status, stderr and the
/// document, checked against its schema.
fn fs(args: &[&str]) -> (i32, String, Value) {
    let json = scratch("fs").join("study.json");
    let mut all = vec!["fs"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap(), "--no-history", "-q"]);
    let out = iogauge(&all);
    let doc = std::fs::read(&json).map(|b| serde_json::from_slice(&b).unwrap()).unwrap_or(Value::Null);
    if !doc.is_null() {
        common::validate_study(&json).unwrap_or_else(|e| panic!("{args:?}: the document's schema: {e}"));
    }
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned(), doc)
}

/// Each point's (threads, test) and its one workload.
fn points(doc: &Value) -> Vec<(u64, String, &Value)> {
    doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let w = &p["runs"][0]["results"][0];
            (p["params"]["threads"].as_u64().unwrap(), w["spec"].as_str().unwrap().to_string(), w)
        })
        .collect()
}

fn has_mark(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let name = std::ffi::CString::new("user.iogauge.created").unwrap();
    // SAFETY: NUL-terminated strings; a size query writes nothing.
    unsafe { libc::getxattr(c.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

const ALL_TESTS: &str = "write,rewrite,read,reread,random-read,random-write,backwards-read,stride-read";

/// Every test at 1 and 2 threads, two files each, on ext4 and xfs: the bytes each test moves
/// are what was asked, the files are as asked and iogauge's, rewrite does not grow them, and
/// IOzone's figures relate as they must.
#[test]
fn every_test_moves_the_bytes_asked_on_ext4_and_xfs() {
    for mkfs in [&["mkfs.ext4", "-q", "-F"][..], &["mkfs.xfs", "-q", "-f"][..]] {
        let dev = LoopDev::new(512 * MIB);
        let m = Mounted::new(mkfs, &dev.dev);
        let (code, err, doc) = fs(&[
            "--dir",
            m.path(),
            "--threads",
            "1,2",
            "--total",
            "32M",
            "--record",
            "64K",
            "--files-per-thread",
            "2",
            "--tests",
            ALL_TESTS,
            "--keep",
        ]);
        assert_eq!(code, 0, "{}: {err}", mkfs[0]);
        assert_eq!(doc["schema"], "iogauge.study/2");
        let pts = points(&doc);
        assert_eq!(pts.len(), 2 * 8, "a point per thread count and test");
        for (n, test, w) in &pts {
            let what = format!("{} threads={n} {test}", mkfs[0]);
            assert_eq!(num(w, "totals/bytes"), (32 * MIB) as f64, "{what}: every file's bytes, once");
            assert_eq!(num(w, "totals/ios"), (32 * MIB / (64 << 10)) as f64, "{what}: one I/O per record");
            assert_eq!(num(w, "totals/errors"), 0.0, "{what}");
            let f = &w["fs"];
            assert_eq!(f["test"], test.as_str());
            assert_eq!((num(f, "threads"), num(f, "files")), (*n as f64, (*n * 2) as f64), "{what}");
            assert_eq!(num(f, "file_bytes"), (16 / *n * MIB) as f64, "{what}: the total shared out");
            assert!(f["filesystem"].as_str().unwrap().starts_with(&mkfs[0][5..]), "{what}: {}", f["filesystem"]);
            let (children, parent) = (num(f, "children_mbps"), num(f, "parent_mbps"));
            // One thread: one view. Several: the parent's is all bytes over the whole time,
            // at least the time to the stonewall. (It is usually below the children's figure,
            // not always: the last thread may speed up alone.)
            let (bytes, stonewall) = (num(w, "totals/bytes") / 1e6, num(f, "stonewall_s"));
            if *n == 1 {
                assert!((parent - children).abs() <= children * 1e-6, "{what}: {parent} vs {children}");
            }
            assert!(stonewall > 0.0 && stonewall <= num(w, "duration_s") + 1e-9, "{what}: stonewall {stonewall}");
            assert!(parent <= bytes / stonewall * (1.0 + 1e-9), "{what}: parent {parent}");
            assert!(num(f, "min_xfer_bytes") <= num(w, "totals/bytes") / *n as f64, "{what}: min xfer");
            assert!((num(w, "totals/mbps") - parent).abs() <= parent * 1e-9, "{what}: the totals are the parent's");
            let avg = num(f, "thread_avg_mbps");
            assert!((avg * *n as f64 - children).abs() <= children * 1e-9, "{what}: children = sum of the threads");
            assert!(num(f, "thread_min_mbps") <= avg && avg <= num(f, "thread_max_mbps"), "{what}");
            assert!((num(f, "children_mibps") * 1.048576 - children).abs() <= children * 1e-9, "{what}");
            assert_eq!(w["workers"].as_array().unwrap().len(), *n as usize, "{what}: a row per thread");
            // Each thread's own bytes: its files, whole.
            for t in w["workers"].as_array().unwrap() {
                assert_eq!(num(t, "bytes"), (32 / *n * MIB) as f64, "{what}");
            }
            assert!(num(w, "totals/percentiles_ms/p99") > 0.0, "{what}: latency percentiles per record");
            // The time series (the monitor's, as any run's: from the threads' start to its look
            // after the last one ended) covers the test and adds up to its totals.
            let series = w["intervals"].as_array().unwrap();
            let secs: f64 = series.iter().map(|i| num(i, "duration_s")).sum();
            let bytes: f64 = series.iter().map(|i| num(i, "mbps") * 1e6 * num(i, "duration_s")).sum();
            let ios: f64 = series.iter().map(|i| num(i, "iops") * num(i, "duration_s")).sum();
            assert!(secs >= num(w, "duration_s") - 1e-6, "{what}: {secs} s of samples");
            assert!((bytes - num(w, "totals/bytes")).abs() < 1.0, "{what}: {bytes} bytes in the samples");
            assert!((ios - num(w, "totals/ios")).abs() < 1e-6 * ios.max(1.0), "{what}: {ios} records in the samples");
            // Each sample's percentiles come from its records' histogram, as a run's do.
            assert!(
                series.iter().any(|i| i["percentiles_ms"]["p50"].as_f64().is_some_and(|v| v > 0.0)),
                "{what}: percentiles per sample"
            );
            // A thread reads and writes its files itself: no engine, depth or targets.
            let t = &w["workers"][0];
            assert!(t.get("engine").is_none() && t.get("outstanding").is_none(), "{what}: {t}");
            assert!(t["targets"].as_array().unwrap().is_empty() && w["targets"].as_array().unwrap().is_empty());
        }
        // --keep: the last thread count's files, each as large as asked (rewrite and random
        // write did not grow them), each marked as iogauge's.
        let files = m.files();
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names, ["iogauge-fs.1.0", "iogauge-fs.1.1", "iogauge-fs.2.0", "iogauge-fs.2.1"], "{}", mkfs[0]);
        assert!(files.iter().all(|f| f.1 == 8 * MIB), "{files:?}");
        assert!(files.iter().all(|f| has_mark(&m.dir.join(&f.0))));
        // Without --keep a test's files go; a kept file of an earlier run is taken over when
        // the test uses its name, the others are left as they were.
        let (code, err, _) = fs(&["--dir", m.path(), "--size", "1M", "--tests", "write"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(m.files(), files[1..], "{}", mkfs[0]);
    }
}

/// Bytes and sectors read and written of a block device (/sys/block/NAME/stat).
fn sectors(name: &str) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = s.split_whitespace().map(|v| v.parse().unwrap()).collect();
    (f[2] * 512, f[6] * 512)
}

/// With --direct every record reaches the device: the kernel's counters of the loop device
/// move by the bytes the tests moved (the writes also carry the file system's own metadata).
#[test]
fn direct_io_reaches_the_device() {
    let dev = LoopDev::new(256 * MIB);
    let m = Mounted::new(&["mkfs.ext4", "-q", "-F"], &dev.dev);
    let before = sectors(dev.name());
    let (code, err, doc) =
        fs(&["--dir", m.path(), "--threads", "2", "--size", "16M", "--tests", "write,read", "--direct"]);
    let after = sectors(dev.name());
    assert_eq!(code, 0, "{err}");
    let (read, written) = (after.0 - before.0, after.1 - before.1);
    let pts = points(&doc);
    assert_eq!(pts[0].2["fs"]["io"], "direct");
    let asked = 32 * MIB;
    assert!(read >= asked && read < asked + 4 * MIB, "read {read} bytes from the device for {asked}");
    assert!(written >= asked && written < asked + 8 * MIB, "wrote {written} bytes to the device for {asked}");
}

/// --fsync puts the device's time into the write test: on a device that takes 20 ms per
/// request (a loop device over a file on a slow FUSE file system), writing to the page cache
/// alone takes a fraction of that; with the fsync the test waits for the device.
#[test]
fn fsync_waits_for_a_slow_device() {
    let fuse = common::FaultFs::new(&["--delay", "20"]);
    let dev = common::attach_loop(fuse.disk(), &[]);
    let m = Mounted::new(&["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1"], &dev);
    let time = |extra: &[&str]| {
        let mut args = vec!["--dir", m.path(), "--size", "4M", "--tests", "write"];
        args.extend_from_slice(extra);
        let (code, err, doc) = fs(&args);
        assert_eq!(code, 0, "{err}");
        let w = points(&doc)[0].2.clone();
        assert_eq!(w["fs"]["fsync_included"], !extra.is_empty());
        num(&w, "duration_s")
    };
    let cached = time(&[]);
    let synced = time(&["--fsync"]);
    drop(m);
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    assert!(synced >= 0.02, "an fsync through a 20 ms device took {synced} s");
    assert!(synced > 3.0 * cached, "with fsync {synced} s, without {cached} s");
}

/// A file system that fills up (here: out of inodes) ends the study with a clear error, the
/// points before kept and the failing one saying where; the files are removed.
#[test]
fn a_full_file_system_keeps_the_points_before() {
    // Room for the 2 files of one thread, not the 4 of two.
    let m = Mounted::mount(&["mount", "-t", "tmpfs", "-o", "size=64M,nr_inodes=4", "tmpfs"]);
    let (code, err, doc) = fs(&[
        "--dir",
        m.path(),
        "--threads",
        "1,2",
        "--size",
        "1M",
        "--files-per-thread",
        "2",
        "--tests",
        "write,read",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    let pts = points(&doc);
    assert_eq!(pts.iter().map(|p| (p.0, p.1.as_str())).collect::<Vec<_>>(), [(1, "write"), (1, "read"), (2, "write")]);
    assert_eq!(num(pts[1].2, "totals/errors"), 0.0);
    assert!(num(pts[2].2, "totals/errors") >= 1.0);
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("the file system is full") && warnings.contains("did not run"), "{warnings}");
    assert!(m.files().is_empty(), "{:?}", m.files());
}

/// Bad input: one line, exit 2, nothing made in the directory.
#[test]
fn bad_input_is_one_line_and_touches_nothing() {
    let ro = Mounted::mount(&["mount", "-t", "tmpfs", "-o", "size=16M,ro", "tmpfs"]);
    let small = Mounted::mount(&["mount", "-t", "tmpfs", "-o", "size=16M", "tmpfs"]);
    let foreign = small.dir.join("iogauge-fs.1.0");
    std::fs::write(&foreign, b"somebody's data").unwrap();
    let file = small.dir.join("plain");
    std::fs::write(&file, b"x").unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["--dir", ro.path(), "--size", "1M"], "read-only mount"),
        (&["--dir", "/nonexistent/iogauge", "--size", "1M"], "no such directory"),
        (&["--dir", file.to_str().unwrap(), "--size", "1M"], "not a directory"),
        (&["--dir", small.path(), "--size", "1M"], "iogauge did not make it"),
        (&["--dir", "/tmp", "--total", "1K", "--record", "64K"], "less than one record"),
        (&["--dir", "/tmp", "--size", "1M", "--tests", "write,wirte"], "unknown test"),
        (&["--dir", "/tmp", "--size", "1M", "--threads", "0"], "thread counts from 1"),
    ];
    for (args, says) in cases {
        let (code, err, _) = fs(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), b"somebody's data");
    std::fs::remove_file(&foreign).unwrap();
    let (code, err, _) = fs(&["--dir", small.path(), "--threads", "2", "--size", "10M"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("free"), "{err}");
    let names: Vec<String> =
        std::fs::read_dir(&small.dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into()).collect();
    assert_eq!(names, ["plain"], "nothing made");
    // A missing flag is named, on one line.
    let out = iogauge(&["fs", "--size", "1M"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(err.trim(), "iogauge: fs needs --dir <DIR> (see 'iogauge fs --help')");
}

/// Seed 002 as one command: write, rewrite, read, re-read at 1, 2, 4, 8 threads with the total
/// constant; saved in the history; `compare` gives the seed's table (B as % of A); the
/// report draws the seed's charts and IOzone's tables; the CSV has IOzone's figures.
#[test]
fn seed002_study_compares_and_reports() {
    let dev = LoopDev::new(256 * MIB);
    let m = Mounted::new(&["mkfs.ext4", "-q", "-F"], &dev.dev);
    let work = scratch("seed002");
    let db = work.join("history.sqlite");
    let db = db.to_str().unwrap();
    for (i, extra) in [&[][..], &["--repeat", "1"][..]].iter().enumerate() {
        let csv = work.join(format!("{i}.csv"));
        let iozone = work.join(format!("{i}.iozone.csv"));
        let mut args = vec!["study", "seed002-filesystem", "--dir", m.path(), "--total", "16M", "--db", db, "-q"];
        args.extend_from_slice(&["--csv", csv.to_str().unwrap(), "--iozone-csv", iozone.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let out = iogauge(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = std::fs::read_to_string(&csv).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 16, "4 thread counts x 4 tests");
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name} in {head:?}"));
        let threads: Vec<&str> = rows.iter().map(|r| r[col("threads")]).collect();
        assert_eq!(threads, [["1"; 4], ["2"; 4], ["4"; 4], ["8"; 4]].concat());
        let specs: Vec<&str> = rows.iter().take(4).map(|r| r[col("spec")]).collect();
        assert_eq!(specs, ["write", "rewrite", "read", "reread"]);
        for r in &rows {
            let (kbps, mbps): (f64, f64) =
                (r[col("children_kbps")].parse().unwrap(), r[col("children_mbps")].parse().unwrap());
            assert!((kbps * 1024.0 / 1e6 - mbps).abs() <= mbps * 1e-9, "kB/s are 1024 bytes");
        }
        // IOzone's report layout: the children's kB/s of each test (rows) at each thread count
        // (columns), the same figures as the rows of the CSV.
        let text = std::fs::read_to_string(&iozone).unwrap();
        let block: Vec<&str> = text.split("\n\n").next().unwrap().lines().collect();
        assert!(block[0].contains("Children see throughput (kB/s"), "{text}");
        assert_eq!(block[1], "test,1 thread,2 threads,4 threads,8 threads");
        let tests: Vec<&str> = block[2..].iter().map(|l| l.split(',').next().unwrap()).collect();
        assert_eq!(tests, ["Initial write", "Rewrite", "Read", "Re-read"]);
        for (t, line) in block[2..].iter().enumerate() {
            for (k, cell) in line.split(',').skip(1).enumerate() {
                let expected: f64 = rows[k * 4 + t][col("children_kbps")].parse().unwrap();
                assert!((cell.parse::<f64>().unwrap() - expected).abs() <= 0.01, "{line} vs {expected}");
            }
        }
        assert_eq!(text.matches("test,1 thread").count(), 4, "children, parent, CPU, kB/s per CPU %");
    }
    let out = iogauge(&["compare", "1", "2", "--db", db]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("threads=8") && text.contains("reread"), "{text}");
    // --iozone-csv is a file-system study's; the same file twice is refused.
    let out = iogauge(&["study", "seed004-suite", "--target", "null", "--iozone-csv", "x.csv", "--no-history"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--iozone-csv goes with a file-system study"));
    let same = work.join("same.csv");
    let same = same.to_str().unwrap();
    let out = iogauge(&["fs", "--dir", m.path(), "--size", "1M", "--csv", same, "--iozone-csv", same, "--no-history"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--csv and --iozone-csv both name"));
    let overall = text.lines().find(|l| l.starts_with("Overall write")).unwrap_or_else(|| panic!("{text}"));
    assert!(overall.split_whitespace().filter(|w| w.ends_with('%')).count() == 2, "{overall}");
    assert!(text.lines().any(|l| l.starts_with("Overall read")), "{text}");
    let html = work.join("report.html");
    let out = iogauge(&["report", "1", "2", "--db", db, "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    for says in
        ["MB/s by number of threads", "CPU utilisation by number of threads", "Children see throughput", "Re-read"]
    {
        assert!(page.contains(says), "the report has {says}");
    }
    // The history lists both studies with their directory.
    let out = iogauge(&["history", "--db", db]);
    let list = String::from_utf8_lossy(&out.stdout);
    assert_eq!(list.lines().filter(|l| l.contains("study x16") && l.contains(m.path())).count(), 2, "{list}");
}

/// The page cache: buffered reads of files that fit in memory are warned about, and
/// --drop-caches empties the cache before each test, so the read reaches the device (the
/// kernel's counters move by the file's bytes) where without it they barely move.
#[test]
fn the_page_cache_is_said_and_can_be_emptied() {
    let dev = LoopDev::new(256 * MIB);
    let m = Mounted::new(&["mkfs.ext4", "-q", "-F"], &dev.dev);
    let read_from_device = |extra: &[&str]| {
        let mut args = vec!["--dir", m.path(), "--size", "32M", "--tests", "write,read"];
        args.extend_from_slice(extra);
        let before = sectors(dev.name()).0;
        let (code, err, doc) = fs(&args);
        assert_eq!(code, 0, "{err}");
        let read = sectors(dev.name()).0 - before;
        (read, doc)
    };
    let (cached, doc) = read_from_device(&[]);
    assert!(doc["warnings"].to_string().contains("fit in this host's memory"), "{}", doc["warnings"]);
    assert_eq!(points(&doc)[1].2["fs"]["caches_dropped"], false);
    let (dropped, doc) = read_from_device(&["--drop-caches"]);
    assert_eq!(points(&doc)[1].2["fs"]["caches_dropped"], true);
    assert!(dropped >= 32 * MIB, "after dropping the cache the read came from the device: {dropped} bytes");
    assert!(cached < 8 * MIB, "without, from the page cache: {cached} bytes read from the device");
    let (_, doc) = read_from_device(&["--direct"]);
    assert!(!doc["warnings"].to_string().contains("fit in this host's memory"), "direct reads miss the cache");
    // Phases of a few ms are below the kernel's 10 ms CPU ticks: no CPU % rather than 0 or 100.
    let out = iogauge(&["fs", "--dir", m.path(), "--size", "1M", "--tests", "write", "--no-history"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let cpu = text.split("CPU utilisation of the host (%)").nth(1).unwrap_or_else(|| panic!("{text}"));
    let row = cpu.lines().find(|l| l.starts_with("Initial write")).unwrap();
    assert_eq!(row.split_whitespace().last(), Some("-"), "{text}");
    assert!(text.contains("\"-\" for a phase shorter than 0.5 s"), "{text}");
}

/// A job file's `[fs]` section runs with `iogauge study`, repeated as its `[study]` says; what
/// a file-system job cannot hold is refused at its line.
#[test]
fn a_job_file_runs_as_a_study() {
    let m = Mounted::mount(&["mount", "-t", "tmpfs", "-o", "size=64M", "tmpfs"]);
    let work = scratch("fsjob");
    let job = work.join("fs.toml");
    let json = work.join("doc.json");
    std::fs::write(
        &job,
        format!(
            "[fs]\ndir = \"{}\"\nthreads = [1, 2]\nsize = \"2M\"\ntests = [\"write\", \"read\"]\n[study]\nrepeat = 2\n",
            m.path()
        ),
    )
    .unwrap();
    let out = iogauge(&["study", job.to_str().unwrap(), "--json", json.to_str().unwrap(), "--no-history", "-q"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let pts = points(&doc);
    assert_eq!(pts.len(), 4);
    assert!(doc["points"].as_array().unwrap().iter().all(|p| p["runs"].as_array().unwrap().len() == 2), "2 runs each");
    assert!(doc["warnings"].to_string().contains("in memory, not on a storage device"), "tmpfs is said");
    std::fs::write(&job, format!("[fs]\ndir = \"{}\"\nsize = \"2M\"\n[[worker]]\ntargets = [\"null\"]\n", m.path()))
        .unwrap();
    let out = iogauge(&["study", job.to_str().unwrap(), "--no-history"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fs.toml:4:1: a file-system test ([fs]) has no [[worker]]"));
}

/// Ctrl-C stops the test at once: the point cut short is kept, marked, the files are removed,
/// the exit status is 130.
#[test]
fn ctrl_c_keeps_the_point_and_removes_the_files() {
    let dev = LoopDev::new(1024 * MIB);
    let m = Mounted::new(&["mkfs.ext4", "-q", "-F"], &dev.dev);
    let dir = scratch("fs-int");
    let json = dir.join("doc.json");
    let mut child = common::command_in(
        &dir,
        &["fs", "--dir", m.path(), "--size", "800M", "--fsync", "--json", json.to_str().unwrap(), "--no-history", "-q"],
    )
    .args(common::LINES)
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    common::wait_for_line(&dir, &mut child, |l| l["bytes"].as_u64() > Some(0));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = common::output_of(child);
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped: 1 point(s) kept"));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let run = &doc["points"][0]["runs"][0];
    assert_eq!(run["interrupted"], true);
    let bytes = num(&run["results"][0], "totals/bytes");
    // All 800 MiB may be in the page cache already when Ctrl-C comes during the fsync.
    assert!(bytes > 0.0 && bytes <= (800 * MIB) as f64, "{bytes}");
    let series = run["results"][0]["intervals"].as_array().unwrap();
    let sampled: f64 = series.iter().map(|i| num(i, "mbps") * 1e6 * num(i, "duration_s")).sum();
    assert!((sampled - bytes).abs() < 1.0, "the samples hold every byte: {sampled} of {bytes}");
    // Sampled at --interval (100 ms): the default's first sample spans a second at least (the
    // stop comes after it), this one less with 0.8 s for a monitor woken late on a loaded host.
    let first = num(&series[0], "duration_s");
    assert!(first < 0.9, "the first sample spans {first} s");
    assert!(m.files().is_empty(), "{:?}", m.files());
}
