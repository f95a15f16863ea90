//! The maximum at a response-time limit (seed 001): raise outstanding I/Os, doubling from 1,
//! until the response time goes over the limit, then bisect between the last depth under it
//! and the first over it. The answer is the deepest depth measured at or under the limit whose
//! next depth (one more) was measured over it.

use super::Point;
use super::doc::{PointResult, SearchResult};
use super::mode::{StudyMode, mistake};
use super::runner::{Runner, specs_of};
use super::stats::Spread;
use crate::config::{ConfigError, Job, Limit, Seg, StudyConfig};
use crate::error::Result;

/// What a search measured and found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Every depth measured, in order, with its response time (ms).
    pub measured: Vec<(u32, f64)>,
    /// The most outstanding I/Os at or under the limit; None if even 1 was over.
    pub found: Option<u32>,
    /// The depth just above `found`, measured over the limit; None if `max` never was.
    pub over: Option<u32>,
}

/// Searches depths 1..=`max` with `measure` (depth -> response time in ms).
pub fn search(limit_ms: f64, max: u32, measure: &mut dyn FnMut(u32) -> Result<f64>) -> Result<Outcome> {
    let mut measured = Vec::new();
    let mut probe = |q: u32, measured: &mut Vec<(u32, f64)>| -> Result<bool> {
        let v = measure(q)?;
        measured.push((q, v));
        Ok(v <= limit_ms)
    };
    // Doubling: lo is under the limit, hi (if any) over it.
    if !probe(1, &mut measured)? {
        return Ok(Outcome { measured, found: None, over: Some(1) });
    }
    let (mut lo, mut hi) = (1u32, None);
    while lo < max {
        let q = (lo * 2).min(max);
        if probe(q, &mut measured)? {
            lo = q;
        } else {
            hi = Some(q);
            break;
        }
    }
    // Bisecting until the two are neighbours.
    if let Some(mut h) = hi {
        while h - lo > 1 {
            let mid = lo + (h - lo) / 2;
            if probe(mid, &mut measured)? {
                lo = mid;
            } else {
                h = mid;
            }
        }
        hi = Some(h);
    }
    Ok(Outcome { measured, found: Some(lo), over: hi })
}

impl StudyMode for Limit {
    fn check(&self, s: &StudyConfig) -> std::result::Result<(), ConfigError> {
        check(self, s)
    }

    /// Unknown: a search measures as many depths as it takes.
    fn planned(&self, _: &Job, _: usize) -> Option<usize> {
        None
    }

    fn run(&self, r: &mut Runner, points: &[Point]) -> Result<()> {
        run(r, self, points)
    }
}

/// Checks a study's `limit` against the rest of its `[study]` section.
fn check(l: &Limit, s: &StudyConfig) -> std::result::Result<(), ConfigError> {
    let wrong = |field, message: String| Err(mistake("limit", Some(field), message));
    if s.outstanding.is_some() {
        let message = "a limit search sets outstanding I/Os itself: remove outstanding".to_string();
        return Err(ConfigError { path: vec![Seg::Key("study"), Seg::Key("outstanding")], message });
    }
    if !(l.ms > 0.0 && l.ms.is_finite()) {
        return wrong("ms", format!("ms = {}: give a positive response time in ms", l.ms));
    }
    if l.of != "avg" && !crate::result::PERCENTILES.iter().any(|(k, _)| *k == l.of) {
        let names: Vec<&str> = crate::result::PERCENTILES.iter().map(|(k, _)| *k).collect();
        return wrong("of", format!("of = \"{}\": give avg or one of {}", l.of, names.join(", ")));
    }
    if l.max_outstanding == 0 || l.max_outstanding > 65536 {
        return wrong("max_outstanding", format!("max_outstanding = {}: give 1 to 65536", l.max_outstanding));
    }
    Ok(())
}

