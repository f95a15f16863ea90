//! blktrace's binary traces: what `blktrace -d DEV` writes, one file per CPU
//! (`DEV.blktrace.0`, `DEV.blktrace.1`, ...), or one file of them merged (`blkparse -d`, fio's
//! `merge_blktrace_file`). The files of one trace are read together, their events merged by
//! time, so a trace is whole whichever CPU saw each event (fio replays one file at a time).
//!
//! Each event is a 48-byte `struct blk_io_trace` (include/uapi/linux/blktrace_api.h, version
//! 7) in the byte order of the machine that traced, then `pdu_len` bytes of payload (read here
//! only for a remap's origin). An I/O is a request as the device was sent it (`D`, issue) matched to its completion
//! (`C`) by sector and size, as iogauge's capture records them; a device without requests
//! (zram, device mapper, md) has no `D` events, and its I/Os are its bios as queued (`Q`).
//! A partition's trace gives its disk's sectors; its first remap (`A`) says where the
//! partition starts, and offsets are told from there, as a capture of the partition has them.
//! Passthrough commands and notes (process names, messages) carry no I/O of a workload.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use super::TraceIo;
use super::pairing::{Completion, Pairing};
use crate::error::{Error, Result};
use crate::stats::Op;

/// The magic of every event, its low byte the version.
const MAGIC: u32 = 0x6561_7400;
/// The version of `struct blk_io_trace` read.
const VERSION: u32 = 7;
/// One event without its payload.
const RECORD: usize = 48;

/// The categories (the action's upper 16 bits).
pub(super) const TC_WRITE: u32 = 1 << 1;
pub(super) const TC_FLUSH: u32 = 1 << 2;
pub(super) const TC_PC: u32 = 1 << 9;
pub(super) const TC_NOTIFY: u32 = 1 << 10;
pub(super) const TC_DISCARD: u32 = 1 << 13;
pub(super) const TC_FUA: u32 = 1 << 15;

/// The actions (the lower bits; bit 8 says a cgroup id leads the payload).
pub(super) const TA_QUEUE: u32 = 1;
pub(super) const TA_REQUEUE: u32 = 6;
pub(super) const TA_ISSUE: u32 = 7;
pub(super) const TA_COMPLETE: u32 = 8;
pub(super) const TA_REMAP: u32 = 15;
/// The action's flag for a payload that starts with a cgroup id (8 bytes).
const TA_CGROUP: u32 = 1 << 8;

/// One event.
#[derive(Debug, Clone, Copy)]
pub(super) struct Event {
    /// ns, from the start of tracing.
    pub(super) time: u64,
    pub(super) sector: u64,
    pub(super) bytes: u32,
    /// The category (upper 16 bits, `TC_*`) and the action (`TA_*`).
    pub(super) action: u32,
    /// The kernel's `major << 20 | minor`.
    pub(super) device: u32,
    pub(super) error: u16,
    /// A remap's origin (`A`): the device and sector the I/O was sent to before it.
    pub(super) remap: Option<(u32, u64)>,
}

/// Where a trace's events come from, one at a time in each source's order: blktrace's binary
/// files ([`CpuFile`]) or blkparse's text (`super::blkparse`).
pub(super) trait Events {
    /// The next event, None at the end.
    fn next_event(&mut self) -> Result<Option<Event>>;
}

impl Events for CpuFile {
    fn next_event(&mut self) -> Result<Option<Event>> {
        self.next()
    }
}

impl Event {
    fn category(&self) -> u32 {
        self.action >> 16
    }

    fn act(&self) -> u32 {
        self.action & 0xff
    }

    fn key(&self) -> (u64, u32) {
        (self.sector, self.bytes)
    }

    /// The I/O it issues, its offset told from sector `start`; None for what is neither a
    /// read, a write, a trim nor a flush.
    fn io(&self, start: u64) -> Option<TraceIo> {
        let c = self.category();
        let op = if c & TC_DISCARD != 0 {
            Op::Trim
        } else if self.bytes == 0 {
            // An empty request with a preflush, or the flush itself.
            if c & TC_FLUSH == 0 {
                return None;
            }
            Op::Flush
        } else if c & TC_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        Some(TraceIo {
            at_ns: self.time,
            op,
            offset: self.sector.saturating_sub(start).saturating_mul(512),
            len: self.bytes,
            fua: op == Op::Write && c & TC_FUA != 0,
            latency_ns: None,
        })
    }
}

