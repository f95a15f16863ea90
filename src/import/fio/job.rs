//! One fio job: its options, `[global]`'s first, read into what iogauge runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::Section;
use super::values::{Units, pattern_with};
use crate::config::{Content, DataPattern, Rate};
use crate::net::TargetName;
use crate::spec::{AccessSpec, Distribution, SpecLine};

/// One job's options, as fio reads them.
#[derive(Debug, Clone)]
pub(super) struct FioJob {
    pub(super) name: String,
    pub(super) at: String,
    pub(super) read: u32,
    pub(super) random: u32,
    /// Sizes with their % of I/Os, for reads and for writes (fio's `bs=R,W`).
    pub(super) sizes: [Vec<(u64, u32)>; 2],
    /// `bsrange=MIN-MAX`: the largest size of reads and of writes, each drawn between its
    /// one size in `sizes` and this, as fio draws them.
    pub(super) size_max: Option<[u64; 2]>,
    /// Where and how the sizes were given (`FILE:LINE: bssplit=...`), for what is said of them.
    pub(super) sizes_at: String,
    /// `rw` as written, and where: read once every option is (with `rwmixread`).
    pub(super) rw: Option<(String, String)>,
    /// `rwmixread`, `rwmixwrite`: the mix of a pattern that reads and writes.
    pub(super) mix_read: Option<u32>,
    pub(super) mix_write: Option<u32>,
    /// `filesize`: each file's size (read once the files are known).
    pub(super) filesize: Option<u64>,
    pub(super) iodepth: u32,
    pub(super) numjobs: u32,
    pub(super) runtime: Option<Duration>,
    pub(super) ramp: Duration,
    pub(super) time_based: bool,
    pub(super) size: Option<u64>,
    pub(super) offset: u64,
    /// `offset_increment`: copy N of `numjobs` starts at `offset + N * offset_increment`.
    pub(super) offset_increment: u64,
    /// Where either of those two was a share of the file (`offset=25%`): the boundary each
    /// copy's start is rounded up to, as fio rounds it (the job's smallest transfer).
    pub(super) offset_align: u64,
    /// `size=P%`: P % of each file, and the files' size it was taken of (each copy's part
    /// ends at the file's end, as fio's does).
    pub(super) size_share: Option<(u64, u64)>,
    /// Sizes written as shares of each file (`size=50%`), resolved once the job's files
    /// are known: (option, share, where written).
    pub(super) shares: Vec<(String, u64, String)>,
    pub(super) io_size: Option<u64>,
    pub(super) number_ios: Option<u64>,
    pub(super) filenames: Vec<String>,
    /// `nrfiles`: without `filename`, the files of each copy (`NAME.N.0`, `NAME.N.1`...).
    pub(super) nrfiles: u32,
    /// `uri=` of `ioengine=nbd`: the NBD export (libnbd's URI).
    pub(super) uri: Option<String>,
    pub(super) directory: Option<String>,
    pub(super) direct: bool,
    pub(super) engine: Engine,
    /// `rate_iops` and `rate` (in MB/s, 10^6 bytes/s).
    pub(super) rate: Rate,
    pub(super) thinktime: Duration,
    pub(super) thinktime_blocks: u32,
    /// `rw=randread:N`: a new random offset every N I/Os.
    pub(super) seek_every: u32,
    /// `percentage_random`: of a random pattern's seeks, the share that are random; the others
    /// follow the I/O before.
    pub(super) percentage_random: Option<u32>,
    /// `rw=write:4k`: a hole after each sequential I/O (negative: backwards).
    pub(super) skip: i64,
    /// `random_distribution`.
    pub(super) distribution: Distribution,
    /// `random_generator=lfsr`: a uniform law takes every block once per pass.
    pub(super) lfsr: bool,
    /// `rw=trim`...: every I/O a trim; with `trimwrite`, each followed by a write of its blocks.
    pub(super) trim: u32,
    pub(super) write_trimmed: bool,
    /// `fsync=N` / `fdatasync=N`: a flush every N writes, fsync or fdatasync.
    pub(super) flush_every: u32,
    pub(super) fsync: bool,
    /// `sync=1|sync|dsync`: every write stable when it completes.
    pub(super) fua: bool,
    /// `verify` (other than 0): where and how it was given.
    pub(super) verify: Option<String>,
    /// `do_verify`: a verify job reads back what it wrote once it has written it (fio's
    /// default).
    pub(super) do_verify: bool,
    /// `write_*_log`: where the logs go, and the prefix's name.
    pub(super) log_dir: Option<PathBuf>,
    pub(super) log_name: Option<String>,
    /// `per_job_logs`: a log file of each kind per job (fio's default), else one for all.
    pub(super) per_job_logs: bool,
    /// `log_offset`: the logs give each I/O's offset (fio's column 5).
    pub(super) log_offset: bool,
    /// `write_iolog`: the file of every I/O issued, fio's iolog v3.
    pub(super) write_iolog: Option<PathBuf>,
    /// `buffer_compress_percentage` and `dedupe_percentage`: what written blocks hold.
    pub(super) data: DataPattern,
    /// `log_avg_msec`.
    pub(super) log_avg_ms: u64,
    /// `iodepth_batch_submit`: I/Os submitted at once (fio's default 1; 0: `iodepth`).
    pub(super) submit_batch: u32,
    /// `iodepth_batch_complete_min`: completions waited for at once (fio's default 1).
    pub(super) completion_batch: u32,
    /// `nice`: the job's nice value.
    pub(super) nice: Option<i32>,
    /// Starts a new group, run after the ones before it (`stonewall`, `wait_for_previous`).
    pub(super) stonewall: bool,
    /// `new_group`: starts a reporting group of fio's, run with the jobs before it.
    pub(super) new_group: bool,
    /// `wait_for=NAME`: starts once job NAME has ended (and where it was written).
    pub(super) wait_for: Option<(String, String)>,
    /// Its `wait_for` is a stonewall: NAME was the only job running ([`waits`]).
    pub(super) waits: bool,
    /// `ioengine` as written (libaio and io_uring are one engine here, not in fio).
    pub(super) engine_name: String,
    /// `norandommap`: random offsets drawn with repeats, as iogauge draws them.
    pub(super) norandommap: bool,
    /// `blockalign`: random offsets' boundary (fio's default: the transfer size).
    pub(super) align: Option<u64>,
    /// `loops`: the job's I/O done this many times over.
    pub(super) loops: u64,
    /// `description`: what the job is, as its specification's description.
    pub(super) description: Option<String>,
    /// `rate_process=poisson`: exponentially spaced arrivals.
    pub(super) poisson: bool,
    /// `cpus_allowed` / `cpumask`: the CPUs its threads may run on (none: the process's).
    pub(super) cpus: Vec<u32>,
    /// `cpus_allowed_policy=split`: each thread on one CPU of `cpus`, by its number in the file.
    pub(super) cpus_split: bool,
    /// `randseed`: the seed of the test's generators (None: iogauge's own).
    pub(super) seed: Option<u64>,
    /// `continue_on_error=all`: failed I/Os are counted and the job goes on.
    pub(super) continue_on_error: bool,
    /// `kb_base`: the base of `k`, `m`, `g`... in sizes (1024, fio's default, or 1000).
    pub(super) kb_base: u64,
    /// The first size given in fio's "opposite" units under kb_base=1024 (where, and how).
    pub(super) opposite_units: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Engine {
    /// io_uring, libaio, posixaio: asynchronous, iodepth deep.
    Async,
    /// sync, psync, vsync, pvsync, pvsync2: one I/O at a time.
    Sync,
    /// null: no I/O at all.
    Null,
    /// nbd: an NBD export (`uri=`), asynchronous, iodepth deep.
    Nbd,
    /// libiscsi: iSCSI LUNs (`filename=iscsi\://...`), asynchronous, iodepth deep.
    Libiscsi,
}

impl Engine {
    /// What iogauge runs for fio's `ioengine`.
    pub(super) fn of(name: &str) -> Result<Engine, String> {
        match name.to_ascii_lowercase().as_str() {
            "io_uring" | "libaio" | "posixaio" => Ok(Engine::Async),
            "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => Ok(Engine::Sync),
            "null" => Ok(Engine::Null),
            "nbd" => Ok(Engine::Nbd),
            "libiscsi" => Ok(Engine::Libiscsi),
            _ => Err(
                "iogauge runs io_uring (for io_uring, libaio, posixaio), psync (sync, psync, vsync, pvsync, pvsync2), \
                 nbd (with uri=), libiscsi (with filename=iscsi\\://...) or null"
                    .into(),
            ),
        }
    }
}

impl FioJob {
    pub(super) fn new(section: &Section) -> FioJob {
        FioJob {
            name: section.name.clone(),
            at: section.at.clone(),
            read: 100,
            random: 0,
            sizes: [vec![(4096, 100)], vec![(4096, 100)]],
            size_max: None,
            sizes_at: section.at.clone(),
            rw: None,
            mix_read: None,
            mix_write: None,
            filesize: None,
            iodepth: 1,
            numjobs: 1,
            runtime: None,
            ramp: Duration::ZERO,
            time_based: false,
            size: None,
            offset: 0,
            offset_increment: 0,
            offset_align: 0,
            size_share: None,
            shares: Vec::new(),
            io_size: None,
            number_ios: None,
            filenames: Vec::new(),
            nrfiles: 1,
            uri: None,
            directory: None,
            // fio's defaults: buffered I/O with psync.
            direct: false,
            engine: Engine::Sync,
            rate: Rate::default(),
            thinktime: Duration::ZERO,
            thinktime_blocks: 1,
            seek_every: 1,
            percentage_random: None,
            skip: 0,
            distribution: Distribution::Uniform,
            lfsr: false,
            trim: 0,
            write_trimmed: false,
            flush_every: 0,
            fsync: false,
            fua: false,
            verify: None,
            do_verify: true,
            log_dir: None,
            log_name: None,
            per_job_logs: true,
            log_offset: false,
            write_iolog: None,
            data: Content::Random.into(),
            log_avg_ms: 0,
            submit_batch: 1,
            completion_batch: 1,
            nice: None,
            stonewall: false,
            new_group: false,
            wait_for: None,
            waits: false,
            engine_name: "psync".into(),
            norandommap: false,
            align: None,
            loops: 1,
            description: None,
            poisson: false,
            cpus: Vec::new(),
            cpus_split: false,
            seed: None,
            continue_on_error: false,
            kb_base: 1024,
            opposite_units: None,
        }
    }

