//! fio's options, one row each, as fio's options.c declares them: its name and aliases, and
//! what iogauge does with it: reads it into the job, takes it as fio runs it, says it once (a
//! reporting option), takes it at fio's default only, or refuses it, with why. Every option of
//! `fio --cmdhelp=all` (fio 3.33) and of the engines iogauge runs (`fio --enghelp=io_uring`,
//! libaio, pvsync2, nbd) has a row (`options_are_fios`, in tests/it/fio_jobs.rs, checks them
//! against the fio installed), so a new option is one row and a test.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::Opt;
use super::job::{Engine, FioJob};
use super::values::{Units, cpu_mask, one_byte_pattern, sectors, split_filenames, time, whole_number};
use crate::config::Content;
use crate::import::Import;

/// What iogauge does with one of fio's options.
pub(super) enum Take {
    /// Read into the job.
    Set(fn(&mut FioJob, &Given) -> Result<(), String>),
    /// Taken as fio runs it: nothing to change in what iogauge runs, and why (read by the docs'
    /// table of fio's options, made from the rows in a test).
    Same(#[cfg_attr(not(test), allow(dead_code))] &'static str),
    /// A reporting option of fio's: said once for the file (iogauge times every I/O and
    /// reports every percentile whatever it says).
    Report,
    /// Taken at fio's default, `default`, only (as written, or a number of 0 with or without a
    /// unit for "0"); any other value is refused with why (`{value}` stands for the value).
    AtDefault(&'static str, &'static str),
    /// Refused whatever its value: why, and what to give instead.
    Refused(&'static str),
}

/// One of fio's options: its name, then its aliases; what iogauge does with it.
pub(super) struct Row {
    pub(super) names: &'static [&'static str],
    pub(super) take: Take,
}

/// One option as a job section gives it.
pub(super) struct Given<'a> {
    pub(super) key: &'a str,
    /// Its value ("" when none is given).
    pub(super) value: &'a str,
    pub(super) has_value: bool,
    /// Where it is written (`FILE:LINE`).
    pub(super) at: &'a str,
    /// How the section reads sizes (its kb_base), noting the units they were written in.
    pub(super) units: Units,
}

impl Given<'_> {
    /// The option as written: `key=value`, or `key`.
    pub(super) fn shown(&self) -> String {
        if self.has_value { format!("{}={}", self.key, self.value) } else { self.key.to_string() }
    }

    /// A whole number, decimal or after `0x`.
    pub(super) fn num(&self) -> Result<u64, String> {
        whole_number(self.value).ok_or_else(|| "give a whole number".to_string())
    }

    /// A whole number that fits iogauge's 32 bits (4294967295): refused as written above it,
    /// rather than cut down to another number than the one the file gives.
    fn num_u32(&self) -> Result<u32, String> {
        u32::try_from(self.num()?).map_err(|_| format!("give at most {}", u32::MAX))
    }

    /// A whole number in `range`.
    fn num_in(&self, range: std::ops::RangeInclusive<u64>, what: &str) -> Result<u32, String> {
        let n = self.num()?;
        match range.contains(&n) {
            true => Ok(n as u32),
            false => Err(format!("give {} to {} {what}", range.start(), range.end())),
        }
    }

    /// A size as fio reads one (values::fio_size).
    pub(super) fn size(&self) -> Result<u64, String> {
        self.units.size(self.value)
    }

    /// fio's flag: none, 1 or true is on; 0 or false off.
    pub(super) fn flag(&self) -> Result<bool, String> {
        match self.value {
            _ if !self.has_value => Ok(true),
            "1" | "true" => Ok(true),
            "0" | "false" => Ok(false),
            _ => Err("give 0 or 1".into()),
        }
    }

    /// A time, a bare number in `unit`.
    fn time(&self, unit: Duration) -> Result<Duration, String> {
        time(self.value, unit)
    }

    /// One of `words`, as its index.
    fn one_of(&self, words: &[&str]) -> Result<usize, String> {
        words.iter().position(|w| *w == self.value).ok_or_else(|| format!("give {}", or_list(words)))
    }

    /// Whether the value is fio's default `default` (a number of 0, with or without a unit,
    /// for "0"; a flag given alone for "1").
    pub(super) fn is(&self, default: &str) -> bool {
        let v = if self.has_value { self.value } else { "1" };
        let number = v.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<f64>().ok();
        let v = match (v, number) {
            ("true", _) => "1",
            ("false", _) => "0",
            (_, Some(0.0)) => "0",
            (_, Some(n)) if n == 1.0 && default == "1" => "1",
            (v, _) => v,
        };
        v.eq_ignore_ascii_case(default)
    }
}

/// `a, b or c`.
fn or_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// The row of fio's option `name` (or an alias of it).
pub(super) fn row(name: &str) -> Option<&'static Row> {
    OPTIONS.iter().find(|r| r.names.contains(&name))
}

/// A size that may be a share of each file (`size=50%`): the share is kept for when the files
/// are known; a later value, in bytes or not, replaces an earlier share. Returns the bytes
/// where the value is a size.
fn shareable(j: &mut FioJob, g: &Given, key: &str) -> Result<Option<u64>, String> {
    j.shares.retain(|(k, _, _)| k != key);
    let Some(pct) = g.value.strip_suffix('%') else { return g.size().map(Some) };
    let pct = whole_number(pct).filter(|p| (1..=100).contains(p));
    let pct = pct.ok_or_else(|| format!("{}: give a share of the file of 1% to 100%", g.value))?;
    j.shares.push((key.to_string(), pct, g.at.to_string()));
    Ok(None)
}

/// A rate for reads and writes together (fio's `R,W` are refused).
fn one_rate(g: &Given) -> Result<(), String> {
    match g.value.contains(',') {
        true => Err("one rate for reads and writes together".into()),
        false => Ok(()),
    }
}

/// fio's `rate`: bytes per second (its sizes' suffixes, 1m = 1 MiB/s), as MB/s; 0, fio's
/// default, no cap.
fn set_rate(j: &mut FioJob, g: &Given) -> Result<(), String> {
    one_rate(g)?;
    j.rate.mbps = Some(g.size()? as f64 / 1e6).filter(|r| *r > 0.0);
    Ok(())
}

