//! The result document (`iogauge.result/2`), documented in docs/result-schema.md.
//!
//! Every level (totals, workers, targets) carries the same [`Metrics`], computed from raw
//! [`IoStats`] that are kept in the document (`raw`, histograms included), so results from
//! several documents or hosts can be merged again exactly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Job;
use crate::cpu::CpuUsage;
use crate::error::Unreadable;
use crate::host::HostInfo;
use crate::stats::{DirStats, Histogram, IoStats, Op};
use crate::targets::TargetInfo;
use crate::verify::block::VerifyResult;

/// The schema name and version; a change that breaks readers bumps the number.
/// 2: a file-system test's threads have no `engine`, `outstanding` or `targets`.
pub const SCHEMA: &str = "iogauge.result/2";

/// Every version read: this one and those before it (a version-1 document reads as it was
/// written, its file-system threads with the `psync` engine it said).
pub const READ: [&str; 2] = ["iogauge.result/1", SCHEMA];

/// Percentiles reported, as (key, quantile).
pub const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 0.50),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p99.99", 0.9999),
    ("p99.999", 0.99999),
];

/// A manager's machine and targets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManagerInfo {
    /// MPI rank (0 on a single host).
    pub rank: u32,
    /// Its machine.
    pub host: HostInfo,
    /// What each of its targets is.
    pub target_info: Vec<TargetInfo>,
    /// How many workers it runs (0: it only waits, e.g. beyond `test.managers`).
    pub workers: usize,
}

/// A whole test: one entry in `results` per access specification run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultDoc {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// iogauge's version.
    pub tool_version: String,
    /// When the test started (RFC 3339, UTC).
    pub started_at: String,
    /// Wall time of the whole test, set-up included (s).
    pub duration_s: f64,
    /// The machine of manager 0 (the one that wrote the document).
    pub host: HostInfo,
    /// The resolved test: a job file that reruns it.
    pub config: Job,
    /// What each target is.
    pub target_info: Vec<TargetInfo>,
    /// One per access specification run.
    pub results: Vec<WorkloadResult>,
    /// Things to know when reading the numbers.
    pub warnings: Vec<String>,
    /// True if the test was stopped before its end.
    pub interrupted: bool,
    /// Why the test ended before its last workload, when one could not run (a target that
    /// stopped answering between workloads): `results` holds the workloads before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// Every manager (MPI rank; one on a single host): its machine and targets.
    #[serde(default)]
    pub managers: Vec<ManagerInfo>,
    /// Another tool's results this document was read from (fio's JSON, Iometer's results
    /// file), by `compare` and `report`: what iogauge knows of that run is what the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_from: Option<String>,
}

/// One manager's part of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManagerResult {
    /// MPI rank.
    pub rank: u32,
    /// Host name.
    pub host: String,
    /// Its workers.
    pub workers: usize,
    /// Its workers and targets together, and its machine's CPU.
    pub totals: Totals,
    /// When it started recording (ns since the Unix epoch, its own clock).
    pub record_start_unix_ns: u64,
    /// When it stopped recording.
    pub record_end_unix_ns: u64,
}

/// One access specification's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Name of the specification (or the workers' specifications joined by `+`).
    pub spec: String,
    /// When recording started (RFC 3339, UTC).
    pub started_at: String,
    /// The recorded window (s).
    pub duration_s: f64,
    /// Ramp-up before it (s).
    pub ramp_s: f64,
    /// All workers and targets together.
    pub totals: Totals,
    /// Each worker.
    pub workers: Vec<WorkerResult>,
    /// Each target, all its workers together.
    pub targets: Vec<TargetResult>,
    /// Time series over the recorded window.
    pub intervals: Vec<Interval>,
    /// Each manager that ran workers.
    #[serde(default)]
    pub managers: Vec<ManagerResult>,
    /// Latest minus earliest start of recording among them (ms).
    #[serde(default)]
    pub start_skew_ms: f64,
    /// The first failed I/O (with `on_error = "stop"`, where the run ended).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<FirstError>,
    /// With `--verify`: blocks checked when read back, and those that did not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyResult>,
    /// A file-system test's figures (`iogauge fs`), beside the totals of the whole phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsFigures>,
    /// A replayed trace: what it was and how well the replay kept to its times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayResult>,
}

