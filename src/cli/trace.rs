//! `iogauge capture`: a device's requests into a trace file (see `trace::capture`);
//! `iogauge replay`: a trace's I/Os issued again on a target, as a test of one worker.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::args::{OutputFlags, SettingFlags};
use crate::config::{Fit, Job, Replay, Speed, Test, WorkerConfig};
use crate::error::Result;
use crate::export::output::Output;
use crate::format::thousands;
use crate::trace::{Summary, capture};

/// `iogauge capture` flags.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The block device whose requests to record (needs root and tracefs).
    #[arg(long, value_name = "DEV")]
    pub device: PathBuf,
    /// How long to record (Ctrl-C ends it sooner and keeps what was recorded).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION", default_value = "60s")]
    pub time: Duration,
    /// The trace file (`-`: stdout), written whole when the capture ends.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
}

/// Runs `iogauge capture`: says on stderr what was recorded, and whether anything was lost.
pub fn capture(a: &CaptureArgs) -> Result<i32> {
    let mut out = Output::open(&a.output)?;
    super::interrupt::stop_on_interrupt();
    let c = out.stream("the capture", |w| capture::capture(&a.device, a.time, &super::interrupt::requested, w))?;
    let ops: Vec<String> = crate::stats::Op::ALL
        .iter()
        .filter(|o| c.per_op[**o as usize] > 0)
        .map(|o| format!("{} {}", thousands(c.per_op[*o as usize] as f64), o.name()))
        .collect();
    eprintln!(
        "iogauge: captured {} requests ({}) on {}, {} bytes",
        thousands(c.requests as f64),
        if ops.is_empty() { "none".to_string() } else { ops.join(", ") },
        a.device.display(),
        thousands(c.bytes as f64)
    );
    if c.unfinished > 0 {
        eprintln!(
            "iogauge: {} requests were still in flight at the end (no completion time)",
            thousands(c.unfinished as f64)
        );
    }
    if c.lost_events > 0 {
        eprintln!(
            "iogauge: warning: the kernel dropped {} events (its buffer was full): the trace misses requests",
            thousands(c.lost_events as f64)
        );
        return Ok(1);
    }
    Ok(0)
}

/// `iogauge replay` flags.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: an iogauge capture, or a fio iolog (v2 or v3; write_iolog's).
    pub trace: PathBuf,
    /// The target to replay onto: a block device, file or network target (its writes need
    /// --allow-write as any test's).
    #[arg(long, value_name = "PATH")]
    pub target: String,
    /// How fast: 1 at the trace's own times (default), 2 twice as fast, max as fast as the
    /// outstanding I/Os allow.
    #[arg(long, value_parser = Speed::parse, default_value = "1", value_name = "FACTOR|max")]
    pub speed: Speed,
    /// Offsets past the working set: wrap (modulo it) or scale (by working set / the trace's
    /// reach); default: refused.
    #[arg(long, value_enum, value_name = "wrap|scale")]
    pub fit: Option<FitFlag>,
    /// I/Os in flight at most (default: at the trace's times, enough for twice what the trace
    /// had in flight, at least 64; at max, what a capture kept in flight on average, else 1).
    #[arg(long, visible_alias = "qd", value_name = "N")]
    pub outstanding: Option<u32>,
    /// Working set as a size (where the offsets go; default the whole target).
    #[arg(long, value_parser = crate::units::parse_size, value_name = "SIZE")]
    pub working_set: Option<u64>,
    /// Start of the working set on the target.
    #[arg(long, value_parser = crate::units::parse_size, value_name = "SIZE")]
    pub offset: Option<u64>,
    #[command(flatten)]
    /// Test settings (--time replays only the trace's first DURATION).
    pub settings: SettingFlags,
    #[command(flatten)]
    /// Outputs.
    pub output: OutputFlags,
}

/// `--fit`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FitFlag {
    /// Offsets modulo the working set.
    Wrap,
    /// Offsets scaled by the working set over the trace's reach.
    Scale,
}

/// The test `iogauge replay` describes: one worker replaying the trace on the target, to the
/// trace's end (or for --time).
pub fn replay_test(a: &ReplayArgs) -> Result<Test> {
    let summary = Summary::of(&a.trace)?;
    let outstanding = a.outstanding.unwrap_or(match a.speed {
        Speed::Times(_) => (summary.max_in_flight * 2).clamp(64, 4096) as u32,
        Speed::Max => summary.mean_in_flight().unwrap_or(1).clamp(1, 4096) as u32,
    });
    let fit = match a.fit {
        None => Fit::None,
        Some(FitFlag::Wrap) => Fit::Wrap,
        Some(FitFlag::Scale) => Fit::Scale,
    };
    let worker = WorkerConfig {
        name: Some("replay".into()),
        outstanding,
        targets: vec![a.target.clone()],
        working_set: a.working_set,
        offset: a.offset.unwrap_or(0),
        replay: Some(Replay { trace: a.trace.clone(), speed: a.speed, fit }),
        ..WorkerConfig::default()
    };
    let mut job = Job { workers: vec![worker], ..Job::default() };
    a.settings.apply(&mut job)?;
    if a.settings.time.is_none() && a.settings.ios.is_none() && a.settings.bytes.is_none() {
        // To the trace's end: a count, without ramp-up.
        job.test.ios = Some(summary.total());
    }
    Ok(Test::from_job(&job)?)
}
