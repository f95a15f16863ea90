//! Traces: the I/Os a real system issued, in the order and at the times it issued them.
//!
//! Three formats are read, told apart by their first bytes: iogauge's own captures
//! ([`capture`], `# iogauge-capture/1`), fio's iolog version 2 (`fio version 2 iolog`: no
//! times, `wait` lines in µs) and version 3 (`fio version 3 iolog`: each line starts with its
//! time in µs since the log began: what fio's `write_iolog` writes and its `read_iolog` waits
//! by). A trace is read as a stream ([`Reader`]), one I/O at a time, so its length
//! costs no memory: a replay and a summary hold one line, never the trace.
//!
//! fio's logs name the file of each I/O; every file of a log goes to the one target replayed
//! (fio's `replay_redirect`).

mod blkparse;
mod blktrace;
pub(crate) mod capture;
pub(crate) mod distil;
mod pairing;
pub mod replay;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::host::files::Ours;
use crate::stats::Op;

/// The first line of iogauge's captures.
pub(crate) const CAPTURE_MAGIC: &str = "# iogauge-capture/1";
/// The columns of a capture, after its first line.
pub(crate) const CAPTURE_COLUMNS: &str = "issue_ns,complete_ns,op,offset,bytes,flags,error,process";

/// One I/O of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceIo {
    /// When it was issued, in ns from the trace's start (0 for every I/O of a log without
    /// times: as fast as possible).
    pub at_ns: u64,
    /// What it did.
    pub op: Op,
    /// Where, in bytes.
    pub offset: u64,
    /// How many bytes (0 for a flush).
    pub len: u32,
    /// A write with force unit access.
    pub fua: bool,
    /// How long it took where it was captured (ns), when the trace says.
    pub latency_ns: Option<u64>,
}

impl TraceIo {
    /// Why iogauge cannot issue this I/O, if it cannot: checked as the trace is read, so that
    /// a replay or a distil refuses the trace before any I/O rather than fail at this one.
    pub(crate) fn fault(&self) -> Option<&'static str> {
        if self.op == Op::Flush {
            None
        } else if self.len == 0 {
            Some("a transfer of 0 bytes (an I/O moves at least one sector)")
        } else if self.offset.checked_add(u64::from(self.len)).is_none() {
            Some("the I/O ends beyond 2^64 bytes")
        } else if (self.offset | u64::from(self.len)) % 512 != 0 {
            Some("offset and length must be multiples of 512 bytes: iogauge replays whole sectors")
        } else {
            None
        }
    }
}

/// A trace's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// iogauge's capture.
    Capture,
    /// fio's iolog version 2.
    FioV2,
    /// fio's iolog version 3.
    FioV3,
    /// blktrace's binary events.
    Blktrace,
    /// blkparse's text output of them.
    Blkparse,
}

impl Format {
    /// How documents and messages name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Capture => "iogauge capture",
            Format::FioV2 => "fio iolog v2",
            Format::FioV3 => "fio iolog v3",
            Format::Blktrace => "blktrace",
            Format::Blkparse => "blkparse text",
        }
    }

    /// The text trace whose first line is `line`: a capture, or fio's iolog.
    fn of_first_line(line: &str) -> Option<Format> {
        match line.trim_end() {
            l if l.starts_with(CAPTURE_MAGIC) => Some(Format::Capture),
            "fio version 2 iolog" => Some(Format::FioV2),
            "fio version 3 iolog" => Some(Format::FioV3),
            _ => None,
        }
    }
}

/// What `path` holds where it is a trace of a format iogauge reads, for the output guard: a
/// trace is never replaced by a report or a document (`export::output::Guard::keeping`).
pub(crate) fn kind_of(path: &Path) -> Option<&'static str> {
    if blktrace::starts_with_magic(path) {
        return Some("a trace (blktrace)");
    }
    let line = first_line(path)?;
    match Format::of_first_line(&line) {
        Some(_) => Some("a trace"),
        None if blkparse::looks_like(&line) => Some("a trace (blkparse's text)"),
        None => None,
    }
}

/// What an existing text file at `path` is as a trace (by its first line), if one.
fn text_format(path: &Path) -> Option<Format> {
    Format::of_first_line(&first_line(path)?)
}

