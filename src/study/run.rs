//! Running a study: each point's test `repeat` times, every result document kept, and a
//! summary per point (the median of the repeats and how far they spread).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::stats::{CV_WARN, Spread};
use super::{Point, StudyConfig, apply, search};
use crate::config::TestConfig;
use crate::error::{Error, Result, input};
use crate::managers::Group;
use crate::plan;
use crate::result::ResultDoc;
use crate::run::{self, LiveStatus, Progress};
use crate::verify::map::BlockMap;

/// A point always runs to its end; Ctrl-C stops a study between points (see [`run_study`]).
static NEVER: AtomicBool = AtomicBool::new(false);

/// `schema` of a study document.
pub const SCHEMA: &str = "iogauge.study/1";

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
    pub config: TestConfig,
    /// Points in the order run.
    pub points: Vec<PointResult>,
    /// With a `limit`: one search per outer point and access specification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub searches: Vec<SearchResult>,
    /// With a `curve`: one curve per outer point and access specification.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<CurveResult>,
    /// Things to know when reading the numbers (repeats that disagree, among others).
    pub warnings: Vec<String>,
    /// True while points remain to run (the document is written after every point).
    pub interrupted: bool,
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

/// One access specification at one point, over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecSummary {
    /// The specification's name.
    pub spec: String,
    /// I/Os per second.
    pub iops: Spread,
    /// 10^6 bytes per second.
    pub mbps: Spread,
    /// Mean response time (ms); absent with no completed I/O.
    pub avg_response_ms: Option<Spread>,
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

fn summarise(runs: &[ResultDoc]) -> Vec<SpecSummary> {
    let specs = runs[0].results.iter().map(|r| r.spec.clone());
    specs
        .enumerate()
        .map(|(k, spec)| {
            let totals: Vec<_> = runs.iter().map(|d| &d.results[k].totals).collect();
            let spread = |f: &dyn Fn(&crate::result::Totals) -> f64| {
                Spread::of(&totals.iter().map(|t| f(t)).collect::<Vec<_>>())
            };
            let optional = |f: &dyn Fn(&crate::result::Totals) -> Option<f64>| {
                let v: Option<Vec<f64>> = totals.iter().map(|t| f(t)).collect();
                v.map(|v| Spread::of(&v))
            };
            SpecSummary {
                spec,
                iops: spread(&|t| t.metrics.iops),
                mbps: spread(&|t| t.metrics.mbps),
                avg_response_ms: optional(&|t| t.metrics.avg_response_ms),
                p99_response_ms: optional(&|t| t.metrics.percentiles_ms.get("p99").copied()),
                cpu_pct: spread(&|t| t.cpu.all.utilization_pct),
                iops_per_cpu_pct: spread(&|t| t.cpu.effectiveness),
                errors: totals.iter().map(|t| t.metrics.errors).sum(),
                scaling: None,
                theory: None,
            }
        })
        .collect()
}

/// Prefixes the live line with the point being run.
struct PointProgress<'a> {
    inner: &'a mut dyn Progress,
    label: String,
}

impl Progress for PointProgress<'_> {
    fn live(&mut self, s: &LiveStatus) {
        let spec = format!("{} {}", self.label, s.spec);
        self.inner.live(&LiveStatus { spec: &spec, ..s.clone() });
    }
    fn done(&mut self) {
        self.inner.done();
    }
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

/// Runs points one after another into one document.
struct Runner<'a> {
    base: TestConfig,
    repeat: u32,
    doc: StudyDoc,
    t0: Instant,
    progress: &'a mut dyn Progress,
    after_point: &'a mut dyn FnMut(&StudyDoc) -> Result<()>,
    /// Set (by Ctrl-C) to stop before the next point.
    stop: &'a AtomicBool,
    /// The managers running every point together.
    group: &'a dyn Group,
    /// With `--verify`: per target, the map of the last point that wrote to it.
    maps: Vec<BlockMap>,
}

