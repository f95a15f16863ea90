//! The study document (`iogauge.study/2`): the definition, every point with every run's full
//! result, the summaries of each point's repeats, and what searches and curves found.

use serde::{Deserialize, Serialize};

use super::Point;
use super::stats::Spread;
use crate::config::storage::Storage;
use crate::config::{Job, Measure, Precondition, Steady, StudyConfig};
use crate::result::{Headline, ResultDoc};
use crate::spec::SpecLine;

/// `schema` of a study document. 2: its runs are `iogauge.result/2` documents.
pub const SCHEMA: &str = "iogauge.study/2";

/// Every version read.
pub const READ: [&str; 2] = ["iogauge.study/1", SCHEMA];

/// A study document: the definition, every point with every run's full result, and summaries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyDoc {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// iogauge's version.
    pub tool_version: String,
    /// When the study started (RFC 3339, UTC).
    pub started_at: String,
    /// Wall time of the whole study so far (s).
    pub duration_s: f64,
    /// The `[study]` section.
    pub study: StudyConfig,
    /// The job the points vary (without its `[study]` section).
    pub config: Job,
    /// Points in the order run.
    pub points: Vec<PointResult>,
    /// With a `limit`: one search per outer point and access specification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub searches: Vec<SearchResult>,
    /// With a `curve`: one curve per outer point and access specification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<CurveResult>,
    /// With `steady`: the rounds, the tracked measures, whether and when they settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyResult>,
    /// Things to know when reading the numbers (repeats that disagree, among others).
    pub warnings: Vec<String>,
    /// True while points remain to run (the document is written after every point).
    pub interrupted: bool,
    /// Why the study ended before its last point, when one could not run after others did (a
    /// target that stopped answering in between): `points` holds those before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

impl StudyDoc {
    /// A run as a study of one point that cycles nothing: what a format made for studies
    /// (a row per point and workload) makes of a run.
    pub fn of_run(doc: &ResultDoc) -> StudyDoc {
        let point = PointResult {
            index: 0,
            params: super::Point::default(),
            summary: summarise(std::slice::from_ref(doc)),
            runs: vec![doc.clone()],
        };
        StudyDoc {
            schema: SCHEMA.into(),
            tool_version: doc.tool_version.clone(),
            started_at: doc.started_at.clone(),
            duration_s: doc.duration_s,
            study: StudyConfig::default(),
            config: doc.config.clone(),
            points: vec![point],
            searches: Vec::new(),
            curves: Vec::new(),
            steady: None,
            warnings: doc.warnings.clone(),
            interrupted: doc.interrupted,
            failed: doc.failed.clone(),
        }
    }

    /// The exit status it ends a command with: 130 if stopped, 1 if any I/O failed or a point
    /// could not run, else 0.
    pub fn exit_status(&self) -> i32 {
        if self.interrupted {
            return crate::error::Error::Stopped.exit_code();
        }
        let errors = self.failed.is_some() || self.points.iter().flat_map(|p| &p.summary).any(|s| s.errors > 0);
        if errors { 1 } else { 0 }
    }
}

/// One point: its parameters, the summary of its repeats, and every repeat's result document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointResult {
    /// Position in the study, from 0.
    pub index: usize,
    /// The cycled parameters' values.
    pub params: Point,
    /// One per access specification run, in the result documents' order.
    pub summary: Vec<SpecSummary>,
    /// Every repeat's whole result document.
    pub runs: Vec<ResultDoc>,
}

impl PointResult {
    /// The repeat that stands for the point's `k`-th workload: the one whose IOPS is nearest
    /// the median (what a table shows of a run's detail, what `--fio-json` writes).
    pub fn median_run(&self, k: usize) -> Option<&ResultDoc> {
        let median = self.summary.get(k)?.iops.median;
        let iops = |d: &ResultDoc| d.results.get(k).map_or(f64::INFINITY, |r| r.totals.metrics.iops);
        self.runs.iter().min_by(|a, b| (iops(a) - median).abs().total_cmp(&(iops(b) - median).abs()))
    }

