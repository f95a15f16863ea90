//! fio's results (`--output-format=json`, `json+`) read as a result document, so `compare`
//! and `report` set a fio run beside iogauge's: each fio group (`groupid`: the jobs between
//! stonewalls, or fio's one merged job under `group_reporting`) is a workload named by its jobs,
//! each job a worker. The figures are fio's own: I/Os, bytes, IOPS and bandwidth as fio summed
//! them, response time as fio's `lat` (submission to completion, as iogauge measures it),
//! percentiles from json+'s histogram (`bins`) where present, else as fio printed them for a
//! group of one job. fio does not measure the host's CPU: that figure is left empty.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use crate::host::cpu::CpuUsage;
use crate::result::{ManagerResult, Metrics, ResultDoc, TargetResult, Totals, WorkerResult};
use crate::stats::{DirStats, Histogram, IoStats, Op};
use crate::targets::{TargetInfo, TargetKind};

/// fio's three directions, as its JSON names them.
const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// fio's JSON output as a result document; `name` (the file) appears in errors. Every job's
/// figures are checked first ([`check_job`]); linear in the jobs.
pub fn result(v: &Value, name: &str) -> Result<ResultDoc, String> {
    // fio --client writes its jobs under client_stats.
    let key = if v.get("jobs").is_some() { "jobs" } else { "client_stats" };
    let jobs = v.get(key).and_then(Value::as_array);
    let jobs = jobs.filter(|j| !j.is_empty()).ok_or_else(|| format!("{name}: fio's output holds no jobs"))?;
    for (k, j) in jobs.iter().enumerate() {
        check_job(j).map_err(|e| format!("{name}: {key}[{k}] (job \"{}\") {e}", text(j, "jobname")))?;
    }
    // A client's "All clients" summary repeats its jobs.
    let jobs: Vec<&Value> = jobs.iter().filter(|j| text(j, "jobname") != "All clients").collect();
    let mut groups: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for j in &jobs {
        groups.entry(j.get("groupid").and_then(Value::as_u64).unwrap_or(0)).or_default().push(j);
    }
    let servers = Servers::of(&jobs);
    let mut results = Vec::new();
    let mut target_info: Vec<TargetInfo> = Vec::new();
    let mut known: HashSet<String> = HashSet::new();
    for (group, jobs) in &groups {
        let mut names: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for j in jobs {
            if seen.insert(text(j, "jobname")) {
                names.push(text(j, "jobname"));
            }
        }
        let spec = names.join("+");
        let mut workers: Vec<WorkerResult> = Vec::new();
        for j in jobs {
            let (worker, info) = worker(j, servers.rank(j), &options(v, j))
                .map_err(|e| format!("{name}: job \"{}\" {e}", text(j, "jobname")))?;
            if let Some(info) = info.filter(|i| known.insert(i.path.clone())) {
                target_info.push(info);
            }
            workers.push(worker);
        }
        let secs = jobs.iter().map(|j| runtime_s(j)).fold(0.0, f64::max);
        let depth = |w: &WorkerResult| w.outstanding.unwrap_or(1) as u64;
        let totals = Totals {
            metrics: figures(jobs, secs).map_err(|e| format!("{name}: the jobs of group {group}: {e}"))?,
            outstanding: workers.iter().map(depth).sum(),
            // Not measured by fio: an empty usage, which the figures show as unknown.
            cpu: CpuUsage::default(),
        };
        let managers =
            servers.managers(jobs, &workers, secs).map_err(|e| format!("{name}: the jobs of group {group}: {e}"))?;
        results.push(super::foreign_workload(spec, secs, totals, workers, managers));
    }
    let started_at = match v.get("timestamp_ms") {
        None => String::new(),
        Some(ms) => started(ms, &jobs).map_err(|e| format!("{name}: timestamp_ms {ms}: {e}"))?,
    };
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

/// The servers a `fio --client` run ran its jobs on (each job of `client_stats` has its
/// server's `hostname` and `port`): the managers, ranked in the order its output first names
/// them. Empty for a run without servers. Linear in the jobs.
#[derive(Default)]
struct Servers {
    /// Each server (hostname, port), by rank.
    list: Vec<(String, u64)>,
    rank: HashMap<(String, u64), u32>,
}

impl Servers {
    fn of(jobs: &[&Value]) -> Servers {
        let mut s = Servers::default();
        for j in jobs {
            if let Some(server) = server(j) {
                let next = s.list.len() as u32;
                if *s.rank.entry(server.clone()).or_insert(next) == next {
                    s.list.push(server);
                }
            }
        }
        s
    }

    /// The rank of a job's server (0 without servers).
    fn rank(&self, j: &Value) -> u32 {
        server(j).and_then(|s| self.rank.get(&s).copied()).unwrap_or(0)
    }

    /// The servers that ran some of a group's jobs (`workers`, as read from them), each with
    /// its jobs' figures over `secs`, named by its hostname, with its port where two servers
    /// share one; none for a run without servers. fio does not measure a host's CPU.
    fn managers(&self, jobs: &[&Value], workers: &[WorkerResult], secs: f64) -> Result<Vec<ManagerResult>, String> {
        let mut on_host: HashMap<&str, usize> = HashMap::new();
        for (host, _) in &self.list {
            *on_host.entry(host).or_default() += 1;
        }
        let mut own: Vec<Vec<&Value>> = vec![Vec::new(); self.list.len()];
        let mut outstanding = vec![0u64; self.list.len()];
        for (j, w) in jobs.iter().zip(workers) {
            if let Some(k) = server(j).and_then(|s| self.rank.get(&s)) {
                own[*k as usize].push(j);
                outstanding[*k as usize] = outstanding[*k as usize].saturating_add(w.outstanding.unwrap_or(1) as u64);
            }
        }
        let mut out = Vec::new();
        for (k, ((host, port), own)) in self.list.iter().zip(own).enumerate() {
            if own.is_empty() {
                continue;
            }
            out.push(ManagerResult {
                rank: k as u32,
                host: if on_host[host.as_str()] > 1 { format!("{host}:{port}") } else { host.clone() },
                workers: own.len(),
                totals: Totals { metrics: figures(&own, secs)?, outstanding: outstanding[k], cpu: CpuUsage::default() },
                record_start_unix_ns: 0,
                record_end_unix_ns: 0,
                stopped_ms: 0.0,
                stops_untimed: 0,
            });
        }
        Ok(out)
    }
}

/// A job's server (hostname, port), where fio --client ran it.
fn server(j: &Value) -> Option<(String, u64)> {
    let host = j.get("hostname").and_then(Value::as_str)?;
    Some((host.to_string(), j.get("port").and_then(Value::as_u64).unwrap_or(0)))
}

/// When fio started, as RFC 3339, where its `timestamp_ms` is a time before the year 9000.
/// That is when fio wrote its output, at the end: the start is that less its longest job's
/// `elapsed` (seconds, ramp-up included; its runtime where an older fio gives none).
fn started(ms: &Value, jobs: &[&Value]) -> Result<String, String> {
    let ms = ms.as_u64().ok_or("not a time in ms since 1970")?;
    if ms / 1000 >= super::check::LATEST_START_S {
        return Err("not a time before the year 9000".into());
    }
    let elapsed = |j: &&Value| j.get("elapsed").and_then(Value::as_f64).unwrap_or_else(|| runtime_s(j).ceil());
    let took_ms = (jobs.iter().map(elapsed).fold(0.0, f64::max) * 1000.0) as u64;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.saturating_sub(took_ms));
    Ok(humantime::format_rfc3339_millis(at).to_string())
}