/// A workload that replayed a trace (`iogauge replay`, a worker's `replay`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// The trace file.
    pub trace: String,
    /// Its format: `iogauge capture`, `fio iolog v2`, `fio iolog v3`.
    pub format: String,
    /// I/Os in the trace.
    pub trace_ios: u64,
    /// `1` (the trace's own times), another factor, or `max` (as fast as possible).
    pub speed: String,
    /// How offsets past the working set were mapped: `none`, `wrap`, `scale`.
    pub fit: String,
    /// At the trace's times: how late each I/O was issued against its schedule. Absent at
    /// `max`, where nothing is due at a time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<Lateness>,
}

/// How late a replay issued its I/Os: percentiles of (issued - due).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lateness {
    /// I/Os issued.
    pub ios: u64,
    /// Mean lateness (ms).
    pub mean_ms: f64,
    /// Percentiles (ms), keyed as the response times' are.
    pub percentiles_ms: BTreeMap<String, f64>,
    /// Share of I/Os issued more than 1 ms late (%).
    pub late_over_1ms_pct: f64,
    /// Every I/O's lateness (ns), so managers' parts add up.
    pub histogram: Histogram,
}

impl Lateness {
    /// The figures of a histogram of lateness (ns).
    pub fn of(histogram: Histogram) -> Lateness {
        let ios = histogram.total();
        let sum: f64 = histogram.buckets().map(|(lo, hi, n)| (lo + hi) as f64 / 2.0 * n as f64).sum();
        let late = ios - histogram.count_between(0, 1_000_000);
        Lateness {
            ios,
            mean_ms: if ios > 0 { ms(sum / ios as f64) } else { 0.0 },
            percentiles_ms: percentiles_of(&histogram, None),
            late_over_1ms_pct: if ios > 0 { late as f64 * 100.0 / ios as f64 } else { 0.0 },
            histogram,
        }
    }
}

/// One test of a file-system study at one thread count, as IOzone's throughput mode reports
/// it. The totals' `mbps` is the parent's figure: all bytes over the phase's wall time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsFigures {
    /// The test: `write`, `rewrite`, `read`...
    pub test: String,
    /// Threads, each with files of its own.
    pub threads: u32,
    /// Files in all.
    pub files: u64,
    /// Each file's size (bytes).
    pub file_bytes: u64,
    /// Bytes per read or write.
    pub record_bytes: u64,
    /// `buffered` (through the page cache) or `direct` (O_DIRECT).
    pub io: String,
    /// An fsync of each file ends a writing test inside its time.
    pub fsync_included: bool,
    /// Closing each file is inside the time.
    pub close_included: bool,
    /// The page cache was emptied before the test.
    pub caches_dropped: bool,
    /// The file system and the device under the directory: "ext4 on loop3".
    pub filesystem: String,
    /// All files together (bytes), beside the host's memory.
    pub file_set_bytes: u64,
    /// The host's memory (bytes).
    pub host_memory_bytes: u64,
    /// IOzone's "children see": the sum of each thread's own rate, each measured up to the
    /// moment the first thread finished (stonewalling), while all of them ran.
    pub children_mbps: f64,
    /// The same in 2^20 bytes/s.
    pub children_mibps: f64,
    /// IOzone's "parent sees": all bytes over the wall time from the start to the last thread's end.
    pub parent_mbps: f64,
    /// The same in 2^20 bytes/s.
    pub parent_mibps: f64,
    /// The slowest thread's rate (10^6 bytes/s, stonewalled as the children's).
    pub thread_min_mbps: f64,
    /// The fastest thread's rate.
    pub thread_max_mbps: f64,
    /// The mean of the threads' rates.
    pub thread_avg_mbps: f64,
    /// Records per second the children see (IOzone's `-O`).
    pub children_ops_per_s: f64,
    /// When the first thread finished, from the start (s).
    pub stonewall_s: f64,
    /// The fewest bytes a thread had moved by then (IOzone's "min xfer").
    pub min_xfer_bytes: u64,
}

/// Where and how the first I/O of a run failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstError {
    /// Its manager's rank.
    pub manager: u32,
    /// Its worker.
    pub worker: String,
    /// Its target.
    pub path: String,
    /// Where on the target.
    pub offset: u64,
    /// A write (else a read, trim or flush: see `op`).
    pub write: bool,
    /// What it did (absent from documents written before trims and flushes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    /// errno (0: a short transfer).
    pub errno: i32,
    /// What it means.
    pub text: String,
    /// When it completed, from the start of recording (s; negative: during ramp-up).
    pub at_s: f64,
}

