//! Capture: every request the block layer issues to a device and completes, from the kernel's
//! block tracepoints read through tracefs: `block_rq_issue`, `block_rq_complete` and
//! `block_rq_requeue` for a device that queues requests (blk-mq: disks, NVMe, loop, NBD), and
//! `block_bio_queue` and `block_bio_complete` for one that takes I/Os as they come (zram,
//! device mapper and md: LVM volumes, RAID), which has no requests. A partition's requests are
//! its disk's, filtered to its sectors and told from its start.
//!
//! Why tracefs and not blktrace: the tracepoints are in every kernel iogauge runs on, need no
//! package (blktrace is rarely installed) and no debugfs, and a private tracefs instance
//! (`instances/iogauge-PID`) filters by device in the kernel and leaves any other tracing on
//! the machine alone. The price is the text format's resolution: the kernel prints times in
//! µs, so a capture's times and latencies are whole µs.
//!
//! Requests are matched issue to completion by (sector, sectors) ([`Pairing`]); rows are
//! written in issue order as soon as every earlier request has completed, so memory holds
//! only what is in flight, however long the capture.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::pairing::{Completion, Pairing};
use super::{CAPTURE_COLUMNS, CAPTURE_MAGIC};
use crate::error::{Error, Result};
use crate::host::sysblock;
use crate::stats::Op;

/// Each CPU's ring buffer in the instance (KiB): 16 MiB holds about 100,000 events, a second
/// of a fast device's requests should the reader fall behind.
const BUFFER_KIB: u32 = 16384;

/// What a capture counted.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Captured {
    /// Requests written.
    pub requests: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Requests per operation (`Op as usize`).
    pub per_op: [u64; 4],
    /// Requests still in flight when the capture ended (written without a completion).
    pub unfinished: u64,
    /// Completions of requests issued before the capture began (not written).
    pub orphans: u64,
    /// Events the kernel dropped because its buffer was full (the capture is incomplete).
    pub lost_events: u64,
}

/// What a capture watches, as the tracepoints see it.
#[derive(Debug, Clone, PartialEq)]
struct Watched {
    /// The device's own number, `major:minor`.
    number: String,
    /// The device number events carry (`major << 20 | minor`): a partition's disk's.
    dev: u32,
    /// A partition's first sector and its length in sectors on that disk (0 and all else).
    start: u64,
    sectors: Option<u64>,
    /// Its events: requests (blk-mq) or bios (a device without requests).
    events: [&'static str; 3],
}

const REQUEST_EVENTS: [&str; 3] = ["block_rq_issue", "block_rq_complete", "block_rq_requeue"];
const BIO_EVENTS: [&str; 2] = ["block_bio_queue", "block_bio_complete"];

/// The device `device` names, from its number and sysfs (identity, not the name).
fn watched(device: &Path) -> Result<Watched> {
    let meta = fs::metadata(device).map_err(|e| Error::Input(format!("{}: {e}", device.display())))?;
    if !meta.file_type().is_block_device() {
        return Err(Error::Input(format!(
            "{}: not a block device: capture watches a device's requests (for a file, capture the device it is on)",
            device.display()
        )));
    }
    let rdev = meta.rdev();
    let number = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let sys = sysblock::dir(rdev);
    let count = |f: &str| sysblock::read(rdev, f).and_then(|s| s.parse::<u64>().ok());
    let (disk, start, sectors) = match sysblock::read(rdev, "partition") {
        Some(_) => {
            let disk = sysblock::read(rdev, "../dev")
                .ok_or_else(|| Error::Runtime(format!("{}: no disk above", sys.display())))?;
            (disk, count("start").unwrap_or(0), count("size"))
        }
        None => (number.clone(), 0, None),
    };
    let (major, minor) = disk
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| Error::Runtime(format!("{}: device number {disk:?}", sys.display())))?;
    let requests = sysblock::dir(libc::makedev(major, minor)).join("mq").exists();
    let events = if requests { REQUEST_EVENTS } else { [BIO_EVENTS[0], BIO_EVENTS[1], BIO_EVENTS[1]] };
    Ok(Watched { number, dev: major << 20 | minor, start, sectors, events })
}

