//! The workers (a job's `[[worker]]` entries), each key declared once ([`keys!`]): the entry
//! below is the job file's key with its doc and default, the command-line flag that sets it
//! (when it has one) and its check. [`WorkerConfig`], [`WorkerFlags`] (the flags of `run` and
//! `profile`), their `--help`, the key checks, the `[[worker]]` table of docs/job-file.md and
//! the workbench's worker form ([`WORKER_KEYS`]) all come from it, so a new key is one entry.
//! A worker's plan takes its keys from the resolved [`Worker`], which reads as its entry.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::keys::{Key, apply, keys};
use super::{ConfigError, DEFAULT_TARGET, Replay, Seg, is_one, is_zero, test::at};
use crate::net::TargetName;
use crate::units::{parse_count, parse_size, serde_size};

keys! {
    /// One `[[worker]]` entry.
    WorkerConfig, WORKER_KEYS, WorkerFlags;

    /// Shown in results; with `count`, numbered (`db 1`, `db 2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String> = None, "worker N";

    /// Identical workers (threads), each on every target.
    #[serde(skip_serializing_if = "is_one")]
    count: u32 = 1, "1",
        flag(long = "workers", value_parser = parse_count, value_name = "N", allow_negative_numbers = true) Option<u32> => set,
        check |n| *n == 0 => ("count = 0: give at least 1 worker");

    /// The worker's own access specification; without it, each of `test.run` in turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    spec: Option<String> = None, "-";

    /// Outstanding I/Os per target (16 under `iogauge profile`).
    outstanding: u32 = 1, "1",
        flag(long, visible_alias = "qd", value_parser = parse_count, value_name = "N", allow_negative_numbers = true) Option<u32> => set,
        check |n| !(1..=65536).contains(n) => ("outstanding = {n}: give 1 to 65536 outstanding I/Os per target");

    /// Block devices, files, `nbd://` or `iscsi://` URLs (docs/network-targets.md), or `null`;
    /// `{host}` and `{rank}` stand for the manager's host name and MPI rank (`--target` is
    /// repeatable).
    ///
    /// Under MPI with several ranks the default file is `iogauge.{rank}.tst`. A URL's password
    /// is taken out of it as it is read: results, tables and the workbench show the URL without
    /// it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    targets: Vec<TargetName> = Vec::new(), "./iogauge.tst",
        flag(long = "target", value_name = "PATH") Vec<TargetName> => add,
        check |t| t.iter().any(|t| t.trim().is_empty()) => ("targets holds an empty path: give each target's path or URL");

    /// Under MPI, the managers that run this worker, by host-name pattern (`*` any run of
    /// characters, `?` one): `["stor*", "app1"]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<String> = Vec::new(), "every manager",
        check |h| h.iter().any(|h| h.trim().is_empty()) => ("hosts holds an empty pattern: give host names or patterns such as \"stor*\"");

    /// Under MPI, the managers that run this worker, by rank: `[0, 2]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ranks: Vec<u32> = Vec::new(), "every manager";

    /// Working set as % of each target (the seeds' drive stroke).
    #[serde(skip_serializing_if = "Option::is_none")]
    stroke: Option<f64> = None, "whole target",
        flag(long, value_name = "PCT", allow_negative_numbers = true) Option<f64> => some,
        check |s| s.is_some_and(|s| !(s > 0.0 && s <= 100.0)) => ("stroke = {}: give a % of the target above 0 and at most 100", s.unwrap_or_default());

    /// Working set as a size (instead of a stroke).
    #[serde(with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    working_set: Option<u64> = None, "whole target",
        flag(long, value_parser = parse_size, value_name = "SIZE", allow_negative_numbers = true) Option<u64> => some,
        check |w| *w == Some(0) => ("working_set = 0: give a positive size");

    /// Where the working set starts on each target.
    #[serde(with = "serde_size", skip_serializing_if = "is_zero")]
    offset: u64 = 0, "0",
        flag(long, value_parser = parse_size, value_name = "SIZE", allow_negative_numbers = true) Option<u64> => set;

    /// An open loop: I/Os arrive at this rate (per second, over the worker's targets, up to its
    /// outstanding I/Os) instead of one replacing each completion.
    ///
    /// Response times count from each I/O's intended start, so a stall shows as latency (no
    /// coordinated omission). Recording starts on schedule: arrivals the ramp-up fell behind on
    /// are dropped at its end, not issued in a burst inside the recorded window (where they
    /// would add rate nobody asked for and the ramp-up's wait to response times).
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_iops: Option<f64> = None, "-",
        flag(long, value_name = "N", allow_negative_numbers = true) Option<f64> => some,
        check |r| outside(r, Rate::IOPS) => ("rate_iops = {}: give 0.001 to 1,000,000,000 I/Os per second", shown(r));

    /// An open loop capped in MB/s (10^6 bytes/s): each I/O is followed by a gap of its size
    /// over the rate; with a rate of I/Os too, the longer gap of the two (fio's `rate` and
    /// `rate_iops` together).
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_mbps: Option<f64> = None, "-",
        flag(long, value_name = "N", allow_negative_numbers = true) Option<f64> => some,
        check |r| outside(r, Rate::MBPS) => ("rate_mbps = {}: give 0.000001 to 10,000,000 MB/s", shown(r));

    /// The CPUs the worker's thread may run on (fio's `cpus_allowed`), `[0, 2]` or `"0-3,8"` in a
    /// job file, `--cpus 0-3,8`: every worker of a count may use all of them.
    ///
    /// The worker's thread is pinned before its buffers are allocated, so their memory is on its
    /// node. Given no CPUs, workers that outnumber the CPUs the process may use each get one of
    /// them in turn, with the io-wq threads serving their I/Os, so that no CPU is fought over
    /// (docs/performance.md says what that costs otherwise). The result gives each worker's
    /// `cpus` and `numa_nodes` and each target's `numa_node`.
    #[serde(deserialize_with = "cpus_as_given", skip_serializing_if = "Vec::is_empty")]
    cpus: Vec<u32> = Vec::new(), "the process's",
        flag(long, value_name = "LIST", allow_negative_numbers = true) Option<CpuList> => (set_cpus);

    /// How the workers of a count share their CPUs (fio's `cpus_allowed_policy`): shared, each
    /// may use all of them; split, each on one of them in turn.
    ///
    /// With `"split"` the first worker runs on the lowest CPU, round again when workers
    /// outnumber CPUs, with the io-wq threads serving its I/Os, so a worker keeps a CPU of its
    /// own on a busy host. The result's `config` lists each worker with its one CPU.
    #[serde(skip_serializing_if = "CpusPolicy::is_shared")]
    cpus_policy: CpusPolicy = CpusPolicy::Shared, "\"shared\"",
        flag(long, value_name = "POLICY") Option<CpusPolicy> => set;

    /// Replay a trace instead of drawing I/Os: `{ trace = "prod.csv", speed = 1, fit = "wrap" }`
    /// (docs/traces.md).
    ///
    /// The trace is an iogauge capture, a fio iolog or blktrace's files, relative to the job
    /// file; `speed` is a factor or `"max"`; `fit` is `wrap` or `scale`, for a trace that reaches
    /// past the working set.
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<Replay> = None, "-";
}

