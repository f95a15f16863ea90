//! Running a study: each point's test `repeat` times, every result document kept, and a
//! summary per point (the median of the repeats and how far they spread).

use std::time::{Instant, SystemTime};

use super::doc::{self, CurveResult, PointResult, SCHEMA, SearchResult, StudyDoc};
use super::doc::{Preconditioned, SteadyResult};
use super::stats::{CV_WARN, Spread};
use super::{Point, apply, search};
use crate::config::{Job, Limit, Steady, StudyConfig};
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
/// runs to its end (Ctrl-C stops a study between points, see [`run_study`]).
struct PointObserver<'a> {
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
struct Runner<'a> {
    /// The job as written, with its `[study]` section (`apply` reads how targets are added).
    base: Job,
    repeat: u32,
    doc: StudyDoc,
    t0: Instant,
    /// Hears every interval and point; asked between points whether to stop.
    observer: &'a mut dyn StudyObserver,
    /// The managers running every point together.
    group: &'a dyn Group,
    /// With `--verify`: per target, the map of the last point that wrote to it.
    maps: Vec<BlockMap>,
    /// How many points the study measures (at most, when it runs rounds until steady); None
    /// when searches decide.
    planned: Option<usize>,
}

impl Runner<'_> {
    /// Runs `point` (only `spec`, if given) `repeat` times; returns its index in the document.
    fn measure(&mut self, point: &Point, spec: Option<&str>, label: &str) -> Result<usize> {
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
        let mut prep = plan::prepare_for(self.group, test)?;
        let mut docs = Vec::new();
        for r in 0..self.repeat {
            let mut label = label.to_string();
            if self.repeat > 1 {
                label += &format!(" run {}/{}", r + 1, self.repeat);
            }
            // Each run's I/O logs in a directory of its own: DIR/point-N[/run-R].
            if let Some(dir) = &self.base.test.log_dir {
                let mut d = dir.join(format!("point-{}", self.doc.points.len() + 1));
                if self.repeat > 1 {
                    d = d.join(format!("run-{}", r + 1));
                }
                std::fs::create_dir_all(&d).map_err(|e| runtime(format!("--log-dir {}: {e}", d.display())))?;
                prep.share.settings.log_dir = Some(d);
            }
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
        let summary = doc::summarise(&docs);
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
    fn point_observer(&mut self, point: &Point, label: String, this_point_s: Option<f64>) -> PointObserver<'_> {
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
fn specs_of(c: &Job) -> Vec<Option<String>> {
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

/// Runs every point of `points` over `config` (the job as written, with its `[study]` section),
/// or from each a limit search or a curve; tells the observer of each point as it ends.
pub fn run_study(
    config: &Job,
    points: &[Point],
    observer: &mut dyn StudyObserver,
    group: &dyn Group,
) -> Result<Studied> {
    let study = config.study.clone().ok_or_else(|| input("the job file has no [study] section"))?;
    // Every point's targets pass their checks before the first I/O: a target cycle must not
    // write to a blank device at point 1 and then find a filesystem at point 2.
    for point in points {
        let test = apply(config, point).map_err(|e| input(format!("study point {}: {}", point.label(), e.message)))?;
        plan::check_for(group, &test).map_err(|e| at_point(e, point))?;
    }
    let mut job = config.without_secrets();
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
    };
    let specs = specs_of(config).len();
    let planned = match (&study.steady, &study.limit, &study.curve) {
        (Some(st), _, _) => Some(points.len() * st.max_rounds as usize),
        (None, None, None) => Some(points.len()),
        (None, None, Some(c)) => Some(points.len() * specs * (1 + c.fractions.len())),
        (None, Some(_), _) => None,
    };
    let mut r = Runner {
        planned,
        base: config.clone(),
        repeat: study.repeat,
        doc,
        t0: Instant::now(),
        observer,
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

/// An error of a point's test, naming the point.
fn at_point(e: Error, point: &Point) -> Error {
    match e {
        Error::Input(m) => Error::Input(format!("study point {}: {m}", point.label())),
        Error::Runtime(m) => Error::Runtime(format!("study point {}: {m}", point.label())),
        Error::Stopped => Error::Stopped,
    }
}

/// A finished (or stopped) study.
pub struct Studied {
    /// The study document.
    pub doc: StudyDoc,
    /// With `--verify`: per target, the map of the last point that wrote to it (a map names
    /// the writes of one test; blocks only earlier points wrote are left unchecked).
    pub maps: Vec<BlockMap>,
}

/// The study's points: cycled, searched, on a curve, or in rounds until steady.
fn run_points(r: &mut Runner, study: &StudyConfig, points: &[Point]) -> Result<()> {
    if let Some(st) = &study.steady {
        return rounds(r, st, points);
    }
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

/// Preconditions the targets, then runs every point round after round until the tracked
/// measure settles (or `max_rounds`); the document says whether and when after each round.
fn rounds(r: &mut Runner, st: &Steady, points: &[Point]) -> Result<()> {
    if let Some(track) = &st.track {
        let mut names = Vec::new();
        for p in points {
            let test = apply(&r.base, p).map_err(|e| input(e.message))?;
            names.extend(test.workloads.iter().map(|w| w.name.clone()));
        }
        if !names.contains(track) {
            names.dedup();
            return Err(input(format!(
                "[study] steady: track = \"{track}\" is not a workload of this study; give one of {}",
                names.join(", ")
            )));
        }
    }
    let pre = precondition(r, st, points)?;
    r.doc.steady = Some(SteadyResult::new(st, pre));
    for round in 1..=st.max_rounds {
        let mut indexes = Vec::new();
        for (i, p) in points.iter().enumerate() {
            let p = Point { round: Some(round), ..p.clone() };
            let label = format!("round {round} point {}/{} {}", i + 1, points.len(), p.label());
            indexes.push(r.measure(&p, None, &label)?);
        }
        let steady = r.doc.steady.as_mut().expect("set above");
        steady.rounds.push(indexes);
        super::steady::update(steady, st, &r.doc.points);
        let reached = steady.reached;
        r.observer.point_done(&r.doc)?;
        if reached {
            break;
        }
    }
    Ok(())
}

/// Writes every working set `st.passes` times before the rounds: in 128 KiB sequential writes
/// (at the first point), or with the tracked workload (else the first that writes) where it
/// runs. None when asked for none, when no workload writes, or on the null target (which keeps
/// nothing).
fn precondition(r: &mut Runner, st: &Steady, points: &[Point]) -> Result<Option<Preconditioned>> {
    let resolve = |job: &Job, p: &Point| apply(job, p).map_err(|e| input(e.message));
    let (test, spec) = match st.precondition.as_str() {
        "none" => return Ok(None),
        "sequential" => {
            let mut job = r.base.clone();
            let spec = "streaming-write-128k".to_string();
            job.test.run = vec![spec.clone()];
            job.workers.iter_mut().for_each(|w| w.spec = None);
            (resolve(&job, &points[0])?, spec)
        }
        _ => {
            let writes = |w: &crate::config::Workload| w.specs.iter().any(|s| s.writes());
            let tests = points.iter().map(|p| resolve(&r.base, p)).collect::<Result<Vec<_>>>()?;
            let pick = |ok: &dyn Fn(&crate::config::Workload) -> bool| {
                tests.iter().find_map(|t| Some((t.clone(), t.workloads.iter().find(|w| ok(w))?.name.clone())))
            };
            let found = pick(&|w| st.track.as_ref() == Some(&w.name) && writes(w)).or_else(|| pick(&|w| writes(w)));
            let Some((mut test, spec)) = found else {
                r.doc.warnings.push("no workload of the study writes: not preconditioned".into());
                return Ok(None);
            };
            test.workloads.retain(|w| w.name == spec);
            (test, spec)
        }
    };
    let mut prep = plan::prepare_for(r.group, test)?;
    if prep.targets.iter().any(|t| t.kind == crate::targets::TargetKind::Null) {
        r.doc.warnings.push("the null target keeps no data: not preconditioned".into());
        return Ok(None);
    }
    let mine: u64 = prep.plans[0].iter().flat_map(|p| &p.targets).map(|ws| ws.size).sum();
    let bytes = r.group.sum(&[mine * st.passes as u64], "preconditioning")[0];
    (prep.share.settings.bytes, prep.share.settings.ios) = (Some(bytes), None);
    let label = format!("precondition: {spec} x {}", st.passes);
    let tested = run::run_test(&prep, r.group, &mut r.point_observer(&points[0], label, None))?;
    let result = tested.doc.results.first();
    Ok(Some(Preconditioned {
        pattern: st.precondition.clone(),
        spec,
        passes: st.passes,
        bytes: result.map_or(0, |w| w.totals.metrics.bytes),
        duration_s: result.map_or(0.0, |w| w.duration_s),
        mbps: result.map_or(0.0, |w| w.totals.metrics.mbps),
    }))
}

/// "oltp-8k: 6,740 IOPS at 19.6 ms avg with 48 outstanding; 49 outstanding gave 20.1 ms".
fn explain(
    points: &[PointResult],
    spec: &str,
    limit: &Limit,
    found: Option<usize>,
    over: Option<usize>,
    outcome: &search::Outcome,
) -> String {
    let of = &limit.of;
    let value = |i: usize| response(&points[i], of).map_or("no".into(), |v| format!("{v:.3} ms"));
    let iops = |i: usize| crate::format::thousands(points[i].summary[0].iops.median);
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
