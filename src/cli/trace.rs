//! `iogauge capture`: a device's requests into a trace file (see `trace::capture`);
//! `iogauge replay`: a trace's I/Os issued again on a target, as a test of one worker;
//! `iogauge distil`: a trace summed up as a job file, and checked against its replay.

use std::path::Path;
use std::time::Duration;

use super::args::{CaptureArgs, DistilArgs, DocumentFlags, FitFlag, OutputFlags, ReplayArgs};
use crate::config::{Fit, Job, Replay, Speed, Test, WorkerConfig};
use crate::error::{Result, input, runtime};
use crate::export::output::Output;
use crate::format::thousands;
use crate::net::TargetName;
use crate::result::ResultDoc;
use crate::trace::distil::{self, Distilled};
use crate::trace::{Summary, capture, stem};

/// Runs `iogauge capture`: says on stderr what was recorded, and whether anything was lost.
pub fn capture(a: &CaptureArgs) -> Result<i32> {
    // An earlier capture may be replaced; another tool's trace, a database, any other file not.
    let mut out = super::history::guard(None).file_of("--output", &a.output, &crate::trace::CAPTURE)?;
    super::interrupt::stop_on_interrupt();
    let started = capture::Capture::start(&a.device)?;
    // Said once the tracepoints are on: what happens on the device from here is recorded.
    say!(
        "capturing the {} of {} for {} (Ctrl-C ends it and keeps the trace)",
        started.what(),
        a.device.display(),
        crate::units::format_duration(a.time)
    );
    let c = out.stream("the capture", |w| started.record(a.time, &super::interrupt::requested, w))?;
    let ops: Vec<String> = crate::stats::Op::ALL
        .iter()
        .filter(|o| c.per_op[**o as usize] > 0)
        .map(|o| format!("{} {}", thousands(c.per_op[*o as usize] as f64), o.name()))
        .collect();
    say!(
        "captured {} requests ({}) on {}, {} bytes",
        thousands(c.requests as f64),
        if ops.is_empty() { "none".to_string() } else { ops.join(", ") },
        a.device.display(),
        thousands(c.bytes as f64)
    );
    if c.unfinished > 0 {
        say!("{} requests were still in flight at the end (no completion time)", thousands(c.unfinished as f64));
    }
    if c.lost_events > 0 {
        say!(
            "warning: the kernel dropped {} events (its buffer was full): the trace misses requests",
            thousands(c.lost_events as f64)
        );
        return Ok(1);
    }
    Ok(0)
}

/// The test `iogauge replay` describes: one worker replaying the trace on the target, to the
/// trace's end (or for --time).
pub fn replay_test(a: &ReplayArgs) -> Result<Test> {
    let s = &a.flags.settings;
    if s.distribution.is_some() || s.random_map {
        let flag = if s.random_map { "--random-map" } else { "--distribution" };
        return Err(input(format!(
            "{flag} shapes a specification's offsets, and a replay's are its trace's: leave it out"
        )));
    }
    let summary = Summary::of(&a.trace)?;
    let fit = match a.fit {
        None => Fit::None,
        Some(FitFlag::Wrap) => Fit::Wrap,
        Some(FitFlag::Scale) => Fit::Scale,
    };
    let mut job = replay_job(&a.trace, a.speed, fit, &summary);
    // The worker flags, as `run`'s: its target, and its outstanding I/Os over the trace's.
    a.flags.workers.apply(&mut job.workers[0]);
    a.flags.settings.apply(&mut job)?;
    super::args::resolve_flags(&job, &a.flags)
}

/// One worker replaying `trace` (to the trace's end: `Test::from_job`), by default as many
/// I/Os in flight as the trace needs.
fn replay_job(trace: &Path, speed: Speed, fit: Fit, s: &Summary) -> Job {
    let outstanding = match speed {
        Speed::Times(_) => (s.max_in_flight * 2).clamp(64, 4096) as u32,
        Speed::Max => s.mean_in_flight().unwrap_or(1).clamp(1, 4096) as u32,
    };
    let worker = WorkerConfig {
        name: Some("replay".into()),
        outstanding,
        replay: Some(Replay { trace: trace.to_path_buf(), speed, fit }),
        ..WorkerConfig::default()
    };
    Job { workers: vec![worker], ..Job::default() }
}

