//! Measuring a study's points: each point's test `repeat` times, every result document kept,
//! a summary per point (the median of the repeats and how far they spread), and the observer
//! told. Every way of running points (`run.rs`, `search.rs`, `curve.rs`, `steady.rs`) measures
//! through [`Runner`].

use std::time::Instant;

use super::doc::{self, PointResult, StudyDoc};
use super::stats::CV_WARN;
use super::{Point, apply};
use crate::config::Job;
use crate::error::{Error, Result, input, runtime};
use crate::managers::Group;
use crate::plan;
use crate::result::WorkloadResult;
use crate::run::{self, Counters, Observer, Progress, Snapshot};
use crate::verify::map::BlockMap;

/// What a study tells the outside: everything a run does, and each point as it ends.
pub trait StudyObserver: Observer {
    /// A point has ended: the document so far, to be written now, so that a study cut short
    /// keeps the points it finished.
    fn point_done(&mut self, doc: &StudyDoc) -> Result<()>;
}

/// The observer of one point's runs: each snapshot says where the study is, and a point always
/// runs to its end (Ctrl-C stops a study between points, see [`super::run::run_study`]).
pub(super) struct PointObserver<'a> {
    inner: &'a mut dyn StudyObserver,
    progress: Progress,
    /// When the point started, and the time left then.
    started: Instant,
    left_then: Option<f64>,
}

impl Observer for PointObserver<'_> {
    fn interval(&mut self, s: &Snapshot) {
        let since = self.started.elapsed().as_secs_f64();
        let progress = Progress {
            elapsed_s: self.progress.elapsed_s + since,
            left_s: self.left_then.map(|l| (l - since).max(0.0)),
            ..self.progress.clone()
        };
        self.inner.interval(&Snapshot { study: Some(progress), ..s.clone() });
    }
    fn workload_started(&mut self, counters: &Counters) {
        self.inner.workload_started(counters);
    }
    fn run_done(&mut self, result: &WorkloadResult) {
        self.inner.run_done(result);
    }
}

/// Runs points one after another into one document.
pub(super) struct Runner<'a> {
    /// The job as written, with its `[study]` section (`apply` reads how targets are added).
    pub(super) base: Job,
    pub(super) repeat: u32,
    pub(super) doc: StudyDoc,
    pub(super) t0: Instant,
    /// Hears every interval and point; asked between points whether to stop.
    pub(super) observer: &'a mut dyn StudyObserver,
    /// The managers running every point together.
    pub(super) group: &'a dyn Group,
    /// With `--verify`: per target, the map of the last point that wrote to it.
    pub(super) maps: Vec<BlockMap>,
    /// How many points the study measures (at most, when it runs rounds until steady); None
    /// when searches decide.
    pub(super) planned: Option<usize>,
}

impl Runner<'_> {
    /// Runs `point` (only `spec`, if given) `repeat` times; returns its index in the document.
    pub(super) fn measure(&mut self, point: &Point, spec: Option<&str>, label: &str) -> Result<usize> {
        // Every manager stops before the same point, whichever was told to.
        if self.group.sum(&[u64::from(self.observer.stop_requested())], "the next point")[0] > 0 {
            return Err(Error::Stopped);
        }
        let mut base = self.base.clone();
        if let Some(spec) = spec {
            base.test.run = vec![spec.to_string()];
        }
        let test = apply(&base, point).map_err(|e| input(format!("study point {}: {}", point.label(), e.message)))?;
        let st = &test.settings;
        let per_run = (!st.counted()).then(|| (st.ramp + st.time).as_secs_f64() * test.workloads.len() as f64);
        let mut docs = Vec::new();
        for r in 0..self.repeat {
            let mut label = label.to_string();
            if self.repeat > 1 {
                label += &format!(" run {}/{}", r + 1, self.repeat);
            }
            // Each run's I/O logs in a directory of its own, DIR/point-N[/run-R]: set before
            // the run is planned, so its document says where they are.
            let mut test = test.clone();
            if let Some(dir) = &self.base.test.log_dir {
                let mut d = dir.join(format!("point-{}", self.doc.points.len() + 1));
                if self.repeat > 1 {
                    d = d.join(format!("run-{}", r + 1));
                }
                std::fs::create_dir_all(&d).map_err(|e| runtime(format!("--log-dir {}: {e}", d.display())))?;
                test.settings.log_dir = Some(d);
            }
            let prep = plan::prepare_for(self.group, test)?;
            let group = self.group;
            let left = per_run.map(|t| t * f64::from(self.repeat - r));
            let tested = run::run_test(&prep, group, &mut self.point_observer(point, label, left))?;
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
        let mut summary = doc::summarise(&docs);
        for s in &mut summary {
            s.workload = test.workloads.iter().find(|w| w.name == s.spec).map(|w| w.base.clone());
        }
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
        doc::annotate(&mut self.doc);
        self.doc.duration_s = self.t0.elapsed().as_secs_f64();
        self.observer.point_done(&self.doc)?;
        Ok(index)
    }
}

impl<'a> Runner<'a> {
    /// The observer of a run of the next point: its label, and the time left when it starts,
    /// the points to come at the pace of those done (before any is, `this_point_s`, the
    /// point's own settings, for each).
    pub(super) fn point_observer(
        &mut self,
        point: &Point,
        label: String,
        this_point_s: Option<f64>,
    ) -> PointObserver<'_> {
        let done = self.doc.points.len();
        let elapsed_s = self.t0.elapsed().as_secs_f64();
        let left_then = self.planned.and_then(|n| {
            let after = n.saturating_sub(done + 1) as f64;
            match done {
                0 => this_point_s.map(|t| t * (1.0 + after)),
                _ => Some(this_point_s.unwrap_or(0.0) + elapsed_s / done as f64 * after),
            }
        });
        let progress =
            Progress { label, point: done + 1, points: self.planned, round: point.round, elapsed_s, left_s: left_then };
        PointObserver { inner: &mut *self.observer, progress, started: Instant::now(), left_then }
    }
}

/// A search or curve runs one access specification at a time: each of test.run, or (None) the
/// workers' own.
pub(super) fn specs_of(c: &Job) -> Vec<Option<String>> {
    match c.test.run.is_empty() {
        true => vec![None],
        false => c.test.run.iter().cloned().map(Some).collect(),
    }
}
