//! `iogauge compare A B`: two result or study documents side by side, per workload, with the
//! % difference of B from A (seed 001's "% better", seed 004's side-by-side tables).

use crate::document::Document;
use crate::result::Headline;

/// The workloads of a document, by name: the spec (and, in a study, the point) they ran.
pub fn workloads(doc: &Document) -> Vec<(String, Headline)> {
    match doc {
        Document::Run(doc) => doc.results.iter().map(|r| (r.spec.clone(), r.totals.headline())).collect(),
        Document::Study(doc) => doc
            .points
            .iter()
            .flat_map(|p| p.summary.iter().map(move |s| (format!("{} {}", p.params.label(), s.spec), s.medians())))
            .collect(),
    }
}

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

/// The side-by-side table of `A` and `B`.
pub fn table(a_name: &str, b_name: &str, rows: &[(String, Headline, Headline)]) -> String {
    use crate::format::{grid, thousands};
    let mut cells = vec![
        [
            "workload",
            "A IOPS",
            "B IOPS",
            "IOPS %",
            "A MB/s",
            "B MB/s",
            "MB/s %",
            "A avg ms",
            "B avg ms",
            "avg %",
            "A CPU %",
            "B CPU %",
            "CPU %",
            "A IOPS/CPU%",
            "B IOPS/CPU%",
            "IOPS/CPU% %",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let p = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.1}"));
    let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    for (k, a, b) in rows {
        cells.push(vec![
            k.clone(),
            thousands(a.iops),
            thousands(b.iops),
            p(pct(Some(a.iops), Some(b.iops))),
            format!("{:.1}", a.mbps),
            format!("{:.1}", b.mbps),
            p(pct(Some(a.mbps), Some(b.mbps))),
            ms(a.avg_response_ms),
            ms(b.avg_response_ms),
            p(pct(a.avg_response_ms, b.avg_response_ms)),
            format!("{:.1}", a.cpu_pct),
            format!("{:.1}", b.cpu_pct),
            p(pct(Some(a.cpu_pct), Some(b.cpu_pct))),
            thousands(a.iops_per_cpu_pct),
            thousands(b.iops_per_cpu_pct),
            p(pct(Some(a.iops_per_cpu_pct), Some(b.iops_per_cpu_pct))),
        ]);
    }
    let mut out = grid(&cells);
    out.push_str(&format!(
        "A = {a_name}, B = {b_name}; % = (B - A) / A: higher is better for IOPS, MB/s and IOPS/CPU%, lower for avg ms and CPU %\n"
    ));
    out
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
            cpu_pct: 0.0,
            iops_per_cpu_pct: 0.0,
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
