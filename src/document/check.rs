//! What a document read back (a file, the history, another tool's results once read) must
//! hold for compare, report, show and export to use it: times that are times (a date before
//! the year 9000, durations of at most 31 years, nothing negative), figures that are figures
//! (no negative rate; each operation's smallest response time at most its mean and its mean at
//! most its largest; percentiles rising and within the smallest and largest), and indexes
//! that point where they say. Each refusal names the field, as a path into the JSON.

use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use crate::result::{Interval, Metrics, PERCENTILES, ResultDoc, WorkloadResult};
use crate::stats::{DirStats, Op};
use crate::study::doc::StudyDoc;
use crate::study::stats::Spread;

/// The longest time a document may say (s): 31 years. A start before [`LATEST_START_S`] plus
/// it is still a date that prints.
pub const MAX_SECONDS: f64 = 1e9;

/// 9000-01-01T00:00:00Z, in s since 1970: the latest start a document may say.
pub const LATEST_START_S: u64 = 221_845_392_000;

/// What is wrong, at the field it names.
type Checked = Result<(), String>;

/// A test's result document.
pub fn run(doc: &ResultDoc, at: &str) -> Checked {
    if doc.read_from.is_none() {
        date(&doc.started_at, "started_at").map_err(|e| format!("{at}{e}"))?;
    }
    seconds(doc.duration_s, "duration_s").map_err(|e| format!("{at}{e}"))?;
    for (i, r) in doc.results.iter().enumerate() {
        workload(r, &format!("{at}results[{i}]"))?;
    }
    Ok(())
}

/// A study document: its points' runs as result documents, its summaries, and the points its
/// curves, searches and steady-state rounds name.
pub fn study(doc: &StudyDoc) -> Checked {
    date(&doc.started_at, "started_at")?;
    seconds(doc.duration_s, "duration_s")?;
    for (i, p) in doc.points.iter().enumerate() {
        for (j, r) in p.runs.iter().enumerate() {
            run(r, &format!("points[{i}].runs[{j}]."))?;
        }
        for (k, s) in p.summary.iter().enumerate() {
            let at = || format!("points[{i}].summary[{k}]");
            let optional = [&s.avg_response_ms, &s.p50_response_ms, &s.p99_response_ms];
            for (what, spread) in [("iops", &s.iops), ("mbps", &s.mbps), ("cpu_pct", &s.cpu_pct)].into_iter().chain(
                ["avg_response_ms", "p50_response_ms", "p99_response_ms"]
                    .into_iter()
                    .zip(optional)
                    .filter_map(|(what, o)| o.as_ref().map(|o| (what, o))),
            ) {
                spread_of(spread).map_err(|e| format!("{}.{what}: {e}", at()))?;
            }
        }
    }
    indexes(doc)?;
    steady(doc)
}

/// Curves, searches and steady-state rounds name points that are there.
fn indexes(doc: &StudyDoc) -> Checked {
    let n = doc.points.len();
    let within = |i: usize, at: String| match i < n {
        true => Ok(()),
        false => Err(format!("{at}: point {i}, and the study has {n}")),
    };
    for (c, curve) in doc.curves.iter().enumerate() {
        within(curve.max, format!("curves[{c}].max"))?;
        curve.points.iter().try_for_each(|&i| within(i, format!("curves[{c}].points")))?;
    }
    for (s, search) in doc.searches.iter().enumerate() {
        let named = search.found.iter().chain(&search.over).chain(&search.measured);
        named.into_iter().try_for_each(|&i| within(i, format!("searches[{s}]")))?;
    }
    for (r, round) in doc.steady.iter().flat_map(|st| st.rounds.iter()).enumerate() {
        round.iter().try_for_each(|&i| within(i, format!("steady.rounds[{r}]")))?;
    }
    Ok(())
}

/// A steady-state window within every tracked workload's rounds (from 1).
fn steady(doc: &StudyDoc) -> Checked {
    let Some(st) = &doc.steady else { return Ok(()) };
    let Some([a, b]) = st.window else { return Ok(()) };
    for (t, tracked) in st.tracked.iter().enumerate() {
        if a < 1 || a > b || b as usize > tracked.values.len() {
            return Err(format!(
                "steady.window [{a}, {b}]: not rounds 1 to {} of steady.tracked[{t}], first to last",
                tracked.values.len()
            ));
        }
    }
    Ok(())
}