/// What `capture -o` replaces: an earlier capture, never another tool's trace.
pub(crate) const CAPTURE: Ours = Ours { what: "an iogauge capture", is: |p| text_format(p) == Some(Format::Capture) };

/// What `--iolog` replaces: fio's iolog v3, what it writes, line for line as fio's
/// `write_iolog` does: one fio wrote cannot be told from iogauge's, and is replaced too.
pub(crate) const FIO_IOLOG: Ours = Ours { what: "a fio iolog v3", is: |p| text_format(p) == Some(Format::FioV3) };

/// A trace read one I/O at a time.
pub(crate) enum Reader {
    /// A text trace, line by line.
    Text(TextReader),
    /// blktrace's files, event by event.
    Blktrace(blktrace::Reader),
}

impl Reader {
    /// Opens a trace and learns its format: blktrace's files from their names and first bytes
    /// ([`blktrace::files`]), a text trace from its first line.
    pub(crate) fn open(path: &Path) -> Result<Reader> {
        if crate::host::files::is_device(path) {
            let p = path.display();
            // A block device's requests are what `capture` records; a character device has none.
            return Err(Error::Input(match crate::host::files::is_block_device(path) {
                true => format!(
                    "{p} is a block device, not a trace: record one with iogauge capture --device {p} --output FILE"
                ),
                false => format!("{p} is a device, not a trace"),
            }));
        }
        match blktrace::files(path)? {
            Some(files) => Ok(Reader::Blktrace(blktrace::Reader::open(&files)?)),
            None if first_line(path).is_some_and(|l| blkparse::looks_like(&l)) => {
                let open = || Ok(vec![Box::new(blkparse::Text::open(path)?) as Box<dyn blktrace::Events>]);
                Ok(Reader::Blktrace(blktrace::Reader::of(path, Format::Blkparse, open)?))
            }
            None => Ok(Reader::Text(TextReader::open(path)?)),
        }
    }

    /// Its format.
    pub(crate) fn format(&self) -> Format {
        match self {
            Reader::Text(t) => t.format,
            Reader::Blktrace(b) => b.format(),
        }
    }

    /// The next I/O, None at the end.
    pub(crate) fn next_io(&mut self) -> Result<Option<TraceIo>> {
        match self {
            Reader::Text(t) => t.next_io(),
            Reader::Blktrace(b) => b.next_io(),
        }
    }
}

/// The longest line a text trace may have: far more than any format's, and a bound on what a
/// file of no newlines is read for.
const MAX_LINE: u64 = 64 << 10;

/// The first line of a file, when it has one that reads as text.
fn first_line(path: &Path) -> Option<String> {
    let mut line = String::new();
    BufReader::new(File::open(path).ok()?).take(MAX_LINE).read_line(&mut line).ok()?;
    Some(line)
}

/// A text file read a line at a time, each numbered for messages: a text trace, blkparse's text.
pub(crate) struct Lines {
    path: PathBuf,
    lines: BufReader<File>,
    /// The line read last, and its number (from 1).
    pub(crate) line: String,
    pub(crate) no: u64,
}

impl Lines {
    pub(crate) fn open(path: &Path) -> Result<Lines> {
        crate::host::inputs::reading(path);
        let file =
            File::open(path).map_err(|e| Error::Input(format!("{}: cannot open the trace: {e}", path.display())))?;
        Ok(Lines { path: path.to_owned(), lines: BufReader::with_capacity(1 << 16, file), line: String::new(), no: 0 })
    }

    /// Reads the next line into `line`; false at the end of the file.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        self.line.clear();
        let n = (&mut self.lines)
            .take(MAX_LINE + 1)
            .read_line(&mut self.line)
            .map_err(|e| Error::Runtime(format!("{}: reading the trace: {e}", self.path.display())))?;
        self.no += 1;
        if n as u64 > MAX_LINE {
            return Err(Error::Input(format!(
                "{}:{}: a line longer than {} KiB: not a trace",
                self.path.display(),
                self.no,
                MAX_LINE >> 10
            )));
        }
        Ok(n > 0)
    }

    /// What is wrong with the line read, where it is, and the line.
    pub(crate) fn bad(&self, what: &str) -> Error {
        Error::Input(format!("{}:{}: {what}: {:?}", self.path.display(), self.no, self.line.trim_end()))
    }
}

