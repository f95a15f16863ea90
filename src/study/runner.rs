//! Measuring a study's points: each point's test `repeat` times, every result document kept,
//! a summary per point (the median of the repeats and how far they spread), and the observer
//! told. Every way of running points (`run.rs`, `search.rs`, `curve.rs`, `steady.rs`) measures
//! through [`Runner`]; a file-system study (`fs/`), whose points are its own tests, adds its
//! runs through [`Runner::add_run`] too, so every study document is built here.

use std::time::{Instant, SystemTime};

use super::doc::{self, PointResult, SCHEMA, StudyDoc};
use super::stats::CV_WARN;
use super::{Point, apply};
use crate::config::{Job, Workload};
use crate::error::{Error, Result, input, runtime};
use crate::managers::Group;
use crate::plan;
use crate::result::{ResultDoc, WorkloadResult};
use crate::run::{self, Counters, Observer, Progress, Snapshot};
use crate::verify::map::BlockMap;

/// What a study tells the outside: everything a run does, and each point as it ends.
pub trait StudyObserver: Observer {
    /// A point has ended: the document so far, to be written now, so that a study cut short
    /// keeps the points it finished.
    fn point_done(&mut self, doc: &StudyDoc) -> Result<()>;
}

/// The observer of one point's runs: each snapshot says where the study is, and a point runs
/// to its end (Ctrl-C stops a study between points, see [`super::run::run_study`]) unless it
/// is made to [`stop at once`](PointObserver::stopping_at_once) or the stop asked is one for
/// the point too (SIGTERM, a second Ctrl-C).
pub struct PointObserver<'a> {
    inner: &'a mut dyn StudyObserver,
    /// A Ctrl-C stops the run at once, its result kept and marked interrupted (else only a
    /// second one does).
    at_once: bool,
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
    fn stop_requested(&self) -> bool {
        (self.at_once && self.inner.stop_requested()) || self.inner.stop_point_requested()
    }
    fn stop_point_requested(&self) -> bool {
        self.inner.stop_point_requested()
    }
    fn stop_now_requested(&self) -> bool {
        self.inner.stop_now_requested()
    }
}

impl PointObserver<'_> {
    /// This point's run stops at once on a Ctrl-C: a file-system test moves its whole file
    /// set, gigabytes at seed 002's size, and is not left to finish.
    pub fn stopping_at_once(self) -> Self {
        PointObserver { at_once: true, ..self }
    }
}

/// Runs points one after another into one document.
pub struct Runner<'a> {
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
    /// The study's warnings of what the host did to its numbers, over every run so far
    /// (findings::of_host).
    host_findings: Vec<String>,
}

