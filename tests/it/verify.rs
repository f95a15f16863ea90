//! Data verification on real targets: clean runs find nothing; corruption injected for real
//! into a loop device's backing file or a file target (a flipped byte, an old copy of a block,
//! a block copied to another offset, a zeroed block) is found with its offset and kind; silent
//! faults of the storage during a run (a FUSE filesystem that flips bytes or loses writes) are
//! caught when read back; a run killed at any moment is verified from its journal.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use iogauge::verify::block::{self, Found};
use iogauge::verify::journal;
use iogauge::verify::map::{self, BlockMap};
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The data directory the test's iogauge processes use (see `command_in`).
fn data_dir() -> PathBuf {
    std::env::temp_dir().join(format!("iogauge-test-{}-data", std::process::id())).join("iogauge")
}

/// Runs a test with `--json out.json` in `dir`; returns its exit status and document.
fn run_doc(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut a = args.to_vec();
    a.extend(["--json", "out.json", "--no-history", "-q"]);
    let out = iogauge_in(dir, &a);
    let doc = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), doc)
}

/// `iogauge verify ARGS --json`: its exit status and report.
fn verify(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut a = vec!["verify", "--json"];
    a.extend(args);
    let out = iogauge_in(dir, &a);
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), report)
}

/// The map a verified run left for `target`.
fn saved_map(target: &str) -> BlockMap {
    BlockMap::load(&map::default_file(&data_dir(), target)).unwrap()
}

/// Reads the headers in a target's bytes directly (the layout docs/safety-and-trust.md gives),
/// without iogauge's code: (magic present, offset field, write number field) per block.
fn raw_headers(bytes: &[u8], block: usize) -> Vec<Option<(u64, u64)>> {
    bytes
        .chunks_exact(block)
        .map(|b| {
            let field = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            (&b[..8] == b"iogauge\x01").then(|| (field(8), field(24)))
        })
        .collect()
}

/// Long clean runs give no false positive: two workers on their own halves of a loop device
/// and one on a file, mixed reads and writes; every block read back that the test wrote is
/// checked, none mismatches, and re-reading the targets afterwards checks every written block.
#[test]
fn clean_runs_check_every_block_read_and_find_nothing() {
    let dev = LoopDev::new(256 * MIB);
    let dir = scratch("verify-clean");
    let file = dir.join("t.tst");
    let job = format!(
        "[test]\nramp = \"0s\"\ntime = \"2s\"\nrun = [\"oltp-4k\"]\nverify = true\nfile_size = \"32M\"\n\
         [[worker]]\ntargets = [\"{d}\"]\nworking_set = \"8M\"\noutstanding = 16\n\
         [[worker]]\ntargets = [\"{d}\"]\noffset = \"128M\"\nworking_set = \"8M\"\noutstanding = 16\n\
         [[worker]]\ntargets = [\"{f}\"]\nworking_set = \"8M\"\noutstanding = 8\n",
        d = dev.dev,
        f = file.display()
    );
    std::fs::write(dir.join("job.toml"), job).unwrap();
    let (code, doc) = run_doc(&dir, &["run", "job.toml", "--allow-write", &dev.dev]);
    let r = &doc["results"][0];
    assert_eq!(code, Some(0), "{}", r["verify"]);
    assert_eq!(num(r, "verify/mismatches"), 0.0);
    assert_eq!(num(r, "verify/block_bytes"), 4096.0);
    // 8 MiB working sets are 2048 blocks each: after the first tenths of a second, most reads
    // find a block the test wrote (with two CPU burners beside it, each worker writes some
    // 15,000 blocks a second here).
    let (checked, reads) = (num(r, "verify/checked_blocks"), num(r, "totals/read_ios"));
    assert!(checked > reads / 2.0 && checked <= reads + 0.5, "{checked} blocks checked of {reads} reads");
    validate_result(&dir.join("out.json")).unwrap();

    for target in [dev.dev.as_str(), file.to_str().unwrap()] {
        let m = saved_map(target);
        let written = m.entries.iter().filter(|&&e| e != 0).count() as f64;
        let (code, report) = verify(&dir, &["--target", target]);
        assert_eq!(code, Some(0), "{report}");
        assert_eq!(num(&report, "mismatches"), 0.0);
        assert_eq!(num(&report, "targets/0/checked_blocks"), written);
        assert!(written > 1000.0, "{target}: {written} blocks written");
    }
    // The file's bytes, read without iogauge: every block the map says was written holds a
    // header for its own offset with the write number the map records, and no other does.
    let m = saved_map(file.to_str().unwrap());
    let bytes = std::fs::read(&file).unwrap();
    let headers = raw_headers(&bytes, 4096);
    for (b, &e) in m.entries.iter().enumerate() {
        let want = m.stamp(e).map(|s| ((b * 4096) as u64, s.seq));
        assert_eq!(headers[b], want, "block {b}");
    }
    assert!(headers[m.entries.len()..].iter().all(Option::is_none));

    // The same with the psync engine, and a test of two runs: the second (reads only) checks
    // what the first wrote.
    let (code, doc) = run_doc(
        &dir,
        &[
            "run",
            "--spec",
            "oltp-4k",
            "--spec",
            "random-read-4k",
            "--target",
            &file.to_string_lossy(),
            "--working-set",
            "4M",
            "--engine",
            "psync",
            "--verify",
            "--ramp",
            "0s",
            "--time",
            "2s",
        ],
    );
    assert_eq!(code, Some(0));
    let read_run = &doc["results"][1];
    assert_eq!(num(read_run, "totals/write_ios"), 0.0);
    assert!(num(read_run, "verify/checked_blocks") > num(read_run, "totals/read_ios") / 2.0);
    assert_eq!(num(read_run, "verify/mismatches"), 0.0);
}

