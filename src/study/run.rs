//! Running a study: each point's test `repeat` times, every result document kept, and a
//! summary per point (the median of the repeats and how far they spread).

use std::time::{Instant, SystemTime};

use serde::{Deserialize, Serialize};

use super::stats::{CV_WARN, Spread};
use super::{Point, StudyConfig, apply};
use crate::config::TestConfig;
use crate::error::{Result, input};
use crate::plan;
use crate::result::ResultDoc;
use crate::run::{self, LiveStatus, Progress};

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

/// Runs every point of `points` over `config` (which holds the `[study]` section), calling
/// `after_point` with the document so far after each point, so a study cut short keeps the
/// points it finished.
pub fn run_study(
    config: &TestConfig,
    points: &[Point],
    progress: &mut dyn Progress,
    after_point: &mut dyn FnMut(&StudyDoc) -> Result<()>,
) -> Result<StudyDoc> {
    let study = config.study.clone().ok_or_else(|| input("the job file has no [study] section"))?;
    let mut base = config.clone();
    base.study = None;
    let t0 = Instant::now();
    let mut doc = StudyDoc {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: run::timestamp(SystemTime::now()),
        duration_s: 0.0,
        study: study.clone(),
        config: base.clone(),
        points: Vec::new(),
        warnings: Vec::new(),
        interrupted: true,
    };
    for (index, point) in points.iter().enumerate() {
        let (c, runs) =
            apply(&base, point).map_err(|e| input(format!("study point {}: {}", point.label(), e.message)))?;
        let prep = plan::prepare(c, runs)?;
        let mut docs = Vec::new();
        for r in 0..study.repeat {
            let mut label = format!("point {}/{} {}", index + 1, points.len(), point.label());
            if study.repeat > 1 {
                label += &format!(" run {}/{}", r + 1, study.repeat);
            }
            docs.push(run::run_test(&prep, &mut PointProgress { inner: progress, label })?);
        }
        for w in docs.iter().flat_map(|d| &d.warnings) {
            if !doc.warnings.contains(w) {
                doc.warnings.push(w.clone());
            }
        }
        let summary = summarise(&docs);
        for s in &summary {
            if s.iops.cv > CV_WARN {
                doc.warnings.push(format!(
                    "point {} ({}) {}: IOPS vary by {:.1} % (coefficient of variation) over {} runs; more time or repeats would steady them",
                    index + 1,
                    point.label(),
                    s.spec,
                    s.iops.cv * 100.0,
                    study.repeat
                ));
            }
        }
        doc.points.push(PointResult { index, params: point.clone(), summary, runs: docs });
        doc.interrupted = index + 1 < points.len();
        doc.duration_s = t0.elapsed().as_secs_f64();
        after_point(&doc)?;
    }
    Ok(doc)
}