    /// What fio settles once a section's options are all read: its pattern and mix, its files'
    /// number and size, and the sizes given as shares of its files.
    pub(super) fn settle(&mut self) -> Result<(), String> {
        if let Some((rw, at)) = self.rw.clone() {
            let units = Units::new(self.kb_base);
            let hole = |n: &str| {
                let bytes = units.size(n.trim_start_matches('-'))?;
                let bytes = i64::try_from(bytes).map_err(|_| format!("{n}: too large a size"))?;
                Ok(if n.starts_with('-') { -bytes } else { bytes })
            };
            let p = pattern_with(&rw, hole).map_err(|e| format!("{at}: rw={rw}: {e}"))?;
            self.note_opposite(&units, || format!("{at}: rw={}", rw.trim()));
            (self.random, self.seek_every, self.skip) = (p.random, p.seek_every, p.skip);
            // fio draws the share only for a random pattern (td_random); a sequential one ignores it.
            if let Some(share) = self.percentage_random.filter(|_| p.random == 100) {
                self.random = share;
            }
            (self.trim, self.write_trimmed) = (p.trim, p.write_trimmed);
            // fio's mixes default to 50/50; rwmixwrite is the rest of rwmixread.
            self.read = p.read.unwrap_or(self.mix_read.or(self.mix_write.map(|w| 100 - w)).unwrap_or(50));
        }
        // fio takes the files named; nrfiles above their number changes nothing (fio's
        // add_job caps it), under it fio's choice among them is its own.
        if !self.filenames.is_empty() && (self.nrfiles as usize) < self.filenames.len() && self.nrfiles > 1 {
            return Err(format!(
                "{}: nrfiles={} with {} files named: iogauge uses every file named; remove nrfiles",
                self.at,
                self.nrfiles,
                self.filenames.len()
            ));
        }
        if let Some(each) = self.filesize {
            let whole = each.saturating_mul(self.targets(0).len() as u64);
            self.size = Some(self.size.map_or(whole, |s| s.min(whole)));
        }
        self.take_shares()
    }