/// The job a distilled trace runs as: its phases one after another (`test.run`), each as
/// long as the longest phase; the worker keeps the most the trace had in flight where its
/// I/Os were issued in a closed loop, or arrives at the trace's rate where they arrived in an
/// open one ([`crate::trace::Summary::closed_loop`]).
fn distilled_job(d: &Distilled, target: Option<&TargetName>) -> Job {
    let mut job = Job { specs: d.phases.iter().map(|p| p.spec.clone()).collect(), ..Job::default() };
    job.test.run = d.phases.iter().map(|p| p.spec.name.clone()).collect();
    job.test.ramp = Duration::ZERO;
    let longest = d.phases.iter().map(|p| p.end_ns - p.start_ns).max().unwrap_or(0);
    job.test.time = Duration::from_secs(longest.div_ceil(1_000_000_000).max(1));
    let most = d.phases.iter().filter_map(|p| p.most_in_flight).max().unwrap_or(1);
    let secs = d.summary.span_ns() as f64 / 1e9;
    let mut w = WorkerConfig {
        targets: target.map(|t| vec![t.clone()]).unwrap_or_default(),
        working_set: Some(d.summary.end.div_ceil(1 << 20).max(1) << 20),
        outstanding: most.clamp(1, u32::MAX as u64) as u32,
        ..WorkerConfig::default()
    };
    if d.closed_loop == Some(false) && secs > 0.0 {
        // Room for the bursts an open loop meets.
        let in_flight = d.phases.iter().filter_map(|p| p.in_flight).fold(0.0, f64::max);
        w.outstanding = ((in_flight.round() as u32).max(1) * 4).max(16);
        w.rate_iops = Some((d.summary.total() as f64 / secs * 10.0).round() / 10.0);
    }
    job.workers = vec![w];
    job
}

/// The comment that heads a distilled job: the trace, how its I/Os arrived, and what each
/// phase was, every time from the trace's first I/O with the same decimals.
fn distilled_header(d: &Distilled, trace: &Path) -> String {
    let s = &d.summary;
    let places = distil::decimals(&d.phases);
    let span = d.phases.iter().map(|p| p.end_ns).max().unwrap_or(0);
    let mut out = format!(
        "# iogauge distil of {} ({}): {} I/Os over {:.places$} s, reaching {}\n",
        trace.display(),
        s.format.map_or("", |f| f.name()),
        thousands(s.total() as f64),
        span as f64 / 1e9,
        crate::units::human_size(s.end)
    );
    out += match d.closed_loop {
        Some(true) => {
            "# arrivals: a closed loop (each I/O issued as one completed): the job keeps its most in flight\n"
        }
        Some(false) => {
            "# arrivals: an open loop (the I/Os arrived at their own times): the job arrives at the trace's rate\n"
        }
        None => "",
    };
    for p in &d.phases {
        let arrival = match (p.in_flight, p.most_in_flight, p.busy_pct) {
            (Some(q), Some(most), Some(b)) => {
                format!(", {most} in flight at most, {q:.1} on average (Little's law), busy {b:.0} % of the time")
            }
            _ => String::new(),
        };
        out += &format!(
            "# {}: {}, {} I/Os, {}, {:.0} % read{arrival}\n",
            p.spec.name,
            distil::seconds(p.start_ns, p.end_ns, places),
            thousands(p.ios as f64),
            p.iops.map_or_else(|| "no times (as fast as possible)".into(), |r| format!("{r:.0} IOPS")),
            p.read_pct
        );
        for l in &p.lost {
            out += &format!("#   not expressed: {l}\n");
        }
    }
    out
}