    /// Whether every repeat recorded its `k`-th workload long enough for CPU figures
    /// ([`crate::result::WorkloadResult::cpu_measured`]): else the point has none.
    pub fn cpu_measured(&self, k: usize) -> bool {
        self.runs.iter().filter_map(|r| r.results.get(k)).all(|w| w.cpu_measured())
    }

    /// The headline figures of its `k`-th workload (one of `summary`'s): the medians over the
    /// repeats, without CPU figures where [`Self::cpu_measured`] says there are none.
    pub fn headline(&self, k: usize) -> Headline {
        let mut h = self.summary[k].medians();
        if !self.cpu_measured(k) {
            (h.cpu_pct, h.iops_per_cpu_pct) = (None, None);
        }
        h
    }
}

/// One access specification at one point, over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecSummary {
    /// The specification's name.
    pub spec: String,
    /// The workload as the job names it (`streaming-read` where a size cycle ran
    /// `streaming-read-1m`): with `params`, its identity in a study's tables and charts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// I/Os per second.
    pub iops: Spread,
    /// 10^6 bytes per second.
    pub mbps: Spread,
    /// Mean response time (ms); absent with no completed I/O.
    pub avg_response_ms: Option<Spread>,
    /// Median response time (ms); absent in documents written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_response_ms: Option<Spread>,
    /// 99th percentile response time (ms).
    pub p99_response_ms: Option<Spread>,
    /// CPU utilisation of the machine (%).
    pub cpu_pct: Spread,
    /// Iometer's CPU effectiveness: IOPS per CPU utilisation %.
    pub iops_per_cpu_pct: Spread,
    /// I/O errors over all repeats.
    pub errors: u64,
    /// For a point of a cycle over targets or workers: median IOPS / (N x the median IOPS of
    /// the point with one, all else equal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<f64>,
    /// With a `[storage]` section: the theoretical maximum of this point and how close it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theory: Option<TheoryAt>,
}

impl SpecSummary {
    /// The headline figures of the point: the median of each over the repeats.
    pub fn medians(&self) -> Headline {
        Headline {
            iops: self.iops.median,
            mbps: self.mbps.median,
            avg_response_ms: self.avg_response_ms.map(|v| v.median),
            p50_response_ms: self.p50_response_ms.map(|v| v.median),
            p99_response_ms: self.p99_response_ms.map(|v| v.median),
            cpu_pct: Some(self.cpu_pct.median),
            iops_per_cpu_pct: Some(self.iops_per_cpu_pct.median),
        }
    }
}

/// A point's theoretical maximum (docs/job-file.md, `[storage]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TheoryAt {
    /// `mbps` (sequential workloads) or `iops` (random ones).
    pub unit: String,
    /// The maximum for the point's number of volumes (distinct targets).
    pub value: f64,
    /// The median measured, as % of `value`.
    pub measured_pct: f64,
    /// What limits: `drives`, `parity`, `links`, or `host_cpu` when the CPU was above 90 %.
    pub limit: String,
}

/// One summary per access specification over `runs`, the repeats of one point.
pub fn summarise(runs: &[ResultDoc]) -> Vec<SpecSummary> {
    let specs = runs[0].results.iter().map(|r| r.spec.clone());
    specs
        .enumerate()
        .map(|(k, spec)| {
            let heads: Vec<Headline> = runs.iter().map(|d| d.results[k].totals.headline()).collect();
            let spread = |f: fn(&Headline) -> f64| Spread::of(&heads.iter().map(f).collect::<Vec<_>>());
            let optional = |f: fn(&Headline) -> Option<f64>| {
                let v: Option<Vec<f64>> = heads.iter().map(f).collect();
                v.map(|v| Spread::of(&v))
            };
            SpecSummary {
                spec,
                workload: None,
                iops: spread(|h| h.iops),
                mbps: spread(|h| h.mbps),
                avg_response_ms: optional(|h| h.avg_response_ms),
                p50_response_ms: optional(|h| h.p50_response_ms),
                p99_response_ms: optional(|h| h.p99_response_ms),
                // A run's totals always have CPU figures.
                cpu_pct: spread(|h| h.cpu_pct.unwrap_or(0.0)),
                iops_per_cpu_pct: spread(|h| h.iops_per_cpu_pct.unwrap_or(0.0)),
                errors: runs.iter().map(|d| d.results[k].totals.metrics.errors).sum(),
                scaling: None,
                theory: None,
            }
        })
        .collect()
}