impl std::fmt::Display for FirstError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = self.op.unwrap_or(Op::data(self.write)).doing();
        write!(f, "{} {what} {} at offset {} ({})", self.text, self.path, self.offset, self.worker)
    }
}

/// Totals of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Totals {
    /// The measurements.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// I/Os asked to be in flight (workers x targets x outstanding).
    pub outstanding: u64,
    /// CPU over the recorded window.
    pub cpu: CpuUsage,
}

impl Totals {
    /// The figures the workload is known by.
    pub fn headline(&self) -> Headline {
        // An empty usage is one not measured (fio's results read back): iogauge's own always
        // has each CPU's share.
        let measured = self.cpu != CpuUsage::default();
        Headline {
            cpu_pct: measured.then_some(self.cpu.all.utilization_pct),
            iops_per_cpu_pct: measured.then_some(self.cpu.effectiveness),
            ..Headline::of_part(&self.metrics)
        }
    }
}

impl Headline {
    /// The figures of a part of a workload (a worker, a target): no CPU of its own.
    pub fn of_part(m: &Metrics) -> Headline {
        Headline {
            iops: m.iops,
            mbps: m.mbps,
            avg_response_ms: m.avg_response_ms,
            p50_response_ms: m.percentiles_ms.get("p50").copied(),
            p99_response_ms: m.percentiles_ms.get("p99").copied(),
            cpu_pct: None,
            iops_per_cpu_pct: None,
        }
    }
}

/// The figures a workload is known by, as the seeds' tables give them: what the table, the
/// report, `compare` and a study's summaries show of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// I/Os per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// Mean response time (ms).
    pub avg_response_ms: Option<f64>,
    /// Median response time (ms).
    pub p50_response_ms: Option<f64>,
    /// 99th percentile response time (ms).
    pub p99_response_ms: Option<f64>,
    /// CPU utilisation of the machine (%); none for a worker or target alone.
    pub cpu_pct: Option<f64>,
    /// Iometer's CPU effectiveness: IOPS per CPU utilisation %.
    pub iops_per_cpu_pct: Option<f64>,
}

/// Which rows a table shows under each workload's totals: none, one per worker or one per
/// target (Iometer's WORKER and DISK rows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Detail {
    /// The workload's totals only (and read and write apart).
    #[default]
    Totals,
    /// A row per worker.
    Workers,
    /// A row per target.
    Targets,
}

impl std::str::FromStr for Detail {
    type Err = Unreadable;
    fn from_str(s: &str) -> Result<Self, Unreadable> {
        match s {
            "totals" => Ok(Detail::Totals),
            "workers" | "worker" => Ok(Detail::Workers),
            "targets" | "target" | "disks" => Ok(Detail::Targets),
            _ => Err(Unreadable(format!("--detail {s}: use workers or targets"))),
        }
    }
}

impl WorkloadResult {
    /// Whether the recorded window is long enough for CPU figures
    /// ([`crate::cpu::MIN_WINDOW_S`]).
    pub fn cpu_measured(&self) -> bool {
        self.duration_s >= crate::cpu::MIN_WINDOW_S
    }

    /// A result table's CPU %, own % and IOPS/CPU%: `-` each over a window too short for them.
    pub fn cpu_cells(&self) -> [String; 3] {
        if !self.cpu_measured() {
            return ["-", "-", "-"].map(String::from);
        }
        let (cpu, pct) = (&self.totals.cpu, |v: f64| format!("{v:.1}"));
        [pct(cpu.all.utilization_pct), pct(cpu.own_pct), crate::format::thousands(cpu.effectiveness)]
    }

    /// The parts `detail` asks for, labelled: each worker or each target (with its manager's
    /// rank when there are several).
    pub fn parts(&self, detail: Detail) -> Vec<(String, &Metrics)> {
        let ranked = |rank: u32, name: &str| {
            if self.managers.len() > 1 { format!("{name} (manager {rank})") } else { name.to_string() }
        };
        match detail {
            Detail::Totals => Vec::new(),
            Detail::Workers => self.workers.iter().map(|w| (ranked(w.manager, &w.name), &w.metrics)).collect(),
            Detail::Targets => self.targets.iter().map(|t| (ranked(t.manager, &t.path), &t.metrics)).collect(),
        }
    }
}