impl WorkerConfig {
    /// Its open loop's pace, if it has one.
    pub fn rate(&self) -> Rate {
        Rate { iops: self.rate_iops, mbps: self.rate_mbps }
    }

    /// The checks of keys together, after each key's own.
    pub(super) fn check(&self, at_path: &[Seg]) -> Result<(), ConfigError> {
        self.check_keys(at_path)?;
        let key = |k| [at_path, &[Seg::Key(k)]].concat();
        if self.stroke.is_some() && self.working_set.is_some() {
            return Err(at(key("stroke"), "give `stroke` or `working_set`, not both"));
        }
        if self.cpus_policy == CpusPolicy::Split && self.cpus.is_empty() {
            return Err(at(key("cpus_policy"), "a split `cpus_policy` needs the CPUs to split: give `cpus` too"));
        }
        Ok(())
    }
}

/// `--cpus LIST`: the workers' CPUs.
fn set_cpus(w: &mut WorkerConfig, list: &Option<CpuList>) {
    if let Some(CpuList(cpus)) = list {
        w.cpus = cpus.clone();
    }
}

/// `cpus` as a job file gives them, `[0, 2]`, or as the command line and fio's `cpus_allowed`
/// do, `"0-3,8"`, or both (`["0-3", 8]`, what the workbench's form sends): in the order given.
fn cpus_as_given<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged, expecting = "CPUs such as [0, 2] or \"0-3,8\"")]
    enum Cpus {
        Text(String),
        List(Vec<Item>),
    }
    #[derive(Deserialize)]
    #[serde(untagged, expecting = "a CPU such as 2, or a range such as \"0-3\"")]
    enum Item {
        Cpu(u32),
        Text(String),
    }
    let items = match Cpus::deserialize(d)? {
        Cpus::Text(t) => vec![Item::Text(t)],
        Cpus::List(l) => l,
    };
    let mut cpus: Vec<u32> = Vec::new();
    for item in items {
        let more = match item {
            Item::Cpu(n) => vec![n],
            Item::Text(t) => crate::host::placement::parse_cpu_list(&t).map_err(serde::de::Error::custom)?,
        };
        // Each CPU once, where it first came: a split takes them in that order.
        cpus.extend(more.into_iter().filter(|n| !cpus.contains(n)).collect::<Vec<_>>());
    }
    Ok(cpus)
}