/// fio's `rate_iops`; 0, fio's default, no cap.
fn set_rate_iops(j: &mut FioJob, g: &Given) -> Result<(), String> {
    one_rate(g)?;
    j.rate.iops = Some(g.num()? as f64).filter(|r| *r > 0.0);
    Ok(())
}

/// Any `verify` but 0 (`null` is fio's none) has iogauge's stamps checked.
fn set_verify(j: &mut FioJob, g: &Given) -> Result<(), String> {
    j.verify = (!matches!(g.value, "0" | "null" | "")).then(|| format!("{}: {}", g.at, g.shown()));
    Ok(())
}

/// Every written block all zeros.
fn set_zero_buffers(j: &mut FioJob, g: &Given) -> Result<(), String> {
    if g.flag()? {
        j.data.content = Content::Repeat(0);
    }
    Ok(())
}

/// fio's `write_*_log=PREFIX`: iogauge writes every kind of log in the prefix's directory; the
/// prefix names them where the job's logs go into one file of each kind (`per_job_logs=0`).
fn log_prefix(j: &mut FioJob, g: &Given) -> Result<(), String> {
    let prefix = Path::new(g.value);
    let dir = prefix.parent().filter(|p| !p.as_os_str().is_empty());
    j.log_dir = Some(dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf));
    j.log_name = prefix.file_name().map(|n| n.to_string_lossy().to_string());
    Ok(())
}

const ZONES: &str = "iogauge runs no zone modes (fio's strided zones, zoned block devices): give size and offset";
const VERIFY_OWN: &str = "iogauge stamps and checks every block it writes its own way (a header with a CRC-32C, \
                          --verify): give verify=1 for it";
const VERIFY_BACKLOG: &str = "iogauge checks the reads a test does and reads back what a job wrote after it \
                              (do_verify), not every N writes";
const REPLAY: &str = "iogauge replays a fio iolog as a worker's trace: [[worker]] replay = { trace = \"FILE\" } in a job \
                      of its own (docs/traces.md)";
const BLKTRACE: &str = "iogauge replays one trace per worker (blktrace's files too: docs/traces.md), not merged traces";
const PRIORITY: &str = "iogauge issues every I/O at its thread's I/O priority: run it under ionice for another";
const LATENCY_TARGET: &str = "iogauge runs the depth given: a study over outstanding I/Os ([study] outstanding) finds \
                              the depth that meets a latency";
const RATE_MIN: &str = "iogauge does not end a job that falls below a rate: its result says what each worker did";
const COMMANDS: &str = "iogauge runs no commands of a job file: run them before or after iogauge";
const CGROUP: &str =
    "iogauge puts each worker in a CPU cgroup of its own where it can, with the test's nice: give nice";
const FLOW: &str = "iogauge has no flow control between jobs: give each job a rate (rate_iops, rate)";
const STEADY: &str = "a study's steady state ([study] steady, docs/job-file.md) ends its points on one; a fio job \
                      runs its size or time";
const NO_HISTOGRAM_LOGS: &str = "iogauge writes no histogram logs: its result holds each interval's latency \
                                 histogram (--json)";
const HINTS: &str = "iogauge gives the kernel no hint of a file's use";
const REPORTING_CPU: &str = "iogauge reads the clock on each worker's own thread";