/// One worker's part of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerResult {
    /// Worker name.
    pub name: String,
    /// Its manager's rank.
    #[serde(default)]
    pub manager: u32,
    /// Its access specification.
    pub spec: String,
    /// Engine and kernel features used; absent for a file-system test's thread, which reads
    /// and writes its files itself (pread/pwrite, one record at a time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Outstanding I/Os per target; absent for a file-system test's thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outstanding: Option<u32>,
    /// The CPUs its thread ran on (its affinity: `cpus` if given, else the process's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// The NUMA nodes of those CPUs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_nodes: Vec<u32>,
    /// How long its thread was ready to run but waited for a CPU while recording (the
    /// kernel's run delay: each wake-up's latency, and the time the host's other work held
    /// it). Absent where the kernel keeps no count, and in imported documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_for_cpu_ms: Option<f64>,
    /// How many waits that was (each ends when the thread is given a CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_waits: Option<u64>,
    /// The measurements.
    #[serde(flatten)]
    pub metrics: Metrics,
    /// Each of its targets.
    pub targets: Vec<TargetResult>,
}

impl WorkerResult {
    /// Whether its engine did one I/O at a time (psync, asked for or standing in for io_uring
    /// on a RAM disk), whatever its outstanding I/Os say.
    pub fn one_io_at_a_time(&self) -> bool {
        self.engine.as_deref().is_some_and(|e| e.starts_with("psync"))
    }
}

/// One target's part (of a worker, or of the run).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    /// Target path or `null`.
    pub path: String,
    /// Its manager's rank (the same path on two managers is two targets).
    #[serde(default)]
    pub manager: u32,
    /// First byte of the working set.
    pub start_offset: u64,
    /// Size of the working set (bytes).
    pub working_set_bytes: u64,
    /// I/Os in flight asked on it (outstanding per worker, summed over its workers).
    pub outstanding: u64,
    /// A block device's own count over the recorded window, from the kernel (the run's
    /// entry of each target; none in a worker's, or for a target that is no block device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceTime>,
    /// The measurements.
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// What the block layer counted on a device over the recorded window (/sys/block's stat, as
/// iostat reads it): every process's I/O there, reads, writes and discards.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceTime {
    /// I/Os that reached the device (a request merged into another counts as its own).
    pub ios: u64,
    /// Their requests' mean time from issue to completion in the block layer (ms): the
    /// device's part of a response time. The kernel sums these times in ns and shows the sum
    /// in ms, so the mean is within 1 ms / requests. Null with no I/O.
    pub avg_ms: Option<f64>,
    /// The requests the device held at once, on average over the window (their times summed,
    /// over the window: iostat's `aqu-sz`): of a target's outstanding I/Os, those at the
    /// device, the rest being in the host's hands. Absent in documents written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_in_flight: Option<f64>,
}

/// One sample of the time series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interval {
    /// End of the sample, from the start of recording (s).
    pub t_s: f64,
    /// Length of the sample (s).
    pub duration_s: f64,
    /// Completed I/Os per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// Mean response time (ms); null with no I/O.
    pub avg_response_ms: Option<f64>,
    /// CPU utilisation % of the machine.
    pub cpu_pct: f64,
    /// Percentiles of the response times of the I/Os completed in the sample (ms; the keys of
    /// `totals.percentiles_ms`), from `histogram`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles_ms: BTreeMap<String, f64>,
    /// Those response times (every operation's), whole, so samples of several managers merge
    /// exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
}

/// Errors of one kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorKind {
    /// errno (0: a short transfer).
    pub errno: i32,
    /// What it means.
    pub text: String,
    /// How many I/Os failed so.
    pub count: u64,
}