/// Workers given the same working set (`--workers 3`) each verify their own part of it, said in
/// a warning: disjoint, block-aligned parts covering the whole; no false positive.
#[test]
fn workers_sharing_a_working_set_each_verify_their_own_part() {
    let dev = LoopDev::new(64 * MIB);
    let dir = scratch("verify-shared");
    let args = ["run", "--spec", "oltp-8k", "--target", &dev.dev, "--allow-write", &dev.dev, "--workers", "3"];
    let mut a = args.to_vec();
    // A count, not a time, for the blocks the check wants (progress, not time: docs/testing.md).
    a.extend(["--working-set", "30M", "--verify", "--ios", "3000", "--json", "out.json", "-q"]);
    let out = ok_in(&dir, &a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workers 1, 2, 3 share"), "{err}");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    let r = &doc["results"][0];
    assert_eq!(num(r, "verify/mismatches"), 0.0);
    assert!(num(r, "verify/checked_blocks") > 100.0, "{}", r["verify"]);
    let mut parts: Vec<(u64, u64)> = r["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (w["targets"][0]["start_offset"].as_u64().unwrap(), w["targets"][0]["working_set_bytes"].as_u64().unwrap())
        })
        .collect();
    parts.sort();
    let part = 30 * MIB / 3 / 8192 * 8192;
    assert_eq!(parts, vec![(0, part), (part, part), (2 * part, 30 * MIB - 2 * part)]);
    let (code, report) = verify(&dir, &["--target", &dev.dev]);
    assert_eq!(code, Some(0), "{report}");
}

