//! Steady state, as SNIA's Solid State Storage Performance Test Specification (PTS) defines it
//! and fio's `ss` tests it: a study runs every point again, round after round, until the
//! tracked measure of the last `window` rounds stays within an excursion (largest less
//! smallest, as a % of their mean) and a slope (the least-squares line's rise or fall across
//! the window, as a % of their mean). Flash and thin-provisioned arrays change under
//! sustained writes (garbage collection, full caches): a figure taken before steady state is
//! the fresh device's, not the one users live with.

use super::doc::{PointResult, Preconditioned, SpecSummary, SteadyResult, SteadyRow, Tracked};
use super::mode::{StudyMode, mistake};
use super::runner::Runner;
use super::{Point, apply};
use crate::config::{ConfigError, Job, Measure, Precondition, Seg, Steady, StudyConfig, Workload};
use crate::error::{Result, input};
use crate::format::thousands;
use crate::{plan, run};

impl StudyMode for Steady {
    fn check(&self, s: &StudyConfig) -> std::result::Result<(), ConfigError> {
        check(self, s)
    }

    /// At most every point in each of `max_rounds` rounds.
    fn planned(&self, _: &Job, points: usize) -> Option<usize> {
        Some(points * self.max_rounds as usize)
    }

    fn run(&self, r: &mut Runner, points: &[Point]) -> Result<()> {
        run(r, self, points)
    }
}

/// Checks a study's `steady` against the rest of its `[study]` section.
fn check(st: &Steady, s: &StudyConfig) -> std::result::Result<(), ConfigError> {
    let wrong = |field, message: String| Err(mistake("steady", Some(field), message));
    for (key, v) in [("excursion_pct", st.excursion_pct), ("slope_pct", st.slope_pct)] {
        if !(v > 0.0 && v <= 100.0) {
            return wrong(key, format!("{key} = {v}: give a % above 0 and at most 100"));
        }
    }
    if st.window < 2 {
        return wrong("window", format!("window = {}: give at least 2 rounds (SNIA's PTS uses 5)", st.window));
    }
    if st.max_rounds < st.window || st.max_rounds > 1000 {
        return wrong("max_rounds", format!("max_rounds = {}: give {} (the window) to 1000", st.max_rounds, st.window));
    }
    if st.passes == 0 || st.passes > 100 {
        return wrong("passes", format!("passes = {}: give 1 to 100", st.passes));
    }
    if s.repeat != 1 {
        let message =
            format!("repeat = {}: the rounds are the repeats of a steady-state study; remove repeat", s.repeat);
        return Err(ConfigError { path: vec![Seg::Key("study"), Seg::Key("repeat")], message });
    }
    Ok(())
}

/// How the values of a window fare against the criteria.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// Their mean.
    pub mean: f64,
    /// Largest less smallest, % of the mean.
    pub excursion_pct: f64,
    /// The least-squares line's change across the window, % of the mean.
    pub slope_pct: f64,
    /// The line: value at the window's first round, and change per round.
    pub intercept: f64,
    /// Change per round.
    pub slope: f64,
}

/// Fits `values` (one per round, at least 2).
pub fn fit(values: &[f64]) -> Fit {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let x_mean = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in values.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let pct = |x: f64| if mean > 0.0 { x / mean * 100.0 } else { f64::INFINITY };
    Fit {
        mean,
        excursion_pct: pct(hi - lo),
        slope_pct: pct(slope.abs() * (n - 1.0)),
        intercept: mean - slope * x_mean,
        slope,
    }
}