/// One workload of a result: its figures at every level, its time series, its parts.
fn workload(r: &WorkloadResult, at: &str) -> Checked {
    let within = |e: String| format!("{at}.{e}");
    seconds(r.duration_s, "duration_s").map_err(within)?;
    seconds(r.ramp_s, "ramp_s").map_err(within)?;
    metrics(&r.totals.metrics).map_err(|e| format!("{at}.totals.{e}"))?;
    let cpu = &r.totals.cpu;
    let shares = [cpu.all.utilization_pct, cpu.all.user_pct, cpu.all.system_pct, cpu.interrupts_per_sec];
    shares.into_iter().try_for_each(|v| positive(v, "totals.cpu")).map_err(within)?;
    for (w, worker) in r.workers.iter().enumerate() {
        metrics(&worker.metrics).map_err(|e| format!("{at}.workers[{w}].{e}"))?;
        for (t, target) in worker.targets.iter().enumerate() {
            metrics(&target.metrics).map_err(|e| format!("{at}.workers[{w}].targets[{t}].{e}"))?;
        }
    }
    for (t, target) in r.targets.iter().enumerate() {
        metrics(&target.metrics).map_err(|e| format!("{at}.targets[{t}].{e}"))?;
    }
    for (m, manager) in r.managers.iter().enumerate() {
        metrics(&manager.totals.metrics).map_err(|e| format!("{at}.managers[{m}].totals.{e}"))?;
        if manager.record_end_unix_ns < manager.record_start_unix_ns {
            return Err(format!("{at}.managers[{m}]: record_end_unix_ns before record_start_unix_ns"));
        }
    }
    for (k, iv) in r.intervals.iter().enumerate() {
        interval(iv).map_err(|e| format!("{at}.intervals[{k}].{e}"))?;
    }
    if let Some(late) = r.replay.as_ref().and_then(|p| p.lateness.as_ref()) {
        percentiles(&late.percentiles_ms, (0.0, f64::MAX), "replay.lateness.percentiles_ms").map_err(within)?;
    }
    Ok(())
}

fn interval(iv: &Interval) -> Checked {
    seconds(iv.t_s, "t_s")?;
    seconds(iv.duration_s, "duration_s")?;
    for (what, v) in [("iops", iv.iops), ("mbps", iv.mbps), ("cpu_pct", iv.cpu_pct)] {
        positive(v, what)?;
    }
    iv.avg_response_ms.map_or(Ok(()), |v| positive(v, "avg_response_ms"))?;
    percentiles(&iv.percentiles_ms, (0.0, f64::MAX), "percentiles_ms")
}

/// Figures of a set of I/Os: rates not negative; each operation's counters whole (see
/// [`counters`]); response times in order, smallest to largest.
fn metrics(m: &Metrics) -> Checked {
    let rates = [
        ("iops", m.iops),
        ("read_iops", m.read_iops),
        ("write_iops", m.write_iops),
        ("trim_iops", m.trim_iops),
        ("flush_iops", m.flush_iops),
        ("mbps", m.mbps),
        ("read_mbps", m.read_mbps),
        ("write_mbps", m.write_mbps),
        ("trim_mbps", m.trim_mbps),
        ("mibps", m.mibps),
        ("read_mibps", m.read_mibps),
        ("write_mibps", m.write_mibps),
        ("trim_mibps", m.trim_mibps),
    ];
    for (what, v) in rates {
        positive(v, what)?;
    }
    for op in Op::ALL {
        counters(m.raw.of(op)).map_err(|e| format!("raw.{}: {e}", op.name()))?;
    }
    let min = m.min_response_ms.unwrap_or(0.0);
    positive(min, "min_response_ms")?;
    let dirs = [
        ("", m.avg_response_ms, m.max_response_ms, &m.percentiles_ms, min),
        ("read_", m.avg_read_response_ms, m.max_read_response_ms, &m.read_percentiles_ms, 0.0),
        ("write_", m.avg_write_response_ms, m.max_write_response_ms, &m.write_percentiles_ms, 0.0),
        ("trim_", m.avg_trim_response_ms, m.max_trim_response_ms, &m.trim_percentiles_ms, 0.0),
        ("flush_", m.avg_flush_response_ms, m.max_flush_response_ms, &m.flush_percentiles_ms, 0.0),
    ];
    for (dir, avg, max, p, min) in dirs {
        let max = max.unwrap_or(f64::MAX);
        let named = |e: String| format!("{dir}response_ms: {e}");
        ordered(&[(min, "min"), (avg.unwrap_or(min), "avg"), (max, "max")]).map_err(named)?;
        percentiles(p, (min, max), "").map_err(|e| format!("{dir}percentiles_ms{e}"))?;
    }
    Ok(())
}