    /// Sizes written as shares of each file, in bytes, as fio takes them when the job starts
    /// (its `get_start_offset` and `setup_files`): `offset` and `offset_increment` P % of the
    /// file, each copy's start rounded up to the smallest transfer; `size` P % of the file,
    /// rounded down to it and ending at the file's end; `io_size` P % of that part. The files
    /// must exist and be of one size (iogauge gives each file of a job an equal part).
    fn take_shares(&mut self) -> Result<(), String> {
        let Some((first, _, at)) = self.shares.first().cloned() else { return Ok(()) };
        let files = self.targets(0);
        let sizes: Vec<_> = match self.engine {
            Engine::Null | Engine::Nbd | Engine::Libiscsi => Vec::new(),
            _ => files.iter().map(|f| crate::host::files::existing_size(Path::new(f)).ok()).collect(),
        };
        let real = match sizes.as_slice() {
            [Some(real), rest @ ..] if rest.iter().all(|s| *s == Some(*real)) && *real > 0 => *real,
            [Some(_), ..] if sizes.iter().all(Option::is_some) => {
                return Err(format!("{at}: {first} as a share of files of different sizes: give it in bytes"));
            }
            _ => {
                let missing = files.iter().zip(&sizes).find(|(_, s)| s.is_none()).map_or("the job", |(f, _)| f);
                return Err(format!(
                    "{at}: {first} as a share of the file needs the file: {missing} is not an existing file or \
                     device; give it in bytes"
                ));
            }
        };
        let share = |key: &str| self.shares.iter().find(|(k, _, _)| k == key).map(|(_, p, _)| *p);
        if let Some(p) = share("offset") {
            self.offset = real * p / 100;
        }
        if let Some(p) = share("offset_increment") {
            self.offset_increment = real * p / 100;
        }
        if share("offset").is_some() || share("offset_increment").is_some() {
            self.offset_align = self.smallest_transfer();
        }
        if let Some(p) = share("size") {
            self.size_share = Some((p, real));
            self.size = Some(self.part(0) * files.len() as u64);
        }
        if let Some(p) = share("io_size") {
            let part = if self.size_share.is_some() { self.part(0) } else { real.saturating_sub(self.offset_of(0)) };
            self.io_size = Some(part * p / 100 * files.len() as u64);
        }
        Ok(())
    }

