//! The test configuration: what a job file says, what the command-line flags build, and what a
//! result document records under `config` (resolved, so it reruns the same test).
//!
//! ```toml
//! [test]
//! ramp = "2s"
//! time = "30s"
//! run = ["oltp-8k", "file-server"]    # one result per spec, one after another
//!
//! [[worker]]
//! count = 2
//! outstanding = 16                    # per target
//! targets = ["/dev/zram0"]
//! ```

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::managers::Manager;
use crate::spec::{AccessSpec, find_builtin};
use crate::units::{serde_duration, serde_size};

/// The default test file, created in the current directory when no target is named.
pub const DEFAULT_TARGET: &str = "iogauge.tst";

/// A whole test: settings, custom specifications and workers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestConfig {
    /// Settings for the whole test.
    #[serde(default)]
    pub test: TestSettings,
    /// Inline access specifications (`[[spec]]`); once resolved, every specification used.
    #[serde(default, rename = "spec", skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<AccessSpec>,
    /// The workers (`[[worker]]`).
    #[serde(default, rename = "worker")]
    pub workers: Vec<WorkerConfig>,
    /// A study of many points (`[study]`), run by `iogauge study`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<crate::study::StudyConfig>,
    /// What is behind the targets (`[storage]`), for the theoretical maximum of a study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<crate::model::Storage>,
}

/// The `[test]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TestSettings {
    /// Run before recording, not recorded.
    #[serde(with = "serde_duration")]
    pub ramp: Duration,
    /// Recorded run time (ignored when `ios` or `bytes` is set).
    #[serde(with = "serde_duration")]
    pub time: Duration,
    /// Stop after this many I/Os in all (no ramp-up; every I/O is recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ios: Option<u64>,
    /// Stop after this many bytes in all (no ramp-up).
    #[serde(with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Specifications run one after another, by workers that name none of their own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run: Vec<String>,
    /// I/O engine.
    pub engine: EngineKind,
    /// Interval between samples of the time series.
    #[serde(with = "serde_duration")]
    pub interval: Duration,
    /// Content of written data.
    pub data: DataPattern,
    /// Size of a test file iogauge creates.
    #[serde(with = "serde_size")]
    pub file_size: u64,
    /// Use the page cache for files (O_DIRECT otherwise).
    pub buffered: bool,
    /// Block devices and existing files that may be written although they look in use.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_write: Vec<String>,
    /// Seed of the offset and mix generators (fixed by default, so runs are repeatable).
    pub seed: u64,
    /// How rate-limited workers (`rate_iops`) space their I/Os.
    pub arrivals: Arrivals,
    /// What a failed I/O does: stop the test there (the default), or be counted and go on.
    pub on_error: OnError,
    /// Under MPI, only the first N managers (ranks) run workers; the others wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub managers: Option<u32>,
    /// Under MPI, the longest a manager waits for the others at a meeting point during a
    /// run before it stops them all.
    #[serde(with = "serde_duration")]
    pub sync_timeout: Duration,
    /// An I/O outstanding this long is given up as timed out (ETIMEDOUT): when a worker
    /// completes no I/O for this long, the test stops, and the I/Os still in flight then get
    /// this long again to complete.
    #[serde(with = "serde_duration")]
    pub io_timeout: Duration,
    /// Stamp every written block with a header and checksum, check every read of a block
    /// the test wrote, and leave a map of the last writes for `iogauge verify`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// Record every write in this directory before it is issued and after it completes
    /// (implies `verify`), so `iogauge verify --journal DIR` can check a target after a crash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal: Option<std::path::PathBuf>,
}

impl TestSettings {
    /// Whether written data is verified (`verify`, or a journal).
    pub fn verifying(&self) -> bool {
        self.verify || self.journal.is_some()
    }
}

/// What a failed I/O does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// The test stops at the first failed I/O; the results up to it are kept.
    Stop,
    /// Failed I/Os are counted (per target and errno) and the test goes on.
    Continue,
}

impl FromStr for OnError {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "stop" => Ok(OnError::Stop),
            "continue" => Ok(OnError::Continue),
            _ => Err(format!("--on-error {s}: use stop or continue")),
        }
    }
}

