//! The table printed at the end of a test, like the seeds' tables: one row per workload.

use std::fmt::Write;

use crate::result::ResultDoc;

/// An integer with thousands separators: 123,456.
pub fn thousands(v: f64) -> String {
    let s = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or_else(
        || "-".into(),
        |v| {
            if v < 1.0 { format!("{v:.3}") } else { format!("{v:.2}") }
        },
    )
}

/// The summary table of a document, with any errors and warnings under it.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let mut rows = vec![[
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
        let m = &r.totals.metrics;
        rows.push([
            r.spec.clone(),
            thousands(m.iops),
            format!("{:.1}", m.mbps),
            opt_ms(m.avg_response_ms),
            opt_ms(m.percentiles_ms.get("p99").copied()),
            opt_ms(m.max_response_ms),
            format!("{:.1}", r.totals.cpu.all.utilization_pct),
            thousands(r.totals.cpu.effectiveness),
            m.errors.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..9).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let sep = if c == 0 { "" } else { "  " };
            if c == 0 {
                let _ = write!(out, "{sep}{cell:<w$}", w = widths[c]);
            } else {
                let _ = write!(out, "{sep}{cell:>w$}", w = widths[c]);
            }
        }
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
            out.push('\n');
        }
    }
    if let Some(r) = doc.results.first() {
        let targets: Vec<&str> = r.targets.iter().map(|t| t.path.as_str()).collect();
        let _ = writeln!(
            out,
            "{} worker(s), {} outstanding I/Os in all, {:.1} s recorded per workload, on {}",
            r.workers.len(),
            r.totals.outstanding,
            r.duration_s,
            targets.join(", ")
        );
    }
    for r in &doc.results {
        for e in &r.totals.metrics.error_kinds {
            let _ = writeln!(out, "{}: {} I/O error(s): {}", r.spec, e.count, e.text);
        }
    }
    out.into_bytes()
}
