//! `iogauge profile`: the first characterisation a storage engineer runs, one table like the
//! seeds' (random small-block reads and writes, the OLTP, file-server and web-server mixes of
//! seed 001, and 64 KiB streaming as in seeds 000/001).

use std::time::Duration;

/// The workloads, in the order they run and are printed.
pub const SUITE: [&str; 7] = [
    "random-read-4k",
    "random-write-4k",
    "oltp-8k",
    "file-server",
    "web-server",
    "streaming-read-64k",
    "streaming-write-64k",
];

/// Ramp-up per workload.
pub const RAMP: Duration = Duration::from_secs(1);
/// Recorded time per workload (short: a first look; `--time` for more).
pub const TIME: Duration = Duration::from_secs(4);
/// Outstanding I/Os per target unless `--outstanding` says otherwise.
pub const OUTSTANDING: u32 = 16;