/// Spacing of open-loop arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly, 1/rate apart.
    Uniform,
    /// A Poisson process: exponentially distributed gaps of mean 1/rate.
    Poisson,
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            ramp: Duration::from_secs(1),
            time: Duration::from_secs(10),
            ios: None,
            bytes: None,
            run: Vec::new(),
            engine: EngineKind::IoUring,
            interval: Duration::from_secs(1),
            data: DataPattern::Random,
            file_size: 1 << 30,
            buffered: false,
            allow_write: Vec::new(),
            seed: 0x0106_a09e,
            arrivals: Arrivals::Uniform,
            on_error: OnError::Stop,
            managers: None,
            sync_timeout: Duration::from_secs(60),
            io_timeout: Duration::from_secs(30),
            verify: false,
            journal: None,
        }
    }
}

/// One `[[worker]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    /// Name shown in results; default "worker N".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How many identical workers this entry makes (expanded when resolved).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
    /// The worker's own access specification; default: each of `test.run` in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// Outstanding I/Os per target.
    #[serde(default = "one")]
    pub outstanding: u32,
    /// Target paths, or `null`; default: the test file `iogauge.tst`. `{host}` and `{rank}`
    /// stand for the manager's host name and MPI rank.
    #[serde(default)]
    pub targets: Vec<String>,
    /// Under MPI, the managers that run this worker, by host name pattern (`*` and `?`);
    /// default: every manager.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// Under MPI, the managers that run this worker, by rank; default: every manager.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<u32>,
    /// Working set as % of each target ("drive stroke").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stroke: Option<f64>,
    /// Working set as a size (instead of `stroke`).
    #[serde(default, with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub working_set: Option<u64>,
    /// Where the working set starts on each target.
    #[serde(default, with = "serde_size", skip_serializing_if = "is_zero")]
    pub offset: u64,
    /// Open-loop arrivals at this many I/Os per second (over all its targets) instead of a
    /// closed loop; response times then count from each I/O's intended start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
}

impl WorkerConfig {
    /// Whether this worker runs on manager `m` (with only the first `managers` taking part).
    pub fn runs_on(&self, m: &Manager, managers: Option<u32>) -> bool {
        managers.is_none_or(|n| m.rank < n)
            && (self.hosts.is_empty() || self.hosts.iter().any(|p| crate::managers::matches(p, &m.host)))
            && (self.ranks.is_empty() || self.ranks.contains(&m.rank))
    }
}

fn one() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            name: None,
            count: 1,
            spec: None,
            outstanding: 1,
            targets: Vec::new(),
            hosts: Vec::new(),
            ranks: Vec::new(),
            stroke: None,
            working_set: None,
            offset: 0,
            rate_iops: None,
        }
    }
}

/// Which I/O engine the workers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    /// io_uring, batched, with registered files and buffers where the kernel has them.
    #[serde(rename = "io_uring")]
    IoUring,
    /// pread/pwrite, one I/O at a time per worker.
    #[serde(rename = "psync")]
    Psync,
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "io_uring" | "io-uring" | "uring" => Ok(EngineKind::IoUring),
            "psync" => Ok(EngineKind::Psync),
            _ => Err(format!("unknown engine '{s}': use io_uring or psync")),
        }
    }
}

/// What written blocks contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataPattern {
    /// Pseudo-random bytes: incompressible, not deduplicable within a buffer.
    Random,
    /// One byte repeated.
    Repeat(u8),
    /// Each 4 KiB chunk is this % zeros and the rest random (fio's buffer_compress_percentage).
    Compressible(u8),
}

impl FromStr for DataPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("unknown data pattern '{s}': use random, repeat, repeat:0xNN or compress:PCT");
        match s.split_once(':') {
            None if s == "random" => Ok(DataPattern::Random),
            None if s == "repeat" => Ok(DataPattern::Repeat(0xa5)),
            Some(("repeat", b)) => {
                let b = b.trim_start_matches("0x");
                u8::from_str_radix(b, 16).map(DataPattern::Repeat).map_err(|_| bad())
            }
            Some(("compress", p)) => match p.trim_end_matches('%').parse::<u8>() {
                Ok(p) if p <= 100 => Ok(DataPattern::Compressible(p)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for DataPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataPattern::Random => f.write_str("random"),
            DataPattern::Repeat(b) => write!(f, "repeat:0x{b:02x}"),
            DataPattern::Compressible(p) => write!(f, "compress:{p}"),
        }
    }
}