/// One search per point and access specification (test.run), or one over the workers' own
/// specifications.
fn run(r: &mut Runner, limit: &Limit, points: &[Point]) -> Result<()> {
    let specs = specs_of(&r.base);
    for point in points {
        for spec in &specs {
            let mut indexes: Vec<(u32, usize)> = Vec::new();
            let outcome = search(limit.ms, limit.max_outstanding, &mut |q| {
                let p = Point { outstanding: Some(q), ..point.clone() };
                let label = format!("search {} {}", spec.as_deref().unwrap_or(""), p.label());
                let mut tries = 0;
                loop {
                    tries += 1;
                    let i = r.measure(&p, spec.as_deref(), &label)?;
                    indexes.push((q, i));
                    // Nothing measured (a worker held off its CPU for a short run's whole
                    // window) is not an answer: measured again. Failed I/Os and none completed
                    // are over, whatever the time.
                    if !unmeasured(&r.doc.points[i], &limit.of) || tries == TRIES {
                        return Ok(response(&r.doc.points[i], &limit.of).unwrap_or(f64::INFINITY));
                    }
                }
            })?;
            // A depth's measurement is its last try.
            let at = |q: Option<u32>| q.and_then(|q| indexes.iter().rev().find(|(d, _)| *d == q).map(|(_, i)| *i));
            let (found, over) = (at(outcome.found), at(outcome.over));
            let name = r.doc.points[indexes[0].1].summary.first().map_or(String::new(), |s| s.spec.clone());
            let answer = explain(&r.doc.points, &name, limit, found, over);
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
    Ok(())
}

/// Measurements of a depth that completed no I/O and failed none before the search counts it
/// as over the limit.
const TRIES: u32 = 3;

/// Whether a run of point `p` failed I/Os.
fn failed(p: &PointResult) -> bool {
    p.runs.iter().flat_map(|d| &d.results).any(|w| w.totals.metrics.errors > 0)
}

/// Whether point `p` measured nothing: no response time, and no failed I/O either.
fn unmeasured(p: &PointResult, of: &str) -> bool {
    response(p, of).is_none() && !failed(p)
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

/// "oltp-8k: 6,740 IOPS at 19.6 ms avg with 48 outstanding; 49 outstanding gave 20.1 ms avg".
fn explain(points: &[PointResult], spec: &str, limit: &Limit, found: Option<usize>, over: Option<usize>) -> String {
    let of = &limit.of;
    let value = |i: usize| match response(&points[i], of) {
        Some(v) => format!("{v:.3} ms {of}"),
        None if failed(&points[i]) => "no completed I/O, only failed ones".into(),
        None => format!("no completed I/O in {TRIES} runs (the runs' warnings say why)"),
    };
    let iops = |i: usize| crate::format::thousands(points[i].summary[0].iops.median);
    let depth = |i: usize| points[i].params.outstanding.unwrap_or(0);
    match (found, over) {
        (Some(f), Some(o)) => format!(
            "{spec}: {} IOPS at {} with {} outstanding; {} outstanding gave {} (limit {} ms)",
            iops(f),
            value(f),
            depth(f),
            depth(o),
            value(o),
            limit.ms
        ),
        (Some(f), None) => format!(
            "{spec}: {} IOPS at {} with {} outstanding, the most searched; never over the limit of {} ms",
            iops(f),
            value(f),
            depth(f),
            limit.ms
        ),
        (None, Some(o)) if unmeasured(&points[o], of) => {
            format!("{spec}: no answer: 1 outstanding gave {}", value(o))
        }
        (None, o) => {
            format!("{spec}: over the limit of {} ms even at 1 outstanding ({})", limit.ms, o.map_or("-".into(), value))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose response time is `per_io` ms per outstanding I/O (a saturated queue).
    fn linear(per_io: f64, limit: f64, max: u32) -> Outcome {
        search(limit, max, &mut |q| Ok(q as f64 * per_io)).unwrap()
    }

    #[test]
    fn doubles_then_bisects_to_neighbours() {
        let o = linear(0.4, 20.0, 4096); // 50 outstanding give exactly 20 ms
        assert_eq!(o.found, Some(50));
        assert_eq!(o.over, Some(51));
        let depths: Vec<u32> = o.measured.iter().map(|m| m.0).collect();
        assert_eq!(depths, [1, 2, 4, 8, 16, 32, 64, 48, 56, 52, 50, 51]);
    }

    #[test]
    fn edges() {
        let over_at_once = linear(30.0, 20.0, 4096);
        assert_eq!((over_at_once.found, over_at_once.over), (None, Some(1)));
        let never = linear(0.001, 20.0, 100);
        assert_eq!((never.found, never.over), (Some(100), None));
        assert_eq!(never.measured.last().unwrap().0, 100, "the last doubling stops at max");
        let one = linear(15.0, 20.0, 4096);
        assert_eq!((one.found, one.over), (Some(1), Some(2)));
    }
}
