//! `--live-json`: one JSON object per interval (docs/live-schema.json), written and flushed as
//! the interval ends, so a script can follow a run with `tail -f` or a pipe.

use std::io::Write;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Result, runtime};
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

/// How many lines may wait for a reader that is behind; the rest are left out until it
/// catches up. At one line an interval, minutes of them.
const QUEUED: usize = 1024;

/// How long the lines still waiting at the end may take to be read.
const DRAIN: Duration = Duration::from_secs(5);

/// Where the lines go: stdout or a file (a pipe, a FIFO), each line flushed at once, by a
/// thread of its own. Written from the test's monitor, a reader that stopped reading held the
/// monitor in `write(2)`: the samples, and the end of a 2 s test, waited for it without end.
pub struct Lines {
    /// To the writer; None once finished.
    queue: Option<SyncSender<String>>,
    writer: Option<JoinHandle<()>>,
    /// Lines left out while the reader was behind.
    dropped: u64,
}

impl Lines {
    /// Lines to `out`.
    pub fn new(mut out: Box<dyn Write + Send>) -> Result<Lines> {
        let (queue, lines) = sync_channel::<String>(QUEUED);
        let writer = std::thread::Builder::new().name("iogauge-lines".into()).spawn(move || {
            for line in lines {
                if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                    let e = match e.kind() {
                        std::io::ErrorKind::BrokenPipe => "its reader went away (a broken pipe)".to_string(),
                        _ => e.to_string(),
                    };
                    say!("warning: --live-json: {e}; no more lines are written, the run goes on");
                    return;
                }
            }
        });
        let writer = writer.map_err(|e| runtime(format!("--live-json: cannot start its writer: {e}")))?;
        Ok(Lines { queue: Some(queue), writer: Some(writer), dropped: 0 })
    }

    /// Hands a line to the writer; never waits (the run does not depend on a reader).
    pub fn write(&mut self, line: String) {
        let Some(queue) = &self.queue else { return };
        if let Err(TrySendError::Full(_)) = queue.try_send(line) {
            if self.dropped == 0 {
                say!(
                    "warning: --live-json: the reader is {QUEUED} lines behind; lines are left out until \
                     it reads again (the run goes on)"
                );
            }
            self.dropped += 1;
        }
    }

    /// Lets the lines still waiting be read, for up to [`DRAIN`] (a stopped run's too: its
    /// last lines say where it stopped).
    pub fn finish(&mut self) {
        drop(self.queue.take());
        let Some(writer) = self.writer.take() else { return };
        let until = Instant::now() + DRAIN;
        while !writer.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.dropped > 0 {
            say!("warning: --live-json: {} line(s) were left out while the reader was behind", self.dropped);
        }
        if !writer.is_finished() {
            say!(
                "warning: --live-json: the reader did not take every line within {} s of the end; the rest are lost",
                DRAIN.as_secs()
            );
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.finish();
    }
}