impl Runner<'_> {
    /// Runs `point` (only `spec`, if given) `repeat` times; returns its index in the document.
    fn measure(&mut self, point: &Point, spec: Option<&str>, label: &str) -> Result<usize> {
        // Every manager stops before the same point, whichever was told to.
        if self.group.sum(&[u64::from(self.stop.load(Relaxed))], "the next point")[0] > 0 {
            return Err(Error::Stopped);
        }
        let mut base = self.base.clone();
        if let Some(spec) = spec {
            base.test.run = vec![spec.to_string()];
        }
        let (c, runs) =
            apply(&base, point).map_err(|e| input(format!("study point {}: {}", point.label(), e.message)))?;
        let prep = plan::prepare_for(self.group, c, runs)?;
        let mut docs = Vec::new();
        for r in 0..self.repeat {
            let mut label = label.to_string();
            if self.repeat > 1 {
                label += &format!(" run {}/{}", r + 1, self.repeat);
            }
            let tested =
                run::run_test(&prep, self.group, &mut PointProgress { inner: &mut *self.progress, label }, &NEVER)?;
            for map in tested.maps.into_iter().filter(|m| m.entries.iter().any(|&e| e != 0)) {
                self.maps.retain(|m| m.path != map.path);
                self.maps.push(map);
            }
            docs.push(tested.doc);
        }
        let index = self.doc.points.len();
        for w in docs.iter().flat_map(|d| &d.warnings) {
            if !self.doc.warnings.contains(w) {
                self.doc.warnings.push(w.clone());
            }
        }
        let summary = summarise(&docs);
        for s in &summary {
            if s.iops.cv > CV_WARN {
                self.doc.warnings.push(format!(
                    "point {} ({}) {}: IOPS vary by {:.1} % (coefficient of variation) over {} runs; more time or repeats would steady them",
                    index + 1,
                    point.label(),
                    s.spec,
                    s.iops.cv * 100.0,
                    self.repeat
                ));
            }
        }
        self.doc.points.push(PointResult { index, params: point.clone(), summary, runs: docs });
        annotate(&mut self.doc);
        self.doc.duration_s = self.t0.elapsed().as_secs_f64();
        (self.after_point)(&self.doc)?;
        Ok(index)
    }
}

/// A search or curve runs one access specification at a time: each of test.run, or (None) the
/// workers' own.
fn specs_of(c: &TestConfig) -> Vec<Option<String>> {
    match c.test.run.is_empty() {
        true => vec![None],
        false => c.test.run.iter().cloned().map(Some).collect(),
    }
}

/// The response time a limit applies to, at a measured point: the median over its repeats.
fn response(p: &PointResult, of: &str) -> Option<f64> {
    let v: Option<Vec<f64>> = p
        .runs
        .iter()
        .map(|d| {
            let m = &d.results.first()?.totals.metrics;
            if of == "avg" { m.avg_response_ms } else { m.percentiles_ms.get(of).copied() }
        })
        .collect();
    v.map(|v| Spread::of(&v).median)
}

/// Runs every point of `points` over `config` (which holds the `[study]` section), or from
/// each a limit search or a curve; calls `after_point` with the document so far after each point,
/// so a study cut short keeps the points it finished.
pub fn run_study(
    config: &TestConfig,
    points: &[Point],
    progress: &mut dyn Progress,
    after_point: &mut dyn FnMut(&StudyDoc) -> Result<()>,
    stop: &AtomicBool,
    group: &dyn Group,
) -> Result<Studied> {
    let study = config.study.clone().ok_or_else(|| input("the job file has no [study] section"))?;
    let mut job = config.clone();
    job.study = None;
    let doc = StudyDoc {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: run::timestamp(SystemTime::now()),
        duration_s: 0.0,
        study: study.clone(),
        config: job,
        points: Vec::new(),
        searches: Vec::new(),
        curves: Vec::new(),
        warnings: Vec::new(),
        interrupted: true,
    };
    // The runner's base keeps the [study] section: `apply` reads how targets are added.
    let mut r = Runner {
        base: config.clone(),
        repeat: study.repeat,
        doc,
        t0: Instant::now(),
        progress,
        after_point,
        stop,
        group,
        maps: Vec::new(),
    };
    match run_points(&mut r, &study, points) {
        Ok(()) => r.doc.interrupted = false,
        Err(Error::Stopped) => r.doc.interrupted = true,
        Err(e) => return Err(e),
    }
    r.doc.duration_s = r.t0.elapsed().as_secs_f64();
    Ok(Studied { doc: r.doc, maps: r.maps })
}

/// A finished (or stopped) study.
pub struct Studied {
    /// The study document.
    pub doc: StudyDoc,
    /// With `--verify`: per target, the map of the last point that wrote to it (a map names
    /// the writes of one test; blocks only earlier points wrote are left unchecked).
    pub maps: Vec<BlockMap>,
}

