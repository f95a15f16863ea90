//! fio's results (`--output-format=json`, `json+`) read as a result document, so `compare`
//! and `report` set a fio run beside iogauge's: each fio group (`groupid`: the jobs between
//! stonewalls, or fio's one merged job under `group_reporting`) is a workload named by its jobs,
//! each job a worker. The figures are fio's own: I/Os, bytes, IOPS and bandwidth as fio summed
//! them, response time as fio's `lat` (submission to completion, as iogauge measures it),
//! percentiles from json+'s histogram (`bins`) where present, else as fio printed them for a
//! group of one job. fio does not measure the host's CPU: that figure is left empty.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cpu::CpuUsage;
use crate::result::{Metrics, ResultDoc, TargetResult, Totals, WorkerResult};
use crate::stats::{DirStats, IoStats, Op};
use crate::targets::{TargetInfo, TargetKind};

/// fio's three directions, as its JSON names them.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// fio's JSON output as a result document; `name` (the file) appears in errors.
pub fn result(v: &Value, name: &str) -> Result<ResultDoc, String> {
    // fio --client writes its jobs under client_stats.
    let jobs = v.get("jobs").or_else(|| v.get("client_stats")).and_then(Value::as_array);
    let jobs = jobs.filter(|j| !j.is_empty()).ok_or_else(|| format!("{name}: fio's output holds no jobs"))?;
    // A client's "All clients" summary repeats its jobs.
    let jobs: Vec<&Value> = jobs.iter().filter(|j| text(j, "jobname") != "All clients").collect();
    let mut groups: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for j in &jobs {
        groups.entry(j.get("groupid").and_then(Value::as_u64).unwrap_or(0)).or_default().push(j);
    }
    let global = v.get("global options");
    let option = |j: &Value, key: &str| {
        let of = |o: Option<&Value>| o.and_then(|o| o.get(key)).and_then(Value::as_str).map(str::to_string);
        of(j.get("job options")).or_else(|| of(global))
    };
    let mut results = Vec::new();
    let mut target_info: Vec<TargetInfo> = Vec::new();
    for jobs in groups.values() {
        let mut names: Vec<String> = Vec::new();
        for j in jobs {
            if !names.contains(&text(j, "jobname")) {
                names.push(text(j, "jobname"));
            }
        }
        let spec = names.join("+");
        let workers: Vec<WorkerResult> = jobs
            .iter()
            .map(|j| {
                let engine = option(j, "ioengine").unwrap_or_else(|| "psync".into());
                // fio's null engine is iogauge's null target; a job without a filename wrote
                // files of its own name, which its output does not give.
                let file = option(j, "filename").or_else(|| (engine == "null").then(|| "null".to_string()));
                let metrics = figures(&[j], runtime_s(j));
                let targets = file.map(|f| target(&f, metrics.clone()));
                if let Some(t) = &targets {
                    if !target_info.iter().any(|i| i.path == t.path) {
                        let kind = match engine.as_str() {
                            "null" => TargetKind::Null,
                            _ if t.path.starts_with("/dev/") => TargetKind::Block,
                            _ => TargetKind::File,
                        };
                        let direct = option(j, "direct").as_deref() == Some("1");
                        target_info.push(super::foreign_target(&t.path, kind, direct, "fio's output"));
                    }
                }
                WorkerResult {
                    name: text(j, "jobname"),
                    manager: 0,
                    spec: spec.clone(),
                    engine: Some(engine),
                    outstanding: option(j, "iodepth").and_then(|d| d.parse().ok()).or(Some(1)),
                    cpus: Vec::new(),
                    numa_nodes: Vec::new(),
                    waited_for_cpu_ms: None,
                    cpu_waits: None,
                    metrics,
                    targets: targets.into_iter().collect(),
                }
            })
            .collect();
        let secs = jobs.iter().map(|j| runtime_s(j)).fold(0.0, f64::max);
        let depth = |w: &WorkerResult| w.outstanding.unwrap_or(1) as u64;
        let totals = Totals {
            metrics: figures(jobs, secs),
            outstanding: workers.iter().map(depth).sum(),
            // Not measured by fio: an empty usage, which the figures show as unknown.
            cpu: CpuUsage::default(),
        };
        results.push(super::foreign_workload(spec, secs, totals, workers));
    }
    let started_at = started_at(v, &jobs);
    let mut warnings = vec!["fio's own figures, read from its output: fio does not measure the host's CPU".to_string()];
    if results.iter().any(|r| r.totals.metrics.percentiles_ms.is_empty() && r.totals.metrics.ios > 0) {
        warnings.push(
            "fio's percentiles are per job and per direction: a workload of several jobs or of reads and \
             writes has its own only from --output-format=json+ (its histogram)"
                .into(),
        );
    }
    let failed = jobs
        .iter()
        .find(|j| j.get("error").and_then(Value::as_i64).unwrap_or(0) != 0)
        .map(|j| format!("fio job {} ended with error {}", text(j, "jobname"), j["error"]));
    let read_from = format!("fio's JSON output {name}");
    Ok(super::foreign_doc(text(v, "fio version"), started_at, target_info, results, warnings, failed, read_from))
}