/// One CPU's file, read one event ahead.
struct CpuFile {
    path: PathBuf,
    file: BufReader<File>,
    big_endian: bool,
    /// Where the next event starts.
    at: u64,
    /// The last event's payload.
    pdu: Vec<u8>,
}

impl CpuFile {
    fn open(path: &Path) -> Result<CpuFile> {
        crate::host::inputs::reading(path);
        let file =
            File::open(path).map_err(|e| Error::Input(format!("{}: cannot open the trace: {e}", path.display())))?;
        let mut f = CpuFile {
            path: path.to_owned(),
            file: BufReader::with_capacity(1 << 16, file),
            big_endian: false,
            at: 0,
            pdu: Vec::new(),
        };
        let head = match f.file.fill_buf() {
            Ok(head) => head,
            Err(e) => return Err(Error::Runtime(format!("{}: reading the trace: {e}", path.display()))),
        };
        // A CPU that saw no event leaves an empty file.
        if head.is_empty() {
            return Ok(f);
        }
        let Some(magic) = head.get(..4).map(|b| <[u8; 4]>::try_from(b).expect("4 bytes")) else {
            return Err(not_blktrace(path));
        };
        f.big_endian = u32::from_be_bytes(magic) & !0xff == MAGIC;
        let magic = f.u32(magic);
        if magic & !0xff != MAGIC {
            return Err(not_blktrace(path));
        }
        if magic & 0xff != VERSION {
            return Err(Error::Input(format!(
                "{}: blktrace events of version {}; iogauge reads version {VERSION}, what blktrace and the kernel's \
                 relay files write",
                path.display(),
                magic & 0xff
            )));
        }
        Ok(f)
    }

    /// The file ends inside the event at `at`: a blktrace that was killed.
    fn cut_short(&self) -> Error {
        Error::Input(format!(
            "{}: ends inside an event at byte {} (blktrace stopped abruptly?): cut it there with `truncate -s {} {}`",
            self.path.display(),
            self.at,
            self.at,
            self.path.display()
        ))
    }

    fn failed(&self, e: std::io::Error) -> Error {
        Error::Runtime(format!("{}: reading the trace: {e}", self.path.display()))
    }

    fn u32(&self, b: [u8; 4]) -> u32 {
        if self.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
    }