/// The measurements of any set of I/Os. Units are in the names: `_mbps` is 10^6 bytes/s,
/// `_mibps` 2^20 bytes/s, `_ms` milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // the names say it all; docs/result-schema.md has the table
pub struct Metrics {
    pub ios: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub bytes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mbps: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    pub mibps: f64,
    pub read_mibps: f64,
    pub write_mibps: f64,
    pub avg_response_ms: Option<f64>,
    pub avg_read_response_ms: Option<f64>,
    pub avg_write_response_ms: Option<f64>,
    pub min_response_ms: Option<f64>,
    pub max_response_ms: Option<f64>,
    pub max_read_response_ms: Option<f64>,
    pub max_write_response_ms: Option<f64>,
    pub percentiles_ms: BTreeMap<String, f64>,
    pub read_percentiles_ms: BTreeMap<String, f64>,
    pub write_percentiles_ms: BTreeMap<String, f64>,
    pub errors: u64,
    pub read_errors: u64,
    pub write_errors: u64,
    /// Trims: counted in `ios` and the response times, not in `bytes` (nothing transferred).
    #[serde(default)]
    pub trim_ios: u64,
    #[serde(default)]
    pub trim_bytes: u64,
    #[serde(default)]
    pub trim_iops: f64,
    #[serde(default)]
    pub trim_mbps: f64,
    #[serde(default)]
    pub trim_mibps: f64,
    #[serde(default)]
    pub avg_trim_response_ms: Option<f64>,
    #[serde(default)]
    pub max_trim_response_ms: Option<f64>,
    #[serde(default)]
    pub trim_percentiles_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub trim_errors: u64,
    /// Flushes: counted in `ios` and the response times; no bytes.
    #[serde(default)]
    pub flush_ios: u64,
    #[serde(default)]
    pub flush_iops: f64,
    #[serde(default)]
    pub avg_flush_response_ms: Option<f64>,
    #[serde(default)]
    pub max_flush_response_ms: Option<f64>,
    #[serde(default)]
    pub flush_percentiles_ms: BTreeMap<String, f64>,
    #[serde(default)]
    pub flush_errors: u64,
    pub error_kinds: Vec<ErrorKind>,
    /// The raw counters and histograms these figures come from.
    pub raw: IoStats,
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

fn avg(d: &DirStats) -> Option<f64> {
    (d.ios > 0).then(|| ms(d.response_sum_ns as f64 / d.ios as f64))
}

fn max(d: &DirStats) -> Option<f64> {
    (d.ios > 0).then(|| ms(d.response_max_ns as f64))
}

fn percentiles(d: &DirStats) -> BTreeMap<String, f64> {
    percentiles_of(&d.histogram, Some((d.response_min_ns, d.response_max_ns)))
}

/// The [`PERCENTILES`] of `h` in ms; bucket midpoints can lie outside what was seen, so they
/// are clamped to the exact extremes where known.
pub fn percentiles_of(h: &Histogram, extremes: Option<(u64, u64)>) -> BTreeMap<String, f64> {
    PERCENTILES
        .iter()
        .filter_map(|&(k, q)| {
            let v = h.quantile(q)?;
            let v = extremes.map_or(v, |(lo, hi)| v.clamp(lo, hi));
            Some((k.to_string(), ms(v as f64)))
        })
        .collect()
}

/// The text of an errno.
pub fn errno_text(errno: i32) -> String {
    match errno {
        0 => "short transfer".into(),
        // iogauge's own verdict on an I/O that never completed (a device may say it too).
        libc::ETIMEDOUT => "timed out: no answer within io_timeout (ETIMEDOUT)".into(),
        _ => std::io::Error::from_raw_os_error(errno).to_string(),
    }
}

/// Which I/Os some figures count: all, or one operation's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Every operation.
    All,
    /// One operation only.
    Only(Op),
}

/// One direction's figures of a [`Metrics`], for the rows of tables.
#[derive(Debug, Clone, Copy)]
pub struct DirFigures<'a> {
    /// I/Os per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// 2^20 bytes per second.
    pub mibps: f64,
    /// Mean response time.
    pub avg_response_ms: Option<f64>,
    /// Response-time percentiles.
    pub percentiles_ms: &'a BTreeMap<String, f64>,
    /// Longest response time.
    pub max_response_ms: Option<f64>,
    /// Failed I/Os.
    pub errors: u64,
}