impl<'a> Runner<'a> {
    /// A study of `config` (the job as written, with its `[study]` section) begun: its document
    /// holds no point yet. `planned`: how many points it measures, if known.
    pub fn begin(
        config: &Job,
        planned: Option<usize>,
        observer: &'a mut dyn StudyObserver,
        group: &'a dyn Group,
    ) -> Runner<'a> {
        let study = config.study.clone().unwrap_or_default();
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
            steady: None,
            warnings: Vec::new(),
            interrupted: true,
            failed: None,
        };
        Runner {
            base: config.clone(),
            repeat: study.repeat,
            doc,
            t0: Instant::now(),
            observer,
            group,
            maps: Vec::new(),
            planned,
            host_findings: Vec::new(),
        }
    }

    /// The document so far.
    pub fn doc(&self) -> &StudyDoc {
        &self.doc
    }

    /// Adds a warning to the document (once).
    pub fn warn(&mut self, warning: String) {
        if !self.doc.warnings.contains(&warning) {
            self.doc.warnings.push(warning);
        }
    }

    /// The document, its time taken, `interrupted` as said.
    pub fn finish(mut self, interrupted: bool) -> StudyDoc {
        self.doc.interrupted = interrupted;
        self.doc.duration_s = self.t0.elapsed().as_secs_f64();
        self.doc
    }

    /// Hands the document as it is to the observer.
    pub fn tell(&mut self) -> Result<()> {
        self.doc.duration_s = self.t0.elapsed().as_secs_f64();
        self.observer.point_done(&self.doc)
    }

    /// Whether the user asked to stop.
    pub fn stop_requested(&self) -> bool {
        self.observer.stop_requested()
    }

    /// Adds run `r` (from 0) of `point`: a new point when `r` is 0, else the next repeat of the
    /// last point of the same parameters. Its summary is made again over its runs (each
    /// workload of `workloads` named by what the job called it), a point whose repeats vary
    /// is said once they are all in, and the document goes to the observer. Returns the
    /// point's index.
    pub fn add_run(&mut self, point: &Point, r: u32, run: ResultDoc, workloads: &[Workload]) -> Result<usize> {
        let points = &mut self.doc.points;
        let index = match points.iter().rposition(|p| p.params == *point).filter(|_| r > 0) {
            Some(i) => i,
            None => {
                points.push(PointResult {
                    index: points.len(),
                    params: point.clone(),
                    summary: Vec::new(),
                    runs: Vec::new(),
                });
                points.len() - 1
            }
        };
        // A busy host, and a worker it held off the CPU, are said once for the whole study,
        // over every run so far.
        let here = crate::result::warnings::of_host(&run.results, &run.host, &run.config);
        for w in run.warnings.iter().filter(|w| !here.contains(w)) {
            self.warn(w.clone());
        }
        let all = self.doc.points.iter().flat_map(|p| &p.runs).chain([&run]).flat_map(|r| &r.results);
        let all = crate::result::warnings::of_host(all, &run.host, &run.config);
        if all != self.host_findings {
            self.doc.warnings.retain(|w| !self.host_findings.contains(w));
            self.doc.warnings.extend(all.clone());
            self.host_findings = all;
        }
        let p = &mut self.doc.points[index];
        p.runs.push(run);
        p.summary = doc::summarise(&p.runs);
        for s in &mut p.summary {
            s.workload = workloads.iter().find(|w| w.name == s.spec).map(|w| w.base.clone());
        }
        if p.runs.len() == self.repeat as usize {
            for s in &p.summary {
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
        }
        doc::annotate(&mut self.doc);
        self.tell()?;
        Ok(index)
    }

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
        let test = apply(&base, point).map_err(|e| input(e.message).context(point.at()))?;
        let st = &test.settings;
        let per_run = (!st.counted()).then(|| (st.ramp + st.time).as_secs_f64() * test.workloads.len() as f64);
        let mut index = self.doc.points.len();
        for r in 0..self.repeat {
            let mut label = label.to_string();
            if self.repeat > 1 {
                label += &format!(" run {}/{}", r + 1, self.repeat);
            }
            // Each run's I/O logs in a directory of its own, DIR/point-N[/run-R]: set before
            // the run is planned, so its document says where they are.
            let mut test = test.clone();
            if let Some(dir) = &self.base.test.log_dir {
                let mut d = dir.join(format!("point-{}", index + 1));
                if self.repeat > 1 {
                    d = d.join(format!("run-{}", r + 1));
                }
                std::fs::create_dir_all(&d).map_err(|e| runtime(format!("--log-dir {}: {e}", d.display())))?;
                test.settings.log_dir = Some(d);
            }
            let workloads = test.workloads.clone();
            let prep = plan::prepare_for(self.group, test)?;
            let group = self.group;
            let tested = run::run_test(&prep, group, &mut self.point_observer(point, r, label, per_run))?;
            for map in tested.maps.into_iter().filter(|m| m.entries.iter().any(|&e| e != 0)) {
                self.maps.retain(|m| m.path != map.path);
                self.maps.push(map);
            }
            index = self.add_run(point, r, tested.doc, &workloads)?;
        }
        Ok(index)
    }
}

impl<'a> Runner<'a> {
    /// The observer of run `r` of `point` (the next point when `r` is 0, else the last of its
    /// parameters): its label, and the time left when it starts, the runs to come at the pace
    /// of those done (before any is, at `this_run_s`, the run's own settings, each).
    pub fn point_observer(
        &mut self,
        point: &Point,
        r: u32,
        label: String,
        this_run_s: Option<f64>,
    ) -> PointObserver<'_> {
        let points = &self.doc.points;
        let number = points.iter().rposition(|p| p.params == *point).filter(|_| r > 0).unwrap_or(points.len()) + 1;
        let done: usize = points.iter().map(|p| p.runs.len()).sum();
        let elapsed_s = self.t0.elapsed().as_secs_f64();
        let left_then = self.planned.and_then(|n| {
            let after = (n * self.repeat as usize).saturating_sub(done + 1) as f64;
            match done {
                0 => this_run_s.map(|t| t * (1.0 + after)),
                _ => Some(this_run_s.unwrap_or(0.0) + elapsed_s / done as f64 * after),
            }
        });
        let progress =
            Progress { label, point: number, points: self.planned, round: point.round, elapsed_s, left_s: left_then };
        PointObserver { inner: &mut *self.observer, at_once: false, progress, started: Instant::now(), left_then }
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
