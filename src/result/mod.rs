//! The result document (`iogauge.result/2`), documented in docs/result-schema.md.
//!
//! Every level (totals, workers, targets) carries the same [`Metrics`], computed from raw
//! [`IoStats`] that are kept in the document (`raw`, histograms included), so results from
//! several documents or hosts can be merged again exactly.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Job;
use crate::error::Unreadable;
use crate::host::HostInfo;
use crate::host::cpu::CpuUsage;
use crate::stats::{Histogram, IoStats, Op};
use crate::targets::TargetInfo;
use crate::verify::block::VerifyResult;

mod metrics;
mod series;
pub(crate) mod warnings;

use metrics::ms;
pub use metrics::{Dir, DirFigures, ErrorKind, Metrics, errno_text, percentiles_of};
pub(crate) use series::Series;

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
    /// How long its process was stopped while recording by a Ctrl-Z (SIGTSTP), timed (ms): no
    /// I/O was issued, and the rates count that time.
    #[serde(default, skip_serializing_if = "no_time")]
    pub stopped_ms: f64,
    /// How many times its process went on (SIGCONT) while recording from a stop it could not
    /// time (a SIGSTOP from another process).
    #[serde(default, skip_serializing_if = "no_stops")]
    pub stops_untimed: u32,
}

fn no_time(ms: &f64) -> bool {
    *ms == 0.0
}

fn no_stops(n: &u32) -> bool {
    *n == 0
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
        let measured = self.cpu.measured();
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

/// A workload's CPU figures, each None where the document has none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuFigures {
    /// The whole host's CPU utilisation (%).
    pub host_pct: Option<f64>,
    /// iogauge's own part of it (%).
    pub own_pct: Option<f64>,
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
    /// A row per worker, then a row per target.
    All,
}

impl std::str::FromStr for Detail {
    type Err = Unreadable;
    fn from_str(s: &str) -> Result<Self, Unreadable> {
        match s {
            "totals" => Ok(Detail::Totals),
            "workers" | "worker" => Ok(Detail::Workers),
            "targets" | "target" | "disks" => Ok(Detail::Targets),
            "all" => Ok(Detail::All),
            _ => Err(Unreadable(format!("--detail {s}: use workers, targets or all"))),
        }
    }
}

impl WorkloadResult {
    /// Whether the recorded window is long enough for CPU figures
    /// ([`crate::host::cpu::MIN_WINDOW_S`]).
    pub fn cpu_measured(&self) -> bool {
        self.duration_s >= crate::host::cpu::MIN_WINDOW_S
    }

    /// The parts `detail` asks for, each labelled by its place, which is its identity: a
    /// worker by its manager (rank and host, when there are several) and name; a target by its
    /// manager and path, and by its worker too where the workload lists a target once per
    /// worker (another tool's rows: Iometer's DISK rows are a worker's). A name that is still
    /// not unique in its place (fio's `numjobs` copies of one job) is numbered in order: `x #2`.
    pub fn parts(&self, detail: Detail) -> Vec<(String, &Metrics)> {
        let place = |rank: u32, within: Option<&str>| {
            let manager = (self.managers.len() > 1).then(|| self.manager_label(rank));
            let place: Vec<String> = within.map(str::to_string).into_iter().chain(manager).collect();
            place.join(", ")
        };
        let parts: Vec<(String, String, &Metrics)> = match detail {
            Detail::Totals => Vec::new(),
            Detail::All => return [Detail::Workers, Detail::Targets].into_iter().flat_map(|d| self.parts(d)).collect(),
            Detail::Workers => {
                self.workers.iter().map(|w| (w.name.clone(), place(w.manager, None), &w.metrics)).collect()
            }
            Detail::Targets if self.targets_per_worker() => self
                .workers
                .iter()
                .flat_map(|w| w.targets.iter().map(move |t| (w, t)))
                .map(|(w, t)| (t.path.clone(), place(t.manager, Some(&w.name)), &t.metrics))
                .collect(),
            Detail::Targets => {
                self.targets.iter().map(|t| (t.path.clone(), place(t.manager, None), &t.metrics)).collect()
            }
        };
        numbered(parts)
            .into_iter()
            .map(|(name, place, m)| match place.is_empty() {
                true => (name, m),
                false => (format!("{name} ({place})"), m),
            })
            .collect()
    }

    /// A manager as rows name it: `manager 1 host-b`, by its rank and, where known, its host.
    fn manager_label(&self, rank: u32) -> String {
        match self.managers.iter().find(|m| m.rank == rank).map(|m| m.host.as_str()) {
            Some(host) if !host.is_empty() => format!("manager {rank} {host}"),
            _ => format!("manager {rank}"),
        }
    }

    /// Whether `targets` holds a target once per worker that used it rather than once per
    /// manager (iogauge's own sum of its workers): another tool's rows, where a manager's
    /// target appears more than once.
    fn targets_per_worker(&self) -> bool {
        let mut seen = std::collections::HashSet::new();
        self.targets.iter().any(|t| !seen.insert((t.manager, t.path.as_str())))
    }
}

