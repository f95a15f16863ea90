//! `--live-json`: one JSON object per interval (docs/live-schema.json), written and flushed as
//! the interval ends, so a script can follow a run with `tail -f` or a pipe.

use std::io::Write;

use serde::Serialize;

use crate::result::Interval;
use crate::run::{Count, Phase, Progress, Snapshot};

/// The version of the lines' layout; a change that breaks a reader changes it.
pub const LIVE_SCHEMA: &str = "iogauge-live/1";

/// One line: the result's interval fields, and where the test is.
#[derive(Serialize)]
struct Line<'a> {
    schema: &'static str,
    /// When the interval ended (RFC 3339, UTC).
    time: String,
    workload: &'a str,
    phase: Phase,
    elapsed_s: f64,
    total_s: Option<f64>,
    #[serde(flatten)]
    interval: &'a Interval,
    ios: u64,
    bytes: u64,
    in_flight: u64,
    /// The longest response time of the interval (ms; its histogram bucket's middle).
    max_response_ms: Option<f64>,
    /// What the workload has counted so far, per manager, worker, target and operation.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    counts: &'a [Count],
    #[serde(skip_serializing_if = "Option::is_none")]
    study: Option<&'a Progress>,
}

/// The line of a snapshot, without its newline.
pub fn line(s: &Snapshot) -> String {
    let line = Line {
        schema: LIVE_SCHEMA,
        time: crate::run::timestamp(std::time::SystemTime::now()),
        workload: s.workload,
        phase: s.phase,
        elapsed_s: s.elapsed_s,
        total_s: s.total_s,
        interval: &s.interval,
        ios: s.ios,
        bytes: s.bytes,
        in_flight: s.in_flight,
        max_response_ms: s.interval.histogram.as_ref().and_then(|h| h.quantile(1.0)).map(|ns| ns as f64 / 1e6),
        counts: &s.counts,
        study: s.study.as_ref(),
    };
    serde_json::to_string(&line).expect("a line serialises")
}

/// Where the lines go: stdout or a file (a pipe, a FIFO), each line flushed at once.
pub struct Lines {
    out: Box<dyn Write + Send>,
    /// The first write that failed, said once; the run goes on (its result does not depend
    /// on a reader).
    failed: bool,
}

impl Lines {
    /// Lines to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> Lines {
        Lines { out, failed: false }
    }

    /// Writes a line and flushes it.
    pub fn write(&mut self, line: &str) {
        if self.failed {
            return;
        }
        if let Err(e) = writeln!(self.out, "{line}").and_then(|()| self.out.flush()) {
            self.failed = true;
            eprintln!("iogauge: warning: --live-json: {e}; no more lines are written, the run goes on");
        }
    }
}
