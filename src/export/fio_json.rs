//! A result in the shape of fio's `--output-format=json` (fio 3's stat.c), so tools made for
//! fio (fio-plot, fio's json+ histogram scripts, dashboards) read iogauge's runs: one fio job
//! per worker, its access specification as fio's job options, each direction's figures in
//! fio's units (bw in KiB/s, runtime in ms, latencies in ns). docs/interop.md lists what
//! iogauge fills differently (response time as both lat and clat, no slat).

use serde_json::{Map, Value, json};

use crate::engine::EngineKind;
use crate::result::{ResultDoc, WorkerResult, WorkloadResult};
use crate::spec::AccessSpec;
use crate::stats::DirStats;
use crate::study::doc::StudyDoc;

/// The percentiles fio reports by default, as fio names them.
const PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// fio's latency distribution keys (each the top of its bucket) per unit, in ns.
const LATENCY_NS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
const LATENCY_MS: [u64; 11] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000];

/// fio's `iodepth_level` buckets: 1, 2, 4 ... 32, >=64.
const DEPTHS: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// fio's name of a specification's pattern: `rw` (with fio's `:N`), and `rwmixread` /
/// `percentage_random` when they are not implied.
fn pattern(spec: &AccessSpec, options: &mut Map<String, Value>) {
    let share = |f: fn(&crate::spec::SpecLine) -> u32| {
        spec.lines.iter().map(|l| (f(l) * l.share) as u64).sum::<u64>().div_ceil(100) as u32
    };
    let (read, random, trim) = (share(|l| l.read), share(|l| l.random), share(|l| l.trim));
    let then_write = spec.lines.iter().all(|l| l.write_trimmed);
    let rw = match (read, random) {
        _ if trim == 100 => match (random, then_write) {
            (0, false) => "trim",
            (_, false) => "randtrim",
            (0, true) => "trimwrite",
            (_, true) => "randtrimwrite",
        },
        (100, 0) => "read",
        (0, 0) => "write",
        (100, _) => "randread",
        (0, _) => "randwrite",
        (_, 0) => "rw",
        _ => "randrw",
    };
    // fio's `:N`, when every line has the same.
    let first = &spec.lines[0];
    let same = spec.lines.iter().all(|l| (l.seek_every, l.skip) == (first.seek_every, first.skip));
    let rw = match (first.seek_every, first.skip) {
        (n, _) if same && n > 1 && random > 0 => format!("{rw}:{n}"),
        (_, skip) if same && skip != 0 && random == 0 => format!("{rw}:{skip}"),
        _ => rw.to_string(),
    };
    options.insert("rw".into(), rw.into());
    if read != 0 && read != 100 {
        options.insert("rwmixread".into(), read.to_string().into());
    }
    if random != 0 && random != 100 {
        options.insert("percentage_random".into(), random.to_string().into());
    }
    let size = |b: u64| crate::units::format_size(b).to_lowercase();
    options.insert("bs".into(), size(spec.lines[0].size).into());
    if spec.lines.len() > 1 {
        let split: Vec<String> = spec.lines.iter().map(|l| format!("{}/{}", size(l.size), l.share)).collect();
        options.insert("bssplit".into(), split.join(":").into());
    }
}

/// The standard deviation of a histogram's samples (bucket midpoints), ns.
fn stddev(d: &DirStats) -> f64 {
    if d.ios < 2 {
        return 0.0;
    }
    let mean = d.response_sum_ns as f64 / d.ios as f64;
    let sq: f64 = d.histogram.buckets().map(|(lo, hi, c)| c as f64 * ((lo + hi) as f64 / 2.0 - mean).powi(2)).sum();
    (sq / (d.ios - 1) as f64).sqrt()
}

/// fio's latency statistics of one direction; `bins` (fio's json+) with `plus`.
fn latency(d: &DirStats, plus: bool) -> Value {
    let mean = if d.ios > 0 { d.response_sum_ns as f64 / d.ios as f64 } else { 0.0 };
    let mut v = json!({
        "min": d.response_min_ns, "max": d.response_max_ns, "mean": mean, "stddev": stddev(d), "N": d.ios,
    });
    if plus {
        let mut pct = Map::new();
        for p in PERCENTILES {
            let at = d
                .histogram
                .quantile(p / 100.0)
                .unwrap_or(0)
                .clamp(d.response_min_ns, d.response_max_ns.max(d.response_min_ns));
            pct.insert(format!("{p:.6}"), at.into());
        }
        v["percentile"] = pct.into();
        // json+'s bins (ns -> count), as fio writes them only for a direction with I/Os.
        let bins: Map<String, Value> =
            d.histogram.buckets().map(|(lo, hi, c)| ((lo / 2 + hi / 2).to_string(), c.into())).collect();
        if !bins.is_empty() {
            v["bins"] = bins.into();
        }
    }
    v
}