/// Names made unique in their place: a name that occurs more than once there is numbered in
/// order (`x #1`, `x #2`).
fn numbered<T>(parts: Vec<(String, String, T)>) -> Vec<(String, String, T)> {
    use std::collections::HashMap;
    let mut count: HashMap<(String, String), usize> = HashMap::new();
    for (name, place, _) in &parts {
        *count.entry((name.clone(), place.clone())).or_default() += 1;
    }
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    parts
        .into_iter()
        .map(|(name, place, v)| {
            let key = (name, place);
            if count[&key] == 1 {
                return (key.0, key.1, v);
            }
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            (format!("{} #{n}", key.0), key.1, v)
        })
        .collect()
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

impl ResultDoc {
    /// Whether any I/O failed, or any block read back did not match, in any run.
    pub fn has_errors(&self) -> bool {
        self.failed.is_some()
            || self
                .results
                .iter()
                .any(|r| r.totals.metrics.errors > 0 || r.verify.as_ref().is_some_and(|v| v.mismatches > 0))
    }

    /// A workload's CPU figures as the document has them, each None where it has none: the
    /// host's CPU % and IOPS per CPU % where measured (by iogauge over a window long enough
    /// for the kernel's ticks, [`WorkloadResult::cpu_measured`]; or by the tool whose results
    /// were read: Iometer measures them, fio does not), iogauge's own CPU % in iogauge's
    /// documents only.
    pub fn cpu_figures(&self, r: &WorkloadResult) -> CpuFigures {
        let cpu = &r.totals.cpu;
        let own = self.read_from.is_none();
        let host = cpu.measured() && (r.cpu_measured() || !own);
        CpuFigures {
            host_pct: host.then_some(cpu.all.utilization_pct),
            own_pct: (own && r.cpu_measured()).then_some(cpu.own_pct),
            iops_per_cpu_pct: host.then_some(cpu.effectiveness),
        }
    }

    /// A result table's CPU %, own % and IOPS/CPU% of a workload: `-` each the document does
    /// not have.
    pub fn cpu_cells(&self, r: &WorkloadResult) -> [String; 3] {
        let f = self.cpu_figures(r);
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        [pct(f.host_pct), pct(f.own_pct), f.iops_per_cpu_pct.map_or("-".into(), crate::format::thousands)]
    }

    /// The figures a workload of the document is known by, its CPU as [`Self::cpu_figures`].
    pub fn headline(&self, r: &WorkloadResult) -> Headline {
        let f = self.cpu_figures(r);
        Headline { cpu_pct: f.host_pct, iops_per_cpu_pct: f.iops_per_cpu_pct, ..Headline::of_part(&r.totals.metrics) }
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
        // Each sample's I/Os, every manager's: a manager whose monitor read late has a longer
        // sample than the others, so no one manager's length times the summed rates counts them.
        let mut ios: Vec<f64> = Vec::new();
        for p in &parts {
            for (k, iv) in p.intervals.iter().enumerate() {
                match intervals.get_mut(k) {
                    None => {
                        intervals.push(iv.clone());
                        ios.push(iv.iops * iv.duration_s);
                    }
                    Some(sum) => {
                        ios[k] += iv.iops * iv.duration_s;
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
            // The managers' lengths weighted by their rates: the length over which the summed
            // rate counts the sample's I/Os exactly.
            if iv.iops > 0.0 {
                iv.duration_s = ios[k] / iv.iops;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One manager's part of a run: `ios` I/Os in one sample of `secs`.
    fn part(rank: u32, ios: f64, secs: f64) -> WorkloadResult {
        let totals =
            Totals { metrics: Metrics::new(&IoStats::default(), 1.0), outstanding: 8, cpu: CpuUsage::default() };
        WorkloadResult {
            spec: "random-read-4k".into(),
            started_at: String::new(),
            duration_s: 1.0,
            ramp_s: 0.0,
            totals: totals.clone(),
            workers: Vec::new(),
            targets: Vec::new(),
            intervals: vec![Interval {
                t_s: secs,
                duration_s: secs,
                iops: ios / secs,
                mbps: 0.0,
                avg_response_ms: None,
                cpu_pct: 0.0,
                percentiles_ms: BTreeMap::new(),
                histogram: None,
            }],
            managers: vec![ManagerResult {
                rank,
                host: "h".into(),
                workers: 1,
                totals,
                record_start_unix_ns: 0,
                record_end_unix_ns: 1,
                stopped_ms: 0.0,
                stops_untimed: 0,
            }],
            start_skew_ms: 0.0,
            first_error: None,
            verify: None,
            fs: None,
            replay: None,
        }
    }

    #[test]
    fn a_merged_sample_counts_every_managers_ios_where_one_read_late() {
        // Rank 1's monitor read its sample 100 ms late: 1,200 I/Os over 0.6 s, at the same
        // rate as rank 0's 1,000 over 0.5 s.
        let merged = WorkloadResult::merge(vec![part(0, 1000.0, 0.5), part(1, 1200.0, 0.6)]);
        let iv = &merged.intervals[0];
        assert!((iv.iops - 4000.0).abs() < 1e-9, "rates add up: {}", iv.iops);
        assert!((iv.iops * iv.duration_s - 2200.0).abs() < 1e-9, "{} x {}", iv.iops, iv.duration_s);
    }
}
