//! The test settings (a job's `[test]` section), each declared once ([`keys!`]): the entry
//! below is the job file's key with its doc and default, the command-line flag that sets it
//! (when it has one) and its check. [`TestSettings`], [`TestSettingFlags`], their `Default`,
//! the flags' `--help`, the key checks, the `[test]` table of docs/job-file.md and the
//! workbench's settings form ([`KEYS`]) all come from it, so a new setting is one entry.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::keys::{Key, apply, keys};
use super::{Arrivals, ConfigError, Content, DataPattern, OnError, Rate, Seg, is_one, is_true, is_zero, test::at};
use crate::engine::EngineKind;
use crate::net::TargetName;
use crate::units::{parse_duration, parse_size, serde_duration, serde_size};

keys! {
    /// The `[test]` section: settings of the whole test (docs/job-file.md).
    TestSettings, KEYS, TestSettingFlags;

    /// Ramp-up before recording (e.g. 2s): run, not recorded.
    #[serde(with = "serde_duration")]
    ramp: Duration = Duration::from_secs(1), "\"1s\"",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => set;

    /// Recorded run time (e.g. 30s, 2m).
    ///
    /// A test that ends on `ios` or `bytes` ignores it: `max_time` caps that one (and `--time`
    /// sets `max_time` then, as fio's `--runtime` caps a job of a given `size`).
    #[serde(with = "serde_duration")]
    time: Duration = Duration::from_secs(10), "\"10s\"",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => (time_or_cap);

    /// Stop after this many I/Os in all (no ramp-up, every I/O recorded; split evenly over
    /// workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    ios: Option<u64> = None, "-",
        flag(long, value_name = "N") Option<u64> => some,
        check |n| *n == Some(0) => ("ios = 0: give a positive number of I/Os");

    /// Stop after this many bytes in all (no ramp-up).
    #[serde(with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    bytes: Option<u64> = None, "-",
        flag(long, value_parser = parse_size, value_name = "SIZE") Option<u64> => some,
        check |n| *n == Some(0) => ("bytes = 0: give a positive size");

    /// With `ios` or `bytes`: stop at this time at the latest, whichever comes first (fio's
    /// `runtime` without `time_based`).
    #[serde(default, with = "serde_duration::option", skip_serializing_if = "Option::is_none")]
    max_time: Option<Duration> = None, "-",
        check |m| m.is_some_and(|m| m.is_zero()) => ("max_time = 0: give a time such as 60s");

    /// Access specifications run one after another, each giving one entry of `results`, by
    /// workers that name no `spec` of their own.
    ///
    /// An entry is named by what ran: `oltp-8k`, or `oltp-8k+sql-server-log-64k` when a worker
    /// ran its own beside it. A `run` list (or `--spec`) when every worker names its own `spec`
    /// is refused: nothing would run it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    run: Vec<String> = Vec::new(), "[]";

    /// I/O engine: `io_uring` or `psync` (one I/O in flight per worker; the result warns).
    ///
    /// Under io_uring a worker of one outstanding I/O on a RAM disk without non-blocking I/O
    /// (zram) does it on its own thread, as psync, its `engine` says: through the io-wq thread
    /// io_uring would hand it to, zram on 2 CPUs did 54 K IOPS at 14.4 µs of CPU per I/O, on
    /// the worker's thread 390 K at 2.6 (`io_wq_threads` keeps io-wq). Where this process may
    /// not set up io_uring (`kernel.io_uring_disabled`, a container's seccomp profile), a test on
    /// a file or device is refused before it makes or writes anything, saying why.
    engine: EngineKind = EngineKind::IoUring, "\"io_uring\"",
        flag(long, value_name = "ENGINE") Option<EngineKind> => set;

    /// Interval of the time series (`intervals`) and of the live line.
    #[serde(with = "serde_duration")]
    interval: Duration = Duration::from_secs(1), "\"1s\"",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => set,
        check |d| *d < Duration::from_millis(10) => ("interval must be at least 10ms");

    /// Written data: `random` (incompressible), `repeat`, `repeat:0xNN` (every block alike),
    /// `compress:PCT`, and with `random` or `compress`, `dedupe:PCT` (`compress:50,dedupe:30`).
    ///
    /// `compress:PCT`: each 4 KiB block is PCT % zeros, the rest random (fio's
    /// `buffer_compress_percentage`). `dedupe:PCT`: PCT % of the written 4 KiB blocks repeat an
    /// earlier block of the worker (fio's `dedupe_percentage`).
    ///
    /// Every other written block is unlike any other ever written, even when a run rewrites one
    /// place again: each is made afresh (a random body XORed with a key of its number, and a
    /// 16-byte stamp of it at its end; about 85 ns per 4 KiB, as fio's `refill_buffers`), so a
    /// store that dedupes or compresses sees what was asked: zstd over the whole device gives
    /// (1 - dedupe) x (1 - compress) within 2 % (tests/it/data.rs).
    data: DataPattern = Content::Random.into(), "\"random\"",
        flag(long, value_name = "PATTERN") Option<DataPattern> => set;

    /// Size of a test file iogauge creates.
    ///
    /// One it made in an earlier run is reused as it is, and a result on one of another size
    /// says so in `warnings`.
    #[serde(with = "serde_size")]
    file_size: u64 = 1 << 30, "\"1G\"",
        flag(long, value_parser = parse_size, value_name = "SIZE") Option<u64> => set,
        // One 4 KiB block: the least a file opened with O_DIRECT on any device can be read in.
        check |n| *n < 4096 => ("file_size must be at least 4K");

    /// Files and block devices through the page cache instead of O_DIRECT (fio's `direct=0`;
    /// numbers may then come from memory, and the result warns).
    buffered: bool = false, "false",
        flag(long) bool => switch;

    /// Devices and existing files that may be written although they hold data (repeatable; see
    /// Safety in docs/job-file.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    allow_write: Vec<TargetName> = Vec::new(), "[]",
        flag(long, value_name = "PATH") Vec<TargetName> => add;

    /// Block devices that may be written although a filesystem on them is mounted, which
    /// corrupts that filesystem (repeatable; fio's `allow_mounted_write`): `allow_write` does
    /// not cover that.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    allow_mounted_write: Vec<TargetName> = Vec::new(), "[]",
        flag(long, value_name = "DEV") Vec<TargetName> => add;

    /// Seed of the offset and mix generators: the same seed gives the same I/O sequence, and
    /// the default is fixed, so runs are repeatable.
    seed: u64 = 0x0106_a09e, "17211550",
        flag(long, value_name = "N") Option<u64> => set;

    /// Spacing of rate-limited workers' I/Os: `uniform` (1/rate apart) or `poisson`
    /// (exponential gaps of mean 1/rate).
    arrivals: Arrivals = Arrivals::Uniform, "\"uniform\"";

    /// A cap of I/Os per second over all workers (every manager's under MPI), shared evenly
    /// among them (an open loop).
    ///
    /// Each worker runs at its share, or at its own `rate_iops`/`rate_mbps` if slower (a worker
    /// that cannot reach its share does not pass it on: the table then says the rate was not
    /// reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rate_iops: Option<f64> = None, "-",
        flag(id = "total_rate_iops", long = "total-rate-iops", value_name = "N", allow_negative_numbers = true) Option<f64> => some,
        check |r| super::worker::outside(r, Rate::IOPS) => ("rate_iops = {}: give 0.001 to 1,000,000,000 I/Os per second", super::worker::shown(r));

    /// A cap of MB/s (10^6 bytes/s) over all workers, shared evenly among them as `rate_iops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rate_mbps: Option<f64> = None, "-",
        flag(id = "total_rate_mbps", long = "total-rate-mbps", value_name = "N", allow_negative_numbers = true) Option<f64> => some,
        check |r| super::worker::outside(r, Rate::MBPS) => ("rate_mbps = {}: give 0.000001 to 10,000,000 MB/s", super::worker::shown(r));

    /// What a failed I/O does: `stop` the test there (the result keeps the I/Os before it and
    /// `first_error`), or `continue` (counted per target and errno).
    on_error: OnError = OnError::Stop, "\"stop\"",
        flag(long, value_name = "stop|continue") Option<OnError> => set;

    /// Under MPI, only the first N managers (ranks 0..N-1) run workers; the others wait
    /// (docs/many-hosts.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    managers: Option<u32> = None, "all",
        check |n| *n == Some(0) => ("managers = 0: give at least 1 manager");

    /// Under MPI, the longest a manager waits for the others at a meeting point during a run
    /// before it stops them all.
    #[serde(with = "serde_duration")]
    sync_timeout: Duration = Duration::from_secs(60), "\"60s\"",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => set,
        check |d| *d < Duration::from_secs(1) => ("sync_timeout must be at least 1s");

    /// Give up an I/O outstanding this long (ETIMEDOUT); a test where a worker completes no I/O
    /// for this long stops.
    ///
    /// The I/Os still in flight this long after the stop are given up as errors on their
    /// target; a network target's server gets this long to answer a connection. A stop of the
    /// test's process (Ctrl-Z, SIGSTOP) is not the target's: an I/O in flight across it is not
    /// timed out, and the check for a worker that completes nothing starts again when the
    /// process goes on.
    #[serde(with = "serde_duration")]
    io_timeout: Duration = Duration::from_secs(30), "\"30s\"",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => set,
        check |d| *d < Duration::from_millis(10) => ("io_timeout must be at least 10ms");

    /// Connections each worker opens to each network target (`nbd://`; `iscsi://`: sessions),
    /// its I/Os spread over them round-robin: the connections per session of seed 000.
    #[serde(skip_serializing_if = "is_one")]
    connections: u32 = 1, "1",
        flag(long, value_name = "N") Option<u32> => set,
        check |n| !(1..=64).contains(n) => ("connections = {n}: give 1 to 64 connections per network target");

    /// I/Os a worker hands the kernel in one system call (io_uring; fio's
    /// `iodepth_batch_submit`).
    ///
    /// At 1 each I/O goes to its device as soon as it is drawn, as fio's do by default; N
    /// saves system calls, and a batch's first I/Os reach the device later (the kernel holds
    /// a batch of more than 2 until its last is in): a loop device at 32 outstanding, 2 CPUs,
    /// did 0.85x the IOPS with every ready I/O in one call. A journaled test (`journal`)
    /// submits what it issues together, once the journal holds it, and so does a worker whose
    /// I/Os all go to the kernel's io-wq threads, which the kernel hands over one by one as it
    /// reads them: straight there (`io_wq_threads`, FUSE), or, from 8 outstanding I/Os on,
    /// after a failed try on the worker's thread (zram: 4 workers at 32 outstanding on 16 cores
    /// went from 0.83-0.87x tuned fio's IOPS to 1.14x).
    #[serde(skip_serializing_if = "is_one")]
    submit_batch: u32 = 1, "1",
        flag(long, value_name = "N") Option<u32> => set,
        check |n| *n == 0 => ("submit_batch = 0: give 1 (each I/O to the kernel as soon as it is drawn) or more (fewer system calls)");

    /// Completions a worker waits for at once (at most those in flight; fio's
    /// `iodepth_batch_complete_min`).
    ///
    /// At 1 every I/O is stamped when the worker first sees it, its response time its own; N
    /// saves wake-ups (CPU per I/O) and overstates a response time by up to N - 1 other
    /// completions' time, which the result's `warnings` says.
    #[serde(skip_serializing_if = "is_one")]
    completion_batch: u32 = 1, "1",
        flag(long, value_name = "N") Option<u32> => set,
        check |n| *n == 0 => ("completion_batch = 0: give 1 (each I/O stamped when it completes) or more (fewer wake-ups)");

    /// Spread each worker's I/Os on targets that cannot take I/O without blocking the worker
    /// (zram) over up to N of the kernel's io-wq threads at once, sent straight to them: more
    /// CPUs per worker.
    ///
    /// By default such I/Os are tried on the worker's thread, then served by one io-wq thread
    /// at a time (another only while one sleeps), as fio's are. A worker's `cpus` hold its
    /// io-wq threads to the same CPUs. A target found asleep inside its I/Os (FUSE, a network
    /// block device) gets one io-wq thread per outstanding I/O either way.
    #[serde(skip_serializing_if = "Option::is_none")]
    io_wq_threads: Option<u32> = None, "none",
        flag(long, value_name = "N") Option<u32> => some,
        check |n| n.is_some_and(|n| !(1..=4096).contains(&n)) => ("io_wq_threads = {}: give 1 to 4096 threads per worker", n.unwrap_or_default());

    /// Hold every CPU of the host to wake within this long while the test runs (e.g. 0us):
    /// the kernel's CPU latency QoS (/dev/cpu_dma_latency; root's alone by default).
    ///
    /// An idle CPU sleeps (a C-state, a virtual machine's halted vCPU), and a completion or a
    /// thread woken on it waits for it to wake: at few outstanding I/Os that is a large share
    /// of each response time, the host's and not the storage's. 0us keeps the CPUs polling
    /// instead of sleeping: a loop device at 1 outstanding on a 2-CPU VM whose idle vCPUs halt
    /// did 28 K IOPS, 83 K held (fio: 37 K). Where a device's thread is the bottleneck (zram at
    /// 32 outstanding, served by one io-wq thread), a worker woken sooner is woken more often,
    /// each time by that thread: it cost 20-28 % of the IOPS there. The hold ends with the test
    /// (no setting of the host outlives it), and while it lasts the idle CPUs spend power
    /// polling.
    #[serde(default, with = "serde_duration::option", skip_serializing_if = "Option::is_none")]
    cpu_latency: Option<Duration> = None, "none",
        flag(long, value_parser = parse_duration, value_name = "DURATION") Option<Duration> => some,
        check |d| d.is_some_and(|d| d > Duration::from_secs(1)) => ("cpu_latency = {}: give at most 1s (0us keeps every CPU awake)", crate::units::format_duration(d.unwrap_or_default()));

    /// The test's nice value (fio's `nice`): from 19, the least CPU time beside the host's
    /// other work, to -20, the most (below 0 needs root).
    ///
    /// It is set on the test's threads (the workers and the io-wq threads serving them) and
    /// on the groups by which the kernel shares CPU time before it shares it between threads,
    /// so that it weighs against other sessions: each worker's CPU cgroup, where the test
    /// makes one for each (weighted as a thread of that nice value: `host.worker_cgroups`),
    /// and, where the test leads a session of its own, that session's
    /// (`/proc/self/autogroup`). For a host that must keep serving while it is measured where
    /// the workers share one group (cgroup v2, not root): on 2 CPUs, two workers at 32
    /// outstanding on zram in one group kept a process of another session from a CPU for
    /// 0.4-2.8 s in 10 of 11 runs of 3 s, for at most 3.3 ms at nice 5 (11 of 11), at the same
    /// IOPS (nice 1: 3 of 4 still held). Beside busy work of other sessions the test then gets
    /// less CPU time: one worker on zram beside two CPU burners did 0.6x the IOPS at nice 5
    /// (docs/performance.md, issue 45, entries 25 and 26).
    #[serde(skip_serializing_if = "Option::is_none")]
    nice: Option<i32> = None, "none",
        flag(long, value_name = "N", allow_negative_numbers = true) Option<i32> => some,
        check |n| n.is_some_and(|n| !(-20..=19).contains(&n)) => ("nice = {}: give -20 (the most CPU time) to 19 (the least)", n.unwrap_or_default());

    /// Verify data: stamp every written block with a header and CRC-32C, check every read of a
    /// block the test wrote, and leave a map of the last writes for `iogauge verify`
    /// (docs/safety-and-trust.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    verify: bool = false, "false",
        flag(long) bool => switch;

    /// Record every write in this directory, durably, before it is issued and after it
    /// completes, for `iogauge verify --journal DIR` after a crash (implies `verify`).
    #[serde(skip_serializing_if = "Option::is_none")]
    journal: Option<PathBuf> = None, "none",
        flag(long, value_name = "DIR") Option<PathBuf> => some;

    /// Write every worker's completions into this directory as fio's logs
    /// (`NAME_lat/clat/bw/iops.N.log`; docs/interop.md), for fio's plotting tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    log_dir: Option<PathBuf> = None, "none",
        flag(long, value_name = "DIR") Option<PathBuf> => some;

    /// With `log_dir`: one line per window of this many ms and direction (fio's
    /// `log_avg_msec`); 0, one line per I/O.
    #[serde(skip_serializing_if = "is_zero")]
    log_avg_ms: u64 = 0, "0",
        flag(long = "log-avg", value_name = "MS", requires = "log_dir") Option<u64> => set;

    /// With `log_dir`: each line gives its I/O's offset, fio 3's `time, value, ddir, bs,
    /// offset, prio` (fio's `log_offset=1`); false, fio 3's `time, value, ddir, bs, prio`
    /// (fio's default, `log_offset=0`).
    ///
    /// The priority is 0: iogauge issues every I/O at its thread's.
    #[serde(skip_serializing_if = "is_true")]
    log_offsets: bool = true, "true",
        flag(long, value_name = "0|1", requires = "log_dir", value_parser = clap::builder::BoolishValueParser::new()) Option<bool> => set;

    /// With `log_dir`: every worker's lines in one file of each kind, `NAME_lat.log`,
    /// `NAME_clat.log`... (fio's `per_job_logs=0` with `write_lat_log=NAME`), each worker's
    /// after the one before, workload after workload; else a file per worker and workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    log_name: Option<String> = None, "none",
        flag(long, value_name = "NAME", requires = "log_dir") Option<String> => some,
        check |n| n.as_ref().is_some_and(|n| n.is_empty() || n.contains('/')) => ("log_name = {:?}: give a file name, without a directory (log_dir is the directory)", n.as_deref().unwrap_or_default());

    /// Write every I/O the test issues into this file as fio's iolog (version 3, fio's
    /// `write_iolog`), in the order issued, every worker's and workload's, times in µs from
    /// the test's start: fio's `read_iolog` replays it, and so does a worker's `replay`.
    #[serde(skip_serializing_if = "Option::is_none")]
    iolog: Option<PathBuf> = None, "none",
        flag(long, value_name = "FILE") Option<PathBuf> => some;
}