/// A text trace read line by line.
pub(crate) struct TextReader {
    lines: Lines,
    format: Format,
    /// fio v2: the time the `wait` lines so far add up to (ns).
    waited_ns: u64,
}

impl TextReader {
    /// Opens a text trace and reads its first line to learn its format.
    fn open(path: &Path) -> Result<TextReader> {
        let mut lines = Lines::open(path)?;
        lines.advance()?;
        let format = match Format::of_first_line(&lines.line) {
            Some(format) => format,
            None => {
                return Err(Error::Input(format!(
                    "{}: not a trace iogauge reads: its first line is neither `{CAPTURE_MAGIC}` (iogauge capture) nor \
                     `fio version 2 iolog` / `fio version 3 iolog` (fio's write_iolog), and it is no blktrace",
                    path.display()
                )));
            }
        };
        Ok(TextReader { lines, format, waited_ns: 0 })
    }

    fn bad(&self, what: &str) -> Error {
        self.lines.bad(what)
    }

    fn next_io(&mut self) -> Result<Option<TraceIo>> {
        loop {
            if !self.lines.advance()? {
                return Ok(None);
            }
            let l = self.lines.line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let parsed = if self.format == Format::Capture { self.capture_line() } else { self.fio_line() }?;
            if let Some(io) = parsed {
                return match io.fault() {
                    Some(why) => Err(self.bad(why)),
                    None => Ok(Some(io)),
                };
            }
        }
    }

    /// `issue_ns,complete_ns,op,offset,bytes,flags,error,process`; the column names' line is
    /// skipped.
    fn capture_line(&self) -> Result<Option<TraceIo>> {
        let l = self.lines.line.trim_end();
        if l == CAPTURE_COLUMNS {
            return Ok(None);
        }
        let f: Vec<&str> = l.splitn(8, ',').collect();
        if f.len() < 7 {
            return Err(self.bad(&format!("a capture line has 8 columns ({CAPTURE_COLUMNS})")));
        }
        let num = |s: &str, what: &str| s.parse::<u64>().map_err(|_| self.bad(&format!("{what} is not a number")));
        let issue = num(f[0], "issue_ns")?;
        // Empty: still in flight when the capture ended.
        let complete = if f[1].is_empty() { None } else { Some(num(f[1], "complete_ns")?) };
        let op = parse_op(f[2]).ok_or_else(|| self.bad("op is none of read, write, trim, flush"))?;
        let len = u32::try_from(num(f[4], "bytes")?).map_err(|_| self.bad("bytes is over 4 GiB"))?;
        Ok(Some(TraceIo {
            at_ns: issue,
            op,
            offset: num(f[3], "offset")?,
            len: if op == Op::Flush { 0 } else { len },
            fua: f[5].split('|').any(|x| x == "fua"),
            latency_ns: complete.and_then(|c| c.checked_sub(issue)),
        }))
    }

    /// v2: `file action [offset length]`; v3: `µs file action [offset length]`. File actions
    /// (add, open, close) carry no I/O; a v2 `wait`'s offset is a pause in µs.
    fn fio_line(&mut self) -> Result<Option<TraceIo>> {
        if self.lines.line.starts_with("fio version ") {
            return Err(self.bad(
                "a second header: fio appends to an existing write_iolog file, so this one holds several runs; \
                 remove the file before fio writes it",
            ));
        }
        let mut f = self.lines.line.split_whitespace();
        let at_ns = match self.format {
            Format::FioV3 => {
                let us = f.next().and_then(|t| t.parse::<u64>().ok()).ok_or_else(|| self.bad("no time in µs"))?;
                us.checked_mul(1000).ok_or_else(|| self.bad(TOO_LATE))?
            }
            _ => self.waited_ns,
        };
        let (_file, action) = (f.next(), f.next().ok_or_else(|| self.bad("no action"))?);
        let mut num = |what: &str| {
            f.next().map(|t| t.parse::<u64>().map_err(|_| self.bad(&format!("{what} is not a number")))).transpose()
        };
        let (offset, len) = (num("the offset")?, num("the length")?);
        let op = match action {
            "add" | "open" | "close" => return Ok(None),
            "wait" if self.format == Format::FioV2 => {
                let wait = offset.unwrap_or(0).checked_mul(1000);
                self.waited_ns = wait.and_then(|w| self.waited_ns.checked_add(w)).ok_or_else(|| self.bad(TOO_LATE))?;
                return Ok(None);
            }
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Trim,
            "sync" | "datasync" => Op::Flush,
            _ => {
                return Err(
                    self.bad("unknown action (fio's are read, write, trim, sync, datasync, wait, add, open, close)")
                );
            }
        };
        let len = if op == Op::Flush { 0 } else { len.ok_or_else(|| self.bad("no length"))? };
        let len = u32::try_from(len).map_err(|_| self.bad("the length is over 4 GiB"))?;
        Ok(Some(TraceIo { at_ns, op, offset: offset.unwrap_or(0), len, fua: false, latency_ns: None }))
    }
}