/// Writes `bytes` at `offset` of `file` (behind the target's back).
fn poke(file: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

/// Two verified runs (the second with another seed) on `target`, stored in `backing`; a copy
/// of `backing` between them gives old blocks. Then four injections into `backing` and
/// `iogauge verify` must report exactly those four, each with its offset and kind.
fn inject_and_find(target: &str, backing: &Path, extra: &[&str]) {
    let dir = scratch("verify-inject");
    let run = |seed: &str| {
        let mut a = vec!["run", "--spec", "oltp-4k", "--target", target, "--working-set", "16M", "--verify"];
        a.extend(["--ramp", "0s", "--time", "2s", "--seed", seed, "--no-history", "-q"]);
        a.extend(extra);
        ok_in(&dir, &a);
    };
    run("1");
    let old = std::fs::read(backing).unwrap();
    run("2");
    let m = saved_map(target);
    let bs = m.block as usize;
    let now = std::fs::read(backing).unwrap();
    let written: Vec<usize> = (0..m.entries.len()).filter(|&b| m.stamp(m.entries[b]).is_some()).collect();
    assert!(written.len() > 500, "{} blocks written", written.len());
    let at = |b: usize| &now[b * bs..(b + 1) * bs];
    // A block whose old copy is an intact earlier write of the same block.
    let stale = *written
        .iter()
        .find(|&&b| match block::read(&old[b * bs..(b + 1) * bs]) {
            Found::Block(w) => w.offset == (b * bs) as u64 && Some(w.stamp) != m.stamp(m.entries[b]),
            _ => false,
        })
        .expect("a block written in both runs");
    let others: Vec<usize> = written.iter().copied().filter(|&b| b != stale).collect();
    let (flip, src, dst, zero) = (others[10], others[20], others[30], others[40]);
    let mut flipped = at(flip).to_vec();
    flipped[bs / 2] ^= 0x01;
    let moved = at(src).to_vec();
    poke(backing, (flip * bs) as u64, &flipped);
    poke(backing, (stale * bs) as u64, &old[stale * bs..(stale + 1) * bs]);
    poke(backing, (dst * bs) as u64, &moved);
    poke(backing, (zero * bs) as u64, &vec![0; bs]);

    let (code, report) = verify(&dir, &["--target", target]);
    assert_eq!(code, Some(1));
    let found: BTreeMap<u64, String> = report["targets"][0]["mismatches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["offset"].as_u64().unwrap(), m["kind"].as_str().unwrap().to_string()))
        .collect();
    let off = |b: usize| (b * bs) as u64;
    let expected: BTreeMap<u64, String> =
        [(off(flip), "corrupted"), (off(stale), "stale"), (off(dst), "misplaced"), (off(zero), "never_written")]
            .into_iter()
            .map(|(o, k)| (o, k.to_string()))
            .collect();
    assert_eq!(found, expected, "{report}");
    let misplaced = report["targets"][0]["mismatches"].as_array().unwrap().iter().find(|m| m["kind"] == "misplaced");
    assert_eq!(misplaced.unwrap()["found"]["offset"].as_u64(), Some(off(src)));
    // The text form names each one too.
    let out = iogauge_in(&dir, &["verify", "--target", target]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.contains(": stale:")).count(), 1, "{text}");
    assert!(text.contains("4 mismatches"), "{text}");
}

#[test]
fn corruption_injected_into_a_loop_device_is_found_with_offset_and_kind() {
    let dev = LoopDev::new(64 * MIB);
    inject_and_find(&dev.dev, &dev.file, &["--allow-write", &dev.dev]);
}

#[test]
fn corruption_injected_into_a_file_target_is_found_with_offset_and_kind() {
    let dir = scratch("verify-file");
    let file = dir.join("t.tst");
    inject_and_find(file.to_str().unwrap(), &file, &["--file-size", "16M"]);
}

/// A job on faultfs's 2 MiB: 4 KiB blocks, half reads, so written blocks are soon read back.
fn fault_job(dir: &Path, disk: &str, on_error: &str, time: &str) -> (Option<i32>, Value) {
    let job = format!(
        "[test]\nramp = \"0s\"\ntime = \"{time}\"\nverify = true\non_error = \"{on_error}\"\nrun = [\"half\"]\n\
         [[spec]]\nname = \"half\"\nlines = [{{ size = \"4K\", read = 50, random = 100 }}]\n\
         [[worker]]\ntargets = [\"{disk}\"]\nworking_set = \"2M\"\noutstanding = 4\n"
    );
    std::fs::write(dir.join("job.toml"), job).unwrap();
    run_doc(dir, &["run", "job.toml", "--allow-write", disk])
}

/// Storage that returns wrong bytes: the read is caught, the test stops there (on_error =
/// stop), exit status 1, and the mismatch names the block and says corrupted.
#[test]
fn a_flipped_byte_in_a_read_stops_the_run_as_corrupted() {
    let fs = FaultFs::new(&["--flip", &format!("{}-{}", MIB, MIB + 4096)]);
    let dir = scratch("verify-flip");
    let t0 = Instant::now();
    let (code, doc) = fault_job(&dir, &fs.disk(), "stop", "60s");
    assert_eq!(code, Some(1));
    assert!(t0.elapsed() < Duration::from_secs(40), "took {:?}", t0.elapsed());
    let v = &doc["results"][0]["verify"];
    assert_eq!(v["mismatches"], 1, "{v}");
    assert_eq!(v["found"][0]["kind"], "corrupted");
    assert_eq!(v["found"][0]["offset"], MIB);
    assert_eq!(v["found"][0]["path"], fs.disk());
}

/// Storage that acknowledges writes and loses every second one (in 64 KiB of the 2 MiB): the
/// reads that find an older write say stale, those that find nothing say never written, and
/// every one lies in the lossy range. Re-reading afterwards finds the lost last writes.
#[test]
fn lost_writes_are_found_as_stale_or_never_written() {
    let (lo, hi) = (MIB, MIB + 64 * 1024);
    let fs = FaultFs::new(&["--lose", &format!("{lo}-{hi}")]);
    let dir = scratch("verify-lose");
    let (code, doc) = fault_job(&dir, &fs.disk(), "continue", "4s");
    assert_eq!(code, Some(1));
    let v = &doc["results"][0]["verify"];
    let found = v["found"].as_array().unwrap();
    assert!(!found.is_empty(), "{v}");
    for m in found {
        let o = m["offset"].as_u64().unwrap();
        assert!((lo..hi).contains(&o), "a mismatch at {o}, outside the lossy range");
        assert!(m["kind"] == "stale" || m["kind"] == "never_written", "{m}");
    }
    assert!(found.iter().any(|m| m["kind"] == "stale"), "{v}");
    let (code, report) = verify(&dir, &["--target", &fs.disk()]);
    assert_eq!(code, Some(1));
    for m in report["targets"][0]["mismatches"].as_array().unwrap() {
        assert!((lo..hi).contains(&m["offset"].as_u64().unwrap()), "{m}");
    }
}

/// Bytes of the journal's records in `jdir` (32 a record, two a completed write).
fn journal_bytes(jdir: &Path) -> u64 {
    let Ok(files) = std::fs::read_dir(jdir) else { return 0 };
    let records = files.flatten().filter(|f| f.file_name().to_string_lossy().ends_with(".jnl"));
    records.map(|f| f.metadata().map_or(0, |m| m.len())).sum()
}

/// Waits until the journal in `jdir` holds `writes` more writes' records than it did now.
fn wait_for_journaled_writes(jdir: &Path, writes: u64) {
    let (from, t0) = (journal_bytes(jdir), Instant::now());
    while journal_bytes(jdir) < from + writes * 64 {
        assert!(t0.elapsed() < Duration::from_secs(60), "{writes} writes not journaled in 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A journaled write reaches its target only once the journal holds it, though by default each
/// I/O goes to the kernel as soon as it is drawn (issue 45): in the worker's system calls
/// (strace), every io_uring_enter that hands the kernel I/Os (all writes here) follows a write
/// to the journal made since the one before.
#[test]
fn journaled_writes_reach_the_kernel_after_the_journal() {
    let dev = LoopDev::new(64 * MIB);
    let dir = scratch("verify-journal-order");
    let (jdir, trace) = (dir.join("journal"), dir.join("calls"));
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-y", "-e", "trace=io_uring_enter,write,pwrite64", "-o", trace.to_str().unwrap(), bin()])
        .args(["run", "--spec", "streaming-write-4k", "--target", &dev.dev, "--allow-write", &dev.dev, "--qd", "8"])
        .args(["--journal", jdir.to_str().unwrap(), "--ios", "3000", "--no-history", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let journal = jdir.to_str().unwrap();
    let (mut journaled, mut submits, mut started) = (false, 0, false);
    for line in std::fs::read_to_string(&trace).unwrap().lines() {
        if line.contains("write") && line.contains(journal) {
            (journaled, started) = (true, true);
        }
        // `TID io_uring_enter(FD<...>, TO_SUBMIT, ...)`: before the first record, only the
        // ring's probe of the device's discard command.
        let Some(call) = line.split("io_uring_enter(").nth(1) else { continue };
        let to_submit: u64 = call.split(", ").nth(1).and_then(|n| n.parse().ok()).expect("to_submit");
        if to_submit > 0 && started {
            assert!(journaled, "I/Os handed to the kernel with no journal record since the last: {line}");
            (journaled, submits) = (false, submits + 1);
        }
    }
    assert!(submits > 100, "{submits} submissions traced");
}

/// kill -9 at several moments: the journal then verifies the target with no false positive
/// (writes in flight at the kill may or may not be there). A completed write then lost (an
/// older copy of its block put back, as a power loss would leave it) is found as stale.
#[test]
fn a_killed_run_is_verified_from_its_journal() {
    let dev = LoopDev::new(64 * MIB);
    let dir = scratch("verify-journal");
    let jdir = dir.join("journal");
    let mut snapshot = Vec::new();
    // Each kill comes after writes the checks need, counted in the journal, not after a fixed
    // time (a loaded machine took 700 ms to write 49 blocks): 300 before the snapshot, 300
    // after it (blocks rewritten since), then 0, 0.4 or 1 s more.
    for (k, ms) in [0u64, 400, 1000].into_iter().enumerate() {
        // The run empties the journal of the one before as it starts, after the count below
        // has begun: emptied here, the count starts from this run's first record.
        let _ = std::fs::remove_dir_all(&jdir);
        let mut child = command_in(&dir, &["run", "--spec", "oltp-4k", "--target", &dev.dev, "--working-set", "8M"])
            .args(["--allow-write", &dev.dev, "--journal", jdir.to_str().unwrap(), "--time", "60s", "-q"])
            .args(["--seed", &k.to_string(), "--no-history"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_journaled_writes(&jdir, 300);
        snapshot = std::fs::read(&dev.file).unwrap();
        wait_for_journaled_writes(&jdir, 300);
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (code, report) = verify(&dir, &["--journal", jdir.to_str().unwrap()]);
        assert_eq!(code, Some(0), "killed after {ms} ms: {report}");
        assert!(num(&report, "targets/0/checked_blocks") > 100.0, "{report}");
        assert_eq!(report["targets"][0]["path"], dev.dev.as_str());
    }
    // A lost write: a block whose last write completed, put back as it was half-way.
    let replayed = journal::replay(&jdir).unwrap();
    let (m, in_flight) = (&replayed[0].map, &replayed[0].in_flight);
    let bs = m.block as usize;
    let lost = (0..m.entries.len())
        .find(|&b| {
            in_flight[b] == 0
                && matches!(block::read(&snapshot[b * bs..(b + 1) * bs]),
                    Found::Block(w) if w.offset == (b * bs) as u64 && m.stamp(m.entries[b]).is_some_and(|s| s != w.stamp))
        })
        .expect("a block rewritten after the snapshot");
    poke(&dev.file, (lost * bs) as u64, &snapshot[lost * bs..(lost + 1) * bs]);
    let (code, report) = verify(&dir, &["--journal", jdir.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let found = report["targets"][0]["mismatches"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{report}");
    assert_eq!(found[0]["kind"], "stale");
    assert_eq!(found[0]["offset"].as_u64(), Some((lost * bs) as u64));
}

/// Verification refuses what it cannot check, in one line, before writing anything.
#[test]
fn bad_verification_requests_are_refused_in_one_line() {
    let dir = scratch("verify-bad");
    let file = dir.join("t.tst");
    let f = file.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let out = iogauge_in(&dir, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(&["run", "--spec", "random-read-4k", "--target", f, "--verify"], "nothing to check");
    let overlap = format!(
        "[test]\nverify = true\nrun = [\"oltp-4k\"]\n[[worker]]\ntargets = [\"{f}\"]\nworking_set = \"8M\"\n\
         [[worker]]\ntargets = [\"{f}\"]\noffset = \"4M\"\nworking_set = \"8M\"\n"
    );
    std::fs::write(dir.join("overlap.toml"), overlap).unwrap();
    refused(&["run", "overlap.toml"], "both use bytes 4194304..8388608");
    refused(
        &["run", "--spec", "oltp-64k", "--target", f, "--working-set", "64K", "--workers", "2", "--verify"],
        "smaller than a 64 KiB transfer",
    );
    refused(&["run", "--spec", "oltp-4k", "--target", f, "--journal", "/proc/iogauge-journal"], "--journal");
    assert!(!file.exists(), "a refused test created its file");
    refused(&["verify", "--target", f], "no verify map");
    refused(&["verify"], "needs --target");
    refused(&["verify", "--journal", dir.to_str().unwrap()], "journal.json");
}

/// A verified study leaves, per target, the map of its last point that wrote there: `iogauge
/// verify` afterwards checks every block that point wrote, and finds a byte flipped in one.
#[test]
fn a_verified_study_leaves_the_map_of_its_last_writing_point() {
    let dev = LoopDev::new(64 * MIB);
    let dir = scratch("verify-study");
    let job = format!(
        "[test]\nrun = [\"oltp-4k\"]\nramp = \"0s\"\ntime = \"1s\"\n\
         [[worker]]\ntargets = [\"{}\"]\nworking_set = \"16M\"\n[study]\noutstanding = [1, 4]\n",
        dev.dev
    );
    std::fs::write(dir.join("s.toml"), job).unwrap();
    ok_in(&dir, &["study", "s.toml", "--verify", "--allow-write", &dev.dev, "--no-history", "-q"]);
    let m = saved_map(&dev.dev);
    let written: Vec<usize> = (0..m.entries.len()).filter(|&b| m.stamp(m.entries[b]).is_some()).collect();
    assert!(written.len() > 100, "{} blocks written", written.len());
    // One test per point: the map names the writes of one test (the last point's only).
    assert_eq!(m.runs.len(), 1, "{:?}", m.runs);
    let (code, report) = verify(&dir, &["--target", &dev.dev]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(num(&report, "targets/0/checked_blocks") as usize, written.len(), "{report}");
    let bs = m.block as usize;
    let b = written[written.len() / 2];
    let mut block = std::fs::read(&dev.file).unwrap()[b * bs..(b + 1) * bs].to_vec();
    block[bs - 1] ^= 0x80;
    poke(&dev.file, (b * bs) as u64, &block);
    let (code, report) = verify(&dir, &["--target", &dev.dev]);
    assert_eq!(code, Some(1), "{report}");
    let found = report["targets"][0]["mismatches"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{report}");
    assert_eq!(found[0]["offset"].as_u64(), Some((b * bs) as u64));
    assert_eq!(found[0]["kind"], "corrupted");

    // Another verified study, killed once its first point writes (the kernel counts its
    // writes): the map of the data before it is gone.
    let long = std::fs::read_to_string(dir.join("s.toml")).unwrap().replace("time = \"1s\"", "time = \"60s\"");
    std::fs::write(dir.join("long.toml"), long).unwrap();
    let writes = || {
        let stat = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
        stat.split_whitespace().nth(4).unwrap().parse::<u64>().unwrap()
    };
    let before = writes();
    let args = ["study", "long.toml", "--verify", "--allow-write", &dev.dev, "--no-history", "-q"];
    let mut child = command_in(&dir, &args).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while writes() == before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(writes() > before, "the study wrote nothing in 60 s");
    let out = iogauge_in(&dir, &["verify", "--target", &dev.dev]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no verify map"), "{err}");
}

/// `--journal DIR` touches only a journal's own files: a user's files in DIR stay, and files
/// that look like a journal's without an iogauge journal there are refused, not deleted.
#[test]
fn a_journal_directory_keeps_what_is_not_the_journal() {
    let dir = scratch("journal-own");
    let jdir = dir.join("j");
    std::fs::create_dir_all(&jdir).unwrap();
    std::fs::write(jdir.join("notes.jnl"), "mine").unwrap();
    std::fs::write(jdir.join("readme.txt"), "mine too").unwrap();
    let j = jdir.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args =
            vec!["run", "--spec", "random-write-4k", "--target", "t.tst", "--file-size", "4M", "--ios", "500"];
        args.extend(["--journal", j, "-q", "--no-history"]);
        args.extend(extra);
        iogauge_in(&dir, &args)
    };
    for _ in 0..2 {
        let out = run(&[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read_to_string(jdir.join("notes.jnl")).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(jdir.join("readme.txt")).unwrap(), "mine too");
    }
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("w0.jnl"), "not iogauge's").unwrap();
    let out = iogauge_in(
        &dir,
        &["run", "--spec", "random-write-4k", "--target", "u.tst", "--file-size", "4M", "--ios", "10", "--journal"]
            .into_iter()
            .chain([other.to_str().unwrap(), "-q", "--no-history"])
            .collect::<Vec<_>>(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("w0.jnl is already there and is not a file of an iogauge journal"), "{err}");
    assert_eq!(std::fs::read_to_string(other.join("w0.jnl")).unwrap(), "not iogauge's");
    assert!(!dir.join("u.tst").exists(), "a refused test created its file");
}

/// Crafted or damaged maps and journals are input like any other: one line, exit 2, never a
/// panic, never "0 blocks checked" with exit 0.
#[test]
fn crafted_maps_and_journals_are_refused() {
    let dir = scratch("verify-crafted");
    let target = dir.join("t.dat");
    std::fs::File::create(&target).unwrap().set_len(1 << 20).unwrap();
    let t = target.to_str().unwrap();
    let head = |block: u64, blocks: u64, runs: &str| {
        format!(
            "{{\"schema\":\"iogauge.map/1\",\"path\":\"{t}\",\"block_bytes\":{block},\"runs\":{runs},\"blocks\":{blocks}}}\n"
        )
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (head(0, 0, "[]").into_bytes(), "block_bytes = 0"),
        (head(1, 2048, "[]").into_bytes(), "block_bytes = 1"),
        (head(4096, u64::MAX, "[]").into_bytes(), "blocks"),
        // One entry naming run 3 of a map that lists one run.
        ([head(4096, 1, "[7]").into_bytes(), (3u64 << 56 | 1).to_le_bytes().to_vec()].concat(), "damaged"),
        // An entry of run "0" that is not 0.
        ([head(4096, 1, "[7]").into_bytes(), 5u64.to_le_bytes().to_vec()].concat(), "damaged"),
    ];
    for (i, (bytes, says)) in cases.iter().enumerate() {
        let map = dir.join(format!("m{i}.map"));
        std::fs::write(&map, bytes).unwrap();
        let out = iogauge_in(&dir, &["verify", "--map", map.to_str().unwrap(), "--target", t]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {i}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "case {i}: {err}");
        assert!(err.contains(says) && !err.contains("panicked"), "case {i}: {err}");
    }
    for (i, (block, blocks)) in [(0u64, 10u64), (1, 10), (4096, u64::MAX)].into_iter().enumerate() {
        let j = dir.join(format!("j{i}"));
        std::fs::create_dir_all(&j).unwrap();
        let head = format!(
            "{{\"schema\":\"iogauge.journal/1\",\"block_bytes\":{block},\"targets\":[[\"{t}\",{blocks}]],\"runs\":[]}}"
        );
        std::fs::write(j.join("journal.json"), head).unwrap();
        let out = iogauge_in(&dir, &["verify", "--journal", j.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "journal {i}: {err}");
        assert!(err.contains("journal.json") && !err.contains("panicked"), "journal {i}: {err}");
    }
}

/// A map belongs to the target it was made on: another file attached to the same loop device
/// name is refused in one line (not 16,000 lines of "never written", which read as total data
/// loss). A second verified run killed with kill -9 leaves no map of the data before it, so
/// verify cannot call the newer data stale.
#[test]
fn a_map_is_of_its_own_target_and_never_outlives_a_write() {
    let dir = scratch("verify-identity");
    let dev = LoopDev::new(16 * MIB);
    let write = ["run", "--spec", "random-write-4k", "--target", &dev.dev, "--ios", "3000", "--verify"];
    let (code, _) = run_doc(&dir, &write);
    assert_eq!(code, Some(0));
    assert!(saved_map(&dev.dev).target.is_some(), "the map records what its target was");
    let (code, _) = verify(&dir, &["--target", &dev.dev]);
    assert_eq!(code, Some(0));

    // The same name, another file behind it.
    let other = scratch("verify-identity-other").join("other.img");
    std::fs::File::create(&other).unwrap().set_len(16 * MIB).unwrap();
    dev.rebind(&other);
    let out = iogauge_in(&dir, &["verify", "--target", &dev.dev]);
    let err = String::from_utf8_lossy(&out.stderr);
    dev.rebind(&dev.file);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("is not the target the verify map") && err.contains("nothing checked"), "{err}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));

    // A second verified run, killed mid-run: the first run's map is gone with the data it described.
    let mut long = write.to_vec();
    long.retain(|a| *a != "--ios" && *a != "3000");
    long.extend(["--time", "60s", "-q", "--no-history"]);
    let mut child = command_in(&dir, &long).stderr(std::process::Stdio::null()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let out = iogauge_in(&dir, &["verify", "--target", &dev.dev]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no verify map"), "{err}");
}

/// The same device under two names (a symlink, `/dev/../dev/loopN`) is one target: a verified
/// test naming both is refused before any I/O, instead of reporting one name's writes as
/// corruption of the other's.
#[test]
fn one_device_under_two_names_is_one_target() {
    let dev = LoopDev::new(16 * MIB);
    let dir = scratch("verify-twice");
    let link = dir.join("disk");
    std::os::unix::fs::symlink(&dev.dev, &link).unwrap();
    let dotted = format!("/dev/../dev/{}", dev.name());
    for other in [link.to_str().unwrap(), dotted.as_str()] {
        let out = iogauge_in(
            &dir,
            &["run", "--spec", "random-write-4k", "--target", &dev.dev, "--target", other, "--ios", "1000", "--verify"],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("are the same device: name it once"), "{err}");
    }
}