impl TestSettings {
    /// Whether written data is verified (`verify`, or a journal).
    pub fn verifying(&self) -> bool {
        self.verify || self.journal.is_some()
    }

    /// Whether the test ends on a count of I/Os or bytes (else at a time).
    pub fn counted(&self) -> bool {
        self.ios.is_some() || self.bytes.is_some()
    }

    /// The cap over all workers.
    pub fn rate(&self) -> Rate {
        Rate { iops: self.rate_iops, mbps: self.rate_mbps }
    }
}

/// `--time`: the run time, or with a count to end on (a fio job's `size`), the cap of it, as
/// fio's `--runtime` is, rather than go unheard.
fn time_or_cap(t: &mut TestSettings, flag: &Option<Duration>) {
    if let Some(v) = *flag {
        match t.counted() {
            true => t.max_time = Some(v),
            false => t.time = v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_shown_are_the_defaults() {
        let read = |line: &str| toml::from_str::<super::super::Job>(&format!("[test]\n{line}")).ok().map(|j| j.test);
        super::super::keys::tests::the_defaults_shown_are_the_defaults(KEYS, read);
    }

    /// The `[test]` table of docs/job-file.md is the keys' own (`IOGAUGE_BLESS=1 cargo test
    /// --lib settings` writes it after a change).
    #[test]
    fn the_job_file_docs_list_every_key_as_declared() {
        use clap::Args;
        let flags = TestSettingFlags::augment_args(clap::Command::new("flags"));
        super::super::keys::tests::the_docs_table_is("test", KEYS, &flags);
    }
}
