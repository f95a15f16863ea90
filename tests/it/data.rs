//! What written blocks hold (issue 23): every 4 KiB block unlike any other, or a share of them
//! repeating earlier ones (`dedupe:PCT`), with `compress:PCT` zeros in each. Checked on the
//! bytes a loop device holds after one sequential pass: SHA-1 of each block for duplicates,
//! and the real zstd (long-distance matching over the whole device, so it finds every repeat
//! and every block body it saw before) for the ratio.

use crate::common;

use std::collections::HashSet;

use common::*;

const DEVICE: u64 = 64 << 20;

/// The share of the device's 4 KiB blocks equal to an earlier one, and zstd's compressed size
/// over the original.
fn measure(dev: &str) -> (f64, f64) {
    let bytes = std::fs::read(dev).unwrap();
    let mut seen = HashSet::new();
    let blocks = bytes.chunks(4096).filter(|b| !seen.insert(*b)).count();
    let repeated = blocks as f64 / (bytes.len() / 4096) as f64;
    let out = std::process::Command::new("zstd")
        .args(["-q", "-c", "-3", "--long=27"])
        .stdin(std::fs::File::open(dev).unwrap())
        .output()
        .expect("zstd (apt-get install zstd)");
    assert!(out.status.success());
    (repeated, out.stdout.len() as f64 / bytes.len() as f64)
}

/// How far the share of repeated blocks may fall from the `share` asked, by chance alone: each
/// of the device's 4 KiB blocks repeats an earlier one with probability `share` (binomial).
fn chance(share: f64) -> f64 {
    share_bound(share, (DEVICE / 4096) as f64)
}

/// Writes the whole device once, sequentially, with `data`.
fn write_once(lo: &LoopDev, data: &str, bs: &str) {
    ok(&[
        "run",
        "--target",
        &lo.dev,
        "--allow-write",
        &lo.dev,
        "--rw",
        "write",
        "--bs",
        bs,
        "--qd",
        "8",
        "--bytes",
        "64M",
        "--data",
        data,
        "--no-history",
    ]);
}

#[test]
fn written_blocks_are_unique_or_repeat_the_share_asked() {
    let lo = LoopDev::new(DEVICE);
    // (pattern, transfer size, share of repeated blocks, compressed / original of a new block)
    for (data, bs, repeated, ratio) in [
        ("random", "4K", 0.0, 1.0),
        ("compress:50", "64K", 0.0, 0.5),
        ("compress:50,dedupe:30", "4K", 0.3, 0.5),
        ("dedupe:60", "16K", 0.6, 1.0),
        ("compress:80,dedupe:10", "4K", 0.1, 0.2),
    ] {
        write_once(&lo, data, bs);
        let (r, z) = measure(&lo.dev);
        eprintln!("{data} at {bs}: {r:.4} of blocks repeated, zstd {z:.4}");
        assert!(
            (r - repeated).abs() <= chance(repeated),
            "{data}: {r} of blocks repeat an earlier one, asked {repeated}"
        );
        // zstd stores each new block at the asked ratio and a repeat for almost nothing: within
        // 2 % (a block's 16-byte stamp is 0.4 % of it) of the ratio times the blocks that are new.
        let want = (1.0 - r) * ratio;
        assert!((z / want - 1.0).abs() < 0.02, "{data}: zstd ratio {z}, asked {want} ({r} repeated)");
    }
}

#[test]
fn fio_jobs_bring_their_compression_and_dedupe() {
    let lo = LoopDev::new(DEVICE);
    let dir = scratch("fiodedupe");
    let job = dir.join("d.fio");
    std::fs::write(
        &job,
        format!(
            "[d]\nfilename={}\nrw=write\nbs=16k\nsize=64m\ndirect=1\nioengine=io_uring\niodepth=8\n\
             buffer_compress_percentage=60\ndedupe_percentage=20\nrefill_buffers\n",
            lo.dev
        ),
    )
    .unwrap();
    let doc = json(&["run", job.to_str().unwrap(), "--allow-write", &lo.dev, "--no-history"]);
    assert_eq!(doc["config"]["test"]["data"], "compress:60,dedupe:20");
    let (r, z) = measure(&lo.dev);
    assert!((r - 0.2).abs() <= chance(0.2), "{r} of blocks repeated");
    assert!((z / ((1.0 - r) * 0.4) - 1.0).abs() < 0.02, "zstd ratio {z} ({r} repeated)");
    // Bad values: one line, exit 2, nothing written.
    for (bad, want) in [("--data=dedupe:120", "unknown data pattern"), ("--data=repeat,dedupe:10", "the same already")]
    {
        let out =
            iogauge(&["run", "--target", &lo.dev, "--allow-write", &lo.dev, "--rw", "write", bad, "--no-history"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.lines().count() == 1, "{err}");
    }
}