    /// Whether its sequential I/Os both read and write: fio's then follow the last of their own
    /// direction (its `last_pos` per direction), which the specification keeps.
    fn mixes_directions(&self) -> bool {
        self.random < 100 && !matches!(self.read, 0 | 100)
    }

    /// Whether its random I/Os take each block once per pass, as fio's do by default (its
    /// random map): not with `norandommap`, a skewed law or lfsr (fio drops the map for
    /// them; lfsr takes each block once anyway), nor a `blockalign` other than the job's
    /// smallest transfer (fio: "Any use of blockalign= turns off randommap").
    pub(super) fn random_map(&self) -> bool {
        let aligned = self.align.is_none_or(|a| a == self.smallest_transfer());
        self.random > 0 && !self.norandommap && self.distribution.is_uniform() && !self.lfsr && aligned
    }

    /// Where copy `copy` of the job starts in each file.
    pub(super) fn offset_of(&self, copy: u32) -> u64 {
        let raw = self.offset + copy as u64 * self.offset_increment;
        match self.offset_align {
            0 => raw,
            a => raw.div_ceil(a) * a,
        }
    }

    /// The bytes every copy of a job bounded by its size moves, once: each copy's part of its
    /// files as fio counts it ([`FioJob::pass`]); None where the job has no size and fio
    /// would not take its files' (see [`FioJob::whole`]).
    pub(super) fn size_bytes(&self) -> Option<u64> {
        (0..self.numjobs).map(|c| Some(self.pass(self.part_of(c)?, c).0)).sum()
    }