impl Metrics {
    /// The figures of direction `d`.
    pub fn of(&self, d: Dir) -> DirFigures<'_> {
        let m = self;
        match d {
            Dir::All => DirFigures {
                iops: m.iops,
                mbps: m.mbps,
                mibps: m.mibps,
                avg_response_ms: m.avg_response_ms,
                percentiles_ms: &m.percentiles_ms,
                max_response_ms: m.max_response_ms,
                errors: m.errors,
            },
            Dir::Only(Op::Read) => DirFigures {
                iops: m.read_iops,
                mbps: m.read_mbps,
                mibps: m.read_mibps,
                avg_response_ms: m.avg_read_response_ms,
                percentiles_ms: &m.read_percentiles_ms,
                max_response_ms: m.max_read_response_ms,
                errors: m.read_errors,
            },
            Dir::Only(Op::Write) => DirFigures {
                iops: m.write_iops,
                mbps: m.write_mbps,
                mibps: m.write_mibps,
                avg_response_ms: m.avg_write_response_ms,
                percentiles_ms: &m.write_percentiles_ms,
                max_response_ms: m.max_write_response_ms,
                errors: m.write_errors,
            },
            Dir::Only(Op::Trim) => DirFigures {
                iops: m.trim_iops,
                mbps: m.trim_mbps,
                mibps: m.trim_mibps,
                avg_response_ms: m.avg_trim_response_ms,
                percentiles_ms: &m.trim_percentiles_ms,
                max_response_ms: m.max_trim_response_ms,
                errors: m.trim_errors,
            },
            Dir::Only(Op::Flush) => DirFigures {
                iops: m.flush_iops,
                mbps: 0.0,
                mibps: 0.0,
                avg_response_ms: m.avg_flush_response_ms,
                percentiles_ms: &m.flush_percentiles_ms,
                max_response_ms: m.max_flush_response_ms,
                errors: m.flush_errors,
            },
        }
    }

    /// The operations a table shows apart under its totals: every one it holds, when there
    /// are several or any is a trim or flush (their MB/s are not the totals').
    pub fn ops(&self) -> Vec<Op> {
        let ops: Vec<Op> = Op::ALL.into_iter().filter(|&op| self.raw.of(op).ios > 0).collect();
        let plain = ops.len() == 1 && !matches!(ops[0], Op::Trim | Op::Flush);
        if plain { Vec::new() } else { ops }
    }

    /// Figures for `raw` over `secs` seconds.
    pub fn new(raw: &IoStats, secs: f64) -> Metrics {
        let all = raw.all();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let (r, w, t, f) = (&raw.read, &raw.write, &raw.trim, &raw.flush);
        // Bytes transferred: a trim's bytes are given back, not moved.
        let bytes = r.bytes + w.bytes;
        Metrics {
            ios: all.ios,
            read_ios: r.ios,
            write_ios: w.ios,
            bytes,
            read_bytes: r.bytes,
            write_bytes: w.bytes,
            iops: per_s(all.ios),
            read_iops: per_s(r.ios),
            write_iops: per_s(w.ios),
            mbps: per_s(bytes) / 1e6,
            read_mbps: per_s(r.bytes) / 1e6,
            write_mbps: per_s(w.bytes) / 1e6,
            mibps: per_s(bytes) / 1048576.0,
            read_mibps: per_s(r.bytes) / 1048576.0,
            write_mibps: per_s(w.bytes) / 1048576.0,
            avg_response_ms: avg(&all),
            avg_read_response_ms: avg(r),
            avg_write_response_ms: avg(w),
            min_response_ms: (all.ios > 0).then(|| ms(all.response_min_ns as f64)),
            max_response_ms: max(&all),
            max_read_response_ms: max(r),
            max_write_response_ms: max(w),
            percentiles_ms: percentiles(&all),
            read_percentiles_ms: percentiles(r),
            write_percentiles_ms: percentiles(w),
            errors: all.errors,
            read_errors: r.errors,
            write_errors: w.errors,
            trim_ios: t.ios,
            trim_bytes: t.bytes,
            trim_iops: per_s(t.ios),
            trim_mbps: per_s(t.bytes) / 1e6,
            trim_mibps: per_s(t.bytes) / 1048576.0,
            avg_trim_response_ms: avg(t),
            max_trim_response_ms: max(t),
            trim_percentiles_ms: percentiles(t),
            trim_errors: t.errors,
            flush_ios: f.ios,
            flush_iops: per_s(f.ios),
            avg_flush_response_ms: avg(f),
            max_flush_response_ms: max(f),
            flush_percentiles_ms: percentiles(f),
            flush_errors: f.errors,
            error_kinds: raw
                .errnos
                .iter()
                .map(|&(errno, count)| ErrorKind { errno, text: errno_text(errno), count })
                .collect(),
            raw: raw.clone(),
        }
    }
}

impl ResultDoc {
    /// Whether any I/O failed, or any block read back did not match, in any run.
    pub fn has_errors(&self) -> bool {
        self.failed.is_some()
            || self
                .results
                .iter()
                .any(|r| r.totals.metrics.errors > 0 || r.verify.as_ref().is_some_and(|v| v.mismatches > 0))
    }