/// A job's option, from its own options or fio's global ones.
fn options<'a>(v: &'a Value, j: &'a Value) -> impl Fn(&str) -> Option<String> + 'a {
    let global = v.get("global options");
    move |key: &str| {
        let of = |o: Option<&Value>| o.and_then(|o| o.get(key)).and_then(Value::as_str).map(str::to_string);
        of(j.get("job options")).or_else(|| of(global))
    }
}

/// A job as a worker of manager `manager` (its own name its specification's, as an imported
/// fio job's), and its file as a target, if it names one.
fn worker(
    j: &Value,
    manager: u32,
    option: &dyn Fn(&str) -> Option<String>,
) -> Result<(WorkerResult, Option<TargetInfo>), String> {
    let engine = option("ioengine").unwrap_or_else(|| "psync".into());
    // fio's null engine is iogauge's null target; a job without a filename wrote files of its
    // own name, which its output does not give.
    let file = option("filename").or_else(|| (engine == "null").then(|| "null".to_string()));
    let metrics = figures(&[j], runtime_s(j))?;
    let targets = file.map(|f| TargetResult { manager, ..target(&f, metrics.clone()) });
    let info = targets.as_ref().map(|t| {
        let kind = match engine.as_str() {
            "null" => TargetKind::Null,
            _ if t.path.starts_with("/dev/") => TargetKind::Block,
            _ => TargetKind::File,
        };
        let direct = option("direct").as_deref() == Some("1");
        super::foreign_target(&t.path, kind, direct, "fio's output")
    });
    let worker = WorkerResult {
        name: text(j, "jobname"),
        manager,
        spec: text(j, "jobname"),
        engine: Some(engine),
        outstanding: option("iodepth").and_then(|d| d.parse().ok()).or(Some(1)),
        cpus: Vec::new(),
        numa_nodes: Vec::new(),
        waited_for_cpu_ms: None,
        cpu_waits: None,
        metrics,
        targets: targets.into_iter().collect(),
    };
    Ok((worker, info))
}