impl Serialize for DataPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DataPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// One step of a configuration path, so an error can be located in a job file.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// A table key.
    Key(&'static str),
    /// An array index.
    Index(usize),
}

/// A configuration mistake and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// Where: e.g. `[Key("worker"), Index(1), Key("spec")]`.
    pub path: Vec<Seg>,
    /// What is wrong and what would be right.
    pub message: String,
}

fn at(path: Vec<Seg>, message: impl Into<String>) -> ConfigError {
    ConfigError { path, message: message.into() }
}

/// One result's worth of test: a specification for each worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The name of the result (the spec's name, or the workers' specs joined).
    pub name: String,
    /// Access specification of each worker, in worker order.
    pub specs: Vec<AccessSpec>,
}

impl TestConfig {
    /// Expands worker counts, names workers, fills default targets, checks every value that
    /// can be checked without touching a target, inlines every specification used, and returns
    /// the runs in order.
    pub fn resolve(&mut self) -> Result<Vec<Run>, ConfigError> {
        use Seg::*;
        let t = &self.test;
        if t.ios == Some(0) {
            return Err(at(vec![Key("test"), Key("ios")], "ios = 0: give a positive number of I/Os"));
        }
        if t.bytes == Some(0) {
            return Err(at(vec![Key("test"), Key("bytes")], "bytes = 0: give a positive size"));
        }
        if t.ios.is_none() && t.bytes.is_none() && t.time.is_zero() {
            return Err(at(vec![Key("test"), Key("time")], "time = 0: give a run time such as 10s"));
        }
        if t.interval < Duration::from_millis(10) {
            return Err(at(vec![Key("test"), Key("interval")], "interval must be at least 10ms"));
        }
        if t.managers == Some(0) {
            return Err(at(vec![Key("test"), Key("managers")], "managers = 0: give at least 1 manager"));
        }
        if t.io_timeout < Duration::from_millis(10) {
            return Err(at(vec![Key("test"), Key("io_timeout")], "io_timeout must be at least 10ms"));
        }
        if t.sync_timeout < Duration::from_secs(1) {
            return Err(at(vec![Key("test"), Key("sync_timeout")], "sync_timeout must be at least 1s"));
        }
        if t.file_size < 1 << 20 {
            return Err(at(vec![Key("test"), Key("file_size")], "file_size must be at least 1M"));
        }
        for (i, s) in self.specs.iter().enumerate() {
            s.validate().map_err(|m| at(vec![Key("spec"), Index(i)], m))?;
        }
        if let Some(s) = &self.storage {
            s.validate().map_err(|m| at(vec![Key("storage")], m))?;
        }
        if self.workers.is_empty() {
            return Err(at(vec![Key("worker")], "no workers: add a [[worker]] section (or --workers N)"));
        }
        let mut workers = Vec::new();
        for (i, w) in self.workers.iter().enumerate() {
            let p = |k| vec![Key("worker"), Index(i), Key(k)];
            if w.count == 0 {
                return Err(at(p("count"), "count = 0: a worker entry needs count >= 1"));
            }
            if w.outstanding == 0 || w.outstanding > 65536 {
                return Err(at(
                    p("outstanding"),
                    format!("outstanding = {}: give 1 to 65536 outstanding I/Os per target", w.outstanding),
                ));
            }
            if let Some(s) = w.stroke {
                if !(s > 0.0 && s <= 100.0) {
                    return Err(at(
                        p("stroke"),
                        format!("stroke = {s}: give a % of the target above 0 and at most 100"),
                    ));
                }
                if w.working_set.is_some() {
                    return Err(at(p("stroke"), "give stroke or working_set, not both"));
                }
            }
            if let Some(r) = w.rate_iops {
                if !(r > 0.0 && r.is_finite()) {
                    return Err(at(p("rate_iops"), format!("rate_iops = {r}: give a positive rate")));
                }
            }
            if w.working_set == Some(0) {
                return Err(at(p("working_set"), "working_set = 0: give a positive size"));
            }
            for (j, host) in w.hosts.iter().enumerate() {
                if host.trim().is_empty() {
                    return Err(at(vec![Key("worker"), Index(i), Key("hosts"), Index(j)], "empty host pattern"));
                }
            }
            for (j, target) in w.targets.iter().enumerate() {
                if target.trim().is_empty() {
                    return Err(at(vec![Key("worker"), Index(i), Key("targets"), Index(j)], "empty target path"));
                }
            }
            for n in 0..w.count {
                let mut one = w.clone();
                one.count = 1;
                if one.targets.is_empty() {
                    one.targets.push(DEFAULT_TARGET.into());
                }
                one.name = Some(match (&w.name, w.count) {
                    (Some(name), 1) => name.clone(),
                    (Some(name), _) => format!("{name} {}", n + 1),
                    (None, _) => format!("worker {}", workers.len() + 1),
                });
                workers.push((i, one));
            }
        }
        // Every spec name used must be built in or defined inline.
        let mut used: Vec<AccessSpec> = Vec::new();
        let mut lookup = |name: &str, path: Vec<Seg>| -> Result<AccessSpec, ConfigError> {
            let spec = match self.specs.iter().find(|s| s.name == name) {
                Some(s) => s.clone(),
                None => find_builtin(name).map_err(|m| at(path, m))?,
            };
            if !used.iter().any(|u| u.name == spec.name) {
                used.push(spec.clone());
            }
            Ok(spec)
        };
        let mut run_specs = Vec::new();
        for (k, name) in self.test.run.iter().enumerate() {
            run_specs.push(lookup(name, vec![Key("test"), Key("run"), Index(k)])?);
        }
        let mut own = Vec::new();
        for (i, w) in &workers {
            own.push(match &w.spec {
                Some(name) => Some(lookup(name, vec![Key("worker"), Index(*i), Key("spec")])?),
                None => None,
            });
        }
        let runs: Vec<Run> = if run_specs.is_empty() {
            if let Some(i) = own.iter().position(Option::is_none) {
                return Err(at(
                    vec![Key("worker"), Index(workers[i].0)],
                    "worker has no access specification: set spec = \"NAME\" or list specs in test.run (or --spec NAME)",
                ));
            }
            let specs: Vec<AccessSpec> = own.into_iter().flatten().collect();
            let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            names.dedup();
            vec![Run { name: names.join("+"), specs }]
        } else {
            run_specs
                .iter()
                .map(|rs| {
                    let specs: Vec<AccessSpec> = own.iter().map(|o| o.clone().unwrap_or_else(|| rs.clone())).collect();
                    Run { name: rs.name.clone(), specs }
                })
                .collect()
        };
        self.workers = workers.into_iter().map(|(_, w)| w).collect();
        self.specs = used;
        Ok(runs)
    }