/// One direction of one job, as fio's `read` / `write` / `trim`.
fn direction(d: &DirStats, secs: f64, one_series: Option<&WorkloadResult>, share: f64) -> Value {
    let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let bw_bytes = per_s(d.bytes);
    // Per-interval statistics are the workload's time series: exact for a job that is the
    // workload's only worker, absent (0 samples) otherwise.
    let (iops_s, bw_s): (Vec<f64>, Vec<f64>) = match one_series {
        Some(r) => r.intervals.iter().map(|i| (i.iops * share, i.mbps * share * 1e6 / 1024.0)).unzip(),
        None => (Vec::new(), Vec::new()),
    };
    let stats = |v: &[f64], whole: f64| {
        if v.is_empty() {
            return (whole, whole, whole, 0.0);
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len().max(2) - 1) as f64;
        (v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(0.0, f64::max), mean, var.sqrt())
    };
    let (imin, imax, imean, isd) = stats(&iops_s, per_s(d.ios));
    let (bmin, bmax, bmean, bsd) = stats(&bw_s, bw_bytes / 1024.0);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": per_s(d.ios),
        "runtime": (secs * 1000.0).round() as u64,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": latency(d, true),
        "lat_ns": latency(d, false),
        "bw_min": bmin.round() as u64,
        "bw_max": bmax.round() as u64,
        "bw_agg": 100.0,
        "bw_mean": bmean,
        "bw_dev": bsd,
        "bw_samples": bw_s.len(),
        "iops_min": imin.round() as u64,
        "iops_max": imax.round() as u64,
        "iops_mean": imean,
        "iops_stddev": isd,
        "iops_samples": iops_s.len(),
    })
}

/// `latency_ns`, `latency_us`, `latency_ms`: % of I/Os per bucket, each key the top of its
/// bucket, each unit's first bucket starting where the unit before ends.
fn distribution(d: &DirStats) -> (Value, Value, Value) {
    let total = d.histogram.total().max(1) as f64;
    let pct = |lo: u64, hi: u64| 100.0 * d.histogram.count_between(lo, hi) as f64 / total;
    let unit = |keys: &[u64], scale: u64, from: u64| {
        let mut m = Map::new();
        let mut lo = from;
        for &k in keys {
            m.insert(k.to_string(), pct(lo, k * scale).into());
            lo = k * scale;
        }
        (m, lo)
    };
    let (ns, _) = unit(&LATENCY_NS, 1, 0);
    let (us, _) = unit(&LATENCY_NS, 1_000, 1_000);
    let (mut ms, top) = unit(&LATENCY_MS, 1_000_000, 1_000_000);
    ms.insert(">=2000".into(), pct(top, u64::MAX).into());
    (ns.into(), us.into(), ms.into())
}

fn job(doc: &ResultDoc, k: usize, r: &WorkloadResult, w: &WorkerResult) -> Value {
    let mut options = Map::new();
    options.insert("name".into(), w.name.clone().into());
    if let Some(spec) = doc.config.specs.iter().find(|s| s.name == w.spec) {
        pattern(spec, &mut options);
    }
    let files = w.targets.len().max(1) as u32;
    // fio's iodepth is the job's, over all its files.
    // A file-system test's thread (no `outstanding`) does one record at a time.
    let depth = w.outstanding.unwrap_or(1) * files;
    options.insert("iodepth".into(), depth.to_string().into());
    // As fio writes a job of numjobs copies: every copy says how many there are.
    options.insert("numjobs".into(), r.workers.len().to_string().into());
    let names: Vec<String> = w.targets.iter().map(|t| t.path.replace(':', "\\:")).collect();
    options.insert("filename".into(), names.join(":").into());
    let secs = r.duration_s;
    let raw = &w.metrics.raw;
    let (read, write, trim) = (&raw.read, &raw.write, &raw.trim);
    // The workload's time series is this job's when it is the only worker.
    let alone = (r.workers.len() == 1).then_some(r);
    let ios = w.metrics.ios.max(1) as f64;
    let (ns, us, ms) = distribution(&w.metrics.raw.all());
    let mut level = Map::new();
    for d in DEPTHS {
        level.insert(d.to_string(), if depth >= d && depth < d * 2 { 100.0 } else { 0.0 }.into());
    }
    level.insert(">=64".into(), if depth >= 64 { 100.0 } else { 0.0 }.into());
    // iogauge measures its own CPU, not each worker thread's: shared evenly over the workers.
    let cpu = &r.totals.cpu;
    let per_worker = |s: f64| if secs > 0.0 { 100.0 * s / secs / r.workers.len().max(1) as f64 } else { 0.0 };
    json!({
        "jobname": w.name,
        "groupid": k,
        "error": r.first_error.as_ref().map_or(0, |e| e.errno),
        "eta": 0,
        "elapsed": secs.ceil() as u64,
        "job options": options,
        "read": direction(read, secs, alone, read.ios as f64 / ios),
        "write": direction(write, secs, alone, write.ios as f64 / ios),
        "trim": direction(trim, secs, alone, trim.ios as f64 / ios),
        "sync": {"total_ios": raw.flush.ios, "lat_ns": latency(&raw.flush, false)},
        "job_runtime": (secs * 1000.0).round() as u64,
        "usr_cpu": per_worker(cpu.own_user_s),
        "sys_cpu": per_worker(cpu.own_cpu_s - cpu.own_user_s),
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": level,
        "latency_ns": ns,
        "latency_us": us,
        "latency_ms": ms,
        "latency_depth": depth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    })
}