    /// Copy `copy`'s part of each of its files: `size` over the files, its share of each
    /// (`size=P%`), or without a size the whole of them from its offset on; None where the job
    /// has no size and fio would not take its files'.
    pub(super) fn part_of(&self, copy: u32) -> Option<u64> {
        let files = self.targets(copy).len().max(1) as u64;
        match self.size_share {
            Some(_) => Some(self.part(copy)),
            None => self.size.or_else(|| self.whole()).map(|s| s / files),
        }
    }

    /// With `size=P%`, copy `copy`'s part of each file: P % of it, rounded down to the job's
    /// smallest transfer, ending at the file's end (fio's `setup_files`).
    pub(super) fn part(&self, copy: u32) -> u64 {
        let Some((p, real)) = self.size_share else { return 0 };
        let part = (real * p / 100).min(real.saturating_sub(self.offset_of(copy)));
        part - part % self.smallest_transfer()
    }

    /// The job's smallest transfer, either way (fio's `td_min_bs`).
    fn smallest_transfer(&self) -> u64 {
        self.sizes.iter().flatten().map(|(bs, _)| *bs).min().unwrap_or(4096).max(1)
    }

    /// Keeps `at` (where, and how written) as the first size in fio's opposite units, if
    /// `units` read one.
    pub(super) fn note_opposite(&mut self, units: &Units, at: impl FnOnce() -> String) {
        if units.opposite() && self.opposite_units.is_none() {
            self.opposite_units = Some(at());
        }
    }