    /// The part of the test manager `me` (of `all`) runs: the workers whose `hosts`, `ranks`
    /// and `test.managers` take it in, with `{host}` and `{rank}` filled in their targets and in
    /// `allow_write` and `journal`, and each run's specifications for them. Also returns the index its first
    /// worker has among every manager's workers, and how many those are.
    pub fn for_manager(&self, runs: &[Run], me: &Manager, all: &[Manager]) -> (TestConfig, Vec<Run>, usize, usize) {
        let mine = |m: &Manager| -> Vec<usize> {
            (0..self.workers.len()).filter(|&i| self.workers[i].runs_on(m, self.test.managers)).collect()
        };
        let before: usize = all.iter().take_while(|m| m.rank != me.rank).map(|m| mine(m).len()).sum();
        let total: usize = all.iter().map(|m| mine(m).len()).sum();
        let fill = |path: &str| {
            // Several managers on one host must not share the default test file.
            let path = if all.len() > 1 && path == DEFAULT_TARGET { "iogauge.{rank}.tst" } else { path };
            path.replace("{host}", &me.host).replace("{rank}", &me.rank.to_string())
        };
        let keep = mine(me);
        let mut c = self.clone();
        c.workers = keep.iter().map(|&i| self.workers[i].clone()).collect();
        for w in &mut c.workers {
            w.targets = w.targets.iter().map(|t| fill(t)).collect();
        }
        c.test.allow_write = self.test.allow_write.iter().map(|t| fill(t)).collect();
        c.test.journal = self.test.journal.as_ref().map(|j| fill(&j.to_string_lossy()).into());
        let runs = runs
            .iter()
            .map(|r| Run { name: r.name.clone(), specs: keep.iter().map(|&i| r.specs[i].clone()).collect() })
            .collect();
        (c, runs, before, total)
    }