/// The whole document: fio's top-level keys, the test's settings as global options, one job
/// per worker of every workload (a workload is a fio group, `groupid`).
pub fn to_value(doc: &ResultDoc) -> Value {
    let t = &doc.config.test;
    let started = humantime::parse_rfc3339(&doc.started_at).ok();
    let unix_ms =
        started.and_then(|s| s.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis() as u64);
    let engine = match t.engine {
        EngineKind::IoUring => "io_uring",
        EngineKind::Psync => "psync",
    };
    let mut global = Map::new();
    global.insert("ioengine".into(), engine.into());
    global.insert("direct".into(), if t.buffered { "0" } else { "1" }.into());
    if !t.counted() {
        global.insert("runtime".into(), t.time.as_secs().to_string().into());
        global.insert("time_based".into(), "1".into());
        global.insert("ramp_time".into(), t.ramp.as_secs().to_string().into());
    }
    let jobs: Vec<Value> =
        doc.results.iter().enumerate().flat_map(|(k, r)| r.workers.iter().map(move |w| job(doc, k, r, w))).collect();
    json!({
        "fio version": format!("iogauge-{}", doc.tool_version),
        "timestamp": unix_ms / 1000,
        "timestamp_ms": unix_ms,
        "time": doc.started_at,
        "global options": global,
        "jobs": jobs,
        "disk_util": [],
    })
}

/// A run as fio's JSON.
pub fn to_bytes(doc: &ResultDoc) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(&to_value(doc)).expect("a JSON value serialises");
    out.push(b'\n');
    out
}

/// A study as one fio JSON file per point and access specification, named as fio-plot's
/// benchmark scripts name theirs (`SPEC-RW-iodepth-N-numjobs-M.json`), for fio-plot's graphs
/// over queue depth and jobs. Each holds the repeat with the median IOPS.
pub fn study_files(study: &StudyDoc) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in &study.points {
        for (k, summary) in p.summary.iter().enumerate() {
            let Some(run) = p.median_run(k).filter(|r| k < r.results.len()) else { continue };
            let mut one = run.clone();
            one.results = vec![run.results[k].clone()];
            let v = to_value(&one);
            let first = &v["jobs"][0]["job options"];
            let (rw, depth) = (first["rw"].as_str().unwrap_or("rw"), first["iodepth"].as_str().unwrap_or("1"));
            let jobs = one.results[0].workers.len();
            let spec: String =
                summary.spec.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
            let name = format!("{spec}-{rw}-iodepth-{depth}-numjobs-{jobs}-point-{}.json", p.index + 1);
            let mut bytes = serde_json::to_vec_pretty(&v).expect("a JSON value serialises");
            bytes.push(b'\n');
            out.push((name, bytes));
        }
    }
    out
}

/// fio's JSON (`--fio-json`): a file for a run, a directory of files for a study.
pub struct FioJson;

impl super::Exporter for FioJson {
    fn what(&self) -> &'static str {
        "the fio JSON"
    }
    fn run(&self, doc: &ResultDoc) -> Vec<u8> {
        to_bytes(doc)
    }
    fn study(&self, doc: &StudyDoc) -> super::Export {
        super::Export::Files(study_files(doc))
    }
}