/// Where tracefs is mounted, mounting it if it is not.
fn tracefs() -> Result<PathBuf> {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(dir).join("instances").is_dir() {
            return Ok(dir.into());
        }
    }
    let (dir, kind) = (c"/sys/kernel/tracing", c"tracefs");
    // SAFETY: the strings are NUL-terminated and live through the call; no data argument.
    let r = unsafe { libc::mount(kind.as_ptr(), dir.as_ptr(), kind.as_ptr(), 0, std::ptr::null()) };
    if r == 0 && Path::new("/sys/kernel/tracing/instances").is_dir() {
        return Ok("/sys/kernel/tracing".into());
    }
    Err(Error::Input(format!(
        "capture reads the kernel's block tracepoints through tracefs, which is not mounted and could not be ({}): \
         mount -t tracefs nodev /sys/kernel/tracing",
        std::io::Error::last_os_error()
    )))
}

/// A private tracefs instance: removed, its events off, when dropped.
struct Instance {
    dir: PathBuf,
    events: [&'static str; 3],
}

impl Instance {
    fn new(tracefs: &Path, w: &Watched) -> Result<Instance> {
        let dir = tracefs.join("instances").join(format!("iogauge-{}", std::process::id()));
        fs::create_dir(&dir)
            .map_err(|e| Error::Runtime(format!("{}: cannot make a tracing instance: {e}", dir.display())))?;
        let i = Instance { dir, events: w.events };
        // A new instance takes the top level's options as they are, and whoever set them there
        // (ftrace's blk tracer writes binary) would leave this one unreadable: it is set to the
        // text parsed here. `fields` is an option since 5.19: turned off where there is one.
        for option in ["nobin", "noraw", "nohex", "nolatency-format", "context-info"] {
            i.set("trace_options", option)?;
        }
        let _ = i.set("trace_options", "nofields");
        i.set("trace_clock", "mono")?;
        i.set("buffer_size_kb", &BUFFER_KIB.to_string())?;
        let mut filter = format!("dev == {}", w.dev);
        if let Some(n) = w.sectors {
            filter += &format!(" && sector >= {} && sector < {}", w.start, w.start + n);
        }
        for event in w.events {
            i.set(&format!("events/block/{event}/filter"), &filter)?;
            i.set(&format!("events/block/{event}/enable"), "1")?;
        }
        Ok(i)
    }

    fn set(&self, file: &str, value: &str) -> Result<()> {
        let path = self.dir.join(file);
        fs::write(&path, value).map_err(|e| Error::Runtime(format!("{}: cannot write {value:?}: {e}", path.display())))
    }