/// A time a trace cannot mean (fio's times are µs, iogauge's ns from the trace's start).
const TOO_LATE: &str = "the time is beyond 2^64 ns (584 years) from the trace's start";

/// A trace's name for what is made of it: its file's name without extension, a blktrace's
/// device (`sda` for `sda.blktrace.0`).
pub(crate) fn stem(path: &Path) -> String {
    let name = path.file_name().map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
    match name.rsplit_once(".blktrace.") {
        Some((device, _)) => device.to_string(),
        None => path.file_stem().map_or(name.clone(), |s| s.to_string_lossy().into_owned()),
    }
}

/// `read`, `write`, `trim`, `flush`.
pub(crate) fn parse_op(s: &str) -> Option<Op> {
    Op::ALL.into_iter().find(|o| o.name() == s)
}

/// What one pass over a trace learns: enough to plan its replay (buffers, safety, where it
/// reaches) without holding it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The trace's format (None only for a summary made by hand).
    pub format: Option<Format>,
    /// I/Os per operation (`Op as usize`).
    pub ios: [u64; 4],
    /// Bytes per operation.
    pub bytes: [u64; 4],
    /// The largest read or write.
    pub max_len: u32,
    /// The largest trim (no buffer holds it: it may be of GiB).
    pub max_trim: u32,
    /// The furthest byte reached.
    pub end: u64,
    /// The time of the first I/O (ns).
    pub first_ns: u64,
    /// The time of the last I/O (ns).
    pub last_ns: u64,
    /// The largest power of two every offset and length is a multiple of (at most 1 MiB).
    pub align: u64,
    /// Writes with force unit access.
    pub fua: u64,
    /// Times went backwards this many times (the trace is replayed in file order).
    pub unordered: u64,
    /// A capture's latencies summed (ns): over its length, the I/Os it kept in flight on
    /// average (Little's law). 0 for a trace without completion times.
    pub busy_ns: u64,
    /// The most I/Os a capture had in flight at once (0 without completion times).
    pub max_in_flight: u64,
    /// A capture's I/Os issued with `k` others in flight, by `k`.
    pub depth: Vec<u64>,
}

impl Summary {
    /// Reads the whole trace once.
    pub(crate) fn of(path: &Path) -> Result<Summary> {
        let mut r = Reader::open(path)?;
        let mut s = Summary { format: Some(r.format()), ..Summary::default() };
        let mut bits = 1u64 << 20;
        let mut in_flight = InFlight::default();
        while let Some(io) = r.next_io()? {
            if let Some(l) = io.latency_ns {
                let before = in_flight.issue(io.at_ns, l);
                s.max_in_flight = s.max_in_flight.max(before as u64 + 1);
                count_depth(&mut s.depth, before);
                s.busy_ns += l;
            }
            s.ios[io.op as usize] += 1;
            s.bytes[io.op as usize] += io.len as u64;
            match io.op {
                Op::Trim => s.max_trim = s.max_trim.max(io.len),
                Op::Read | Op::Write => s.max_len = s.max_len.max(io.len),
                Op::Flush => {}
            }
            if io.op != Op::Flush {
                s.end = s.end.max(io.offset + io.len as u64);
                bits |= io.offset | io.len as u64;
            }
            s.fua += io.fua as u64;
            if s.total() == 1 {
                s.first_ns = io.at_ns;
            }
            if io.at_ns < s.last_ns {
                s.unordered += 1;
            }
            s.last_ns = s.last_ns.max(io.at_ns);
        }
        s.align = 1 << bits.trailing_zeros();
        Ok(s)
    }

    /// Every I/O.
    pub(crate) fn total(&self) -> u64 {
        self.ios.iter().sum()
    }