/// A list of CPUs as the command line gives it: `0-3,8`.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuList(Vec<u32>);

impl FromStr for CpuList {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        crate::host::placement::parse_cpu_list(s).map(CpuList)
    }
}

/// How the workers of one entry share its `cpus`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CpusPolicy {
    /// Each may run on all of them.
    #[default]
    Shared,
    /// Each on one of them, in turn (the first worker on the first CPU; round again when
    /// workers outnumber CPUs): a worker and the io-wq threads serving its I/Os keep a CPU
    /// of their own (bench/logbook.md, issue 45, entry 23).
    Split,
}

impl CpusPolicy {
    fn is_shared(&self) -> bool {
        *self == CpusPolicy::Shared
    }
}

/// An open loop's pace: I/Os per second, MB/s (10^6 bytes/s), or both, the slower of the two
/// pacing each I/O; neither, a closed loop.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    /// I/Os per second.
    pub iops: Option<f64>,
    /// MB/s (10^6 bytes/s).
    pub mbps: Option<f64>,
}

/// A rate given, as a message quotes it: as typed where it is plain (`0.5`), in exponent form
/// where it is not (`1e300`, not its 301 digits).
pub(super) fn shown(rate: &Option<f64>) -> String {
    match rate.unwrap_or_default() {
        r if r != 0.0 && !(1e-3..1e9).contains(&r.abs()) => format!("{r:e}"),
        r => r.to_string(),
    }
}

/// Whether a rate given is outside `range` (NaN is).
pub(super) fn outside(rate: &Option<f64>, range: std::ops::RangeInclusive<f64>) -> bool {
    rate.is_some_and(|r| !range.contains(&r))
}

impl Rate {
    /// The I/Os per second a rate may ask: from one in 1,000 s (below, the gap between two I/Os
    /// outlives any test) to a billion (no device does more; above, a backlog, not a pace).
    pub const IOPS: std::ops::RangeInclusive<f64> = 0.001..=1e9;
    /// The MB/s a rate may ask: a kB in 1,000 s to 10 TB/s, for the same reasons.
    pub const MBPS: std::ops::RangeInclusive<f64> = 1e-6..=1e7;

    /// Whether it paces I/Os at all.
    pub fn is_open_loop(&self) -> bool {
        self.iops.is_some() || self.mbps.is_some()
    }

    /// A worker's pace: its own (`self`), or its even share of the test's cap over all
    /// `workers` (every manager's), whichever is slower, measure by measure.
    pub fn within_share(self, all: Rate, workers: usize) -> Rate {
        let slower = |own: Option<f64>, all: Option<f64>| {
            let share = all.map(|r| r / workers.max(1) as f64);
            match (own, share) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        Rate { iops: slower(self.iops, all.iops), mbps: slower(self.mbps, all.mbps) }
    }
}

/// One worker of a resolved test: its entry as written for it alone (`count = 1`, its own CPU
/// where `cpus_policy` splits them, its default target filled in), which it reads as, and its
/// name.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    /// Its name in results: the job's, numbered when `count` made several, or "worker N".
    pub name: String,
    entry: WorkerConfig,
}