    /// The exit status it ends a command with: 130 if stopped, 1 if any I/O failed or a
    /// workload could not run, else 0.
    pub fn exit_status(&self) -> i32 {
        match (self.interrupted, self.has_errors()) {
            (true, _) => crate::error::Error::Stopped.exit_code(),
            (false, true) => 1,
            (false, false) => 0,
        }
    }
}

impl WorkloadResult {
    /// One run of several managers: counters and histograms summed exactly (percentiles over
    /// every I/O of every host), workers and targets listed with their manager, interval
    /// samples added up, CPU averaged over every manager's CPUs. Parts are in rank order and
    /// each holds one manager; managers without workers are left out.
    pub fn merge(parts: Vec<WorkloadResult>) -> WorkloadResult {
        let mut parts: Vec<WorkloadResult> =
            parts.into_iter().filter(|p| p.managers.iter().any(|m| m.workers > 0)).collect();
        if parts.len() == 1 {
            return parts.pop().expect("one part");
        }
        let secs = parts.iter().map(|p| p.duration_s).fold(0.0, f64::max);
        let mut raw = IoStats::default();
        for p in &parts {
            raw += &p.totals.metrics.raw;
        }
        let metrics = Metrics::new(&raw, secs);
        let cpus: Vec<&CpuUsage> = parts.iter().map(|p| &p.totals.cpu).collect();
        let cpu = CpuUsage::merge(&cpus, metrics.ios, metrics.iops);
        let mut intervals: Vec<Interval> = Vec::new();
        for p in &parts {
            for (k, iv) in p.intervals.iter().enumerate() {
                match intervals.get_mut(k) {
                    None => intervals.push(iv.clone()),
                    Some(sum) => {
                        // Mean response weighted by I/Os; CPU % averaged over the managers.
                        let (a, b) = (sum.iops, iv.iops);
                        sum.avg_response_ms = match (sum.avg_response_ms, iv.avg_response_ms) {
                            (Some(x), Some(y)) if a + b > 0.0 => Some((x * a + y * b) / (a + b)),
                            (x, y) => x.or(y),
                        };
                        sum.iops += b;
                        sum.mbps += iv.mbps;
                        sum.cpu_pct += iv.cpu_pct;
                        if let (Some(h), Some(o)) = (&mut sum.histogram, &iv.histogram) {
                            *h += o;
                            sum.percentiles_ms = percentiles_of(h, None);
                        }
                    }
                }
            }
        }
        for (k, iv) in intervals.iter_mut().enumerate() {
            let n = parts.iter().filter(|p| p.intervals.len() > k).count();
            iv.cpu_pct /= n as f64;
        }
        let managers: Vec<ManagerResult> = parts.iter().flat_map(|p| p.managers.clone()).collect();
        let starts = managers.iter().map(|m| m.record_start_unix_ns);
        let skew = starts.clone().max().unwrap_or(0) - starts.min().unwrap_or(0);
        let first = &parts[0];
        let first_error = parts.iter().filter_map(|p| p.first_error.clone()).min_by(|a, b| a.at_s.total_cmp(&b.at_s));
        let verify = parts.iter().filter_map(|p| p.verify.clone()).reduce(|mut a, b| {
            a.add(&b);
            a
        });
        WorkloadResult {
            spec: first.spec.clone(),
            started_at: first.started_at.clone(),
            duration_s: secs,
            ramp_s: first.ramp_s,
            totals: Totals { metrics, outstanding: parts.iter().map(|p| p.totals.outstanding).sum(), cpu },
            workers: parts.iter().flat_map(|p| p.workers.clone()).collect(),
            targets: parts.iter().flat_map(|p| p.targets.clone()).collect(),
            intervals,
            managers,
            start_skew_ms: skew as f64 / 1e6,
            first_error,
            verify,
            // A file-system test runs on one host.
            fs: first.fs.clone(),
            replay: parts.iter().filter_map(|p| p.replay.clone()).reduce(|mut a, b| {
                if let (Some(x), Some(y)) = (&a.lateness, b.lateness) {
                    let mut h = x.histogram.clone();
                    h += &y.histogram;
                    a.lateness = Some(Lateness::of(h));
                }
                a.trace_ios += b.trace_ios;
                a
            }),
        }
    }
}