    /// The I/Os a capture kept in flight on average, rounded up (None without completion
    /// times).
    pub(crate) fn mean_in_flight(&self) -> Option<u64> {
        (self.busy_ns > 0 && self.span_ns() > 0).then(|| self.busy_ns.div_ceil(self.span_ns()))
    }

    /// From the first I/O to the last (ns).
    pub(crate) fn span_ns(&self) -> u64 {
        self.last_ns.saturating_sub(self.first_ns)
    }

    /// Whether a capture's I/Os were issued in a closed loop, one that refills its slots as
    /// completions free them, up to its most in flight Q ([`most_in_flight`]). Such a loop
    /// issues each I/O with on average at least (Q - 1) / 2 others in flight (a refill of k
    /// I/Os finds Q - k to Q - 1, however the host batches or delays it): a closed loop here is
    /// one that found at least a third of Q - 1; or, on average over its time (Little's law),
    /// kept at least Q / 2 in flight (several issuers of one I/O each, which refill apart). An
    /// open loop's I/Os find as many in flight as it keeps on average, and reach Q only in its
    /// peaks; one that could not keep its rate, its slots always full, is the closed loop it
    /// behaved as. One in flight at most, a closed loop is one that kept the device busy 90 %
    /// of the time. None without completion times. (Measured on captures of fio and iogauge on
    /// a loop device, most beside two CPU burners: closed loops of 2 to 32 in flight, io_uring
    /// and libaio, found 1.50 to 2.18 times a third of Q - 1; four psync jobs 0.69 times, and
    /// kept 0.64 of Q; open loops 0.68 times at most, and kept 0.13 of Q; fio's Poisson
    /// arrivals held at their cap of 16 by a device too slow for their rate, 1.90 times: a
    /// closed loop.)
    pub(crate) fn closed_loop(&self) -> Option<bool> {
        let (span, most) = (self.span_ns(), most_in_flight(&self.depth)? as f64);
        if self.busy_ns == 0 || span == 0 {
            return None;
        }
        let ios: u64 = self.depth.iter().sum();
        let others = self.depth.iter().enumerate().map(|(k, &n)| k as u64 * n).sum::<u64>() as f64 / ios as f64;
        let kept = self.busy_ns as f64 / span as f64;
        Some(match most >= 2.0 {
            true => others >= (most - 1.0) / 3.0 || kept >= most / 2.0,
            false => kept >= 0.9,
        })
    }
}

/// An I/O issued with `k` others in flight, counted in `depth` (by `k`).
pub(crate) fn count_depth(depth: &mut Vec<u64>, k: usize) {
    if depth.len() <= k {
        depth.resize(k + 1, 0);
    }
    depth[k] += 1;
}

/// The most I/Os a loop kept in flight, from `depth` (the I/Os issued with `k` others in
/// flight, by `k`): the most that at least 1 % of its I/Os were issued into, so that an I/O of
/// another process issued beside a full loop (a probe of the device's signatures) does not
/// count. None without any.
pub(crate) fn most_in_flight(depth: &[u64]) -> Option<u64> {
    let total: u64 = depth.iter().sum();
    depth.iter().rposition(|&n| n * 100 >= total && n > 0).map(|k| k as u64 + 1)
}

/// The I/Os of a trace in flight as it is read in issue order (a capture's, with completion
/// times): the completion times of those issued and not yet completed, soonest first.
#[derive(Debug, Default)]
pub(crate) struct InFlight(std::collections::BinaryHeap<std::cmp::Reverse<u64>>);

