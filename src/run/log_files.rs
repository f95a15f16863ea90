//! The writers of `--log-dir` and `--iolog`. Each worker's completions as fio writes its logs
//! (`write_lat_log`, `write_bw_log`, `write_iops_log`), so fio's plotting tools read them:
//! lines are fio 3's `time_ms, value, ddir, bs, offset, prio` (`log_offsets`, fio's
//! `log_offset=1`) or `time_ms, value, ddir, bs, prio` (ddir 0 read, 1 write, 2 trim; flushes
//! are not logged, as fio logs no syncs; the priority 0), with `--log-avg 0` one per I/O
//! (value: its latency in ns, 1 I/O, its KiB/s = bs / latency), else one per direction and
//! window (the mean latency, I/Os per second, KiB/s; bs and offset 0), times from the start of
//! recording. Each file is written beside its name and renamed when whole; with `log_name`,
//! every worker's files are then gathered into one of each kind (fio's `per_job_logs=0`).
//! And every I/O issued as fio's iolog v3 (`write_iolog`): each worker's in the order issued,
//! then every worker's merged by time into one file at the end of the test.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;
use std::thread::JoinHandle;
use std::time::Instant;

use crate::error::{Result, runtime};
use crate::host::files::Ours;
use crate::stats::Op;
use crate::worker::Control;
use crate::worker::log_chunks::{Entry, LogChunks};

/// fio's log kinds, in the order of [`Files`]: `lat` and `clat` are the same here (iogauge
/// times an I/O from submission: fio's lat; it has no separate submission latency).
const KINDS: [&str; 4] = ["lat", "clat", "bw", "iops"];

/// What a worker's writer writes.
pub(super) struct Outputs {
    /// fio's logs: the directory, the file names' stem and workload number, ms per window
    /// (0: a line per I/O), and whether lines give offsets.
    pub(super) logs: Option<(PathBuf, String, usize, u64, bool)>,
    /// The worker's part of the test's iolog: its file, its targets' paths, and when the test
    /// started (the iolog's times count from it).
    pub(super) iolog: Option<(PathBuf, Vec<String>, Instant)>,
}

/// One open log file per kind, each beside its final name until it is whole.
struct Files {
    out: Vec<(BufWriter<File>, PathBuf, PathBuf)>,
    offsets: bool,
}

impl Files {
    fn create(dir: &Path, stem: &str, number: usize, offsets: bool) -> std::io::Result<Files> {
        let out = KINDS
            .iter()
            .map(|k| {
                let path = dir.join(log_name(stem, k, number));
                let tmp = beside(&path);
                Ok((BufWriter::new(File::create(&tmp)?), tmp, path))
            })
            .collect::<std::io::Result<_>>()?;
        Ok(Files { out, offsets })
    }