/// The study's points: cycled, searched or on a curve.
fn run_points(r: &mut Runner, study: &StudyConfig, points: &[Point]) -> Result<()> {
    match (&study.limit, &study.curve) {
        (None, None) => {
            for (i, point) in points.iter().enumerate() {
                let label = format!("point {}/{} {}", i + 1, points.len(), point.label());
                r.measure(point, None, &label)?;
            }
        }
        (None, Some(curve)) => {
            let fractions = curve.fractions.clone();
            let specs = specs_of(&r.base);
            for point in points {
                for spec in &specs {
                    let label = |p: &Point| format!("curve {} {}", spec.as_deref().unwrap_or(""), p.label());
                    let max = r.measure(point, spec.as_deref(), &label(point))?;
                    let max_iops = r.doc.points[max].summary[0].iops.median;
                    let mut at = Vec::new();
                    for &f in &fractions {
                        let p = Point { rate_pct: Some(f), rate_iops: Some(max_iops * f / 100.0), ..point.clone() };
                        at.push(r.measure(&p, spec.as_deref(), &label(&p))?);
                    }
                    let spec = r.doc.points[max].summary[0].spec.clone();
                    r.doc.curves.push(CurveResult { params: point.clone(), spec, max, points: at });
                }
            }
        }
        (Some(limit), _) => {
            // One search per outer point and access specification (test.run), or one over the
            // workers' own specifications.
            let specs = specs_of(&r.base);
            for point in points {
                for spec in &specs {
                    let mut indexes: Vec<(u32, usize)> = Vec::new();
                    let outcome = search::search(limit.ms, limit.max_outstanding, &mut |q| {
                        let p = Point { outstanding: Some(q), ..point.clone() };
                        let label = format!("search {} {}", spec.as_deref().unwrap_or(""), p.label());
                        let i = r.measure(&p, spec.as_deref(), &label)?;
                        indexes.push((q, i));
                        // A run with no completed I/O has no response time: count it as over.
                        Ok(response(&r.doc.points[i], &limit.of).unwrap_or(f64::INFINITY))
                    })?;
                    let at = |q: Option<u32>| q.and_then(|q| indexes.iter().find(|(d, _)| *d == q).map(|(_, i)| *i));
                    let (found, over) = (at(outcome.found), at(outcome.over));
                    let name = r.doc.points[indexes[0].1].summary.first().map_or(String::new(), |s| s.spec.clone());
                    let answer = explain(&r.doc.points, &name, limit, found, over, &outcome);
                    r.doc.searches.push(SearchResult {
                        params: point.clone(),
                        spec: name,
                        limit_ms: limit.ms,
                        of: limit.of.clone(),
                        found,
                        over,
                        measured: indexes.iter().map(|(_, i)| *i).collect(),
                        answer,
                    });
                }
            }
        }
    }
    Ok(())
}

/// "oltp-8k: 6,740 IOPS at 19.6 ms avg with 48 outstanding; 49 outstanding gave 20.1 ms".
fn explain(
    points: &[PointResult],
    spec: &str,
    limit: &super::Limit,
    found: Option<usize>,
    over: Option<usize>,
    outcome: &search::Outcome,
) -> String {
    let of = &limit.of;
    let value = |i: usize| response(&points[i], of).map_or("no".into(), |v| format!("{v:.3} ms"));
    let iops = |i: usize| crate::export::table::thousands(points[i].summary[0].iops.median);
    let depth = |i: usize| points[i].params.outstanding.unwrap_or(0);
    match (found, over) {
        (Some(f), Some(o)) => format!(
            "{spec}: {} IOPS at {} {of} with {} outstanding; {} outstanding gave {} (limit {} ms)",
            iops(f),
            value(f),
            depth(f),
            depth(o),
            value(o),
            limit.ms
        ),
        (Some(f), None) => format!(
            "{spec}: {} IOPS at {} {of} with {} outstanding, the most searched; never over the limit of {} ms",
            iops(f),
            value(f),
            depth(f),
            limit.ms
        ),
        (None, _) => format!(
            "{spec}: over the limit of {} ms even at 1 outstanding ({} {of})",
            limit.ms,
            outcome.measured.first().map_or("-".into(), |m| format!("{:.3} ms", m.1))
        ),
    }
}

/// Fills in each summary's scaling factor and theoretical maximum.
fn annotate(doc: &mut StudyDoc) {
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
fn theory(storage: &crate::model::Storage, p: &PointResult, k: usize) -> Option<TheoryAt> {
    let run = p.runs.first()?;
    let sum = &p.summary[k];
    let spec = run.config.specs.iter().find(|s| s.name == sum.spec)?;
    let volumes = run.target_info.len() as u32;
    let weight = |f: &dyn Fn(&crate::spec::SpecLine) -> f64| -> f64 {
        spec.lines.iter().map(|l| l.share as f64 * f(l)).sum::<f64>()
    };
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