/// What each direction of a job must hold to be read: counts, bytes, times and rates not
/// negative; `lat_ns`'s min, mean and max in that order; printed percentiles rising; json+'s
/// bins keyed by ns with whole counts.
fn check_job(j: &Value) -> Result<(), String> {
    for d in DIRECTIONS {
        let Some(dir) = j.get(d) else { continue };
        for field in ["total_ios", "io_bytes", "runtime", "iops", "bw_bytes"] {
            if num(dir, &[field]) < 0.0 {
                return Err(format!("{d}.{field}: {} is negative", num(dir, &[field])));
            }
        }
        let lat = &dir["lat_ns"];
        let (min, mean, max) = (num(lat, &["min"]), num(lat, &["mean"]), num(lat, &["max"]));
        if num(dir, &["total_ios"]) > 0.0 && (min < 0.0 || min > mean || mean > max) {
            return Err(format!("{d}.lat_ns: min {min}, mean {mean} and max {max} are not in that order"));
        }
        for which in ["lat_ns", "clat_ns"] {
            let Some(dist) = dir.get(which) else { continue };
            let at = format!("{d}.{which}");
            if let Some(p) = dist.get("percentile").and_then(Value::as_object) {
                let mut values: Vec<(f64, f64)> =
                    p.iter().map(|(k, v)| (k.parse().unwrap_or(f64::NAN), v.as_f64().unwrap_or(f64::NAN))).collect();
                values.sort_by(|a, b| a.0.total_cmp(&b.0));
                if values.iter().any(|(k, v)| !(0.0..=100.0).contains(k) || v.is_nan() || *v < 0.0) {
                    return Err(format!("{at}.percentile: a key is not a percentage or a value is not a time"));
                }
                if values.windows(2).any(|w| w[1].1 < w[0].1) {
                    return Err(format!("{at}.percentile: the values fall as the percentages rise"));
                }
            }
            bins(dist).map_err(|e| format!("{at}.bins: {e}"))?;
        }
    }
    Ok(())
}

/// json+'s bins of a latency (`clat_ns.bins`: ns -> count) as a histogram, if it has them.
fn bins(dist: &Value) -> Result<Option<Histogram>, String> {
    let Some(bins) = dist.get("bins").and_then(Value::as_object) else { return Ok(None) };
    let mut values = Vec::with_capacity(bins.len());
    for (ns, count) in bins {
        let ns = ns.parse::<u64>().map_err(|_| "a key is not a time in ns")?;
        values.push((ns, count.as_u64().ok_or("a count is not a whole number")?));
    }
    Histogram::from_values(values).map(Some)
}

