//! `/metrics`: the board in Prometheus's text format (0.0.4), or OpenMetrics 1.0 when the
//! scraper's Accept header asks for it. Written here rather than through a client library:
//! those keep a registry of their own and take one observation at a time, where these figures
//! arrive as whole counts and histograms already merged over workers and managers.
//!
//! Conventions (prometheus.io's naming guide): an `iogauge_` prefix, base units (seconds,
//! bytes) in the name, `_total` counters that only grow (across a study's points too), and
//! labels drawn from the test's own workers, targets and managers, so their number is bounded
//! by the job: the counts come in three families (per workload, per worker, per target)
//! rather than one series per worker x target.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::board::{BUCKETS_S, Figures, Key, State, Tally};

/// The content types of the two formats.
pub const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
/// OpenMetrics 1.0.
pub const OPEN_METRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A label value as both formats quote it.
fn quote(v: &str) -> String {
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

fn labels(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect();
    format!("{{{}}}", inner.join(","))
}

/// A number as both formats write it.
fn num(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 { "+Inf".into() } else { "-Inf".into() }
    } else if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

/// A counter family of the counts: its name, help, and which count it adds up.
type Family = (&'static str, &'static str, fn(&Tally) -> u64);

/// Writes the families one after another.
struct Out {
    text: String,
    open: bool,
}

impl Out {
    /// A family's header. A counter's family is named without `_total` in OpenMetrics.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let family = match (self.open, kind) {
            (true, "counter") => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        let _ = writeln!(self.text, "# HELP {family} {help}");
        let _ = writeln!(self.text, "# TYPE {family} {kind}");
    }

    fn sample(&mut self, name: &str, pairs: &[(&str, &str)], v: f64) {
        let _ = writeln!(self.text, "{name}{} {}", labels(pairs), num(v));
    }

    /// A gauge family of one sample without labels.
    fn gauge(&mut self, name: &str, help: &str, v: f64) {
        self.family(name, "gauge", help);
        self.sample(name, &[], v);
    }

    /// A counter family summed over `key` from every series.
    fn counters<K: Ord>(
        &mut self,
        name: &str,
        help: &str,
        totals: &BTreeMap<Key, Tally>,
        key: impl Fn(&Key) -> K,
        pairs: impl Fn(&K) -> Vec<(&'static str, String)>,
        value: impl Fn(&Tally) -> u64,
    ) {
        let mut sums: BTreeMap<K, u64> = BTreeMap::new();
        for (k, t) in totals {
            *sums.entry(key(k)).or_default() += value(t);
        }
        self.family(name, "counter", help);
        for (k, v) in &sums {
            let p = pairs(k);
            let p: Vec<(&str, &str)> = p.iter().map(|(a, b)| (*a, b.as_str())).collect();
            self.sample(name, &p, *v as f64);
        }
    }
}

/// The board's figures in the text format, or OpenMetrics if `open`.
pub fn encode(f: &Figures, open: bool) -> Vec<u8> {
    let mut o = Out { text: String::new(), open };
    counters(&mut o, f);
    response_times(&mut o, f);
    o.gauge("iogauge_in_flight", "I/Os in flight at the end of the last interval, every worker's.", f.in_flight as f64);
    let cpu = "CPU utilisation of the hosts over the last interval (0-1).";
    o.gauge("iogauge_host_cpu_utilization_ratio", cpu, f.host_cpu_pct / 100.0);
    o.family(
        "iogauge_process_cpu_seconds_total",
        "counter",
        "CPU time this iogauge process has used (user and system).",
    );
    o.sample("iogauge_process_cpu_seconds_total", &[], own_cpu_s());
    progress(&mut o, f);
    o.family("iogauge_build_info", "gauge", "Always 1: the version of iogauge serving these metrics.");
    o.sample("iogauge_build_info", &[("version", env!("CARGO_PKG_VERSION"))], 1.0);
    if open {
        o.text.push_str("# EOF\n");
    }
    o.text.into_bytes()
}

/// The counters of I/Os, bytes and errors: per manager, workload and operation; per worker;
/// per target and operation.
fn counters(o: &mut Out, f: &Figures) {
    let totals = f.totals();
    let host = |rank: u32| f.host(rank).to_string();
    let by_workload = |k: &Key| (k.0, k.1.clone(), k.4);
    let workload_pairs = |k: &(u32, String, crate::stats::Op)| {
        vec![
            ("manager", k.0.to_string()),
            ("host", host(k.0)),
            ("workload", k.1.clone()),
            ("direction", k.2.name().to_string()),
        ]
    };
    let families: [Family; 3] = [
        ("iogauge_ios_total", "I/Os completed and recorded (as the result counts them).", |t| t.ios),
        ("iogauge_bytes_total", "Bytes those I/Os transferred (trimmed bytes for trims).", |t| t.bytes),
        ("iogauge_errors_total", "I/Os that failed (ramp-up's too, as the result counts them).", |t| t.errors),
    ];
    for (name, help, value) in families {
        o.counters(name, help, &totals, by_workload, workload_pairs, value);
    }
    let by_worker = |k: &Key| (k.0, k.2.clone());
    let worker_pairs = |k: &(u32, String)| vec![("manager", k.0.to_string()), ("worker", k.1.clone())];
    let families: [Family; 2] = [
        ("iogauge_worker_ios_total", "I/Os each worker completed and recorded.", |t| t.ios),
        ("iogauge_worker_bytes_total", "Bytes each worker transferred.", |t| t.bytes),
    ];
    for (name, help, value) in families {
        o.counters(name, help, &totals, by_worker, worker_pairs, value);
    }
    let by_target = |k: &Key| (k.0, k.3.clone(), k.4);
    let target_pairs = |k: &(u32, String, crate::stats::Op)| {
        vec![("manager", k.0.to_string()), ("target", k.1.clone()), ("direction", k.2.name().to_string())]
    };
    let families: [Family; 3] = [
        ("iogauge_target_ios_total", "I/Os completed and recorded on each target.", |t| t.ios),
        ("iogauge_target_bytes_total", "Bytes transferred to or from each target.", |t| t.bytes),
        ("iogauge_target_errors_total", "I/Os that failed on each target.", |t| t.errors),
    ];
    for (name, help, value) in families {
        o.counters(name, help, &totals, by_target, target_pairs, value);
    }
}

/// The histogram of response times, per workload.
fn response_times(o: &mut Out, f: &Figures) {
    o.family(
        "iogauge_response_time_seconds",
        "histogram",
        "Response times of the I/Os of the recorded intervals, every manager's.",
    );
    for (workload, l) in &f.latency {
        let mut cumulative = 0;
        for (i, n) in l.buckets.iter().enumerate() {
            cumulative += n;
            let le = BUCKETS_S.get(i).map_or("+Inf".into(), |&b| num(b));
            o.sample("iogauge_response_time_seconds_bucket", &[("workload", workload), ("le", &le)], cumulative as f64);
        }
        o.sample("iogauge_response_time_seconds_sum", &[("workload", workload)], l.sum_s);
        o.sample("iogauge_response_time_seconds_count", &[("workload", workload)], cumulative as f64);
    }
}

/// Where the test is: its state, phase, and a study's point, round and time.
fn progress(o: &mut Out, f: &Figures) {
    o.family("iogauge_state", "gauge", "1 for the state the test is in: starting, ramp, recording or ended.");
    for s in State::ALL {
        o.sample("iogauge_state", &[("state", s.name())], f64::from(u8::from(f.state == s)));
    }
    o.gauge("iogauge_phase_elapsed_seconds", "Time into the ramp-up or the recording running.", f.phase_s.0);
    if let Some(t) = f.phase_s.1 {
        o.gauge("iogauge_phase_duration_seconds", "How long the ramp-up or recording running lasts.", t);
    }
    let Some(p) = &f.study else { return };
    o.gauge("iogauge_study_point", "The study point running (from 1).", p.point as f64);
    if let Some(n) = p.points {
        let help = "How many points the study runs (at most, in rounds until steady).";
        o.gauge("iogauge_study_points", help, n as f64);
    }
    if let Some(r) = p.round {
        let help = "The round running, in a study that runs rounds until steady.";
        o.gauge("iogauge_study_round", help, f64::from(r));
    }
    o.gauge("iogauge_study_elapsed_seconds", "Time since the study started.", p.elapsed_s);
    if let Some(l) = p.left_s {
        o.gauge("iogauge_study_left_seconds", "Estimated time left in the study.", l);
    }
}

/// This process's CPU time (s), every thread's.
fn own_cpu_s() -> f64 {
    // SAFETY: rusage is plain integers, for which all zeroes is a value; getrusage writes
    // only the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}