    /// Events the kernel dropped, summed over the CPUs' buffers.
    fn lost(&self) -> u64 {
        let Ok(cpus) = fs::read_dir(self.dir.join("per_cpu")) else { return 0 };
        let mut lost = 0;
        for cpu in cpus.flatten() {
            let stats = fs::read_to_string(cpu.path().join("stats")).unwrap_or_default();
            for line in stats.lines() {
                if let Some(n) = line.strip_prefix("overrun: ").or_else(|| line.strip_prefix("dropped events: ")) {
                    lost += n.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        lost
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        for event in self.events {
            let _ = fs::write(self.dir.join(format!("events/block/{event}/enable")), "0");
        }
        let _ = fs::remove_dir(&self.dir);
    }
}

/// One request, from its issue until it is written.
struct Request {
    issue_ns: u64,
    op: Op,
    offset: u64,
    bytes: u64,
    flags: String,
    process: String,
}

/// Requests waiting for their completions, and what has been written.
#[derive(Default)]
struct Matcher {
    pairing: Pairing<Request>,
    counted: Captured,
}

impl Matcher {
    /// Writes the requests at the front that have completed (all of them at the end).
    fn write(&mut self, out: &mut dyn Write, all: bool) -> std::io::Result<()> {
        while let Some((r, done)) = self.pairing.pop(all) {
            let c = &mut self.counted;
            c.requests += 1;
            c.bytes += r.bytes;
            c.per_op[r.op as usize] += 1;
            c.unfinished += done.is_none() as u64;
            let (complete, error) = done.map_or((String::new(), 0), |d| (d.at_ns.to_string(), d.error));
            writeln!(
                out,
                "{},{complete},{},{},{},{},{error},{}",
                r.issue_ns,
                r.op.name(),
                r.offset,
                r.bytes,
                r.flags,
                r.process
            )?;
        }
        self.counted.orphans = self.pairing.orphans;
        Ok(())
    }
}

/// The operation and flags of a request's `rwbs` (`WS`, `FWFS`, `R`, `D`, `FN`): a leading F
/// is a flush before the request, a later one force unit access. None for what is neither a
/// read, a write, a trim nor a flush (zone management, driver commands).
fn rwbs(s: &str) -> Option<(Op, String)> {
    let (preflush, rest) = match s.strip_prefix('F') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let mut chars = rest.chars();
    let op = match chars.next()? {
        'R' => Op::Read,
        'W' => Op::Write,
        'D' | 'E' => Op::Trim,
        'N' if preflush => Op::Flush,
        _ => return None,
    };
    let mut flags: Vec<&str> = Vec::new();
    if preflush && op != Op::Flush {
        flags.push("preflush");
    }
    for c in chars {
        flags.push(match c {
            'F' => "fua",
            'S' => "sync",
            'M' => "meta",
            'A' => "ahead",
            _ => continue,
        });
    }
    Some((op, flags.join("|")))
}

/// One line of trace_pipe: `comm-pid [cpu] flags secs.usecs: block_X: maj,min rwbs ...`
/// (`rq_issue`, `rq_complete`, `rq_requeue`, `bio_queue`, `bio_complete`).
enum Event<'a> {
    Issue { at_ns: u64, rwbs: &'a str, sector: u64, sectors: u32, process: &'a str },
    Complete { at_ns: u64, sector: u64, sectors: u32, error: i32 },
    Requeue { sector: u64, sectors: u32 },
}

fn parse(line: &str) -> Option<Event<'_>> {
    let at = line.find(": block_")?;
    let ts = line[..at].rsplit(' ').next()?;
    let (secs, usecs) = ts.split_once('.')?;
    let at_ns = secs.parse::<u64>().ok()? * 1_000_000_000 + usecs.parse::<u64>().ok()? * 1000;
    let rest = &line[at + 8..];
    let (event, fields) = rest.split_once(": ")?;
    let t: Vec<&str> = fields.split_whitespace().collect();
    let plus = t.iter().position(|&x| x == "+")?;
    let sector = t.get(plus.checked_sub(1)?)?.parse().ok()?;
    let sectors = t.get(plus + 1)?.parse().ok()?;
    let last = t.last()?.trim_start_matches('[').trim_end_matches(']');
    Some(match event {
        "rq_issue" | "bio_queue" => Event::Issue { at_ns, rwbs: t.get(1)?, sector, sectors, process: last },
        "rq_complete" | "bio_complete" => Event::Complete { at_ns, sector, sectors, error: last.parse().unwrap_or(0) },
        "rq_requeue" => Event::Requeue { sector, sectors },
        _ => return None,
    })
}

/// A capture whose tracepoints are on: from here every request of the device is recorded.
pub(crate) struct Capture {
    device: PathBuf,
    watched: Watched,
    instance: Instance,
    /// Whole µs, as the events' times are.
    start_ns: u64,
}

impl Capture {
    /// Turns `device`'s tracepoints on (root only).
    pub(crate) fn start(device: &Path) -> Result<Capture> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(Error::Input(
                "capture reads the kernel's block tracepoints, which only root may: run it as root (sudo)".into(),
            ));
        }
        let watched = watched(device)?;
        let instance = Instance::new(&tracefs()?, &watched)?;
        Ok(Capture { device: device.to_owned(), watched, instance, start_ns: monotonic_ns() / 1000 * 1000 })
    }