/// The workload a summary of `spec` at a point of transfer size `size` belongs to: the one
/// `recorded`, or for a document written before summaries recorded it, `spec` without the size
/// the point named it for.
pub fn workload_of<'a>(spec: &'a str, recorded: Option<&'a str>, size: Option<u64>) -> &'a str {
    recorded.unwrap_or_else(|| size.map_or(spec, |z| crate::spec::name_without_size(spec, z)))
}

/// One IOPS-vs-response-time curve: the uncontrolled maximum and the open-loop points.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurveResult {
    /// The outer cycles' values.
    pub params: Point,
    /// The access specification.
    pub spec: String,
    /// Index in `points` of the uncontrolled (closed-loop) maximum.
    pub max: usize,
    /// Indexes in `points` of the runs at each fraction, in order; each point's `params`
    /// holds the asked rate, its summary the achieved one and the response times.
    pub points: Vec<usize>,
}

/// One response-time search: its answer, and which points it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchResult {
    /// The outer cycles' values (outstanding I/Os are what the search varies).
    pub params: Point,
    /// The access specification searched.
    pub spec: String,
    /// The limit (ms) and what it applies to (`avg`, `p99`...).
    pub limit_ms: f64,
    /// `avg` or a percentile key.
    pub of: String,
    /// Index in `points` of the answer: the most outstanding I/Os at or under the limit.
    pub found: Option<usize>,
    /// Index in `points` of the depth one above it, measured over the limit.
    pub over: Option<usize>,
    /// Indexes in `points` of every depth measured, in order.
    pub measured: Vec<usize>,
    /// The answer in one line.
    pub answer: String,
}

/// Fills in each summary's scaling factor and theoretical maximum.
pub fn annotate(doc: &mut StudyDoc) {
    let storage = doc.config.storage.clone();
    for i in 0..doc.points.len() {
        for k in 0..doc.points[i].summary.len() {
            let scaling = scaling(&doc.points, i, k);
            let theory = storage.as_ref().and_then(|s| theory(s, &doc.points[i], k));
            let sum = &mut doc.points[i].summary[k];
            sum.scaling = scaling;
            sum.theory = theory;
        }
    }
}

/// Measured / (N x one unit) for a point whose `managers`, `targets` or `workers` is N > 1.
fn scaling(points: &[PointResult], i: usize, k: usize) -> Option<f64> {
    let p = &points[i];
    let (n, one) = match (p.params.managers, p.params.targets, p.params.workers) {
        (Some(m), _, _) if m > 1 => (m, Point { managers: Some(1), ..p.params.clone() }),
        (_, Some(t), _) if t > 1 => (t, Point { targets: Some(1), ..p.params.clone() }),
        (_, _, Some(w)) if w > 1 => (w, Point { workers: Some(1), ..p.params.clone() }),
        _ => return None,
    };
    let base = points.iter().find(|q| q.params == one)?;
    let (s, b) = (&p.summary[k], base.summary.iter().find(|b| b.spec == p.summary[k].spec)?);
    (b.iops.median > 0.0).then(|| s.iops.median / (n as f64 * b.iops.median))
}