    /// The next event, None at the end of the file.
    fn next(&mut self) -> Result<Option<Event>> {
        let mut r = [0u8; RECORD];
        let mut got = 0;
        while got < RECORD {
            match self.file.read(&mut r[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(self.cut_short()),
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(self.failed(e)),
            }
        }
        let u32_at = |i: usize| self.u32(r[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| {
            let b = r[i..i + 8].try_into().expect("8 bytes");
            if self.big_endian { u64::from_be_bytes(b) } else { u64::from_le_bytes(b) }
        };
        let u16_at = |i: usize| {
            let b = r[i..i + 2].try_into().expect("2 bytes");
            if self.big_endian { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) }
        };
        if u32_at(0) != MAGIC | VERSION {
            return Err(Error::Input(format!(
                "{}: no blktrace event at byte {}: the file is damaged",
                self.path.display(),
                self.at
            )));
        }
        let mut e = Event {
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            error: u16_at(44),
            remap: None,
        };
        let pdu_len = u16_at(46) as usize;
        self.pdu.resize(pdu_len, 0);
        self.file
            .read_exact(&mut self.pdu)
            .map_err(|e| if e.kind() == ErrorKind::UnexpectedEof { self.cut_short() } else { self.failed(e) })?;
        if e.act() == TA_REMAP && e.category() & TC_NOTIFY == 0 {
            // struct blk_io_trace_remap, big-endian whatever the machine: device_from,
            // device_to, sector_from; after the cgroup id if there is one.
            let at = if e.action & TA_CGROUP != 0 { 8 } else { 0 };
            if let Some(r) = self.pdu.get(at..at + 16) {
                let from = u32::from_be_bytes(r[0..4].try_into().expect("4 bytes"));
                e.remap = Some((from, u64::from_be_bytes(r[8..16].try_into().expect("8 bytes"))));
            }
        }
        self.at += (RECORD + pdu_len) as u64;
        Ok(Some(e))
    }
}

/// A blktrace's files read as one stream of I/Os in issue order.
pub(crate) struct Reader {
    /// The trace's (first) file, as messages name it.
    path: PathBuf,
    /// Binary files, or blkparse's text.
    format: super::Format,
    files: Vec<Box<dyn Events>>,
    /// Each file's next event, soonest first (ties: the lower file).
    next: BinaryHeap<Reverse<(u64, usize)>>,
    ahead: Vec<Option<Event>>,
    /// The event that issues an I/O: `D` where the device has requests, `Q` where it has not.
    issue: u32,
    /// The device of the first event (the kernel's `major << 20 | minor`).
    device: Option<u32>,
    /// The time of the first event: times are told from it, as blkparse tells them.
    genesis: Option<u64>,
    /// A partition's first sector on its disk, once a remap has said it.
    start: Option<u64>,
    pairing: Pairing<TraceIo>,
    ended: bool,
}

impl Reader {
    /// Reads `paths` (one trace's files) as one.
    pub(crate) fn open(paths: &[PathBuf]) -> Result<Reader> {
        let open = || paths.iter().map(|p| Ok(Box::new(CpuFile::open(p)?) as Box<dyn Events>)).collect();
        Reader::of(&paths[0], super::Format::Blktrace, open)
    }

    /// The reader of the sources `open` gives (called twice: a first pass learns whether the
    /// device has requests): blktrace's files, or blkparse's text (`super::blkparse`), of the
    /// trace at `path`.
    pub(super) fn of(
        path: &Path,
        format: super::Format,
        open: impl Fn() -> Result<Vec<Box<dyn Events>>>,
    ) -> Result<Reader> {
        let issue = if has_requests(open()?)? { TA_ISSUE } else { TA_QUEUE };
        let files = open()?;
        let n = files.len();
        let mut r = Reader {
            path: path.to_owned(),
            format,
            files,
            next: BinaryHeap::new(),
            ahead: vec![None; n],
            issue,
            device: None,
            genesis: None,
            start: None,
            pairing: Pairing::default(),
            ended: false,
        };
        for i in 0..r.files.len() {
            r.read_ahead(i)?;
        }
        Ok(r)
    }

    /// Binary files, or blkparse's text.
    pub(crate) fn format(&self) -> super::Format {
        self.format
    }

    fn read_ahead(&mut self, i: usize) -> Result<()> {
        self.ahead[i] = self.files[i].next_event()?;
        if let Some(e) = self.ahead[i] {
            self.next.push(Reverse((e.time, i)));
        }
        Ok(())
    }

    /// The next event of the trace in time order, its time told from the first event's.
    fn event(&mut self) -> Result<Option<Event>> {
        let Some(Reverse((_, i))) = self.next.pop() else { return Ok(None) };
        let e = self.ahead[i].take().expect("a file in the heap has an event ahead");
        self.read_ahead(i)?;
        let genesis = *self.genesis.get_or_insert(e.time);
        Ok(Some(Event { time: e.time.saturating_sub(genesis), ..e }))
    }

    /// The next I/O, None at the end.
    pub(crate) fn next_io(&mut self) -> Result<Option<TraceIo>> {
        loop {
            if let Some((io, done)) = self.pairing.pop(self.ended) {
                let latency_ns = done.and_then(|d| d.at_ns.checked_sub(io.at_ns));
                if let Some(why) = io.fault() {
                    return Err(Error::Input(format!(
                        "{}: the {} of {} bytes at byte {}: {why}",
                        self.path.display(),
                        io.op.name(),
                        io.len,
                        io.offset
                    )));
                }
                return Ok(Some(TraceIo { latency_ns, ..io }));
            }
            if self.ended {
                return Ok(None);
            }
            let Some(e) = self.event()? else {
                self.ended = true;
                continue;
            };
            if e.category() & (TC_NOTIFY | TC_PC) != 0 {
                continue;
            }
            if *self.device.get_or_insert(e.device) != e.device {
                let d = |n: u32| format!("{},{}", n >> 20, n & 0xf_ffff);
                return Err(Error::Input(format!(
                    "{}: holds the I/Os of two devices ({} and {}); replay one device's files (blktrace writes \
                     DEV.blktrace.CPU for each)",
                    self.path.display(),
                    d(self.device.unwrap_or(0)),
                    d(e.device)
                )));
            }
            match e.act() {
                a if a == self.issue => {
                    if let Some(io) = e.io(self.start.unwrap_or(0)) {
                        self.pairing.issue(e.key(), io);
                    }
                }
                // The trace of a partition: its bios are remapped from it (the trace's own
                // device) onto its disk, whose sectors every later event gives. Offsets are
                // the partition's, from its start (a disk's trace sees its partitions' remaps
                // too, from other devices, and keeps the disk's offsets).
                TA_REMAP => {
                    if let (None, Some((from, sector_from))) = (self.start, e.remap)
                        && from == e.device
                    {
                        self.start = Some(e.sector.saturating_sub(sector_from));
                    }
                }
                TA_COMPLETE => self.pairing.complete(e.key(), Completion { at_ns: e.time, error: -(e.error as i32) }),
                TA_REQUEUE => self.pairing.requeue(e.key()),
                _ => {}
            }
        }
    }
}

fn not_blktrace(path: &Path) -> Error {
    Error::Input(format!("{}: not a blktrace file (it does not start with a blktrace event)", path.display()))
}

/// Whether the trace's device was sent requests (`D` events), read up to the first one.
fn has_requests(sources: Vec<Box<dyn Events>>) -> Result<bool> {
    for mut f in sources {
        while let Some(e) = f.next_event()? {
            if e.act() == TA_ISSUE && e.category() & (TC_NOTIFY | TC_PC) == 0 {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Whether `path` starts with a blktrace event.
pub(super) fn starts_with_magic(path: &Path) -> bool {
    let mut b = [0u8; 4];
    File::open(path).and_then(|mut f| f.read_exact(&mut b)).is_ok()
        && (u32::from_le_bytes(b) & !0xff == MAGIC || u32::from_be_bytes(b) & !0xff == MAGIC)
}

/// The files of the blktrace `path` names, None when it names no blktrace: `DEV` or any one of
/// `DEV.blktrace.N` stands for all of `DEV.blktrace.*` (blkparse's `-i DEV`); any other file
/// that starts with a blktrace event is a trace of its own (merged by `blkparse -d`).
pub(crate) fn files(path: &Path) -> Result<Option<Vec<PathBuf>>> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let base = match name.rsplit_once(".blktrace.") {
        Some((base, cpu)) if !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()) => base,
        _ if path.exists() => return Ok(starts_with_magic(path).then(|| vec![path.to_owned()])),
        _ => name,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(None) };
    let prefix = format!("{base}.blktrace.");
    let mut cpus: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().into_string().ok()?;
            let cpu = n.strip_prefix(&prefix)?.parse().ok()?;
            Some((cpu, e.path()))
        })
        .collect();
    cpus.sort();
    Ok((!cpus.is_empty()).then(|| cpus.into_iter().map(|(_, p)| p).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TC_READ: u32 = 1 << 0;

    /// One event as the kernel lays it out, in little-endian order.
    fn event(time: u64, sector: u64, bytes: u32, act: u32, category: u32, pdu: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend((MAGIC | VERSION).to_le_bytes());
        v.extend(0u32.to_le_bytes());
        v.extend(time.to_le_bytes());
        v.extend(sector.to_le_bytes());
        v.extend(bytes.to_le_bytes());
        v.extend((act | category << 16).to_le_bytes());
        v.extend(42u32.to_le_bytes());
        v.extend((7u32 << 20).to_le_bytes());
        v.extend(0u32.to_le_bytes());
        v.extend(0u16.to_le_bytes());
        v.extend((pdu.len() as u16).to_le_bytes());
        v.extend(pdu);
        v
    }

    #[test]
    fn per_cpu_files_merge_by_time_and_pair_issues_with_completions() {
        let dir = std::env::temp_dir().join(format!("iogauge-blktrace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cpu0 = [
            event(100, 8, 4096, TA_QUEUE, TC_WRITE, &[]),
            event(110, 8, 4096, TA_ISSUE, TC_WRITE | TC_FUA, &[]),
            event(300, 0, 0, 0, TC_NOTIFY, b"fio\0"),
            event(400, 16, 512, TA_COMPLETE, TC_READ, &[]),
        ]
        .concat();
        let cpu1 =
            [event(200, 16, 512, TA_ISSUE, TC_READ, &[]), event(250, 8, 4096, TA_COMPLETE, TC_WRITE, &[])].concat();
        std::fs::write(dir.join("loop0.blktrace.0"), cpu0).unwrap();
        std::fs::write(dir.join("loop0.blktrace.1"), cpu1).unwrap();
        std::fs::write(dir.join("loop0.blktrace.2"), []).unwrap();
        let paths = files(&dir.join("loop0.blktrace.1")).unwrap().unwrap();
        assert_eq!(paths.len(), 3, "any one file stands for its siblings");
        assert_eq!(files(&dir.join("loop0")).unwrap().unwrap(), paths);
        let mut r = Reader::open(&paths).unwrap();
        let a = r.next_io().unwrap().unwrap();
        assert_eq!((a.at_ns, a.op, a.offset, a.len, a.fua, a.latency_ns), (10, Op::Write, 4096, 4096, true, Some(140)));
        let b = r.next_io().unwrap().unwrap();
        assert_eq!((b.at_ns, b.op, b.offset, b.len, b.latency_ns), (100, Op::Read, 8192, 512, Some(200)));
        assert_eq!(r.next_io().unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The trace of `events` in a fresh file, read whole (or the error that stopped it).
    fn read(name: &str, events: &[u8]) -> Result<Vec<TraceIo>> {
        let path = std::env::temp_dir().join(format!("iogauge-blktrace-{}-{name}", std::process::id()));
        std::fs::write(&path, events).unwrap();
        let got = files(&path).and_then(|f| {
            let mut r = Reader::open(&f.expect("a blktrace"))?;
            let mut v = Vec::new();
            while let Some(io) = r.next_io()? {
                v.push(io);
            }
            Ok(v)
        });
        std::fs::remove_file(&path).unwrap();
        got
    }

    #[test]
    fn a_partitions_trace_gives_the_partitions_offsets_a_disks_the_disks() {
        // A partition starting at sector 34816 on its disk; the I/O at its sector 80.
        let remap = |from: u32| {
            let mut pdu = from.to_be_bytes().to_vec();
            pdu.extend((8u32 << 20).to_be_bytes());
            pdu.extend(80u64.to_be_bytes());
            event(1, 34896, 4096, TA_REMAP, TC_READ, &pdu)
        };
        let rest = [event(2, 34896, 4096, TA_QUEUE, TC_READ, &[]), event(3, 34896, 4096, TA_ISSUE, TC_READ, &[])];
        // The trace's own device (7,0 in `event`) is the partition...
        let partition = [vec![remap(7 << 20)], rest.to_vec()].concat().concat();
        assert_eq!(read("part", &partition).unwrap()[0].offset, 80 * 512);
        // ...or the disk, whose partition 7,1 the I/O came through.
        let disk = [vec![remap(7 << 20 | 1)], rest.to_vec()].concat().concat();
        assert_eq!(read("disk", &disk).unwrap()[0].offset, 34896 * 512);
    }

    #[test]
    fn a_big_endian_machines_trace_reads_the_same() {
        let le = [event(5, 64, 8192, TA_ISSUE, TC_WRITE, b"pdu"), event(9, 64, 8192, TA_COMPLETE, TC_WRITE, &[])];
        // Each field's bytes reversed; the payload is bytes.
        let be: Vec<u8> = le
            .iter()
            .flat_map(|e| {
                let mut at = 0;
                let mut out = Vec::new();
                for width in [4, 4, 8, 8, 4, 4, 4, 4, 4, 2, 2] {
                    out.extend(e[at..at + width].iter().rev());
                    at += width;
                }
                out.extend(&e[at..]);
                out
            })
            .collect();
        assert_eq!(read("le", &le.concat()).unwrap(), read("be", &be).unwrap());
        assert_eq!(read("be", &be).unwrap()[0].latency_ns, Some(4));
    }

    #[test]
    fn damaged_and_foreign_traces_are_refused_saying_why() {
        let one = event(5, 64, 8192, TA_ISSUE, TC_WRITE, &[]);
        let e = read("cut", &[one.clone(), one[..20].to_vec()].concat()).unwrap_err().to_string();
        assert!(e.contains("ends inside an event at byte 48") && e.contains("truncate -s 48"), "{e}");
        let mut v8 = one.clone();
        v8[0] = 8;
        let e = read("v8", &v8).unwrap_err().to_string();
        assert!(e.contains("version 8; iogauge reads version 7"), "{e}");
        let mut other = event(6, 64, 8192, TA_ISSUE, TC_WRITE, &[]);
        other[36..40].copy_from_slice(&(8u32 << 20 | 16).to_le_bytes());
        let e = read("two", &[one, other].concat()).unwrap_err().to_string();
        assert!(e.contains("two devices (7,0 and 8,16)"), "{e}");
    }
}