/// One operation's raw counters: with I/Os, the smallest response time at most the largest,
/// and their sum between I/Os x smallest and I/Os x largest.
fn counters(d: &DirStats) -> Checked {
    if d.ios == 0 {
        return Ok(());
    }
    let (min, max) = (d.response_min_ns, d.response_max_ns);
    if min > max {
        return Err(format!("response_min_ns {min} above response_max_ns {max}"));
    }
    let (n, sum) = (u128::from(d.ios), u128::from(d.response_sum_ns));
    if sum < n * u128::from(min) || sum > n * u128::from(max) {
        return Err(format!(
            "response_sum_ns {sum} is not {n} response times between {min} and {max} ns (the mean lies outside)"
        ));
    }
    Ok(())
}

/// Values that must not fall, each with its name: `min <= avg <= max` within rounding.
fn ordered(values: &[(f64, &str)]) -> Checked {
    for pair in values.windows(2) {
        let ((a, what_a), (b, what_b)) = (pair[0], pair[1]);
        if a > b + b.abs() * 1e-9 {
            return Err(format!("{what_a} {} above {what_b} {}", shown(a), shown(b)));
        }
    }
    Ok(())
}

/// Percentiles (the keys iogauge writes, in their order) rising, within `[lo, hi]`, none
/// negative; `at` names them.
fn percentiles(p: &BTreeMap<String, f64>, (lo, hi): (f64, f64), at: &str) -> Checked {
    let mut values = vec![(lo, "the smallest")];
    values.extend(PERCENTILES.iter().filter_map(|(k, _)| Some((*p.get(*k)?, *k))));
    values.push((hi, "the largest"));
    for (v, what) in &values {
        positive(*v, what).map_err(|e| format!("{at}: {e}"))?;
    }
    ordered(&values).map_err(|e| format!("{at}: {e}"))
}

/// A spread of repeats: smallest, median, largest in that order, none negative.
fn spread_of(s: &Spread) -> Checked {
    positive(s.min, "min")?;
    ordered(&[(s.min, "min"), (s.median, "median"), (s.max, "max")])
}

/// `v`, named `what`, is not negative.
fn positive(v: f64, what: &str) -> Checked {
    match (v >= 0.0, v.is_nan()) {
        (true, _) => Ok(()),
        (false, true) => Err(format!("{what}: not a number")),
        (false, false) => Err(format!("{what}: {} is negative", shown(v))),
    }
}

/// A figure as a message shows it: in full, or as 1e300 where that would be long.
fn shown(v: f64) -> String {
    match v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        true => format!("{v:e}"),
        false => format!("{v}"),
    }
}

/// A duration in s: not negative, at most [`MAX_SECONDS`].
pub fn seconds(v: f64, at: &str) -> Checked {
    match (0.0..=MAX_SECONDS).contains(&v) {
        true => Ok(()),
        false => Err(format!("{at}: {} s is no duration (0 to {MAX_SECONDS:e} s)", shown(v))),
    }
}

/// A start in RFC 3339 before the year 9000.
pub fn date(text: &str, at: &str) -> Checked {
    let t = humantime::parse_rfc3339_weak(text).map_err(|_| format!("{at}: not a date in RFC 3339"))?;
    match t.duration_since(UNIX_EPOCH).is_ok_and(|d| d < Duration::from_secs(LATEST_START_S)) {
        true => Ok(()),
        false => Err(format!("{at}: not a date between 1970 and 9000")),
    }
}