/// Takes in the rounds run so far (`res.rounds`, in `points`): the tracked series, the window,
/// whether it settled, the table of means and the answer.
pub fn update(res: &mut SteadyResult, st: &Steady, points: &[PointResult]) {
    let of = |i: usize| &points[i];
    let first = &res.rounds[0];
    // The series: every (point, workload) of a round, or the one tracked.
    let mut tracked = Vec::new();
    let mut table = Vec::new();
    let n = res.rounds.len();
    let w = (st.window as usize).min(n);
    let window = &res.rounds[n - w..];
    for (j, &p) in first.iter().enumerate() {
        for (k, s) in of(p).summary.iter().enumerate() {
            let at = |round: &Vec<usize>| of(round[j]).summary.get(k);
            let params = Point { round: None, ..of(p).params.clone() };
            let mean = |f: &dyn Fn(&SpecSummary) -> Option<f64>| {
                let v: Vec<f64> = window.iter().filter_map(|r| f(at(r)?)).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            table.push(SteadyRow {
                params: params.clone(),
                spec: s.spec.clone(),
                workload: s.workload.clone(),
                iops: mean(&|s| Some(s.iops.median)).unwrap_or(0.0),
                mbps: mean(&|s| Some(s.mbps.median)).unwrap_or(0.0),
                avg_response_ms: mean(&|s| s.avg_response_ms.map(|v| v.median)),
            });
            if st.track.as_ref().is_none_or(|t| *t == s.spec) {
                let values = res.rounds.iter().map(|r| at(r).and_then(|s| value(s, st.measure)).unwrap_or(0.0));
                tracked.push(Tracked { params, spec: s.spec.clone(), values: values.collect() });
            }
        }
    }
    let fits: Vec<Fit> = tracked.iter().map(|t| fit(&t.values[n - w..])).collect();
    let worst = |f: fn(&Fit) -> f64| fits.iter().map(f).fold(0.0, f64::max);
    let (excursion, slope) = (worst(|f| f.excursion_pct), worst(|f| f.slope_pct));
    res.reached = w == st.window as usize && excursion <= st.excursion_pct && slope <= st.slope_pct;
    res.window = (w >= 2).then(|| [(n - w + 1) as u32, n as u32]);
    (res.excursion_pct, res.slope_pct) = if w >= 2 { (Some(excursion), Some(slope)) } else { (None, None) };
    let what = match &st.track {
        Some(t) => format!("{} of {t}", st.measure.name()),
        None => format!("{} of every workload", st.measure.name()),
    };
    res.answer = match (res.reached, res.window) {
        (true, Some([a, b])) => format!(
            "steady state reached at round {b} (window: rounds {a}-{b}): {what} within {excursion:.1} % (limit {}) and a slope of {slope:.1} % (limit {}){}",
            st.excursion_pct,
            st.slope_pct,
            tracked_mean(&tracked, &fits)
        ),
        (false, Some([a, b])) if n as u32 >= st.max_rounds => format!(
            "steady state not reached in {n} rounds: over rounds {a}-{b}, {what} varied by {excursion:.1} % (limit {}) with a slope of {slope:.1} % (limit {})",
            st.excursion_pct, st.slope_pct
        ),
        _ => format!("{n} of at most {} rounds run; steady state not reached yet", st.max_rounds),
    };
    res.tracked = tracked;
    res.table = table;
}

/// " (mean 12,345 IOPS)" for one tracked workload.
fn tracked_mean(tracked: &[Tracked], fits: &[Fit]) -> String {
    match (tracked, fits) {
        ([_], [f]) => format!(" (mean {})", thousands(f.mean)),
        _ => String::new(),
    }
}

/// The value of `measure` in a workload's summary.
pub fn value(s: &SpecSummary, measure: Measure) -> Option<f64> {
    match measure {
        Measure::Iops => Some(s.iops.median),
        Measure::Mbps => Some(s.mbps.median),
        Measure::AvgMs => s.avg_response_ms.map(|v| v.median),
    }
}

/// Preconditions the targets, then runs every point round after round until the tracked
/// measure settles (or `max_rounds`); the document says whether and when after each round.
fn run(r: &mut Runner, st: &Steady, points: &[Point]) -> Result<()> {
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
            let label = format!("round {round}, point {} of {}: {}", i + 1, points.len(), p.label());
            indexes.push(r.measure(&p, None, &label)?);
        }
        let steady = r.doc.steady.as_mut().expect("set above");
        steady.rounds.push(indexes);
        update(steady, st, &r.doc.points);
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
    let (test, spec) = match st.precondition {
        Precondition::Off => return Ok(None),
        Precondition::Sequential => {
            let mut job = r.base.clone();
            let spec = "streaming-write-128k".to_string();
            job.test.run = vec![spec.clone()];
            job.workers.iter_mut().for_each(|w| w.spec = None);
            (resolve(&job, &points[0])?, spec)
        }
        Precondition::Workload => {
            let writes = |w: &Workload| w.specs.iter().any(|s| s.writes());
            let tests = points.iter().map(|p| resolve(&r.base, p)).collect::<Result<Vec<_>>>()?;
            let pick = |ok: &dyn Fn(&Workload) -> bool| {
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
    let sized = plan::prepare_for(r.group, test.clone())?;
    if sized.targets().iter().any(|t| t.kind == crate::targets::TargetKind::Null) {
        r.doc.warnings.push("the null target keeps no data: not preconditioned".into());
        return Ok(None);
    }
    // The working sets are the plan's: planned once to learn them, and again to write them
    // `passes` times over, a count the test (and so its document) says.
    let mine: u64 = sized.plans()[0].iter().flat_map(|p| &p.targets).map(|ws| ws.size).sum();
    drop(sized);
    let mut test = test;
    (test.settings.bytes, test.settings.ios) =
        (Some(r.group.sum(&[mine * st.passes as u64], "preconditioning")[0]), None);
    let prep = plan::prepare_for(r.group, test)?;
    let label = format!("precondition: {spec} x {}", st.passes);
    let tested = run::run_test(&prep, r.group, &mut r.point_observer(&points[0], 0, label, None))?;
    let result = tested.doc.results.first();
    Ok(Some(Preconditioned {
        pattern: st.precondition,
        spec,
        passes: st.passes,
        bytes: result.map_or(0, |w| w.totals.metrics.bytes),
        duration_s: result.map_or(0.0, |w| w.duration_s),
        mbps: result.map_or(0.0, |w| w.totals.metrics.mbps),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_is_least_squares_and_the_criteria_are_snias() {
        // A flat window: no slope, excursion (max - min) / mean.
        let f = fit(&[100.0, 110.0, 90.0, 90.0, 110.0]);
        assert!((f.mean - 100.0).abs() < 1e-9 && (f.excursion_pct - 20.0).abs() < 1e-9);
        assert!(f.slope_pct.abs() < 1e-9);
        // A straight line 100, 102 ... 108: slope 2 per round, 8 across 4 steps = 7.69 % of 104.
        let f = fit(&[100.0, 102.0, 104.0, 106.0, 108.0]);
        assert!((f.slope - 2.0).abs() < 1e-9 && (f.intercept - 100.0).abs() < 1e-9);
        assert!((f.slope_pct - 8.0 / 104.0 * 100.0).abs() < 1e-9);
        assert!((f.excursion_pct - 8.0 / 104.0 * 100.0).abs() < 1e-9);
    }
}