    /// One line in every file: its value of `values` (lat, clat, bw, iops).
    fn line(&mut self, ms: u64, values: [u64; 4], op: Op, bs: u32, offset: u64) -> std::io::Result<()> {
        for ((f, _, _), v) in self.out.iter_mut().zip(values) {
            match self.offsets {
                true => writeln!(f, "{ms}, {v}, {}, {bs}, {offset}, 0", op as u8)?,
                false => writeln!(f, "{ms}, {v}, {}, {bs}, 0", op as u8)?,
            }
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

/// A log's file name, as fio names a job's: `STEM_KIND.NUMBER.log`.
fn log_name(stem: &str, kind: &str, number: usize) -> String {
    format!("{stem}_{kind}.{number}.log")
}

/// Whether a file of the name `file` in the log directory is one a test may write there: a
/// worker's log, `STEM_KIND.N.log`, or with `log_name` the gathered `NAME_KIND.log`.
pub(crate) fn is_log_name(file: &str, log_name: Option<&str>) -> bool {
    KINDS.iter().any(|kind| {
        let numbered = file
            .strip_suffix(".log")
            .and_then(|f| f.rsplit_once('.'))
            .is_some_and(|(stem, n)| stem.ends_with(&format!("_{kind}")) && n.parse::<usize>().is_ok());
        numbered || log_name.is_some_and(|name| file == format!("{name}_{kind}.log"))
    })
}

/// How much of a file tells it as a log: its whole lines in the first 64 KiB.
const LOG_HEAD: u64 = 64 << 10;

/// What `--log-dir` replaces: a log as fio and iogauge write them, every line (of the first
/// [`LOG_HEAD`] bytes) 4 to 6 unsigned integers joined by `, ` (fio 2's time, value, ddir,
/// bs; fio 3's with offset and priority); empty, a log of no I/O.
pub(crate) const LOG: Ours = Ours { what: "a log iogauge wrote", is: is_log };

fn is_log(path: &Path) -> bool {
    let mut head = Vec::new();
    let Ok(f) = File::open(path) else { return false };
    if std::io::Read::read_to_end(&mut std::io::Read::take(f, LOG_HEAD), &mut head).is_err() {
        return false;
    }
    // A file longer than the head ends it inside a line: that part line is not looked at.
    let whole = match std::fs::metadata(path).is_ok_and(|m| m.len() > LOG_HEAD) {
        true => match head.iter().rposition(|&b| b == b'\n') {
            Some(end) => &head[..=end],
            None => return false,
        },
        false => &head[..],
    };
    let Ok(text) = std::str::from_utf8(whole) else { return false };
    text.lines().all(|line| {
        let fields: Vec<&str> = line.split(", ").collect();
        (4..=6).contains(&fields.len()) && fields.iter().all(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Where a file is written before it is whole: beside `path`, hidden.
fn beside(path: &Path) -> PathBuf {
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().to_string());
    path.with_file_name(format!(".{name}.iogauge-{}.tmp", std::process::id()))
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

/// One worker's fio logs, fed completion by completion.
struct Logs {
    files: Files,
    avg_ns: u64,
    window: u64,
    sums: [Window; 3],
}

impl Logs {
    fn entry(&mut self, e: &Entry) -> std::io::Result<()> {
        let Entry { at_ns, response_ns, offset, len, op, .. } = *e;
        if op == Op::Flush {
            return Ok(());
        }
        if self.avg_ns == 0 {
            let kib_per_s = len as u64 * 1_000_000_000 / 1024 / response_ns.max(1);
            return self.files.line(at_ns / 1_000_000, [response_ns, response_ns, kib_per_s, 1], op, len, offset);
        }
        while at_ns / self.avg_ns > self.window {
            self.flush()?;
        }
        let w = &mut self.sums[op as usize];
        (w.ios, w.bytes, w.response_ns) = (w.ios + 1, w.bytes + len as u64, w.response_ns + response_ns);
        Ok(())
    }

    /// The current window's lines: its mean latency, I/Os and KiB per second, at its end.
    fn flush(&mut self) -> std::io::Result<()> {
        let secs = self.avg_ns as f64 / 1e9;
        for (dir, w) in self.sums.iter().enumerate().filter(|(_, w)| w.ios > 0) {
            let lat = w.response_ns / w.ios;
            let values = [lat, lat, (w.bytes as f64 / 1024.0 / secs) as u64, (w.ios as f64 / secs).round() as u64];
            self.files.line((self.window + 1) * self.avg_ns / 1_000_000, values, LOGGED[dir], 0, 0)?;
        }
        (self.sums, self.window) = ([Window::default(); 3], self.window + 1);
        Ok(())
    }

    /// The windows to the end of recording (known once the worker is done; a test that ends
    /// on a count ends at its last completion); one cut short is left out, as its rate would
    /// read low.
    fn finish(mut self, ctl: &Control, last_ns: u64) -> std::io::Result<()> {
        if self.avg_ns > 0 {
            let (start, end) = (ctl.record_start_ns.load(Relaxed), ctl.record_end_ns.load(Relaxed));
            let recorded = if end == u64::MAX { last_ns } else { end.saturating_sub(start) };
            while (self.window + 1) * self.avg_ns <= recorded {
                self.flush()?;
            }
        }
        self.files.finish()
    }
}

/// Completions in flight at once beyond which one still waited for is written out of order:
/// an I/O that stays in flight while this many others complete after it was issued.
const REORDER: usize = 1 << 16;

/// An I/O not yet written to the iolog: its issue time, its arrival (ties in the order
/// completed), offset, bytes, target and operation.
type Pending = (u64, u64, u64, u32, u16, u8);

/// One worker's part of the iolog: its I/Os in the order issued (by their issue times, from
/// completions at most [`REORDER`] apart), times in µs from the test's start.
struct Iolog {
    out: BufWriter<File>,
    targets: Vec<String>,
    /// ns from the test's start to this workload's start of recording (set with the first
    /// completion: the epoch is set before any).
    base_ns: Option<u64>,
    started: Instant,
    pending: BinaryHeap<Reverse<Pending>>,
    seen: u64,
}

impl Iolog {
    fn entry(&mut self, e: &Entry, ctl: &Control) -> std::io::Result<()> {
        let base = *self.base_ns.get_or_insert_with(|| {
            let epoch = ctl.epoch.get().map_or(0, |t| t.duration_since(self.started).as_nanos() as u64);
            epoch + ctl.record_start_ns.load(Relaxed)
        });
        let issued = (base + e.at_ns).saturating_sub(e.response_ns);
        self.pending.push(Reverse((issued, self.seen, e.offset, e.len, e.target, e.op as u8)));
        self.seen += 1;
        while self.pending.len() > REORDER {
            self.write_first()?;
        }
        Ok(())
    }

    /// The first I/O issued of those waiting, as fio's `log_io_u` writes one.
    fn write_first(&mut self) -> std::io::Result<()> {
        let Some(Reverse((issued, _, offset, len, target, op))) = self.pending.pop() else { return Ok(()) };
        let action = ["read", "write", "trim", "sync"][op as usize];
        let file = &self.targets[target as usize];
        writeln!(self.out, "{} {file} {action} {offset} {len}", issued / 1000)
    }

    fn finish(mut self) -> std::io::Result<()> {
        while !self.pending.is_empty() {
            self.write_first()?;
        }
        self.out.into_inner().map_err(|e| e.into_error())?.sync_all()
    }
}

/// Writes one worker's logs from its chunks until the worker is done; the error, if any, names
/// the file.
fn write(chunks: LogChunks, out: Outputs, ctl: &Control) -> Result<()> {
    let named = match (&out.logs, &out.iolog) {
        (Some((dir, stem, ..)), _) => dir.join(stem),
        (None, Some((part, ..))) => part.clone(),
        (None, None) => PathBuf::new(),
    };
    let fail = |e: std::io::Error| runtime(format!("writing the I/O log {}: {e}", named.display()));
    let mut logs = match out.logs {
        Some((dir, stem, number, avg_ns, offsets)) => {
            let files = Files::create(&dir, &stem, number, offsets).map_err(fail)?;
            Some(Logs { files, avg_ns, window: 0, sums: [Window::default(); 3] })
        }
        None => None,
    };
    let mut iolog = match out.iolog {
        Some((part, targets, started)) => {
            let out = BufWriter::new(File::create(&part).map_err(fail)?);
            Some(Iolog { out, targets, base_ns: None, started, pending: BinaryHeap::new(), seen: 0 })
        }
        None => None,
    };
    let mut last_ns = 0;
    for chunk in chunks.full.iter() {
        for e in &chunk {
            last_ns = e.at_ns;
            if let Some(l) = &mut logs {
                l.entry(e).map_err(fail)?;
            }
            if let Some(l) = &mut iolog {
                l.entry(e, ctl).map_err(fail)?;
            }
        }
        let mut chunk = chunk;
        chunk.clear();
        let _ = chunks.spare.try_send(chunk);
    }
    if let Some(l) = logs {
        l.finish(ctl, last_ns).map_err(fail)?;
    }
    iolog.map_or(Ok(()), Iolog::finish).map_err(fail)
}

/// Starts the writer of a worker's logs (fio's, named by the worker's name with spaces and
/// slashes made `_` and the workload's number from 1, `DIR/NAME_{lat,clat,bw,iops}.N.log`;
/// and its part of the iolog).
pub(super) fn start(chunks: LogChunks, out: Outputs, ctl: Arc<Control>) -> std::io::Result<JoinHandle<Result<()>>> {
    std::thread::Builder::new().name("iogauge-log".into()).spawn(move || write(chunks, out, &ctl))
}

/// A worker's name as a log file's stem: spaces and slashes made `_`.
pub(super) fn stem(worker: &str) -> String {
    worker.chars().map(|c| if c.is_whitespace() || c == '/' { '_' } else { c }).collect()
}

/// Gathers workload `number`'s log files of every worker (`stems`, in order) into one of each
/// kind, `DIR/NAME_KIND.log` (fio's `per_job_logs=0`): made afresh by the first workload,
/// the next ones' appended.
pub(super) fn gather(dir: &Path, name: &str, stems: &[String], number: usize) -> std::io::Result<()> {
    for kind in KINDS {
        let path = dir.join(format!("{name}_{kind}.log"));
        let mut all = std::fs::OpenOptions::new()
            .create(true)
            .append(number > 1)
            .write(true)
            .truncate(number == 1)
            .open(&path)?;
        for stem in stems {
            let part = dir.join(log_name(stem, kind, number));
            std::io::copy(&mut File::open(&part)?, &mut all)?;
            std::fs::remove_file(part)?;
        }
    }
    Ok(())
}

/// The workers' parts of the test's iolog, each a file beside it until they are merged: removed
/// when dropped, whether the merge was made, failed part-way or never came (a run that failed).
#[derive(Default)]
pub(super) struct IologParts(pub(super) Vec<PathBuf>);

impl Drop for IologParts {
    fn drop(&mut self) {
        for part in &self.0 {
            let _ = std::fs::remove_file(part);
        }
    }
}

/// Whether `path` is a device or a pipe (`/dev/null`, a FIFO): written in place, never renamed
/// over, which would put a regular file where the device was.
fn in_place(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Where worker `worker`'s part of the iolog at `path` is kept during workload `workload`:
/// beside it, or, where it is a device or a pipe, in the temporary directory (not in /dev).
pub(super) fn part_of(path: &Path, workload: usize, worker: usize) -> PathBuf {
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let part = format!(".{name}.{workload}-{worker}.iogauge-{}.part", std::process::id());
    match in_place(path) {
        true => std::env::temp_dir().join(part),
        false => path.with_file_name(part),
    }
}

/// The test's iolog at `path` from every worker's `parts` (each in the order issued) merged by
/// time, written whole or not at all: a merge that fails leaves no file of its own behind. A
/// device or a pipe is written in place.
pub(super) fn merge_iolog(path: &Path, parts: &IologParts, targets: &[String]) -> std::io::Result<()> {
    if in_place(path) {
        return write_merged(File::options().write(true).open(path)?, &parts.0, targets).map(drop);
    }
    let tmp = beside(path);
    let merged = File::create(&tmp)
        .and_then(|f| write_merged(f, &parts.0, targets))
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if merged.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    merged
}

/// Fio's version line, each target added and opened, every I/O of the `parts` by time, each
/// target closed, into `file`, which it gives back.
fn write_merged(file: File, parts: &[PathBuf], targets: &[String]) -> std::io::Result<File> {
    let mut out = BufWriter::new(file);
    writeln!(out, "fio version 3 iolog")?;
    for action in ["add", "open"] {
        for t in targets {
            writeln!(out, "0 {t} {action}")?;
        }
    }
    let mut lines: Vec<std::io::Lines<BufReader<File>>> =
        parts.iter().map(|p| Ok(BufReader::new(File::open(p)?).lines())).collect::<std::io::Result<_>>()?;
    // The next line of each part, by its time: the earliest written first.
    let time = |l: &str| l.split(' ').next().and_then(|t| t.parse::<u64>().ok()).unwrap_or(0);
    let mut next = BinaryHeap::new();
    for (i, part) in lines.iter_mut().enumerate() {
        if let Some(l) = part.next().transpose()? {
            next.push(Reverse((time(&l), i, l)));
        }
    }
    let mut last = 0;
    while let Some(Reverse((t, i, l))) = next.pop() {
        writeln!(out, "{l}")?;
        last = t;
        if let Some(l) = lines[i].next().transpose()? {
            next.push(Reverse((time(&l), i, l)));
        }
    }
    for t in targets {
        writeln!(out, "{last} {t} close")?;
    }
    out.into_inner().map_err(|e| e.into_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merge that fails part-way (a worker's part gone) writes no iolog and leaves nothing of
    /// its own; the parts go when dropped, merged or not (issue 82: `.part` files were left).
    #[test]
    fn a_failed_merge_leaves_no_file_behind() {
        let dir = std::env::temp_dir().join(format!("iogauge-iolog-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (good, gone, path) = (dir.join("w1.part"), dir.join("w2.part"), dir.join("test.iolog"));
        std::fs::write(&good, "5 /dev/x read 0 4096\n").unwrap();
        let parts = IologParts(vec![good.clone(), gone]);
        assert!(merge_iolog(&path, &parts, &["/dev/x".into()]).is_err());
        assert!(!path.exists() && !beside(&path).exists(), "a failed merge wrote a file");
        assert!(good.exists(), "the parts are kept until dropped");
        drop(parts);
        assert!(!good.exists(), "a part outlived the run");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