/// Every fio option, in the order of fio's HOWTO.
pub(super) static OPTIONS: &[Row] = &[
    // Job description, files.
    Row {
        names: &["description"],
        take: Take::Set(|j, g| {
            j.description = Some(g.value.to_string());
            Ok(())
        }),
    },
    Row {
        names: &["name"],
        take: Take::Set(|j, g| {
            j.name = g.value.to_string();
            Ok(())
        }),
    },
    Row {
        names: &["wait_for"],
        take: Take::Set(|j, g| {
            j.wait_for = Some((g.value.to_string(), g.at.to_string()));
            Ok(())
        }),
    },
    Row {
        names: &["filename"],
        take: Take::Set(|j, g| {
            j.filenames = split_filenames(g.value);
            Ok(())
        }),
    },
    Row { names: &["lockfile"], take: Take::AtDefault("none", "iogauge takes no lock on a file around its I/O") },
    Row {
        names: &["directory"],
        take: Take::Set(|j, g| {
            j.directory = Some(g.value.to_string());
            Ok(())
        }),
    },
    Row {
        names: &["filename_format"],
        take: Take::AtDefault(
            "$jobname.$jobnum.$filenum",
            "iogauge names each copy's files as fio's default does, NAME.COPY.FILE: give filename= to name them",
        ),
    },
    Row {
        names: &["unique_filename"],
        take: Take::Same("it names files of fio's client and server mode, not run here"),
    },
    Row {
        names: &["opendir"],
        take: Take::Refused("iogauge runs the files named (filename=, or fio's own in directory=): name them"),
    },
    // I/O type and sizes.
    Row {
        names: &["rw", "readwrite"],
        take: Take::Set(|j, g| {
            j.rw = Some((g.value.to_string(), g.at.to_string()));
            Ok(())
        }),
    },
    Row { names: &["rw_sequencer"], take: Take::Set(set_rw_sequencer) },
    Row {
        names: &["bs", "blocksize"],
        take: Take::Set(|j, g| {
            j.set_sizes(sectors(g.value, &g.units, false)?, g);
            Ok(())
        }),
    },
    Row { names: &["ba", "blockalign"], take: Take::Set(set_align) },
    Row { names: &["bsrange", "blocksize_range"], take: Take::Set(set_size_range) },
    Row {
        names: &["bssplit"],
        take: Take::Set(|j, g| {
            j.set_sizes(sectors(g.value, &g.units, true)?, g);
            Ok(())
        }),
    },
    Row {
        names: &["bs_unaligned", "blocksize_unaligned"],
        take: Take::AtDefault("0", "iogauge's transfers are whole 512-byte sectors"),
    },
    Row {
        names: &["randrepeat"],
        take: Take::Same("iogauge's generators start from the test's seed, the same on every run of one seed"),
    },
    Row {
        names: &["allrandrepeat"],
        take: Take::Same("iogauge's generators start from the test's seed, the same on every run of one seed"),
    },
    Row {
        names: &["randseed"],
        take: Take::Set(|j, g| {
            j.seed = Some(g.num()?);
            Ok(())
        }),
    },
    Row {
        names: &["norandommap"],
        take: Take::Set(|j, g| {
            j.norandommap = g.flag()?;
            Ok(())
        }),
    },
    Row {
        names: &["ignore_error"],
        take: Take::Refused(
            "iogauge goes on after every failed I/O or after none (continue_on_error), counting each by errno",
        ),
    },
    Row { names: &["ioengine"], take: Take::Set(set_engine) },
    Row {
        names: &["iodepth"],
        take: Take::Set(|j, g| {
            j.iodepth = g.num_u32()?.max(1);
            Ok(())
        }),
    },
    Row {
        names: &["iodepth_batch", "iodepth_batch_submit"],
        take: Take::Set(|j, g| {
            j.submit_batch = g.num_u32()?;
            Ok(())
        }),
    },
    // fio's 0 polls without waiting; iogauge waits for at least one.
    Row {
        names: &["iodepth_batch_complete_min", "iodepth_batch_complete"],
        take: Take::Set(|j, g| {
            j.completion_batch = g.num_u32()?.max(1);
            Ok(())
        }),
    },
    Row {
        names: &["iodepth_batch_complete_max"],
        take: Take::Same(
            "iogauge reaps every completion there is: a cap per call changes fio's loop, not the I/O asked \
             (docs/performance.md compares the response times)",
        ),
    },
    Row {
        names: &["iodepth_low"],
        take: Take::Refused("iogauge issues an I/O as soon as a slot is free, as fio's default does"),
    },
    Row {
        names: &["serialize_overlap"],
        take: Take::AtDefault(
            "0",
            "iogauge issues without waiting for overlapping I/Os (a verified test keeps them apart)",
        ),
    },
    Row { names: &["io_submit_mode"], take: Take::AtDefault("inline", "each worker submits its own I/Os") },
    Row {
        names: &["size"],
        take: Take::Set(|j, g| {
            j.size = shareable(j, g, "size")?.or(j.size);
            Ok(())
        }),
    },
    Row {
        names: &["io_size", "io_limit"],
        take: Take::Set(|j, g| {
            j.io_size = shareable(j, g, "io_size")?.or(j.io_size);
            Ok(())
        }),
    },
    Row {
        names: &["fill_device", "fill_fs"],
        take: Take::AtDefault(
            "0",
            "iogauge ends a job on its size, count or time, not at the first ENOSPC: give size=",
        ),
    },
    Row { names: &["filesize"], take: Take::Set(set_filesize) },
    Row {
        names: &["file_append"],
        take: Take::AtDefault("0", "iogauge's I/O stays inside each file's size (or the size it creates)"),
    },
    Row {
        names: &["offset", "fileoffset"],
        take: Take::Set(|j, g| {
            j.offset = shareable(j, g, "offset")?.unwrap_or(j.offset);
            Ok(())
        }),
    },
    Row {
        names: &["offset_increment"],
        take: Take::Set(|j, g| {
            j.offset_increment = shareable(j, g, "offset_increment")?.unwrap_or(j.offset_increment);
            Ok(())
        }),
    },
    Row {
        names: &["offset_align"],
        take: Take::AtDefault("0", "a share's start is rounded up to the job's smallest transfer, as fio's default"),
    },
    Row {
        names: &["number_ios"],
        take: Take::Set(|j, g| {
            j.number_ios = Some(g.num()?);
            Ok(())
        }),
    },
    Row {
        names: &["random_generator"],
        take: Take::Set(|j, g| {
            j.lfsr = g.one_of(&["lfsr", "tausworthe", "tausworthe64"])? == 0;
            Ok(())
        }),
    },
    Row {
        names: &["random_distribution"],
        take: Take::Set(|j, g| {
            j.distribution = g.value.parse().map_err(|e: crate::error::Unreadable| e.to_string())?;
            Ok(())
        }),
    },
    Row { names: &["percentage_random"], take: Take::Set(set_percentage_random) },
    Row {
        names: &["nrfiles", "nr_files"],
        take: Take::Set(|j, g| {
            j.nrfiles = g.num_in(1..=4096, "files")?;
            Ok(())
        }),
    },
    Row {
        names: &["file_service_type"],
        take: Take::AtDefault("roundrobin", "iogauge keeps each file's outstanding I/Os in flight together"),
    },
    Row { names: &["openfiles"], take: Take::Same("iogauge keeps every file open through the test") },
    Row {
        names: &["fallocate"],
        take: Take::Same("iogauge writes each file it creates in full before its test: no block is left to allocate"),
    },
    Row { names: &["fadvise_hint"], take: Take::AtDefault("0", HINTS) },
    Row {
        names: &["fsync"],
        take: Take::Set(|j, g| {
            (j.flush_every, j.fsync) = (g.num_u32()?, true);
            Ok(())
        }),
    },
    Row {
        names: &["fdatasync"],
        take: Take::Set(|j, g| {
            (j.flush_every, j.fsync) = (g.num_u32()?, false);
            Ok(())
        }),
    },
    Row { names: &["write_barrier"], take: Take::AtDefault("0", "iogauge issues no barrier writes") },
    Row {
        names: &["sync_file_range"],
        take: Take::Refused("iogauge flushes with fsync or fdatasync (fsync=N, fdatasync=N)"),
    },
    Row {
        names: &["direct"],
        take: Take::Set(|j, g| {
            j.direct = g.flag()?;
            Ok(())
        }),
    },
    Row { names: &["atomic"], take: Take::AtDefault("0", "iogauge issues no atomic writes") },
    Row {
        names: &["buffered"],
        take: Take::Set(|j, g| {
            j.direct = !g.flag()?;
            Ok(())
        }),
    },
    Row {
        names: &["overwrite"],
        take: Take::Same("iogauge writes each file it creates in full before its test, as fio's overwrite=1"),
    },
    Row {
        names: &["loops"],
        take: Take::Set(|j, g| {
            j.loops = g.num()?.max(1);
            Ok(())
        }),
    },
    Row {
        names: &["numjobs"],
        take: Take::Set(|j, g| {
            j.numjobs = g.num_in(1..=4096, "jobs")?;
            Ok(())
        }),
    },
    Row { names: &["startdelay"], take: Take::AtDefault("0", "every worker starts with the test") },
    Row {
        names: &["runtime", "timeout"],
        take: Take::Set(|j, g| {
            j.runtime = Some(g.time(Duration::from_secs(1))?);
            Ok(())
        }),
    },
    Row {
        names: &["time_based"],
        take: Take::Set(|j, g| {
            j.time_based = g.flag()?;
            Ok(())
        }),
    },
    Row {
        names: &["verify_only"],
        take: Take::Refused("`iogauge verify --target TARGET` reads back and checks what an earlier test wrote"),
    },
    Row {
        names: &["ramp_time"],
        take: Take::Set(|j, g| {
            j.ramp = g.time(Duration::from_secs(1))?;
            Ok(())
        }),
    },
    Row { names: &["clocksource"], take: Take::Report },
    Row {
        names: &["mem", "iomem"],
        take: Take::Same("iogauge allocates its own aligned buffers; their backing moves no other I/O"),
    },
    // Verification.
    Row { names: &["verify"], take: Take::Set(set_verify) },
    Row {
        names: &["do_verify"],
        take: Take::Set(|j, g| {
            j.do_verify = g.flag()?;
            Ok(())
        }),
    },
    Row { names: &["verify_interval"], take: Take::Refused(VERIFY_OWN) },
    Row { names: &["verify_offset"], take: Take::Refused(VERIFY_OWN) },
    Row { names: &["verify_pattern"], take: Take::Refused(VERIFY_OWN) },
    Row {
        names: &["verify_fatal"],
        take: Take::Same("a mismatch is counted, and stops the test or not as continue_on_error says"),
    },
    Row { names: &["verify_dump"], take: Take::Same("iogauge's verify report names each block that did not match") },
    Row { names: &["verify_async"], take: Take::Same("iogauge checks each read on its worker's thread") },
    Row { names: &["verify_backlog"], take: Take::Refused(VERIFY_BACKLOG) },
    Row { names: &["verify_backlog_batch"], take: Take::Refused(VERIFY_BACKLOG) },
    Row { names: &["experimental_verify"], take: Take::AtDefault("0", VERIFY_OWN) },
    Row {
        names: &["verify_state_load"],
        take: Take::AtDefault("0", "`iogauge verify --journal DIR` checks what a test left"),
    },
    Row {
        names: &["verify_state_save"],
        take: Take::Same("iogauge keeps its map of what it wrote for `iogauge verify`"),
    },
    Row {
        names: &["trim_percentage"],
        take: Take::AtDefault(
            "0",
            "a verified test has no trims in iogauge (what a trimmed block reads is the device's)",
        ),
    },
    Row { names: &["trim_verify_zero"], take: Take::Same("it applies to trim_percentage, which iogauge leaves at 0") },
    Row { names: &["trim_backlog"], take: Take::AtDefault("0", "a verified test has no trims in iogauge") },
    Row { names: &["trim_backlog_batch"], take: Take::AtDefault("0", "a verified test has no trims in iogauge") },
    // Traces.
    Row {
        names: &["write_iolog"],
        take: Take::Set(|j, g| {
            j.write_iolog = Some(PathBuf::from(g.value));
            Ok(())
        }),
    },
    Row { names: &["read_iolog"], take: Take::Refused(REPLAY) },
    Row { names: &["read_iolog_chunked"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_no_stall"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_redirect"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_scale"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_align"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_time_scale"], take: Take::Refused(REPLAY) },
    Row { names: &["replay_skip"], take: Take::Refused(REPLAY) },
    Row { names: &["merge_blktrace_file"], take: Take::Refused(BLKTRACE) },
    Row { names: &["merge_blktrace_scalars"], take: Take::Refused(BLKTRACE) },
    Row { names: &["merge_blktrace_iters"], take: Take::Refused(BLKTRACE) },
    Row { names: &["exec_prerun"], take: Take::Refused(COMMANDS) },
    Row { names: &["exec_postrun"], take: Take::Refused(COMMANDS) },
    Row {
        names: &["ioscheduler"],
        take: Take::AtDefault(
            "0",
            "iogauge leaves each device's scheduler as it finds it: set it before the test \
             (echo {value} > /sys/block/DEV/queue/scheduler)",
        ),
    },
    // Zones.
    Row { names: &["zonemode"], take: Take::AtDefault("none", ZONES) },
    Row { names: &["zonesize"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["zonecapacity"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["zonerange"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["zoneskip"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["read_beyond_wp"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["max_open_zones"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["job_max_open_zones"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["ignore_zone_limits"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["zone_reset_threshold"], take: Take::AtDefault("0", ZONES) },
    Row { names: &["zone_reset_frequency"], take: Take::AtDefault("0", ZONES) },
    // Process, rates, latency.
    Row { names: &["lockmem"], take: Take::AtDefault("0", "iogauge locks no memory") },
    Row {
        names: &["rwmixread"],
        take: Take::Set(|j, g| {
            j.mix_read = Some(g.num_in(0..=100, "(% of the I/Os that read)")?);
            Ok(())
        }),
    },
    Row {
        names: &["rwmixwrite"],
        take: Take::Set(|j, g| {
            j.mix_write = Some(g.num_in(0..=100, "(% of the I/Os that write)")?);
            Ok(())
        }),
    },
    Row {
        names: &["nice"],
        take: Take::Set(|j, g| {
            j.nice = Some(g.value.parse().map_err(|_| "give -20 to 19".to_string())?);
            Ok(())
        }),
    },
    Row { names: &["prio"], take: Take::Refused(PRIORITY) },
    Row { names: &["prioclass"], take: Take::Refused(PRIORITY) },
    Row {
        names: &["thinktime"],
        take: Take::Set(|j, g| {
            j.thinktime = g.time(Duration::from_micros(1))?;
            Ok(())
        }),
    },
    Row { names: &["thinktime_spin"], take: Take::AtDefault("0", "iogauge's worker sleeps through a delay") },
    Row {
        names: &["thinktime_blocks"],
        take: Take::Set(|j, g| {
            j.thinktime_blocks = g.num_u32()?.max(1);
            Ok(())
        }),
    },
    Row {
        names: &["thinktime_blocks_type"],
        take: Take::AtDefault("complete", "a burst of thinktime_blocks I/Os is counted as fio's default counts it"),
    },
    Row { names: &["thinktime_iotime"], take: Take::AtDefault("0", "iogauge's delays come after bursts of I/Os") },
    // fio's `rate`: bytes per second (its sizes' suffixes, 1m = 1 MiB/s).
    Row { names: &["rate"], take: Take::Set(set_rate) },
    Row { names: &["rate_min", "ratemin"], take: Take::Refused(RATE_MIN) },
    Row {
        names: &["rate_process"],
        take: Take::Set(|j, g| {
            j.poisson = g.one_of(&["linear", "poisson"])? == 1;
            Ok(())
        }),
    },
    Row { names: &["rate_cycle", "ratecycle"], take: Take::Same("iogauge paces each I/O, over no averaging window") },
    Row { names: &["rate_ignore_thinktime"], take: Take::AtDefault("0", "iogauge's rate counts the delays") },
    Row { names: &["rate_iops"], take: Take::Set(set_rate_iops) },
    Row { names: &["rate_iops_min"], take: Take::Refused(RATE_MIN) },
    Row {
        names: &["max_latency"],
        take: Take::Refused(
            "iogauge does not end a job on one slow I/O: an I/O slower than io_timeout counts as failed",
        ),
    },
    Row { names: &["latency_target"], take: Take::Refused(LATENCY_TARGET) },
    Row { names: &["latency_window"], take: Take::Refused(LATENCY_TARGET) },
    Row { names: &["latency_percentile"], take: Take::AtDefault("100", LATENCY_TARGET) },
    Row { names: &["latency_run"], take: Take::AtDefault("0", LATENCY_TARGET) },
    Row {
        names: &["invalidate"],
        take: Take::Same(
            "iogauge leaves the page cache as it finds it; direct I/O skips it, and a buffered test's result warns \
             that its numbers may come from memory",
        ),
    },
    Row { names: &["sync"], take: Take::Set(set_sync) },
    Row { names: &["write_hint"], take: Take::AtDefault("none", "iogauge gives no write lifetime hint") },
    Row { names: &["create_serialize"], take: Take::Same("iogauge creates its files one after another") },
    Row { names: &["create_fsync"], take: Take::Same("iogauge writes each file it creates in full, and syncs it") },
    Row { names: &["create_on_open"], take: Take::Same("iogauge creates its files before its test") },
    Row { names: &["create_only"], take: Take::AtDefault("0", "iogauge runs its test once its files are made") },
    Row {
        names: &["allow_file_create"],
        take: Take::AtDefault(
            "1",
            "iogauge creates a target that does not exist (as fio's default): name existing ones",
        ),
    },
    Row {
        names: &["allow_mounted_write"],
        take: Take::AtDefault(
            "0",
            "leave to write a mounted device is given on iogauge's command line only, by name: --allow-mounted-write DEV",
        ),
    },
    Row {
        names: &["pre_read"],
        take: Take::AtDefault("0", "iogauge reads nothing into the page cache before its test"),
    },
    Row {
        names: &["cpumask"],
        take: Take::Set(|j, g| {
            j.cpus = cpu_mask(g.value)?;
            Ok(())
        }),
    },
    Row {
        names: &["cpus_allowed"],
        take: Take::Set(|j, g| {
            j.cpus = crate::host::placement::parse_cpu_list(g.value)?;
            Ok(())
        }),
    },
    Row {
        names: &["cpus_allowed_policy"],
        take: Take::Set(|j, g| {
            j.cpus_split = g.one_of(&["shared", "split"])? == 1;
            Ok(())
        }),
    },
    Row {
        names: &["numa_cpu_nodes"],
        take: Take::Refused("iogauge places workers by CPU: give cpus_allowed with the node's CPUs"),
    },
    Row {
        names: &["numa_mem_policy"],
        take: Take::Refused("a worker's buffers are allocated on its CPU's node once it is placed: give cpus_allowed"),
    },
    Row {
        names: &["end_fsync"],
        take: Take::AtDefault("0", "iogauge does not flush at the test's end (fsync=N flushes every N writes)"),
    },
    Row { names: &["fsync_on_close"], take: Take::AtDefault("0", "iogauge does not flush when it closes a target") },
    Row {
        names: &["unlink"],
        take: Take::AtDefault("0", "iogauge keeps the files it creates, marked as its own, for later tests"),
    },
    Row { names: &["unlink_each_loop"], take: Take::AtDefault("0", "iogauge keeps the files it creates") },
    Row {
        names: &["exitall"],
        take: Take::Refused("iogauge ends a workload when every worker has done its part, not at the first one's end"),
    },
    Row { names: &["exit_what"], take: Take::Same("it applies to exitall, which iogauge refuses") },
    Row {
        names: &["exitall_on_error"],
        take: Take::Same("iogauge stops every worker at a failed I/O unless continue_on_error says otherwise"),
    },
    Row {
        names: &["stonewall", "wait_for_previous"],
        take: Take::Set(|j, g| {
            j.stonewall = g.flag()?;
            Ok(())
        }),
    },
    Row {
        names: &["new_group"],
        take: Take::Set(|j, g| {
            j.new_group = g.flag()?;
            Ok(())
        }),
    },
    Row { names: &["thread", "threads"], take: Take::Same("iogauge's workers are threads") },
    // Logs.
    Row {
        names: &["per_job_logs"],
        take: Take::Set(|j, g| {
            j.per_job_logs = g.flag()?;
            Ok(())
        }),
    },
    Row { names: &["write_bw_log"], take: Take::Set(log_prefix) },
    Row { names: &["bwavgtime"], take: Take::Report },
    Row { names: &["write_lat_log"], take: Take::Set(log_prefix) },
    Row { names: &["write_iops_log"], take: Take::Set(log_prefix) },
    Row { names: &["iopsavgtime"], take: Take::Report },
    Row { names: &["log_entries"], take: Take::Same("iogauge's logs take what they need") },
    Row {
        names: &["log_avg_msec"],
        take: Take::Set(|j, g| {
            j.log_avg_ms = g.num()?;
            Ok(())
        }),
    },
    Row { names: &["log_hist_msec"], take: Take::AtDefault("0", NO_HISTOGRAM_LOGS) },
    Row { names: &["log_hist_coarseness"], take: Take::AtDefault("0", NO_HISTOGRAM_LOGS) },
    Row { names: &["write_hist_log"], take: Take::Refused(NO_HISTOGRAM_LOGS) },
    Row { names: &["log_max_value"], take: Take::AtDefault("0", "iogauge's averaged logs give each window's mean") },
    Row {
        names: &["log_offset"],
        take: Take::Set(|j, g| {
            j.log_offset = g.flag()?;
            Ok(())
        }),
    },
    Row { names: &["log_prio"], take: Take::AtDefault("0", PRIORITY) },
    Row { names: &["log_compression"], take: Take::AtDefault("0", "iogauge writes its logs as text") },
    Row {
        names: &["log_compression_cpus"],
        take: Take::Same("it applies to log_compression, which iogauge leaves at 0"),
    },
    Row { names: &["log_store_compressed"], take: Take::AtDefault("0", "iogauge writes its logs as text") },
    Row {
        names: &["log_unix_epoch"],
        take: Take::AtDefault("0", "iogauge's log times count from the start of recording"),
    },
    Row {
        names: &["log_alternate_epoch"],
        take: Take::AtDefault("0", "iogauge's log times count from the start of recording"),
    },
    Row {
        names: &["log_alternate_epoch_clock_id"],
        take: Take::Same("it applies to log_unix_epoch and log_alternate_epoch, which iogauge leaves at 0"),
    },
    Row { names: &["block_error_percentiles"], take: Take::AtDefault("0", "iogauge counts failed I/Os by errno") },
    Row {
        names: &["group_reporting"],
        take: Take::Same("iogauge reports each workload's totals and each worker anyway"),
    },
    Row { names: &["stats"], take: Take::Report },
    // Written data.
    Row { names: &["zero_buffers"], take: Take::Set(set_zero_buffers) },
    Row { names: &["refill_buffers"], take: Take::Same("iogauge makes every written block afresh") },
    Row { names: &["scramble_buffers"], take: Take::Same("iogauge makes every written block afresh") },
    Row {
        names: &["buffer_pattern"],
        take: Take::Set(|j, g| {
            j.data.content = Content::Repeat(one_byte_pattern(g.value)?);
            Ok(())
        }),
    },
    Row { names: &["buffer_compress_percentage"], take: Take::Set(set_compress) },
    Row {
        names: &["buffer_compress_chunk"],
        take: Take::Same("iogauge lays a compressible block out its own way (data = \"compress:N\")"),
    },
    Row {
        names: &["dedupe_percentage"],
        take: Take::Set(|j, g| {
            j.data.dedupe_pct = g.num_in(0..=100, "%")? as u8;
            Ok(())
        }),
    },
    Row { names: &["dedupe_mode"], take: Take::AtDefault("repeat", "iogauge's duplicate blocks repeat earlier ones") },
    Row {
        names: &["dedupe_working_set_percentage"],
        take: Take::Same("it applies to dedupe_mode=working_set, refused"),
    },
    Row { names: &["dedupe_global"], take: Take::AtDefault("0", "each worker makes its own blocks") },
    // Reporting.
    Row { names: &["clat_percentiles"], take: Take::Report },
    Row { names: &["lat_percentiles"], take: Take::Report },
    Row { names: &["slat_percentiles"], take: Take::Report },
    Row { names: &["percentile_list"], take: Take::Report },
    Row { names: &["significant_figures"], take: Take::Report },
    Row { names: &["disk_util"], take: Take::Report },
    Row { names: &["gtod_reduce"], take: Take::Report },
    Row { names: &["disable_lat"], take: Take::Report },
    Row { names: &["disable_clat"], take: Take::Report },
    Row { names: &["disable_slat"], take: Take::Report },
    Row { names: &["disable_bw_measurement", "disable_bw"], take: Take::Report },
    Row { names: &["gtod_cpu"], take: Take::Same(REPORTING_CPU) },
    Row { names: &["unified_rw_reporting"], take: Take::Report },
    Row { names: &["continue_on_error"], take: Take::Set(set_continue_on_error) },
    Row { names: &["error_dump"], take: Take::Report },
    Row {
        names: &["profile"],
        take: Take::Refused("fio's built-in profiles are fio's own jobs: run iogauge's workloads (iogauge specs)"),
    },
    Row { names: &["cgroup"], take: Take::Refused(CGROUP) },
    Row { names: &["cgroup_nodelete"], take: Take::Same("it applies to cgroup, which iogauge refuses") },
    Row { names: &["cgroup_weight"], take: Take::Refused(CGROUP) },
    Row { names: &["uid"], take: Take::Refused("iogauge runs as the user who starts it") },
    Row { names: &["gid"], take: Take::Refused("iogauge runs as the user who starts it") },
    // Read before the other options: it applies to every size of the section.
    Row { names: &["kb_base"], take: Take::Set(|_, _| Ok(())) },
    Row { names: &["unit_base"], take: Take::Report },
    Row { names: &["hugepage-size"], take: Take::Same("iogauge allocates its own aligned buffers") },
    Row { names: &["flow_id"], take: Take::AtDefault("0", FLOW) },
    Row { names: &["flow"], take: Take::AtDefault("0", FLOW) },
    Row { names: &["flow_sleep"], take: Take::AtDefault("0", FLOW) },
    Row { names: &["steadystate", "ss"], take: Take::Refused(STEADY) },
    Row { names: &["steadystate_duration", "ss_dur"], take: Take::AtDefault("0", STEADY) },
    Row { names: &["steadystate_ramp_time", "ss_ramp"], take: Take::AtDefault("0", STEADY) },
    // The engines' own options (io_uring, libaio, pvsync2, nbd).
    Row {
        names: &["hipri"],
        take: Take::AtDefault(
            "0",
            "iogauge waits for completions and does not poll the device for them (IORING_SETUP_IOPOLL)",
        ),
    },
    Row {
        names: &["hipri_percentage"],
        take: Take::AtDefault("0", "iogauge waits for completions and does not poll the device"),
    },
    Row { names: &["cmdprio_percentage"], take: Take::AtDefault("0", PRIORITY) },
    Row { names: &["cmdprio_class"], take: Take::Refused(PRIORITY) },
    Row { names: &["cmdprio"], take: Take::Refused(PRIORITY) },
    Row { names: &["cmdprio_bssplit"], take: Take::Refused(PRIORITY) },
    Row {
        names: &["fixedbufs"],
        take: Take::Same("iogauge's io_uring engine registers its buffers wherever the kernel allows"),
    },
    Row {
        names: &["registerfiles"],
        take: Take::Same("iogauge's io_uring engine registers its files wherever the kernel allows"),
    },
    Row {
        names: &["sqthread_poll"],
        take: Take::AtDefault(
            "0",
            "each worker submits on its own thread; a kernel thread polling its ring would take a CPU beside it",
        ),
    },
    Row { names: &["sqthread_poll_cpu"], take: Take::Same("it places the polling thread of sqthread_poll, left at 0") },
    Row { names: &["nonvectored"], take: Take::Same("iogauge's io_uring engine reads and writes fixed buffers") },
    Row {
        names: &["uncached"],
        take: Take::AtDefault("0", "iogauge's buffered I/O keeps what it reads and writes in the page cache"),
    },
    Row {
        names: &["nowait"],
        take: Take::AtDefault("0", "iogauge waits for every I/O it issues (RWF_NOWAIT fails them instead)"),
    },
    Row {
        names: &["force_async"],
        take: Take::AtDefault(
            "0",
            "iogauge hands an I/O to io-wq only where the target cannot take it without blocking \
             (--io-wq-threads N lets more threads serve them)",
        ),
    },
    Row {
        names: &["cmd_type"],
        take: Take::Refused("iogauge issues reads, writes, trims and flushes, not pass-through commands"),
    },
    Row { names: &["userspace_reap"], take: Take::Same("iogauge reaps its completions from io_uring's ring") },
    Row {
        names: &["uri"],
        take: Take::Set(|j, g| {
            j.uri = Some(g.value.to_string());
            Ok(())
        }),
    },
];

fn set_rw_sequencer(_: &mut FioJob, g: &Given) -> Result<(), String> {
    match g.value {
        // fio's default; `identical` repeats the last offset between seeks.
        "sequential" => Ok(()),
        _ => Err("iogauge continues sequentially between seeks (fio's sequential); remove it".into()),
    }
}

fn set_align(j: &mut FioJob, g: &Given) -> Result<(), String> {
    if g.value.contains(',') {
        return Err("one alignment for reads and writes together".into());
    }
    j.align = Some(g.size()?);
    Ok(())
}

/// fio's `bsrange=MIN-MAX` (or `R,W`): sizes drawn as fio draws them between the two.
fn set_size_range(j: &mut FioJob, g: &Given) -> Result<(), String> {
    let ranges = sectors(&g.value.replace('-', ":"), &g.units, true)?;
    let range = |sizes: &[(u64, u32)]| match sizes {
        [(lo, _), (hi, _)] if lo <= hi => Ok((*lo, *hi)),
        _ => Err("give MIN-MAX, e.g. 4k-64k".to_string()),
    };
    let (r, w) = (range(&ranges[0])?, range(&ranges[1])?);
    j.set_sizes([vec![(r.0, 100)], vec![(w.0, 100)]], g);
    j.size_max = Some([r.1, w.1]);
    Ok(())
}

fn set_filesize(j: &mut FioJob, g: &Given) -> Result<(), String> {
    if g.value.contains(['-', ':']) {
        return Err("a range of sizes: iogauge makes every file one size, give one".into());
    }
    j.filesize = Some(g.size()?);
    Ok(())
}

fn set_engine(j: &mut FioJob, g: &Given) -> Result<(), String> {
    j.engine = Engine::of(g.value)?;
    j.engine_name = g.value.to_ascii_lowercase();
    Ok(())
}

/// One share for every direction (fio's R,W,T as one value where they agree).
fn set_percentage_random(j: &mut FioJob, g: &Given) -> Result<(), String> {
    let shares = g.value.split(',').map(|p| whole_number(p).filter(|p| *p <= 100)).collect::<Option<Vec<_>>>();
    j.percentage_random = match shares.as_deref() {
        Some([p, rest @ ..]) if rest.iter().all(|r| r == p) => Some(*p as u32),
        Some(_) => return Err("iogauge draws one share for reads and writes: give one".into()),
        None => return Err("give a share of 0 to 100".into()),
    };
    Ok(())
}

/// O_SYNC / O_DSYNC: each write stable when it completes, as RWF_DSYNC makes it.
fn set_sync(j: &mut FioJob, g: &Given) -> Result<(), String> {
    j.fua = match g.value {
        "" | "1" | "sync" | "dsync" => true,
        "0" | "none" => false,
        _ => return Err("give 0, 1, none, sync or dsync".into()),
    };
    Ok(())
}

fn set_compress(j: &mut FioJob, g: &Given) -> Result<(), String> {
    j.data.content = match g.num()? {
        0 => Content::Random,
        p @ 1..=100 => Content::Compressible(p as u8),
        _ => return Err("give 0 to 100".into()),
    };
    Ok(())
}

fn set_continue_on_error(j: &mut FioJob, g: &Given) -> Result<(), String> {
    j.continue_on_error = match g.value {
        "1" | "all" | "io" => true,
        "0" | "none" => false,
        _ => return Err("iogauge goes on after every kind of failed I/O or after none: give all or none".into()),
    };
    Ok(())
}

impl FioJob {
    /// Its transfer sizes, as `given` gives them (`bs`, `bssplit`), with no range between two.
    pub(super) fn set_sizes(&mut self, sizes: [Vec<(u64, u32)>; 2], given: &Given) {
        (self.sizes, self.size_max, self.sizes_at) = (sizes, None, format!("{}: {}", given.at, given.shown()));
    }

    /// Applies the options in order (a later one wins), each by its row of fio's options
    /// ([`OPTIONS`]); `kb_base` is read first and `rw`, `rwmixread`, `rwmixwrite`
    /// and `filesize` last, as fio settles them whatever their order. Options skipped under
    /// `--ignore-unknown` go to `ignored`; fio's reporting options, which change nothing here,
    /// to `notes` (each said once for the whole file).
    pub(super) fn apply(
        &mut self,
        opts: &[Opt],
        import: &Import,
        ignored: &mut Vec<(String, String)>,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        // fio reads a section's kb_base before its sizes, wherever it is written.
        if let Some(o) = opts.iter().rev().find(|o| o.key == "kb_base") {
            self.kb_base = match o.value.as_deref().unwrap_or("") {
                "1024" => 1024,
                "1000" => 1000,
                v => return Err(format!("{}: kb_base={v}: give 1024 (fio's default) or 1000", o.at)),
            };
        }
        for o in opts {
            let value = o.value.as_deref().unwrap_or("");
            let units = Units::new(self.kb_base);
            let g = Given { key: &o.key, value, has_value: o.value.is_some(), at: &o.at, units };
            self.take(&g, import, ignored, notes)?;
            self.note_opposite(&g.units, || format!("{}: {}", g.at, g.shown()));
        }
        self.settle()
    }

    /// Takes one option as its row says; an option refused (or that fio does not have) is
    /// one line naming it, its value and where it is, unless `--ignore-unknown` skips it.
    fn take(
        &mut self,
        g: &Given,
        import: &Import,
        ignored: &mut Vec<(String, String)>,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let refusal = match row(g.key).map(|r| &r.take) {
            Some(Take::Set(set)) => {
                // A value's own message starts with the value, which the line says already.
                let prefix = format!("{}: ", g.value);
                return set(self, g)
                    .map_err(|e| format!("{}: {}: {}", g.at, g.shown(), e.strip_prefix(&prefix).unwrap_or(&e)));
            }
            Some(Take::Same(_)) => return Ok(()),
            Some(Take::Report) => {
                if !notes.iter().any(|n| n == g.key) {
                    notes.push(g.key.to_string());
                }
                return Ok(());
            }
            Some(Take::AtDefault(default, _)) if g.is(default) => return Ok(()),
            Some(Take::AtDefault(_, why)) => {
                format!("{}: {}: {}; remove it", g.at, g.shown(), why.replace("{value}", g.value))
            }
            Some(Take::Refused(why)) => format!(
                "{}: {} in [{}]: {why}; remove it, or give --ignore-unknown to run without it",
                g.at,
                g.shown(),
                self.name
            ),
            None => format!(
                "{}: option {} in [{}] is not one of fio's options: remove it, or give --ignore-unknown to run without it",
                g.at, g.key, self.name
            ),
        };
        if !import.ignore_unknown {
            return Err(refusal);
        }
        ignored.push((g.key.to_string(), g.at.to_string()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options that run otherwise than read into the job, as docs/interop.md lists them.
    fn others_table() -> String {
        let mut table = String::from("| fio option | iogauge |\n| --- | --- |\n");
        for row in OPTIONS {
            let how = match &row.take {
                Take::Set(_) => continue,
                Take::Same(why) => format!("taken as fio runs it: {why}"),
                Take::Report => {
                    "said once, a reporting option: iogauge times every I/O and reports every percentile".into()
                }
                Take::AtDefault(default, why) => {
                    format!("at fio's default, `{default}`, only; else refused: {}", why.replace("{value}", "NAME"))
                }
                Take::Refused(why) => format!("refused: {why}"),
            };
            let aliases: Vec<String> = row.names[1..].iter().map(|a| format!("`{a}`")).collect();
            let aliases = if aliases.is_empty() { String::new() } else { format!(" ({})", aliases.join(", ")) };
            table += &format!("| `{}`{aliases} | {} |\n", row.names[0], how.replace('|', "/"));
        }
        table
    }

    /// docs/interop.md says what iogauge does with every option of fio's: each option read
    /// into the job in its table of what maps to what, every other one in the table made
    /// from the rows (IOGAUGE_BLESS=1 writes it), and no option has two rows.
    #[test]
    fn the_interop_docs_say_every_option_as_its_row() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/interop.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (begin, end) =
            ("<!-- fio's options: made from src/import/fio/options.rs -->\n", "<!-- end of fio's options -->");
        let start = doc.find(begin).expect("the options table's first mark") + begin.len();
        let stop = doc.find(end).expect("the options table's last mark");
        let table = others_table();
        if std::env::var_os("IOGAUGE_BLESS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..start], &doc[stop..])).unwrap();
        } else {
            assert!(
                doc[start..stop] == table,
                "docs/interop.md's table of fio's options is not the rows' (IOGAUGE_BLESS=1 cargo test --lib options):\n{table}"
            );
        }
        // Said as `name`, `name=VALUE` or `name VALUE`.
        let mapped = &doc[..start];
        let says = |name: &str| {
            let at = format!("`{name}");
            mapped
                .match_indices(&at)
                .any(|(i, _)| matches!(mapped[i + at.len()..].chars().next(), Some('`' | '=' | ' ')))
        };
        let unsaid: Vec<&str> = OPTIONS
            .iter()
            .filter(|r| matches!(r.take, Take::Set(_)) && !says(r.names[0]))
            .map(|r| r.names[0])
            .collect();
        assert!(unsaid.is_empty(), "docs/interop.md does not say how these map: {unsaid:?}");
        let mut names: Vec<&str> = OPTIONS.iter().flat_map(|r| r.names.iter().copied()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "an option with two rows");
    }

    /// A value is fio's default as fio reads it: a number of 0 with or without a unit for
    /// "0", a flag alone for "1", a word as written.
    #[test]
    fn a_default_is_read_as_fio_reads_it() {
        let given = |value: Option<&'static str>| Given {
            key: "k",
            value: value.unwrap_or(""),
            has_value: value.is_some(),
            at: "j.fio:1",
            units: Units::new(1024),
        };
        for (value, default, is) in [
            (Some("0"), "0", true),
            (Some("0s"), "0", true),
            (Some("false"), "0", true),
            (Some("2s"), "0", false),
            (None, "0", false),
            (None, "1", true),
            (Some("none"), "none", true),
            (Some("roundrobin"), "roundrobin", true),
            (Some("random"), "roundrobin", false),
        ] {
            assert_eq!(given(value).is(default), is, "{value:?} against {default}");
        }
    }
}