/// The theoretical maximum of summary `k` of point `p`: sequential workloads in MB/s, random
/// ones in IOPS (when the drives' IOPS are given), over the point's distinct targets.
fn theory(storage: &Storage, p: &PointResult, k: usize) -> Option<TheoryAt> {
    let run = p.runs.first()?;
    let sum = &p.summary[k];
    let spec = run.config.specs.iter().find(|s| s.name == sum.spec)?;
    let volumes = run.target_info.len() as u32;
    let weight =
        |f: &dyn Fn(&SpecLine) -> f64| -> f64 { spec.lines.iter().map(|l| l.share as f64 * f(l)).sum::<f64>() };
    let (t, measured, unit) = if spec.lines.iter().all(|l| l.random == 0) {
        let bytes = weight(&|l| l.size as f64);
        let read_share = weight(&|l| l.size as f64 * l.read as f64 / 100.0) / bytes;
        (storage.mbps(volumes, read_share), sum.mbps.median, "mbps")
    } else if spec.lines.iter().all(|l| l.random == 100) {
        let read_share = weight(&|l| l.read as f64 / 100.0) / weight(&|_| 1.0);
        (storage.iops(volumes, read_share)?, sum.iops.median, "iops")
    } else {
        return None;
    };
    let limit = if sum.cpu_pct.median > 90.0 {
        "host_cpu".to_string()
    } else {
        serde_json::to_value(t.limit).ok()?.as_str()?.to_string()
    };
    Some(TheoryAt { unit: unit.into(), value: t.value, measured_pct: measured / t.value * 100.0, limit })
}

/// A workload of one point, round by round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tracked {
    /// The point (its cycled parameters; the round aside).
    pub params: Point,
    /// The workload's name.
    pub spec: String,
    /// The tracked measure in each round.
    pub values: Vec<f64>,
}

/// Means of a workload at a point over the window's rounds: the figures the study reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SteadyRow {
    /// The point (its cycled parameters; the round aside).
    pub params: Point,
    /// The workload's name.
    pub spec: String,
    /// The workload as the job names it (as in [`SpecSummary`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// Mean IOPS over the window.
    pub iops: f64,
    /// Mean MB/s over the window.
    pub mbps: f64,
    /// Mean of the rounds' mean response times (ms).
    pub avg_response_ms: Option<f64>,
}

/// What preconditioning did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Preconditioned {
    /// `sequential` or `workload`.
    pub pattern: Precondition,
    /// The workload run.
    pub spec: String,
    /// Times each working set was written.
    pub passes: u32,
    /// Bytes written in all.
    pub bytes: u64,
    /// How long it took (s).
    pub duration_s: f64,
    /// Its throughput (10^6 bytes/s).
    pub mbps: f64,
}

/// A steady-state study's outcome, updated after every round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SteadyResult {
    /// `iops`, `mbps` or `avg_ms`.
    pub measure: Measure,
    /// Preconditioning, if any ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<Preconditioned>,
    /// Each round's points (indexes in `points`).
    pub rounds: Vec<Vec<usize>>,
    /// The workloads that must settle, round by round.
    pub tracked: Vec<Tracked>,
    /// Whether the tracked measures settled.
    pub reached: bool,
    /// The window: its first and last round (from 1); when not reached, the last rounds run.
    pub window: Option<[u32; 2]>,
    /// The worst excursion and slope over the tracked workloads in that window (%).
    pub excursion_pct: Option<f64>,
    /// The worst slope (%).
    pub slope_pct: Option<f64>,
    /// Every point and workload averaged over the window.
    pub table: Vec<SteadyRow>,
    /// One line: whether and when steady state was reached.
    pub answer: String,
}

impl SteadyResult {
    /// Before the first round.
    pub fn new(st: &Steady, precondition: Option<Preconditioned>) -> Self {
        SteadyResult {
            measure: st.measure,
            precondition,
            rounds: Vec::new(),
            tracked: Vec::new(),
            reached: false,
            window: None,
            excursion_pct: None,
            slope_pct: None,
            table: Vec::new(),
            answer: "no round run".into(),
        }
    }
}
