//! iogauge's CSV (`--csv`, on run and study alike): one row per point and access
//! specification (a run is one point), the cycled parameters first, then the median, min and
//! max of each measurement over the point's repeats. A file-system
//! study adds its own columns: the thread count, and IOzone's figures (medians of the runs),
//! throughput also in kB/s (1024 bytes/s) as IOzone reports it.

use std::fmt::Write;

use crate::result::{FsFigures, ResultDoc};
use crate::study::doc::{PointResult, StudyDoc};
use crate::study::stats::Spread;

type Figure = fn(&FsFigures) -> f64;

/// A file-system study's columns.
const FS_COLUMNS: [(&str, Figure); 9] = [
    ("children_mbps", |f| f.children_mbps),
    ("parent_mbps", |f| f.parent_mbps),
    ("children_kbps", |f| f.children_mibps * 1024.0),
    ("parent_kbps", |f| f.parent_mibps * 1024.0),
    ("thread_min_mbps", |f| f.thread_min_mbps),
    ("thread_max_mbps", |f| f.thread_max_mbps),
    ("thread_avg_mbps", |f| f.thread_avg_mbps),
    ("children_ops_per_s", |f| f.children_ops_per_s),
    ("file_bytes", |f| f.file_bytes as f64),
];

/// The median over a point's runs of a file-system figure.
fn fs_median(p: &PointResult, k: usize, figure: Figure) -> Option<f64> {
    let v: Vec<f64> = p.runs.iter().filter_map(|r| r.results.get(k)?.fs.as_ref().map(figure)).collect();
    (!v.is_empty()).then(|| Spread::of(&v).median)
}

const MEASURES: [&str; 6] = ["iops", "mbps", "avg_response_ms", "p99_response_ms", "cpu_pct", "iops_per_cpu_pct"];

/// The CSV text, header first.
pub fn to_bytes(doc: &StudyDoc) -> Vec<u8> {
    let mut out = String::from("point,targets,workers,size_bytes,stroke_pct,outstanding,spec,runs");
    for m in MEASURES {
        let _ = write!(out, ",{m}_median,{m}_min,{m}_max");
    }
    out.push_str(",iops_cv,errors");
    let fs = doc.config.fs.is_some();
    if fs {
        out.push_str(",threads");
        for (name, _) in FS_COLUMNS {
            let _ = write!(out, ",{name}");
        }
        out.push_str(",own_cpu_pct,io");
    }
    let steady = doc.steady.is_some();
    if steady {
        out.push_str(",round");
    }
    out.push('\n');
    let opt = |v: Option<String>| v.unwrap_or_default();
    for p in &doc.points {
        for (k, s) in p.summary.iter().enumerate() {
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
            let _ = write!(out, ",{cv},{}", s.errors);
            if fs {
                out.push(',');
                out.push_str(&opt(q.threads.map(|v| v.to_string())));
                for (_, figure) in FS_COLUMNS {
                    let _ = write!(out, ",{}", opt(fs_median(p, k, figure).map(|v| v.to_string())));
                }
                let own: Vec<f64> = p.runs.iter().filter_map(|r| Some(r.results.get(k)?.totals.cpu.own_pct)).collect();
                let io = p.runs[0].results.get(k).and_then(|r| r.fs.as_ref()).map_or("", |f| f.io.as_str());
                let _ = write!(out, ",{},{io}", opt((!own.is_empty()).then(|| Spread::of(&own).median.to_string())));
            }
            if steady {
                let _ = write!(out, ",{}", opt(q.round.map(|v| v.to_string())));
            }
            out.push('\n');
        }
    }
    out.into_bytes()
}

/// A field quoted when it holds a comma or a quote.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

/// iogauge's CSV: a row per workload of a run, per point and workload of a study.
pub struct Csv;

impl super::Exporter for Csv {
    fn what(&self) -> &'static str {
        "the CSV file"
    }
    fn run(&self, doc: &ResultDoc) -> Vec<u8> {
        to_bytes(&StudyDoc::of_run(doc))
    }
    fn study(&self, doc: &StudyDoc) -> super::Export {
        super::Export::Bytes(to_bytes(doc))
    }
}
