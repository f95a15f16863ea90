//! The tables printed at the end of a test (one row per workload, like the seeds' tables) and
//! of a study (one row per point and workload).

use std::fmt::Write;

use crate::format::{grid, opt_ms, thousands};
use crate::result::ResultDoc;
use crate::study::doc::StudyDoc;

/// The summary table of a document, with any errors and warnings under it.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let mut rows = vec![vec![
        "workload".to_string(),
        "IOPS".into(),
        "MB/s".into(),
        "avg ms".into(),
        "p99 ms".into(),
        "max ms".into(),
        "CPU %".into(),
        "IOPS/CPU%".into(),
        "errors".into(),
    ]];
    for r in &doc.results {
        let (m, h) = (&r.totals.metrics, r.totals.headline());
        rows.push(vec![
            r.spec.clone(),
            thousands(h.iops),
            format!("{:.1}", h.mbps),
            opt_ms(h.avg_response_ms),
            opt_ms(h.p99_response_ms),
            opt_ms(m.max_response_ms),
            format!("{:.1}", h.cpu_pct),
            thousands(h.iops_per_cpu_pct),
            m.errors.to_string(),
        ]);
    }
    let mut out = grid(&rows);
    if let Some(r) = doc.results.first() {
        let mut targets: Vec<&str> = r.targets.iter().map(|t| t.path.as_str()).collect();
        targets.dedup();
        let _ = writeln!(
            out,
            "{} worker(s), {} outstanding I/Os in all, {:.1} s recorded per workload, on {}",
            r.workers.len(),
            r.totals.outstanding,
            r.duration_s,
            targets.join(", ")
        );
        if r.managers.len() > 1 {
            let hosts: Vec<String> = r.managers.iter().map(|m| format!("{} {}", m.rank, m.host)).collect();
            let skew = doc.results.iter().map(|r| r.start_skew_ms).fold(0.0, f64::max);
            let _ = writeln!(
                out,
                "{} managers ({}), recording started within {skew:.3} ms of each other",
                r.managers.len(),
                hosts.join(", ")
            );
        }
    }
    for r in &doc.results {
        for e in &r.totals.metrics.error_kinds {
            let _ = writeln!(out, "{}: {} I/O error(s): {}", r.spec, e.count, e.text);
        }
        if let Some(f) = &r.first_error {
            let stop = doc.config.test.on_error == crate::config::OnError::Stop;
            let _ = if f.errno == libc::ETIMEDOUT {
                writeln!(out, "{}: stopped, the target stopped answering: {f}", r.spec)
            } else if stop {
                writeln!(out, "{}: stopped at the first failed I/O: {f} (--on-error continue goes on)", r.spec)
            } else {
                writeln!(out, "{}: the first failed I/O: {f}", r.spec)
            };
        }
        if let Some(v) = &r.verify {
            let _ = writeln!(
                out,
                "{}: verified {} block(s) of {} bytes read back, {} mismatch(es)",
                r.spec, v.checked_blocks, v.block_bytes, v.mismatches
            );
            for m in v.found.iter().take(10) {
                let _ = writeln!(out, "  {m}");
            }
            if v.found.len() > 10 {
                let _ = writeln!(out, "  ... {} more in the JSON document", v.mismatches - 10);
            }
        }
    }
    out.into_bytes()
}

/// The study's table: the median of each point's repeats, their spread, and the warnings.
pub fn study_to_bytes(doc: &StudyDoc) -> Vec<u8> {
    let mut rows = vec![
        ["point", "workload", "IOPS", "MB/s", "avg ms", "p99 ms", "CPU %", "IOPS/CPU%", "IOPS CV %", "errors"]
            .map(String::from)
            .to_vec(),
    ];
    let sums = || doc.points.iter().flat_map(|p| &p.summary);
    let (scaling, theory) = (sums().any(|s| s.scaling.is_some()), sums().any(|s| s.theory.is_some()));
    if scaling {
        rows[0].push("scaling".into());
    }
    if theory {
        rows[0].extend(["% of max".to_string(), "limit".into()]);
    }
    for p in &doc.points {
        for s in &p.summary {
            let mut extra = Vec::new();
            if scaling {
                extra.push(s.scaling.map_or("-".into(), |v| format!("{:.0} %", v * 100.0)));
            }
            if theory {
                extra.push(s.theory.as_ref().map_or("-".into(), |t| format!("{:.0} %", t.measured_pct)));
                extra.push(s.theory.as_ref().map_or("-".into(), |t| t.limit.clone()));
            }
            rows.push(vec![
                format!("{} {}", p.index + 1, p.params.label()),
                s.spec.clone(),
                thousands(s.iops.median),
                format!("{:.1}", s.mbps.median),
                opt_ms(s.avg_response_ms.map(|v| v.median)),
                opt_ms(s.p99_response_ms.map(|v| v.median)),
                format!("{:.1}", s.cpu_pct.median),
                thousands(s.iops_per_cpu_pct.median),
                format!("{:.1}", s.iops.cv * 100.0),
                s.errors.to_string(),
            ]);
            rows.last_mut().expect("just pushed").extend(extra);
        }
    }
    let mut out = grid(&rows);
    let _ =
        writeln!(out, "{} point(s) x {} run(s); figures are medians of the runs", doc.points.len(), doc.study.repeat);
    for s in &doc.searches {
        let _ = writeln!(out, "{}", s.answer);
    }
    for w in &doc.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out.into_bytes()
}