/// A string field, or "" (fio writes every field it has; a missing one is another tool's file).
fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().try_fold(v, |v, k| v.get(*k)).and_then(Value::as_f64).unwrap_or(0.0)
}

/// The job's longest direction's run time (fio's `runtime`, ms), in seconds.
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
/// json+'s histogram where every job has one. Sums beyond 2^64 are refused.
fn dir_stats(jobs: &[&Value], d: &str) -> Result<(DirStats, bool), String> {
    let mut s = DirStats { response_min_ns: u64::MAX, ..DirStats::default() };
    let mut binned = true;
    let add = |a: u64, b: u64, what: &str| a.checked_add(b).ok_or(format!("{d}: the jobs' {what} sum beyond 2^64"));
    for j in jobs {
        let dir = &j[d];
        let n = num(dir, &["total_ios"]) as u64;
        if n == 0 {
            continue;
        }
        let (lat, dist) = latency(dir);
        let (min, max) = (num(lat, &["min"]) as u64, num(lat, &["max"]) as u64);
        s.ios = add(s.ios, n, "I/Os")?;
        s.bytes = add(s.bytes, num(dir, &["io_bytes"]) as u64, "bytes")?;
        // The mean as fio printed it (6 decimals), kept within what its extremes allow.
        let sum = (num(lat, &["mean"]) * n as f64) as u128;
        let sum = sum.clamp(u128::from(n) * u128::from(min), u128::from(n) * u128::from(max));
        s.response_sum_ns = add(s.response_sum_ns, u64::try_from(sum).unwrap_or(u64::MAX), "response times")?;
        s.response_min_ns = s.response_min_ns.min(min);
        s.response_max_ns = s.response_max_ns.max(max);
        match dist.map(bins).transpose()?.flatten() {
            Some(h) => s.histogram += &h,
            None => binned = false,
        }
    }
    if s.ios == 0 {
        s.response_min_ns = 0;
    }
    let binned = binned && s.ios > 0;
    Ok((s, binned))
}

/// fio's printed percentiles of one direction of one job, as iogauge's keys (`99.000000` is
/// p99), in ms, within `(lo, hi)`: the extremes of `lat_ns`, as json+'s are (`clat_ns`'s
/// percentiles leave out the submission, and can lie under the smallest `lat_ns`).
fn printed_percentiles(j: &Value, d: &str, (lo, hi): (f64, f64)) -> BTreeMap<String, f64> {
    let Some(p) = latency(&j[d]).1.and_then(|v| v.get("percentile")).and_then(Value::as_object) else {
        return BTreeMap::new();
    };
    crate::result::PERCENTILES
        .iter()
        .filter_map(|(key, q)| {
            let (_, ns) = p.iter().find(|(k, _)| k.parse::<f64>().is_ok_and(|k| (k - q * 100.0).abs() < 1e-6))?;
            Some((key.to_string(), (ns.as_f64()? / 1e6).clamp(lo, hi)))
        })
        .collect()
}

/// The figures of some of a group's jobs (one job, or the whole group), over `secs`: iogauge's
/// computation from the raw counters, then fio's own rates (fio divides each job's I/Os by
/// that job's own run time) and percentiles where no histogram was written.
fn figures(jobs: &[&Value], secs: f64) -> Result<Metrics, String> {
    let mut raw = IoStats::default();
    let mut binned = [false; 3];
    for (k, d) in DIRECTIONS.iter().enumerate() {
        let (s, b) = dir_stats(jobs, d)?;
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
    let printed = |k: usize, d| {
        let extremes = raw.of([Op::Read, Op::Write, Op::Trim][k]);
        let within = (extremes.response_min_ns as f64 / 1e6, extremes.response_max_ns as f64 / 1e6);
        if binned[k] || !one { None } else { Some(printed_percentiles(jobs[0], d, within)) }
    };
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
    Ok(m)
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
