//! A saved result as the Results Display shows it: a block per workload of a run, or per
//! point and workload of a study (its title and its `point` naming the values the point
//! cycled, as the report's tables do), each with its totals, a row per worker and a row per
//! target.

use serde::Serialize;

use crate::document::Document;
use crate::result::{Detail, Metrics, WorkloadResult};
use crate::study::Point;

/// One workload's figures, at one point of a study.
#[derive(Debug, Serialize)]
pub struct Block {
    /// The point's cycled values (`outstanding=4`); none for a run, or a point that cycles
    /// nothing.
    pub point: Option<String>,
    /// The access specification (or the workers' joined by `+`).
    pub workload: String,
    /// The block's title: the point, then the workload.
    pub title: String,
    /// The totals (`all`), then each worker, then each target.
    pub rows: Vec<Row>,
}

/// One row of a block.
#[derive(Debug, Serialize)]
pub struct Row {
    /// `all`, the worker's name or the target's path.
    pub part: String,
    /// `all`, `worker` or `target`.
    pub kind: &'static str,
    /// I/Os per second.
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    /// Mean response time (ms).
    pub avg_ms: Option<f64>,
    /// Longest response time (ms).
    pub max_ms: Option<f64>,
    /// 99th percentile response time (ms).
    pub p99_ms: Option<f64>,
    /// The host's CPU utilisation (%): the totals', over a window long enough to measure it.
    pub cpu_pct: Option<f64>,
    /// iogauge's own CPU time per I/O (µs), likewise.
    pub cpu_us_per_io: Option<f64>,
    /// Failed I/Os.
    pub errors: u64,
}

/// The blocks of a document: a run's workloads; a study's points' (each point's median repeat).
pub fn blocks(doc: &Document) -> Vec<Block> {
    match doc {
        Document::Run(d) => d.results.iter().map(|r| block(None, r)).collect(),
        Document::Study(d) => {
            let mut out = Vec::new();
            for p in &d.points {
                let point = (p.params != Point::default()).then(|| p.params.label());
                for k in 0..p.summary.len() {
                    if let Some(r) = p.median_run(k).and_then(|run| run.results.get(k)) {
                        out.push(block(point.clone(), r));
                    }
                }
            }
            out
        }
    }
}

fn block(point: Option<String>, r: &WorkloadResult) -> Block {
    let title = match &point {
        Some(p) => format!("{p} · {}", r.spec),
        None => r.spec.clone(),
    };
    let cpu = &r.totals.cpu;
    let measured = r.cpu_measured() && *cpu != crate::host::cpu::CpuUsage::default();
    let mut rows = vec![Row {
        cpu_pct: measured.then_some(cpu.all.utilization_pct),
        cpu_us_per_io: measured.then_some(cpu.own_us_per_io),
        ..row("all".into(), "all", &r.totals.metrics)
    }];
    rows.extend(r.parts(Detail::Workers).into_iter().map(|(name, m)| row(name, "worker", m)));
    rows.extend(r.parts(Detail::Targets).into_iter().map(|(name, m)| row(name, "target", m)));
    Block { point, workload: r.spec.clone(), title, rows }
}

fn row(part: String, kind: &'static str, m: &Metrics) -> Row {
    Row {
        part,
        kind,
        iops: m.iops,
        mbps: m.mbps,
        avg_ms: m.avg_response_ms,
        max_ms: m.max_response_ms,
        p99_ms: m.percentiles_ms.get("p99").copied(),
        cpu_pct: None,
        cpu_us_per_io: None,
        errors: m.errors,
    }
}