impl std::ops::Deref for Worker {
    type Target = WorkerConfig;
    fn deref(&self) -> &WorkerConfig {
        &self.entry
    }
}

impl std::ops::DerefMut for Worker {
    fn deref_mut(&mut self) -> &mut WorkerConfig {
        &mut self.entry
    }
}

impl Worker {
    /// Copy `copy` (from 0) of the workers `entry` makes, named `name`.
    pub(super) fn expanded(entry: &WorkerConfig, name: String, copy: u32) -> Worker {
        let cpus = match entry.cpus_policy {
            CpusPolicy::Shared => entry.cpus.clone(),
            // `check` refuses a split of no CPUs.
            CpusPolicy::Split => vec![entry.cpus[copy as usize % entry.cpus.len()]],
        };
        let targets = if entry.targets.is_empty() { vec![DEFAULT_TARGET.into()] } else { entry.targets.clone() };
        let entry =
            WorkerConfig { name: None, count: 1, cpus, cpus_policy: CpusPolicy::Shared, targets, ..entry.clone() };
        Worker { name, entry }
    }

    /// The worker as an entry of its own (`count = 1`), for the result's `config`.
    pub(super) fn as_written(&self) -> WorkerConfig {
        WorkerConfig { name: Some(self.name.clone()), ..self.entry.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_shown_are_the_defaults() {
        let read = |line: &str| {
            let job = toml::from_str::<super::super::Job>(&format!("[[worker]]\n{line}")).ok()?;
            job.workers.into_iter().next()
        };
        super::super::keys::tests::the_defaults_shown_are_the_defaults(WORKER_KEYS, read);
    }

    /// The `[[worker]]` table of docs/job-file.md is the keys' own (`IOGAUGE_BLESS=1 cargo test
    /// --lib worker` writes it after a change).
    #[test]
    fn the_job_file_docs_list_every_key_as_declared() {
        use clap::Args;
        let flags = WorkerFlags::augment_args(clap::Command::new("flags"));
        super::super::keys::tests::the_docs_table_is("worker", WORKER_KEYS, &flags);
    }

    /// A flag sets its key as the job file's key would, and says it was given.
    #[test]
    fn the_flags_set_their_keys() {
        use clap::Parser;
        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            workers: WorkerFlags,
        }
        let f = Flags::parse_from([
            "x",
            "--workers",
            "3",
            "--qd",
            "8",
            "--cpus",
            "0-2,5",
            "--rate-mbps",
            "50",
            "--target",
            "null",
        ]);
        let mut w = WorkerConfig::default();
        f.workers.apply(&mut w);
        let job: super::super::Job = toml::from_str(
            "[[worker]]\ncount = 3\noutstanding = 8\ncpus = [0, 1, 2, 5]\nrate_mbps = 50.0\ntargets = [\"null\"]",
        )
        .unwrap();
        assert_eq!(w, job.workers[0]);
        assert_eq!(f.workers.given(), ["count", "outstanding", "targets", "rate_mbps", "cpus"]);
    }

    /// `cpus` reads as a job file's list, as the command line's text, or both, in the order
    /// given; a bad one says what it takes.
    #[test]
    fn cpus_read_as_a_list_or_as_text() {
        let cpus = |v: &str| {
            toml::from_str::<super::super::Job>(&format!("[[worker]]\ncpus = {v}"))
                .map(|j| j.workers[0].cpus.clone())
                .map_err(|e| e.to_string())
        };
        assert_eq!(cpus("[3, 1]"), Ok(vec![3, 1]));
        assert_eq!(cpus("\"0-3,8\""), Ok(vec![0, 1, 2, 3, 8]));
        assert_eq!(cpus("[\"0-1\", 5]"), Ok(vec![0, 1, 5]));
        assert_eq!(cpus("[\"0-1\", 1, 0]"), Ok(vec![0, 1]), "each CPU once");
        assert!(cpus("\"3-1\"").unwrap_err().contains("a range goes from low to high"));
        assert!(cpus("true").unwrap_err().contains("CPUs such as [0, 2] or \"0-3,8\""));
    }
}
