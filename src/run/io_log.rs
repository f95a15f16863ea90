//! The writers of `--log-dir`: each worker's completions as fio writes its logs
//! (`write_lat_log`, `write_bw_log`, `write_iops_log`), so fio's plotting tools read them.
//! Lines are `time_ms, value, ddir, bs, offset` (ddir 0 read, 1 write, 2 trim; flushes are
//! not logged, as fio logs no syncs): with `--log-avg 0`
//! one per I/O (value: its latency in ns, 1 I/O, its KiB/s = bs / latency), else one per
//! direction and window (the mean latency, I/Os per second, KiB/s; bs and offset 0), times
//! from the start of recording. Each file is written beside its name and renamed when whole.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread::JoinHandle;

use crate::error::{Result, runtime};
use crate::stats::Op;
use crate::worker::Control;
use crate::worker::io_log::{Entry, LogChunks};

/// fio's log kinds, in the order of [`Files`]: `lat` and `clat` are the same here (iogauge
/// times an I/O from submission: fio's lat; it has no separate submission latency).
const KINDS: [&str; 4] = ["lat", "clat", "bw", "iops"];

/// One open log file per kind, each beside its final name until it is whole.
struct Files {
    out: Vec<(BufWriter<File>, PathBuf, PathBuf)>,
}

impl Files {
    fn create(dir: &Path, stem: &str, number: usize) -> std::io::Result<Files> {
        let out = KINDS
            .iter()
            .map(|k| {
                let name = format!("{stem}_{k}.{number}.log");
                let path = dir.join(&name);
                let tmp = dir.join(format!(".{name}.iogauge-{}.tmp", std::process::id()));
                Ok((BufWriter::new(File::create(&tmp)?), tmp, path))
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Files { out })
    }

    /// One line in every file: its value of `values` (lat, clat, bw, iops).
    fn line(&mut self, ms: u64, values: [u64; 4], op: Op, bs: u32, offset: u64) -> std::io::Result<()> {
        for ((f, _, _), v) in self.out.iter_mut().zip(values) {
            writeln!(f, "{ms}, {v}, {}, {bs}, {offset}", op as u8)?;
        }
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        for (f, tmp, path) in self.out {
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(tmp, path)?;
        }
        Ok(())
    }
}

/// The operations logged, by fio's ddir (its index here).
const LOGGED: [Op; 3] = [Op::Read, Op::Write, Op::Trim];

/// One direction's completions in the current window.
#[derive(Default, Clone, Copy)]
struct Window {
    ios: u64,
    bytes: u64,
    response_ns: u64,
}

/// Writes one worker's log from its chunks until the worker is done; the error, if any, names
/// the file.
fn write(chunks: LogChunks, dir: &Path, stem: &str, number: usize, avg_ns: u64, ctl: &Control) -> Result<()> {
    let fail = |e: std::io::Error| runtime(format!("writing the I/O log {}: {e}", dir.join(stem).display()));
    let mut files = Files::create(dir, stem, number).map_err(fail)?;
    let (mut window, mut sums) = (0u64, [Window::default(); 3]);
    // A window's line: its mean latency, I/Os and KiB per second, at its end.
    let flush = |files: &mut Files, window: u64, sums: &mut [Window; 3]| -> std::io::Result<()> {
        let secs = avg_ns as f64 / 1e9;
        for (dir, w) in sums.iter().enumerate().filter(|(_, w)| w.ios > 0) {
            let lat = w.response_ns / w.ios;
            let values = [lat, lat, (w.bytes as f64 / 1024.0 / secs) as u64, (w.ios as f64 / secs).round() as u64];
            files.line((window + 1) * avg_ns / 1_000_000, values, LOGGED[dir], 0, 0)?;
        }
        *sums = [Window::default(); 3];
        Ok(())
    };
    let mut last_ns = 0;
    for chunk in chunks.full.iter() {
        for e in &chunk {
            last_ns = e.at_ns;
            let Entry { at_ns, response_ns, offset, len, op } = *e;
            if op == Op::Flush {
                continue;
            }
            if avg_ns == 0 {
                let kib_per_s = len as u64 * 1_000_000_000 / 1024 / response_ns.max(1);
                files
                    .line(at_ns / 1_000_000, [response_ns, response_ns, kib_per_s, 1], op, len, offset)
                    .map_err(fail)?;
                continue;
            }
            while at_ns / avg_ns > window {
                flush(&mut files, window, &mut sums).map_err(fail)?;
                window += 1;
            }
            let w = &mut sums[op as usize];
            (w.ios, w.bytes, w.response_ns) = (w.ios + 1, w.bytes + len as u64, w.response_ns + response_ns);
        }
        let mut chunk = chunk;
        chunk.clear();
        let _ = chunks.spare.try_send(chunk);
    }
    // The windows to the end of recording (known once the worker is done; a test that ends
    // on a count ends at its last completion); one cut short is left out, as its rate would
    // read low.
    if avg_ns > 0 {
        let (start, end) = (ctl.record_start_ns.load(Relaxed), ctl.record_end_ns.load(Relaxed));
        let recorded = if end == u64::MAX { last_ns } else { end.saturating_sub(start) };
        while (window + 1) * avg_ns <= recorded {
            flush(&mut files, window, &mut sums).map_err(fail)?;
            window += 1;
        }
    }
    files.finish().map_err(fail)
}

/// Starts the writer of a worker's log in workload `number` (from 1), named as fio names a
/// job's: `DIR/NAME_{lat,clat,bw,iops}.NUMBER.log`, the worker's name with spaces and slashes
/// made `_`.
pub(super) fn start(
    chunks: LogChunks,
    dir: PathBuf,
    worker: &str,
    number: usize,
    avg_ns: u64,
    ctl: Arc<Control>,
) -> std::io::Result<JoinHandle<Result<()>>> {
    let stem: String = worker.chars().map(|c| if c.is_whitespace() || c == '/' { '_' } else { c }).collect();
    std::thread::Builder::new()
        .name("iogauge-log".into())
        .spawn(move || write(chunks, &dir, &stem, number, avg_ns, &ctl))
}
