//! A study as CSV: one row per point and access specification, the cycled parameters first,
//! then the median, min and max of each measurement over the point's repeats.

use std::fmt::Write;

use crate::study::doc::StudyDoc;
use crate::study::stats::Spread;

const MEASURES: [&str; 6] = ["iops", "mbps", "avg_response_ms", "p99_response_ms", "cpu_pct", "iops_per_cpu_pct"];

/// The CSV text, header first.
pub fn to_bytes(doc: &StudyDoc) -> Vec<u8> {
    let mut out = String::from("point,targets,workers,size_bytes,stroke_pct,outstanding,spec,runs");
    for m in MEASURES {
        let _ = write!(out, ",{m}_median,{m}_min,{m}_max");
    }
    out.push_str(",iops_cv,errors\n");
    let opt = |v: Option<String>| v.unwrap_or_default();
    for p in &doc.points {
        for s in &p.summary {
            let q = &p.params;
            let _ = write!(
                out,
                "{},{},{},{},{},{},{},{}",
                p.index + 1,
                opt(q.targets.map(|v| v.to_string())),
                opt(q.workers.map(|v| v.to_string())),
                opt(q.size.map(|v| v.to_string())),
                opt(q.stroke.map(|v| v.to_string())),
                opt(q.outstanding.map(|v| v.to_string())),
                quote(&s.spec),
                p.runs.len()
            );
            let spreads: [Option<Spread>; 6] = [
                Some(s.iops),
                Some(s.mbps),
                s.avg_response_ms,
                s.p99_response_ms,
                Some(s.cpu_pct),
                Some(s.iops_per_cpu_pct),
            ];
            for sp in spreads {
                match sp {
                    Some(v) => {
                        let _ = write!(out, ",{},{},{}", v.median, v.min, v.max);
                    }
                    None => out.push_str(",,,"),
                }
            }
            // One run has no spread: the field is empty, not a 0 that looks measured.
            let cv = if p.runs.len() > 1 { s.iops.cv.to_string() } else { String::new() };
            let _ = writeln!(out, ",{cv},{}", s.errors);
        }
    }
    out.into_bytes()
}

/// A field quoted when it holds a comma or a quote.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}