/// Runs `iogauge distil`.
pub fn distil(a: &DistilArgs) -> Result<i32> {
    let name = a.name.clone().unwrap_or_else(|| stem(&a.trace));
    let window = a.window.map_or(0, |w| w.as_nanos() as u64);
    let d = distil::distil(&a.trace, &name, window)?;
    let target = a.target.as_ref().or(a.check.as_ref());
    let job = distilled_job(&d, target);
    let toml = crate::job::to_toml(&job).map_err(|e| runtime(format!("writing the job: {e}")))?;
    let mut text = distilled_header(&d, &a.trace);
    if let Some(t) = target.filter(|t| t.secret().is_some()) {
        text += &format!(
            "# the password given for {t} is not written here: to run this job, give it as LIBISCSI_CHAP_PASSWORD\n"
        );
    }
    text += &toml;
    match &a.output {
        Some(path) => {
            super::history::guard(None).file("--output", path)?.write(text.as_bytes(), "the distilled job")?
        }
        None if a.check.is_none() => Output::Stdout.write(text.as_bytes(), "the distilled job")?,
        None => {}
    }
    let Some(target) = &a.check else { return Ok(0) };
    check(a, target, job, &d)
}

/// `--check`: the replay at the trace's times and the distilled job on one target.
fn check(a: &DistilArgs, target: &TargetName, mut job: Job, d: &Distilled) -> Result<i32> {
    let quiet = OutputFlags { document: DocumentFlags { quiet: true, ..Default::default() }, ..OutputFlags::default() };
    let group = crate::managers::join(crate::config::TestSettings::default().sync_timeout)?;
    let mut replay = replay_job(&a.trace, Speed::Times(1.0), Fit::None, &d.summary);
    replay.workers[0].targets = vec![target.clone()];
    for j in [&mut replay, &mut job] {
        j.test.allow_write = a.allow_write.clone();
    }
    say!("replaying {} on {target}", a.trace.display());
    let replayed = super::run_and_write(group.as_ref(), Test::from_job(&replay)?, &quiet)?;
    say!("running the distilled job on {target}");
    let distilled = super::run_and_write(group.as_ref(), Test::from_job(&job)?, &quiet)?;
    let figures = |doc: &ResultDoc| Figures::of(doc);
    let (r, x) = (figures(&replayed), figures(&distilled));
    let shown = match a.json {
        true => {
            let v = serde_json::json!({ "schema": "iogauge.distil-check/1", "target": target, "replay": r, "distilled": x });
            format!("{v}\n")
        }
        false => check_table(&r, &x),
    };
    Output::Stdout.write(shown.as_bytes(), "the check")?;
    Ok(replayed.exit_status().max(distilled.exit_status()))
}

/// What the check compares: the workloads of a document together.
#[derive(serde::Serialize)]
struct Figures {
    ios: u64,
    iops: f64,
    mbps: f64,
    read_pct: f64,
    avg_response_ms: f64,
    p50_ms: f64,
    p99_ms: f64,
    p99_9_ms: f64,
}

impl Figures {
    fn of(doc: &ResultDoc) -> Figures {
        let mut raw = crate::stats::IoStats::default();
        let secs: f64 = doc.results.iter().map(|r| r.duration_s).sum();
        for r in &doc.results {
            raw += &r.totals.metrics.raw;
        }
        let m = crate::result::Metrics::new(&raw, secs);
        let p = |k: &str| m.percentiles_ms.get(k).copied().unwrap_or(0.0);
        Figures {
            ios: m.ios,
            iops: m.iops,
            mbps: m.mbps,
            read_pct: m.read_ios as f64 * 100.0 / (m.read_ios + m.write_ios).max(1) as f64,
            avg_response_ms: m.avg_response_ms.unwrap_or(0.0),
            p50_ms: p("p50"),
            p99_ms: p("p99"),
            p99_9_ms: p("p99.9"),
        }
    }
}

fn check_table(r: &Figures, x: &Figures) -> String {
    let mut out = format!("{:<16}{:>14}{:>14}{:>10}\n", "", "replay", "distilled", "ratio");
    let rows = [
        ("IOPS", r.iops, x.iops),
        ("MB/s", r.mbps, x.mbps),
        ("read %", r.read_pct, x.read_pct),
        ("avg ms", r.avg_response_ms, x.avg_response_ms),
        ("p50 ms", r.p50_ms, x.p50_ms),
        ("p99 ms", r.p99_ms, x.p99_ms),
        ("p99.9 ms", r.p99_9_ms, x.p99_9_ms),
    ];
    for (what, a, b) in rows {
        let ratio = if a > 0.0 { format!("{:.2}", b / a) } else { "-".into() };
        out += &format!("{what:<16}{a:>14.3}{b:>14.3}{ratio:>10}\n");
    }
    out
}