    /// The job's access specification: one line per transfer size (reads' and writes' own
    /// when `bs=R,W` differ), shares as fio's.
    pub(super) fn spec(&self) -> Result<AccessSpec, String> {
        let delay_ms = self.thinktime.as_micros();
        if delay_ms % 1000 != 0 {
            return Err(format!(
                "{}: thinktime {} us: iogauge delays in whole milliseconds (Iometer's delay)",
                self.at, delay_ms
            ));
        }
        let delay_ms = u32::try_from(delay_ms / 1000).map_err(|_| {
            format!("{}: thinktime {} ms is out of range: give at most {} ms", self.at, delay_ms / 1000, u32::MAX)
        })?;
        // fio flushes and syncs only what writes: a read job of a [global] with fsync=N has none.
        // Reads' lines take the reads' range of sizes (bsrange=R,W), writes' the writes'.
        let line = |size, share, read: u32| {
            let writes = read + self.trim < 100 || self.write_trimmed;
            SpecLine {
                size_max: self.size_max.map(|m| m[usize::from(read == 0)]),
                delay_ms,
                burst: self.thinktime_blocks,
                seek_every: self.seek_every,
                skip: self.skip,
                // fio's lfsr serves the uniform law; a skewed one draws as it always does.
                distribution: match &self.distribution {
                    Distribution::Uniform if self.lfsr => Distribution::Lfsr,
                    d => d.clone(),
                },
                trim: self.trim,
                write_trimmed: self.write_trimmed,
                flush_every: if writes { self.flush_every } else { 0 },
                fsync: writes && self.flush_every > 0 && self.fsync,
                fua: writes && self.fua,
                align: self.align,
                ..SpecLine::new(size, share, read, self.random)
            }
        };
        let alike = self.sizes[0] == self.sizes[1] && self.size_max.is_none_or(|[r, w]| r == w);
        let lines: Vec<SpecLine> = if alike || self.read == 100 || self.read == 0 {
            let sizes = if self.read == 0 { &self.sizes[1] } else { &self.sizes[0] };
            sizes.iter().map(|&(s, p)| line(s, p, self.read)).collect()
        } else {
            let mut lines = Vec::new();
            for (sizes, dir_share, read) in [(&self.sizes[0], self.read, 100), (&self.sizes[1], 100 - self.read, 0)] {
                for &(s, p) in sizes {
                    if (p * dir_share) % 100 != 0 {
                        return Err(format!(
                            "{}: bs for reads and for writes at rwmixread={}: {} % of I/Os is not a whole %",
                            self.at,
                            self.read,
                            p as f64 * dir_share as f64 / 100.0
                        ));
                    }
                    lines.push(line(s, p * dir_share / 100, read));
                }
            }
            lines
        };
        // The job's name, unless a built-in specification has it.
        let taken = crate::spec::builtin().iter().any(|s| s.name == self.name);
        let name = if taken { format!("fio-{}", self.name) } else { self.name.clone() };
        let description = self.description.clone().unwrap_or_else(|| format!("fio job [{}]", self.name));
        let spec = AccessSpec {
            name,
            description,
            lines,
            sequential_per_direction: self.mixes_directions(),
            random_map: self.random_map(),
        };
        spec.validate().map_err(|e| format!("{}: {e}", self.at))?;
        Ok(spec)
    }

    /// Whether each of the `numjobs` copies has a file of its own (fio's `NAME.N.0`): no
    /// `filename` given, and an engine that does I/O.
    fn file_per_copy(&self) -> bool {
        self.filenames.is_empty() && !matches!(self.engine, Engine::Null | Engine::Nbd | Engine::Libiscsi)
    }

    /// Whether each of the `numjobs` copies is a worker of its own: a file each, an offset each
    /// (`offset_increment`) or a CPU each (`split`); otherwise one worker entry with a count.
    pub(super) fn copies_apart(&self) -> bool {
        self.file_per_copy() || self.offset_increment > 0 || self.split()
    }

    /// Whether each thread runs on one CPU of the job's (`cpus_allowed_policy=split`; fio
    /// splits only a set it was given).
    fn split(&self) -> bool {
        self.cpus_split && !self.cpus.is_empty()
    }

    /// The CPUs of the job's thread numbered `thread` in the file (fio's `thread_number - 1`,
    /// counted over every copy of every job before it): with `split`, the CPU at that place
    /// in the set, round it again when the threads outnumber the CPUs (fio's
    /// `fio_cpus_split`); else the whole set.
    pub(super) fn cpus_of(&self, thread: u32) -> Vec<u32> {
        match self.split() {
            true => vec![self.cpus[thread as usize % self.cpus.len()]],
            false => self.cpus.clone(),
        }
    }