    /// What it records: requests, or bios on a device without requests.
    pub(crate) fn what(&self) -> &'static str {
        if self.watched.events == REQUEST_EVENTS { "requests" } else { "bios" }
    }

    /// Records the device's requests for `time` (or until `stop` says so) into `out`, in
    /// iogauge's capture format.
    pub(crate) fn record(self, time: Duration, stop: &dyn Fn() -> bool, out: &mut dyn Write) -> Result<Captured> {
        let Capture { device, watched: w, instance, start_ns } = self;
        let failed = |e: std::io::Error| Error::Runtime(format!("writing the capture: {e}"));
        let unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        writeln!(
            out,
            "{CAPTURE_MAGIC} device={} dev={} start_unix={unix} clock=mono resolution_ns=1000",
            device.display(),
            w.number
        )
        .and_then(|()| writeln!(out, "{CAPTURE_COLUMNS}"))
        .map_err(failed)?;
        let pipe_path = instance.dir.join("trace_pipe");
        let mut pipe = fs::File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&pipe_path)
            .map_err(|e| Error::Runtime(format!("{}: {e}", pipe_path.display())))?;
        let mut m = Matcher::default();
        let mut buf = vec![0u8; 1 << 20];
        let mut partial = String::new();
        let began = Instant::now();
        let mut ending = false;
        loop {
            if !ending && (began.elapsed() >= time || stop()) {
                // Nothing new is recorded; what the buffers hold is still read.
                instance.set("tracing_on", "0")?;
                ending = true;
            }
            let n = match pipe.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Runtime(format!("{}: {e}", pipe_path.display()))),
            };
            if n == 0 {
                if ending {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            partial.push_str(&String::from_utf8_lossy(&buf[..n]));
            let whole = partial.rfind('\n').map_or(0, |i| i + 1);
            for line in partial[..whole].lines() {
                match parse(line) {
                    Some(Event::Issue { at_ns, rwbs: flags, sector, sectors, process }) => {
                        let Some((op, flags)) = rwbs(flags) else { continue };
                        let bytes = if op == Op::Flush { 0 } else { sectors as u64 * 512 };
                        let issue_ns = at_ns.saturating_sub(start_ns);
                        let process = process.replace(',', " ");
                        // A partition's offsets are its own.
                        let r = Request { issue_ns, op, offset: (sector - w.start) * 512, bytes, flags, process };
                        m.pairing.issue((sector, sectors), r);
                    }
                    Some(Event::Complete { at_ns, sector, sectors, error }) => m
                        .pairing
                        .complete((sector, sectors), Completion { at_ns: at_ns.saturating_sub(start_ns), error }),
                    Some(Event::Requeue { sector, sectors }) => m.pairing.requeue((sector, sectors)),
                    None => {}
                }
            }
            partial.drain(..whole);
            m.write(out, false).map_err(failed)?;
        }
        m.write(out, true).map_err(failed)?;
        m.counted.lost_events = instance.lost();
        Ok(m.counted)
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_says_op_and_flags() {
        assert_eq!(rwbs("WS"), Some((Op::Write, "sync".into())));
        assert_eq!(rwbs("FWFS"), Some((Op::Write, "preflush|fua|sync".into())));
        assert_eq!(rwbs("RA"), Some((Op::Read, "ahead".into())));
        assert_eq!(rwbs("D"), Some((Op::Trim, String::new())));
        assert_eq!(rwbs("FN"), Some((Op::Flush, String::new())));
        assert_eq!(rwbs("N"), None);
    }

    #[test]
    fn trace_pipe_lines_parse() {
        let issue =
            "   kworker/u8:1-42 [001] d..1.  1234.000501: block_rq_issue: 7,0 WS 4096 () 2048 + 8 none,0,0 [fio]";
        match parse(issue) {
            Some(Event::Issue { at_ns, rwbs, sector, sectors, process }) => {
                assert_eq!((at_ns, rwbs, sector, sectors, process), (1_234_000_501_000, "WS", 2048, 8, "fio"))
            }
            _ => panic!("not an issue"),
        }
        let done = "  <idle>-0 [000] ..s1. 1234.000900: block_rq_complete: 7,0 WS () 2048 + 8 none,0,0 [-5]";
        match parse(done) {
            Some(Event::Complete { at_ns, sector, sectors, error }) => {
                assert_eq!((at_ns, sector, sectors, error), (1_234_000_900_000, 2048, 8, -5))
            }
            _ => panic!("not a completion"),
        }
    }

    #[test]
    fn rows_are_written_in_issue_order_with_their_completions() {
        let mut m = Matcher::default();
        let req = |t: u64| Request {
            issue_ns: t,
            op: Op::Read,
            offset: t,
            bytes: 512,
            flags: String::new(),
            process: "p".into(),
        };
        m.pairing.issue((1, 1), req(10));
        m.pairing.issue((2, 1), req(20));
        m.pairing.complete((2, 1), Completion { at_ns: 25, error: 0 });
        m.pairing.complete((1, 1), Completion { at_ns: 40, error: -5 });
        m.pairing.issue((3, 1), req(30));
        m.pairing.complete((9, 9), Completion { at_ns: 50, error: 0 });
        let mut out = Vec::new();
        m.write(&mut out, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "10,40,read,10,512,,-5,p\n20,25,read,20,512,,0,p\n30,,read,30,512,,0,p\n"
        );
        assert_eq!((m.counted.requests, m.counted.unfinished, m.counted.orphans), (3, 1, 1));
    }
}