impl InFlight {
    /// An I/O issued at `at_ns` that took `latency_ns`: how many were in flight as it was
    /// issued.
    pub(crate) fn issue(&mut self, at_ns: u64, latency_ns: u64) -> usize {
        while self.0.peek().is_some_and(|&std::cmp::Reverse(t)| t <= at_ns) {
            self.0.pop();
        }
        let before = self.0.len();
        self.0.push(std::cmp::Reverse(at_ns + latency_ns));
        before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace file with `text`, removed when dropped.
    struct TempTrace(std::path::PathBuf);

    impl Drop for TempTrace {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn trace(text: &str) -> TempTrace {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("iogauge-trace-{}-{n}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TempTrace(path)
    }

    fn all(text: &str) -> Result<Vec<TraceIo>> {
        let t = trace(text);
        let mut r = Reader::open(&t.0)?;
        let mut v = Vec::new();
        while let Some(io) = r.next_io()? {
            v.push(io);
        }
        Ok(v)
    }

    #[test]
    fn fio_v2_waits_add_up_and_file_actions_are_skipped() {
        let v = all("fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 4096 512\n/dev/x wait 1500 0\n\
                     /dev/x write 0 8192\n/dev/x sync 0 0\n/dev/x close\n")
        .unwrap();
        let ops: Vec<(u64, Op, u64, u32)> = v.iter().map(|i| (i.at_ns, i.op, i.offset, i.len)).collect();
        assert_eq!(ops, [(0, Op::Read, 4096, 512), (1_500_000, Op::Write, 0, 8192), (1_500_000, Op::Flush, 0, 0)]);
    }

    #[test]
    fn fio_v3_times_are_us() {
        let v = all("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n7 /dev/x trim 1048576 65536\n").unwrap();
        assert_eq!((v[0].at_ns, v[0].op, v[0].offset, v[0].len), (7_000, Op::Trim, 1 << 20, 65536));
    }

    #[test]
    fn captures_keep_latency_and_fua() {
        let v =
            all(&format!("{CAPTURE_MAGIC} device=7:0\n{CAPTURE_COLUMNS}\n100,350,write,4096,4096,fua|sync,0,fio\n"))
                .unwrap();
        assert_eq!(
            v[0],
            TraceIo { at_ns: 100, op: Op::Write, offset: 4096, len: 4096, fua: true, latency_ns: Some(250) }
        );
    }

    #[test]
    fn a_bad_line_is_named_with_its_number() {
        let e = all("fio version 3 iolog\n0 /dev/x add\nsoon /dev/x read 0 4096\n").unwrap_err().to_string();
        assert!(e.contains(":3: no time in µs"), "{e}");
        let e = all("hello\n").unwrap_err().to_string();
        assert!(e.contains("not a trace iogauge reads"), "{e}");
    }

    /// An I/O iogauge could not issue, or a time it could not wait for, is refused as the
    /// trace is read (issue 46: each used to pass the plan and fail, or run at once, later).
    #[test]
    fn ios_that_cannot_be_issued_are_refused_with_their_line() {
        let v3 = "fio version 3 iolog\n0 f add\n";
        for (row, says) in [
            ("0 f read 0 0", "a transfer of 0 bytes"),
            ("0 f trim 4096 0", "a transfer of 0 bytes"),
            ("0 f read 18446744073709551104 4096", "beyond 2^64 bytes"),
            ("0 f write 1 4096", "multiples of 512 bytes"),
            ("0 f write 4096 1000", "multiples of 512 bytes"),
            ("18446744073709552 f read 0 4096", "beyond 2^64 ns"),
        ] {
            let e = all(&format!("{v3}{row}\n")).unwrap_err().to_string();
            assert!(e.contains(":3: ") && e.contains(says), "{row}: {e}");
        }
        let e = all("fio version 2 iolog\nf wait 18446744073709552 0\nf read 0 512\n").unwrap_err().to_string();
        assert!(e.contains(":2: ") && e.contains("beyond 2^64 ns"), "{e}");
        let e = all(&format!("{CAPTURE_MAGIC}\n{CAPTURE_COLUMNS}\n0,,read,0,0,,0,x\n")).unwrap_err().to_string();
        assert!(e.contains(":3: ") && e.contains("0 bytes"), "{e}");
        // A flush moves nothing, and the largest time in ns that µs can say is still read.
        let v = all(&format!("{v3}18446744073709550 f sync 0 0\n")).unwrap();
        assert_eq!((v[0].op, v[0].at_ns), (Op::Flush, 18_446_744_073_709_550_000));
    }

    #[test]
    fn a_summary_learns_sizes_reach_and_alignment() {
        let t = trace("fio version 3 iolog\n0 f read 4096 4096\n1 f write 12288 512\n2 f read 0 65536\n");
        let s = Summary::of(&t.0).unwrap();
        assert_eq!(s.format, Some(Format::FioV3));
        assert_eq!((s.ios, s.max_len, s.end, s.align, s.span_ns()), ([2, 1, 0, 0], 65536, 65536, 512, 2_000));
    }
}