/// A string field, or "" (fio writes every field it has; a missing one is another tool's file).
fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().try_fold(v, |v, k| v.get(*k)).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The job's longest direction's run time (fio's `runtime`, ms), in seconds.
/// When fio started: its `timestamp_ms` is when it wrote its output, at the end, so the start
/// is that less its longest job's `elapsed` (seconds, ramp-up included; its runtime where an
/// older fio gives none). Empty where fio gives no time.
fn started_at(v: &Value, jobs: &[&Value]) -> String {
    let Some(end_ms) = v.get("timestamp_ms").and_then(Value::as_u64) else { return String::new() };
    let elapsed = |j: &&Value| j.get("elapsed").and_then(Value::as_f64).unwrap_or_else(|| runtime_s(j).ceil());
    let took_ms = (jobs.iter().map(elapsed).fold(0.0, f64::max) * 1000.0) as u64;
    let start = std::time::UNIX_EPOCH + std::time::Duration::from_millis(end_ms.saturating_sub(took_ms));
    humantime::format_rfc3339_millis(start).to_string()
}

fn runtime_s(j: &Value) -> f64 {
    DIRECTIONS.iter().map(|d| num(j, &[d, "runtime"])).fold(0.0, f64::max) / 1000.0
}

/// fio's latency of a direction: `lat_ns`, with its percentiles (`lat_ns` has them only with
/// lat_percentiles=1; `clat_ns` otherwise, which for fio's synchronous engines is the same).
fn latency(d: &Value) -> (&Value, Option<&Value>) {
    let lat = &d["lat_ns"];
    let with = |k: &str| d.get(k).filter(|v| v.get("percentile").is_some() || v.get("bins").is_some());
    (lat, with("lat_ns").or_else(|| with("clat_ns")))
}

/// One direction of some jobs as iogauge's raw counters: counts, bytes, response times, and
/// json+'s histogram where every job has one.
fn dir_stats(jobs: &[&Value], d: &str) -> (DirStats, bool) {
    let mut s = DirStats { response_min_ns: u64::MAX, ..DirStats::default() };
    let mut binned = true;
    for j in jobs {
        let dir = &j[d];
        let n = num(dir, &["total_ios"]) as u64;
        if n == 0 {
            continue;
        }
        let (lat, dist) = latency(dir);
        s.ios += n;
        s.bytes += num(dir, &["io_bytes"]) as u64;
        s.response_sum_ns += (num(lat, &["mean"]) * n as f64) as u64;
        s.response_min_ns = s.response_min_ns.min(num(lat, &["min"]) as u64);
        s.response_max_ns = s.response_max_ns.max(num(lat, &["max"]) as u64);
        match dist.and_then(|v| v.get("bins")).and_then(Value::as_object) {
            Some(bins) => {
                for (ns, count) in bins {
                    s.histogram.record_n(ns.parse().unwrap_or(0), count.as_u64().unwrap_or(0));
                }
            }
            None => binned = false,
        }
    }
    if s.ios == 0 {
        s.response_min_ns = 0;
    }
    let binned = binned && s.ios > 0;
    (s, binned)
}

/// fio's printed percentiles of one direction of one job, as iogauge's keys (`99.000000` is
/// p99), in ms.
fn printed_percentiles(j: &Value, d: &str) -> BTreeMap<String, f64> {
    let Some(p) = latency(&j[d]).1.and_then(|v| v.get("percentile")).and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    crate::result::PERCENTILES
        .iter()
        .filter_map(|(key, q)| {
            let (_, ns) = p.iter().find(|(k, _)| k.parse::<f64>().is_ok_and(|k| (k - q * 100.0).abs() < 1e-6))?;
            Some((key.to_string(), ns.as_f64()? / 1e6))
        })
        .collect()
}

/// The figures of some of a group's jobs (one job, or the whole group), over `secs`: iogauge's
/// computation from the raw counters, then fio's own rates (fio divides each job's I/Os by
/// that job's own run time) and percentiles where no histogram was written.
fn figures(jobs: &[&Value], secs: f64) -> Metrics {
    let mut raw = IoStats::default();
    let mut binned = [false; 3];
    for (k, d) in DIRECTIONS.iter().enumerate() {
        let (s, b) = dir_stats(jobs, d);
        binned[k] = b;
        *raw.of_mut([Op::Read, Op::Write, Op::Trim][k]) = s;
    }
    let mut m = Metrics::new(&raw, secs);
    let sum = |d: &str, key: &str| jobs.iter().map(|j| num(j, &[d, key])).sum::<f64>();
    (m.read_iops, m.write_iops, m.trim_iops) = (sum("read", "iops"), sum("write", "iops"), sum("trim", "iops"));
    let bw = |d| sum(d, "bw_bytes");
    (m.read_mbps, m.write_mbps, m.trim_mbps) = (bw("read") / 1e6, bw("write") / 1e6, bw("trim") / 1e6);
    (m.read_mibps, m.write_mibps, m.trim_mibps) =
        (bw("read") / 1048576.0, bw("write") / 1048576.0, bw("trim") / 1048576.0);
    m.iops = m.read_iops + m.write_iops + m.trim_iops;
    (m.mbps, m.mibps) = (m.read_mbps + m.write_mbps, m.read_mibps + m.write_mibps);
    // Without json+'s histogram, percentiles are fio's printed ones: a job's, per direction.
    let one = jobs.len() == 1;
    let printed = |k: usize, d| if binned[k] || !one { None } else { Some(printed_percentiles(jobs[0], d)) };
    for (k, (d, slot)) in DIRECTIONS
        .iter()
        .zip([&mut m.read_percentiles_ms, &mut m.write_percentiles_ms, &mut m.trim_percentiles_ms])
        .enumerate()
    {
        if let Some(p) = printed(k, d) {
            *slot = p;
        }
    }
    let moving: Vec<usize> = (0..3).filter(|&k| sum(DIRECTIONS[k], "total_ios") > 0.0).collect();
    if !moving.iter().all(|&k| binned[k]) {
        // All directions together: json+'s histograms merged, else the one direction's.
        m.percentiles_ms = match moving.as_slice() {
            [k] => [&m.read_percentiles_ms, &m.write_percentiles_ms, &m.trim_percentiles_ms][*k].clone(),
            _ => BTreeMap::new(),
        };
    }
    m
}

/// A job's file as a target of its worker, with the job's figures.
fn target(path: &str, metrics: Metrics) -> TargetResult {
    TargetResult {
        path: path.to_string(),
        manager: 0,
        start_offset: 0,
        working_set_bytes: 0,
        outstanding: 0,
        device: None,
        metrics,
    }
}
