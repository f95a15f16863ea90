//! `iogauge compare A B`: two result or study documents side by side, per workload, with the
//! % difference of B from A (seed 001's "% better", seed 004's side-by-side tables).

use crate::document::Document;
use crate::format::{grid, opt_ms, thousands};
use crate::result::Headline;

/// % difference of `b` from `a`; None when `a` is zero or either is missing.
pub fn pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a != 0.0 => Some((b - a) / a * 100.0),
        _ => None,
    }
}

/// The workloads present in both, in A's order, with A's and B's figures.
pub fn pair(a: &[(String, Headline)], b: &[(String, Headline)]) -> Vec<(String, Headline, Headline)> {
    a.iter()
        .filter_map(|(k, fa)| b.iter().find(|(kb, _)| kb == k).map(|(_, fb)| (k.clone(), fa.clone(), fb.clone())))
        .collect()
}

/// A measure compared: its name, where it is in a workload's figures, how it prints.
pub type Measure = (&'static str, fn(&Headline) -> Option<f64>, fn(f64) -> String);
/// The measures compared (by `compare` and the report's side-by-side table).
pub const MEASURES: [Measure; 6] = [
    ("IOPS", |h| Some(h.iops), thousands),
    ("MB/s", |h| Some(h.mbps), |v| format!("{v:.1}")),
    ("avg ms", |h| h.avg_response_ms, |v| opt_ms(Some(v))),
    ("p99 ms", |h| h.p99_response_ms, |v| opt_ms(Some(v))),
    ("CPU %", |h| h.cpu_pct, |v| format!("{v:.1}")),
    ("IOPS/CPU%", |h| h.iops_per_cpu_pct, thousands),
];

/// The side-by-side table of `A` and `B`: per workload a row of A's figures, one of B's and
/// one of B's % difference from A (within 80 columns).
pub fn table(a_name: &str, b_name: &str, rows: &[(String, Headline, Headline)]) -> String {
    let mut cells = vec![vec!["workload".to_string(), String::new()]];
    cells[0].extend(MEASURES.iter().map(|m| m.0.to_string()));
    for (k, a, b) in rows {
        for (side, h) in [("A", a), ("B", b)] {
            let mut row = vec![if side == "A" { k.clone() } else { String::new() }, side.into()];
            row.extend(MEASURES.iter().map(|(_, get, fmt)| get(h).map_or("-".into(), fmt)));
            cells.push(row);
        }
        let mut row = vec![String::new(), "%".into()];
        row.extend(MEASURES.iter().map(|(_, get, _)| pct(get(a), get(b)).map_or("-".into(), |v| format!("{v:+.1}"))));
        cells.push(row);
    }
    let mut out = grid(&cells);
    out.push_str(&format!(
        "A = {a_name}\nB = {b_name}\n% = (B - A) / A: better higher for IOPS, MB/s, IOPS/CPU%; lower for ms, CPU %\n"
    ));
    out
}

/// What differs between the two documents' set-ups, so a difference in the figures is not
/// read as the storage's: targets, engine, outstanding I/Os, workers, recorded time; and the
/// points an interrupted study did not reach.
pub fn differences(a: &Document, b: &Document) -> Vec<String> {
    let mut out = Vec::new();
    let (sa, sb) = (setup(a), setup(b));
    let differ = |what: &str, x: &String, y: &String| format!("A and B differ in {what}: {x} vs {y}");
    for (what, x, y) in [
        ("targets", &sa.targets, &sb.targets),
        ("engine", &sa.engine, &sb.engine),
        ("outstanding I/Os", &sa.outstanding, &sb.outstanding),
        ("workers", &sa.workers, &sb.workers),
    ] {
        if x != y {
            out.push(differ(what, x, y));
        }
    }
    // A run that ends on a count of I/Os takes the time it takes.
    let timed = !sa.counted && !sb.counted;
    if timed && (sa.seconds - sb.seconds).abs() > 0.1 * sa.seconds.max(sb.seconds) {
        out.push(format!("A and B differ in recorded time: {:.1} s vs {:.1} s per workload", sa.seconds, sb.seconds));
    }
    for (side, d) in [("A", a), ("B", b)] {
        if let Some(missing) = missing_points(d) {
            out.push(format!("{side} is a study stopped before its end: {missing}"));
        }
    }
    out
}

/// What a document ran on, as text to compare.
struct Setup {
    targets: String,
    engine: String,
    outstanding: String,
    workers: String,
    seconds: f64,
    counted: bool,
}

fn setup(d: &Document) -> Setup {
    let runs = d.runs();
    let distinct = |f: &dyn Fn(&crate::result::WorkloadResult) -> String| {
        let mut v: Vec<String> = runs.iter().flat_map(|r| &r.results).map(f).collect();
        v.sort();
        v.dedup();
        v.join(", ")
    };
    let mut targets = d.targets();
    targets.sort();
    let recorded: Vec<f64> = runs.iter().flat_map(|r| &r.results).map(|r| r.duration_s).collect();
    Setup {
        targets: targets.join(", "),
        engine: distinct(&|r| {
            r.workers.first().map_or(String::new(), |w| w.engine.split(';').next().unwrap_or("").to_string())
        }),
        outstanding: distinct(&|r| r.totals.outstanding.to_string()),
        workers: distinct(&|r| r.workers.len().to_string()),
        seconds: recorded.iter().sum::<f64>() / recorded.len().max(1) as f64,
        counted: runs.iter().any(|r| r.config.test.counted()),
    }
}

/// The points an interrupted study did not run, by their parameters.
fn missing_points(d: &Document) -> Option<String> {
    let Document::Study(s) = d else { return None };
    if !s.interrupted {
        return None;
    }
    let mut job = s.config.clone();
    job.study = Some(s.study.clone());
    let planned = crate::study::points(&job).ok()?;
    let done: Vec<String> = s.points.iter().map(|p| p.params.label()).collect();
    let missing: Vec<String> = planned.iter().map(|p| p.label()).filter(|l| !done.contains(l)).collect();
    Some(if missing.is_empty() {
        "its last point is incomplete".into()
    } else {
        format!("{} of {} points missing ({})", missing.len(), planned.len(), missing.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_difference() {
        assert_eq!(pct(Some(100.0), Some(125.0)), Some(25.0));
        assert_eq!(pct(Some(200.0), Some(150.0)), Some(-25.0));
        assert_eq!(pct(Some(0.0), Some(1.0)), None);
        assert_eq!(pct(None, Some(1.0)), None);
    }

    #[test]
    fn pairs_only_common_workloads_in_a_order() {
        let f = |iops| Headline {
            iops,
            mbps: 0.0,
            avg_response_ms: None,
            p99_response_ms: None,
            cpu_pct: None,
            iops_per_cpu_pct: None,
        };
        let a = vec![("x".to_string(), f(1.0)), ("y".to_string(), f(2.0)), ("z".to_string(), f(3.0))];
        let b = vec![("z".to_string(), f(30.0)), ("x".to_string(), f(10.0))];
        let p = pair(&a, &b);
        assert_eq!(
            p.iter().map(|r| (r.0.as_str(), r.1.iops, r.2.iops)).collect::<Vec<_>>(),
            [("x", 1.0, 10.0), ("z", 3.0, 30.0)]
        );
    }
}