    /// Whether any run writes to target `path` (decides which safety checks apply).
    pub fn writes_to(&self, runs: &[Run], path: &str) -> bool {
        runs.iter()
            .any(|r| self.workers.iter().zip(&r.specs).any(|(w, s)| s.writes() && w.targets.iter().any(|t| t == path)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(text: &str) -> TestConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn resolves_counts_names_and_runs() {
        let mut c = job(r#"
            [test]
            run = ["oltp-8k", "mine"]
            [[spec]]
            name = "mine"
            lines = [{ size = "4K", share = 50, read = 100, random = 100 },
                     { size = "64K", share = 50, read = 0, random = 0 }]
            [[worker]]
            count = 2
            outstanding = 4
            targets = ["null"]
            [[worker]]
            name = "logger"
            spec = "sql-server-log-64k"
            targets = ["null"]
            "#);
        let runs = c.resolve().unwrap();
        assert_eq!(c.workers.len(), 3);
        assert_eq!(c.workers[1].name.as_deref(), Some("worker 2"));
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].name, "mine");
        assert_eq!(runs[1].specs[2].name, "sql-server-log-64k");
        let names: Vec<_> = c.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["oltp-8k", "mine", "sql-server-log-64k"]);
        // The resolved config is a job file that resolves to the same runs.
        let again: TestConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        let mut again2 = again.clone();
        assert_eq!(again2.resolve().unwrap(), runs);
    }

    #[test]
    fn mistakes_are_located() {
        let mut c = job("[[worker]]\nspec = \"nope\"\n");
        let e = c.resolve().unwrap_err();
        assert_eq!(e.path, vec![Seg::Key("worker"), Seg::Index(0), Seg::Key("spec")]);
        assert!(e.message.contains("unknown access specification 'nope'"));
        let mut c = job("[test]\nrun=[\"oltp-8k\"]\n[[worker]]\noutstanding = 0\n");
        assert!(c.resolve().unwrap_err().message.contains("outstanding = 0"));
        let mut c = job("[test]\nrun=[\"oltp-8k\"]\n");
        assert!(c.resolve().unwrap_err().message.contains("no workers"));
    }

    #[test]
    fn each_manager_runs_its_workers_on_its_own_targets() {
        let mut c = job(r#"
            [test]
            run = ["oltp-8k"]
            [[worker]]
            targets = ["/data/{host}/f{rank}"]
            [[worker]]
            count = 2
            hosts = ["stor*"]
            targets = ["null"]
            [[worker]]
            ranks = [0]
            "#);
        let runs = c.resolve().unwrap();
        let m = |rank, host: &str| Manager { rank, host: host.into() };
        let all = [m(0, "app1"), m(1, "stor1"), m(2, "stor2")];
        let (c0, r0, first0, total) = c.for_manager(&runs, &all[0], &all);
        // Rank 0: the first worker and the rank-0 one, whose default file is its own.
        assert_eq!(c0.workers.len(), 2);
        assert_eq!(c0.workers[0].targets, ["/data/app1/f0"]);
        assert_eq!(c0.workers[1].targets, ["iogauge.0.tst"]);
        assert_eq!(r0[0].specs.len(), 2);
        let (c2, _, first2, _) = c.for_manager(&runs, &all[2], &all);
        assert_eq!(c2.workers.len(), 3);
        assert_eq!(c2.workers[0].targets, ["/data/stor2/f2"]);
        // 2 + 3 + 3 workers; rank 2's come after ranks 0 and 1.
        assert_eq!((first0, first2, total), (0, 5, 8));
        // Only the first manager takes part.
        c.test.managers = Some(1);
        assert_eq!(c.for_manager(&runs, &all[1], &all).0.workers.len(), 0);
    }

    #[test]
    fn data_patterns_round_trip() {
        for p in [DataPattern::Random, DataPattern::Repeat(0), DataPattern::Compressible(50)] {
            assert_eq!(p.to_string().parse::<DataPattern>().unwrap(), p);
        }
        assert!("compress:101".parse::<DataPattern>().is_err());
    }
}