    /// What fio does of copy `copy`'s `part` of each of its files, once: the bytes it moves over
    /// all of them, and the working set on each that holds its I/Os (fio's `do_io`, whose loop
    /// issues while the bytes issued are under the size, and `get_next_offset`). For a job of
    /// one transfer size: sequential, an I/O at each step (transfer and hole) that starts
    /// before the part's end where the file holds it whole, so on a file larger than the part
    /// the last one crosses its end (`size=1000k bs=64k rw=read`: 16 reads), and on a file
    /// just as large it is left out (15); one direction moves those I/Os, a mix of reads and
    /// writes until the size is crossed. Random, with fio's random map or lfsr, each whole
    /// block once; without (`norandommap`, a skewed law), or in runs (`randread:N`), until the
    /// size is crossed. A job of several sizes, or going backwards, moves its part.
    pub(super) fn pass(&self, part: u64, copy: u32) -> (u64, u64) {
        let files = self.targets(copy).len().max(1) as u64;
        let Some(bs) = self.one_size().filter(|_| self.skip >= 0) else { return (part * files, part) };
        if self.random > 0 {
            let once = (self.random_map() || self.lfsr && self.distribution.is_uniform()) && self.seek_every == 1;
            return (if once { part / bs * bs } else { part } * files, part);
        }
        let step = bs + self.skip as u64;
        let room = self.room(copy).unwrap_or(part).max(part);
        let ios = part.div_ceil(step).min(if room >= bs { (room - bs) / step + 1 } else { 0 });
        let reach = if ios > 0 { part.max((ios - 1) * step + bs) } else { part };
        let bytes = if matches!(self.read, 0 | 100) { ios * bs } else { part };
        (bytes * files, reach)
    }

    /// Copy `copy`'s working set on each file: its part, and past its end the transfer fio
    /// issues across it ([`FioJob::pass`]).
    pub(super) fn working_set(&self, copy: u32) -> u64 {
        self.part_of(copy).map_or(0, |part| self.pass(part, copy).1)
    }

    /// Its one transfer size, if it has one for every I/O it does.
    fn one_size(&self) -> Option<u64> {
        match (self.read, self.sizes[0].as_slice(), self.sizes[1].as_slice()) {
            (100, [(bs, _)], _) | (0, _, [(bs, _)]) => Some(*bs),
            (_, [(r, _)], [(w, _)]) if r == w => Some(*r),
            _ => None,
        }
    }

    /// The sizes of copy `copy`'s files or devices from its offset on, where each exists and
    /// fio would take it (not the null engine's, nor a network target's).
    fn rooms(&self, copy: u32) -> Option<Vec<u64>> {
        if matches!(self.engine, Engine::Null | Engine::Nbd | Engine::Libiscsi) {
            return None;
        }
        let size = |f: TargetName| crate::host::files::existing_size(f.as_ref()).ok();
        self.targets(copy).into_iter().map(|f| Some(size(f)?.saturating_sub(self.offset_of(copy)))).collect()
    }

    /// The least of copy `copy`'s files' sizes from its offset on ([`FioJob::rooms`]).
    fn room(&self, copy: u32) -> Option<u64> {
        self.rooms(copy)?.into_iter().min()
    }

    /// What fio does without a size: the whole of each of the job's files or devices (from its
    /// offset on), when each exists; None otherwise.
    pub(super) fn whole(&self) -> Option<u64> {
        Some(self.rooms(0)?.into_iter().sum::<u64>()).filter(|&b| b > 0)
    }

    /// Each copy's targets: the files named (`directory` in front of relative names), or fio's
    /// own files `NAME.N.0`, `NAME.N.1`... (`nrfiles`) in the directory; `null` for the null
    /// engine.
    pub(super) fn targets(&self, copy: u32) -> Vec<TargetName> {
        match (self.engine, &self.uri) {
            (Engine::Null, _) => return vec!["null".into()],
            // fio's nbd engine reaches the export named by uri= (checked to be there).
            (Engine::Nbd, Some(uri)) => return vec![uri.as_str().into()],
            _ => {}
        }
        let dir = |f: &str| match &self.directory {
            Some(d) if !f.starts_with('/') => Path::new(d).join(f).display().to_string(),
            _ => f.to_string(),
        };
        if self.filenames.is_empty() {
            return (0..self.nrfiles).map(|i| dir(&format!("{}.{copy}.{i}", self.name)).into()).collect();
        }
        self.filenames.iter().map(|f| dir(f).into()).collect()
    }
}
