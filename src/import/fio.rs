//! fio's job files, a practical subset with fio's meanings (fio's HOWTO; init.c reads the
//! file, options.c the options): `[global]` sections set what later jobs inherit, each other
//! section is a job (`numjobs` copies of it), `include`, `;` and `#` comments, `${ENV}`, and
//! fio's sizes (`1m` = 1 MiB) and times (seconds unless a unit is given).
//!
//! Jobs become `[[worker]]`s, their `rw`/`bs` an inline `[[spec]]`; groups separated by
//! `stonewall` (or a `wait_for` on the only job running) run one after another when they are
//! the same workers with another specification (fio's examples/ssd-test.fio), as iogauge's
//! `run` list; `new_group` only starts a reporting group of fio's, run with the jobs before
//! it. An option outside the subset is never ignored: one line naming it and its section,
//! unless `--ignore-unknown`.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Import;
use crate::config::{Content, DataPattern, Job, TestSettings, WorkerConfig};
use crate::engine::EngineKind;
use crate::spec::{AccessSpec, Distribution, SpecLine};
use crate::units::{parse_duration, parse_signed_size};

/// One `key[=value]` of a section, where it was written.
#[derive(Debug, Clone)]
struct Opt {
    key: String,
    value: Option<String>,
    at: String,
}

#[derive(Debug)]
struct Section {
    name: String,
    at: String,
    opts: Vec<Opt>,
}

/// How deep `include`s may nest (a file including itself would never end).
const MAX_INCLUDE_DEPTH: usize = 8;

/// What fio's `rw=PATTERN[:N]` asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pattern {
    /// % of reads, `None` for a mix (`rwmixread` decides).
    pub read: Option<u32>,
    /// % of random I/Os (0 or 100).
    pub random: u32,
    /// A random pattern's `:N`: a new random offset every N I/Os (1 without it).
    pub seek_every: u32,
    /// A sequential pattern's `:SIZE`: the hole after each I/O, negative backwards.
    pub skip: i64,
    /// % of trims (100 for fio's trim patterns, else 0).
    pub trim: u32,
    /// Each trim is followed by a write of its blocks (`trimwrite`, `randtrimwrite`).
    pub write_trimmed: bool,
}

/// fio's `rw` (also `--rw`), with its postfix as fio reads it: for a random pattern the I/Os
/// per new random offset, for a sequential one the hole after each I/O; else what to give
/// instead.
pub fn pattern(rw: &str) -> Result<Pattern, String> {
    pattern_with(rw, |n| parse_signed_size(n).map_err(|e| e.to_string()))
}

/// `rw` with its hole's size read by `hole` (a job file's sizes are fio's, with its `kb_base`).
fn pattern_with(rw: &str, hole: impl Fn(&str) -> Result<i64, String>) -> Result<Pattern, String> {
    let (name, postfix) = match rw.split_once(':') {
        Some((p, n)) => (p, Some(n.trim())),
        None => (rw, None),
    };
    let (read, random, trim, write_trimmed) = match name.trim().to_ascii_lowercase().as_str() {
        "read" => (Some(100), 0, 0, false),
        "write" => (Some(0), 0, 0, false),
        "randread" => (Some(100), 100, 0, false),
        "randwrite" => (Some(0), 100, 0, false),
        "rw" | "readwrite" => (None, 0, 0, false),
        "randrw" => (None, 100, 0, false),
        "trim" => (Some(0), 0, 100, false),
        "randtrim" => (Some(0), 100, 100, false),
        "trimwrite" => (Some(0), 0, 100, true),
        "randtrimwrite" => (Some(0), 100, 100, true),
        _ => {
            return Err("use read, write, randread, randwrite, rw (readwrite), randrw, trim, randtrim, trimwrite \
                        or randtrimwrite"
                .into());
        }
    };
    let mut p = Pattern { read, random, seek_every: 1, skip: 0, trim, write_trimmed };
    match postfix {
        None => {}
        Some(n) if random > 0 => {
            p.seek_every = n
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!(":{n}: give the I/Os per new random offset, a whole number from 1"))?;
        }
        Some(n) => p.skip = hole(n).map_err(|e| format!(":{n}: the hole: {e}"))?,
    }
    Ok(p)
}

/// A time as fio reads one: a bare number in `unit` (seconds for runtime, microseconds for
/// thinktime), else with fio's units (`us`, `ms`, `s`, `m`, `h`, `d`, also `usec`...).
fn time(v: &str, unit: Duration) -> Result<Duration, String> {
    let v = v.trim();
    match v.parse::<u32>() {
        Ok(n) => Ok(unit * n),
        Err(_) => Ok(parse_duration(v)?),
    }
}

/// `${NAME}` replaced by the environment's value.
fn expand(v: &str, at: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let Some(end) = rest[i..].find('}') else { return Err(format!("{at}: \"{v}\": ${{ without }}")) };
        let name = &rest[i + 2..i + end];
        let value = std::env::var(name).map_err(|_| format!("{at}: ${{{name}}} is not set in the environment"))?;
        out.push_str(&value);
        rest = &rest[i + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The sections of a job file, includes read in place, as fio's init.c reads them: a line is
/// cut at `;` or `#`, blank lines skipped, `[name]` starts a section.
fn sections(text: &str, file: &Path, depth: usize, into: &mut Vec<Section>) -> Result<(), String> {
    let shown = file.display().to_string();
    for (n, raw) in text.lines().enumerate() {
        let at = format!("{shown}:{}", n + 1);
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if depth > 0 {
                return Err(format!("{at}: no new sections in included files (as fio)"));
            }
            into.push(Section { name: name.trim().to_string(), at, opts: Vec::new() });
            continue;
        }
        if let Some(inc) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(format!("{at}: includes nest deeper than {MAX_INCLUDE_DEPTH}"));
            }
            let inc = PathBuf::from(expand(inc.trim(), &at)?);
            // fio looks from where it runs, then beside the including file.
            let path = if inc.exists() { inc } else { file.parent().unwrap_or(Path::new(".")).join(inc) };
            let text = super::read_text(&path, true).map_err(|e| format!("{at}: include {}: {e}", path.display()))?;
            sections(&text, &path, depth + 1, into)?;
            continue;
        }
        let Some(section) = into.last_mut() else {
            return Err(format!("{at}: option \"{line}\" outside of a [section]"));
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), &at)?)),
            None => (line, None),
        };
        // Not quoted: an include of a file that is no job file (a password file) must not
        // print its lines.
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("{at}: not a fio option (a name, or name=value)"));
        }
        section.opts.push(Opt { key: key.to_ascii_lowercase(), value, at });
    }
    Ok(())
}

/// One job's options, as fio reads them.
#[derive(Debug, Clone)]
struct FioJob {
    name: String,
    at: String,
    read: u32,
    random: u32,
    /// Sizes with their % of I/Os, for reads and for writes (fio's `bs=R,W`).
    sizes: [Vec<(u64, u32)>; 2],
    iodepth: u32,
    numjobs: u32,
    runtime: Option<Duration>,
    ramp: Duration,
    time_based: bool,
    size: Option<u64>,
    offset: u64,
    /// `offset_increment`: copy N of `numjobs` starts at `offset + N * offset_increment`.
    offset_increment: u64,
    io_size: Option<u64>,
    number_ios: Option<u64>,
    filenames: Vec<String>,
    /// `uri=` of `ioengine=nbd`: the NBD export (libnbd's URI).
    uri: Option<String>,
    directory: Option<String>,
    direct: bool,
    engine: Engine,
    rate_iops: Option<f64>,
    thinktime: Duration,
    thinktime_blocks: u32,
    /// `rw=randread:N`: a new random offset every N I/Os.
    seek_every: u32,
    /// `rw=write:4k`: a hole after each sequential I/O (negative: backwards).
    skip: i64,
    /// `random_distribution`.
    distribution: Distribution,
    /// `random_generator=lfsr`: a uniform law takes every block once per pass.
    lfsr: bool,
    /// `rw=trim`...: every I/O a trim; with `trimwrite`, each followed by a write of its blocks.
    trim: u32,
    write_trimmed: bool,
    /// `fsync=N` / `fdatasync=N`: a flush every N writes, fsync or fdatasync.
    flush_every: u32,
    fsync: bool,
    /// `sync=1|sync|dsync`: every write stable when it completes.
    fua: bool,
    verify: bool,
    /// `write_*_log`: where the logs go.
    log_dir: Option<PathBuf>,
    /// `buffer_compress_percentage` and `dedupe_percentage`: what written blocks hold.
    data: DataPattern,
    /// `log_avg_msec`.
    log_avg_ms: u64,
    /// `iodepth_batch_submit`: I/Os submitted at once (fio's default 1; 0: `iodepth`).
    submit_batch: u32,
    /// `iodepth_batch_complete_min`: completions waited for at once (fio's default 1).
    completion_batch: u32,
    /// Starts a new group, run after the ones before it (`stonewall`, `wait_for_previous`).
    stonewall: bool,
    /// `new_group`: starts a reporting group of fio's, run with the jobs before it.
    new_group: bool,
    /// `wait_for=NAME`: starts once job NAME has ended (and where it was written).
    wait_for: Option<(String, String)>,
    /// Its `wait_for` is a stonewall: NAME was the only job running ([`waits`]).
    waits: bool,
    /// `ioengine` as written (libaio and io_uring are one engine here, not in fio).
    engine_name: String,
    /// `norandommap`: random offsets drawn with repeats, as iogauge draws them.
    norandommap: bool,
    /// `rate`: a cap in MB/s (10^6 bytes/s).
    rate_mbps: Option<f64>,
    /// `blockalign`: random offsets' boundary (fio's default: the transfer size).
    align: Option<u64>,
    /// `loops`: the job's I/O done this many times over.
    loops: u64,
    /// `description`: what the job is, as its specification's description.
    description: Option<String>,
    /// `rate_process=poisson`: exponentially spaced arrivals.
    poisson: bool,
    /// `cpus_allowed` / `cpumask`: the CPUs its threads may run on (none: the process's).
    cpus: Vec<u32>,
    /// `cpus_allowed_policy=split`: each thread on one CPU of `cpus`, by its number in the file.
    cpus_split: bool,
    /// `randseed`: the seed of the test's generators (None: iogauge's own).
    seed: Option<u64>,
    /// `continue_on_error=all`: failed I/Os are counted and the job goes on.
    continue_on_error: bool,
    /// `kb_base`: the base of `k`, `m`, `g`... in sizes (1024, fio's default, or 1000).
    kb_base: u64,
    /// The first size given in fio's "opposite" units under kb_base=1024 (where, and how).
    opposite_units: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Engine {
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
    fn of(name: &str) -> Result<Engine, String> {
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

/// A `bs`/`bssplit` value: sizes with shares, for reads and writes (`R,W`; one for both).
fn sizes(v: &str, split: bool, units: &Units) -> Result<[Vec<(u64, u32)>; 2], String> {
    let one = |part: &str| -> Result<Vec<(u64, u32)>, String> {
        if !split {
            return Ok(vec![(units.size(part)?, 100)]);
        }
        let mut out = Vec::new();
        for item in part.split(':').filter(|s| !s.is_empty()) {
            let (s, pct) = item.split_once('/').unwrap_or((item, ""));
            // A size without a share takes what the others leave (fio's bssplit).
            let pct = if pct.is_empty() {
                None
            } else {
                Some(pct.parse::<u32>().map_err(|_| format!("\"{item}\": share \"{pct}\" is not a whole %"))?)
            };
            out.push((units.size(s)?, pct));
        }
        let given: u32 = out.iter().filter_map(|x| x.1).sum();
        let blank = out.iter().filter(|x| x.1.is_none()).count() as u32;
        if blank > 0 && (100 - given.min(100)) % blank != 0 {
            return Err(format!("\"{part}\": the sizes without a share split {}% unevenly", 100 - given.min(100)));
        }
        Ok(out.into_iter().map(|(s, p)| (s, p.unwrap_or((100 - given.min(100)) / blank.max(1)))).collect())
    };
    let mut parts = v.split(',');
    let read = one(parts.next().unwrap_or(""))?;
    let write = match parts.next() {
        Some(w) if !w.is_empty() => one(w)?,
        _ => read.clone(),
    };
    Ok([read, write])
}

/// A size as fio reads one (parse.c: `str_to_decimal` with units): bytes, or a whole number
/// with a unit. `k`, `m`, `g`, `t`, `p` (also followed by `b` or `i`) are powers of `kb_base`
/// (1024 by default); `kib`, `mib`, `gib`, `tib`, `pib` are powers of the other base, fio's
/// "opposite" units (under its default, 4KiB is 4000 bytes); hexadecimal after `0x` is bytes.
/// What fio reads otherwise than it looks is refused, with what fio makes of it: it takes no
/// fraction (1.5k is 1 byte there), no unit after hexadecimal (0x10k is 16 bytes), and an
/// unknown unit or a space before one as none (4q and "4 k" are 4 bytes). Returns the bytes
/// and the base of the unit they were written in (1 for bytes).
fn fio_size(v: &str, kb_base: u64) -> Result<(u64, u64), String> {
    let t = v.trim();
    let too_large = || format!("{t}: too large a size");
    let units = "give bytes, or a whole number with k, m, g, t or p (4k, 1m)";
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let digits = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
        let value = u64::from_str_radix(&hex[..digits], 16);
        return match (value, &hex[digits..]) {
            (Ok(n), "") => Ok((n, 1)),
            (Ok(n), unit) => Err(format!(
                "{t}: fio reads a hexadecimal size in bytes and ignores the \"{unit}\" after it ({} there): \
                 give 0x{} alone, or a decimal size with its unit",
                in_bytes(n),
                &hex[..digits]
            )),
            (Err(_), _) if digits > 0 => Err(too_large()),
            _ => Err(format!("{t}: not a size: {units}")),
        };
    }
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    if num.is_empty() {
        return Err(format!("{t}: not a size: {units}"));
    }
    if unit.starts_with('.') {
        return Err(format!(
            "{t}: fio takes no fraction in a size (it reads {t} as {}): give a whole number of a smaller unit \
             (1.5k is 1536)",
            in_bytes(num.parse().unwrap_or(u64::MAX))
        ));
    }
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let lower = unit.to_ascii_lowercase();
    let power = |c: char| "kmgtp".find(c).map(|i| i as u32 + 1);
    let (base, pow) = match (lower.chars().next(), lower.get(1..).unwrap_or("")) {
        (None, _) | (Some('b'), "") => (1, 0),
        (Some(c), "ib") if power(c).is_some() => (other, power(c).unwrap_or(0)),
        (Some(c), "" | "b" | "i") if power(c).is_some() => (kb_base, power(c).unwrap_or(0)),
        _ => {
            let n = num.parse().unwrap_or(u64::MAX);
            return Err(format!("{t}: fio reads \"{unit}\" as no unit ({} there): {units}", in_bytes(n)));
        }
    };
    let bytes = num.parse::<u64>().ok().and_then(|n| n.checked_mul(base.checked_pow(pow)?)).ok_or_else(too_large)?;
    Ok((bytes, if pow == 0 { 1 } else { base }))
}

/// A section's sizes as fio reads them (its `kb_base`), noting whether one was written in a
/// unit of 1000: fio's "opposite" `kib`, `mib`... under kb_base=1024, its `k`, `m`... under 1000.
struct Units {
    kb_base: u64,
    thousands: Cell<bool>,
}

impl Units {
    fn new(kb_base: u64) -> Units {
        Units { kb_base, thousands: Cell::new(false) }
    }

    /// A size ([`fio_size`]), its unit noted.
    fn size(&self, v: &str) -> Result<u64, String> {
        let (bytes, base) = fio_size(v, self.kb_base)?;
        self.thousands.set(self.thousands.get() || base == 1000);
        Ok(bytes)
    }

    /// Whether a size read so far was in fio's opposite units under its default kb_base=1024
    /// (4KiB is 4000 bytes there), which a reader of the job file may not expect.
    fn opposite(&self) -> bool {
        self.kb_base == 1024 && self.thousands.get()
    }
}

/// Transfer sizes as iogauge takes them, whole 512-byte sectors: one that is not, written `v`
/// with a unit of 1000 (fio's `kib`... under kb_base=1024, its `k`... under 1000), is refused
/// with how fio reads it, which its writer may not have meant (plain bytes are left to the
/// specification's own check).
fn sectors(v: &str, units: &Units, split: bool) -> Result<[Vec<(u64, u32)>; 2], String> {
    let sizes = sizes(v, split, units)?;
    let kb_base = units.kb_base;
    match sizes.iter().flatten().find(|(bytes, _)| bytes % 512 != 0).filter(|_| units.thousands.get()) {
        Some((bytes, _)) => Err(format!(
            "{} as fio reads it (under kb_base={kb_base} k, m, g are powers of {kb_base} and kib, mib, gib of {}), \
             not whole 512-byte sectors as iogauge's transfer sizes are: 4k is 4096 bytes{}",
            in_bytes(*bytes),
            if kb_base == 1000 { 1024 } else { 1000 },
            if kb_base == 1000 { " under kb_base=1024" } else { "" }
        )),
        None => Ok(sizes),
    }
}

/// `n` bytes, in words.
fn in_bytes(n: u64) -> String {
    format!("{n} byte{}", if n == 1 { "" } else { "s" })
}

/// fio's `buffer_pattern` when it is one byte, which iogauge repeats through every written
/// block: `0xNN`, or one character in quotes (fio repeats longer patterns too).
fn one_byte_pattern(v: &str) -> Result<u8, String> {
    let v = v.trim();
    let hex = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")).filter(|h| h.len() == 2);
    let quoted = v.strip_prefix('"').and_then(|q| q.strip_suffix('"')).filter(|c| c.len() == 1);
    match (hex, quoted) {
        (Some(h), _) => u8::from_str_radix(h, 16).map_err(|_| format!("{v}: not a byte in hexadecimal")),
        (_, Some(c)) => Ok(c.as_bytes()[0]),
        _ => Err(format!("{v}: iogauge repeats one byte through each block: give 0xNN or one character in quotes")),
    }
}

/// A whole number as fio reads one: decimal, or hexadecimal after `0x`.
fn whole_number(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// fio's `cpumask`: a bit mask of CPUs (bit N is CPU N).
fn cpu_mask(v: &str) -> Result<Vec<u32>, String> {
    let v = v.trim();
    let mask = whole_number(v)
        .ok_or_else(|| format!("{v}: give a bit mask of CPUs (34 or 0x22: CPUs 1 and 5), or cpus_allowed=1,5"))?;
    match (0..64).filter(|b| mask >> b & 1 == 1).collect::<Vec<u32>>() {
        cpus if cpus.is_empty() => Err(format!("{v}: no CPU in the mask")),
        cpus => Ok(cpus),
    }
}

fn flag(o: &Opt) -> Result<bool, String> {
    match o.value.as_deref().map(str::trim) {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(v) => Err(format!("{}: {}={v}: give 0 or 1", o.at, o.key)),
    }
}

impl FioJob {
    fn new(section: &Section) -> FioJob {
        FioJob {
            name: section.name.clone(),
            at: section.at.clone(),
            read: 100,
            random: 0,
            sizes: [vec![(4096, 100)], vec![(4096, 100)]],
            iodepth: 1,
            numjobs: 1,
            runtime: None,
            ramp: Duration::ZERO,
            time_based: false,
            size: None,
            offset: 0,
            offset_increment: 0,
            io_size: None,
            number_ios: None,
            filenames: Vec::new(),
            uri: None,
            directory: None,
            // fio's defaults: buffered I/O with psync.
            direct: false,
            engine: Engine::Sync,
            rate_iops: None,
            thinktime: Duration::ZERO,
            thinktime_blocks: 1,
            seek_every: 1,
            skip: 0,
            distribution: Distribution::Uniform,
            lfsr: false,
            trim: 0,
            write_trimmed: false,
            flush_every: 0,
            fsync: false,
            fua: false,
            verify: false,
            log_dir: None,
            data: Content::Random.into(),
            log_avg_ms: 0,
            submit_batch: 1,
            completion_batch: 1,
            stonewall: false,
            new_group: false,
            wait_for: None,
            waits: false,
            engine_name: "psync".into(),
            norandommap: false,
            rate_mbps: None,
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

    /// Applies the options in order (a later one wins); `rwmixread` and `rw` are read after
    /// the rest, as fio settles a mix whatever the order.
    /// Options skipped under `--ignore-unknown` go to `ignored`; fio's reporting options,
    /// which change nothing here, to `notes` (each said once for the whole file).
    fn apply(
        &mut self,
        opts: &[Opt],
        import: &Import,
        ignored: &mut Vec<(String, String)>,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let (mut rw, mut mix_read, mut mix_write, mut filesize) = (None, None, None, None);
        // fio reads a section's kb_base before its sizes, wherever it is written.
        if let Some(o) = opts.iter().rev().find(|o| o.key == "kb_base") {
            self.kb_base = match o.value.as_deref().unwrap_or("").trim() {
                "1024" => 1024,
                "1000" => 1000,
                v => return Err(format!("{}: kb_base={v}: give 1024 (fio's default) or 1000", o.at)),
            };
        }
        let kb_base = self.kb_base;
        for o in opts {
            let v = o.value.as_deref().unwrap_or("");
            let bad = |e: String| format!("{}: {}: {e}", o.at, o.key);
            let num = |v: &str| whole_number(v).ok_or_else(|| format!("{}: {}={v}: give a whole number", o.at, o.key));
            // Fresh for each option: a transfer size's check and the warning ask of its own.
            let units = Units::new(kb_base);
            let size = |v: &str| units.size(v).map_err(bad);
            match o.key.as_str() {
                "name" => self.name = v.to_string(),
                "rw" | "readwrite" => rw = Some((v.to_string(), o.at.clone())),
                // fio's default; `identical` repeats the last offset between seeks.
                "rw_sequencer" if v.eq_ignore_ascii_case("sequential") => {}
                "rw_sequencer" => {
                    return Err(format!(
                        "{}: rw_sequencer={v}: iogauge continues sequentially between seeks (fio's sequential); \
                         remove it",
                        o.at
                    ));
                }
                "rwmixread" => mix_read = Some(num(v)?.min(100) as u32),
                "rwmixwrite" => mix_write = Some(num(v)?.min(100) as u32),
                "bs" | "blocksize" => self.sizes = sectors(v, &units, false).map_err(bad)?,
                "bssplit" => self.sizes = sectors(v, &units, true).map_err(bad)?,
                "bsrange" | "blocksize_range" => {
                    let [r, w] = sectors(&v.replace('-', "/0:"), &units, true).map_err(bad)?;
                    self.sizes = [range(&r).map_err(bad)?, range(&w).map_err(bad)?];
                }
                "iodepth" => self.iodepth = num(v)?.clamp(1, u32::MAX as u64) as u32,
                "numjobs" => {
                    self.numjobs = match num(v)? {
                        n @ 1..=4096 => n as u32,
                        n => return Err(format!("{}: numjobs={n}: give 1 to 4096 jobs", o.at)),
                    }
                }
                "runtime" | "timeout" => self.runtime = Some(time(v, Duration::from_secs(1)).map_err(bad)?),
                "ramp_time" => self.ramp = time(v, Duration::from_secs(1)).map_err(bad)?,
                "time_based" => self.time_based = flag(o)?,
                "size" => self.size = Some(size(v)?),
                // Each file's size: with no `size`, the job's region is all of its files, as fio's.
                "filesize" if v.contains(['-', ':']) => {
                    return Err(bad(format!("{v}: a range of sizes: iogauge makes every file one size, give one")));
                }
                "filesize" => filesize = Some(size(v)?),
                "offset" => self.offset = size(v)?,
                "offset_increment" => self.offset_increment = size(v)?,
                "io_size" | "io_limit" => self.io_size = Some(size(v)?),
                "number_ios" => self.number_ios = Some(num(v)?),
                "filename" => self.filenames = split_filenames(v),
                "uri" => self.uri = Some(v.to_string()),
                "directory" => self.directory = Some(v.to_string()),
                "direct" => self.direct = flag(o)?,
                "buffered" => self.direct = !flag(o)?,
                "ioengine" => {
                    self.engine = Engine::of(v).map_err(|e| format!("{}: ioengine={v}: {e}", o.at))?;
                    self.engine_name = v.trim().to_ascii_lowercase();
                }
                "rate_iops" => {
                    if v.contains(',') {
                        return Err(format!("{}: rate_iops={v}: one rate for reads and writes together", o.at));
                    }
                    self.rate_iops = Some(num(v)? as f64);
                }
                // fio's `rate`: bytes per second (its sizes' suffixes, 1m = 1 MiB/s).
                "rate" => {
                    if v.contains(',') {
                        return Err(format!("{}: rate={v}: one rate for reads and writes together", o.at));
                    }
                    self.rate_mbps = Some(size(v)? as f64 / 1e6);
                }
                "thinktime" => self.thinktime = time(v, Duration::from_micros(1)).map_err(bad)?,
                "thinktime_blocks" => self.thinktime_blocks = num(v)?.clamp(1, u32::MAX as u64) as u32,
                "random_distribution" => {
                    self.distribution = v.parse::<crate::distribution::Distribution>().map_err(|e| bad(e.into()))?
                }
                "random_generator" => {
                    self.lfsr = match v.trim() {
                        "lfsr" => true,
                        "tausworthe" | "tausworthe64" => false,
                        _ => return Err(bad(format!("{v}: give lfsr, tausworthe or tausworthe64"))),
                    }
                }
                "fsync" | "fdatasync" => {
                    (self.flush_every, self.fsync) = (num(v)?.min(u32::MAX as u64) as u32, o.key == "fsync");
                }
                // O_SYNC / O_DSYNC: each write stable when it completes, as RWF_DSYNC makes it.
                "sync" => {
                    self.fua = match v.trim() {
                        "" | "1" | "sync" | "dsync" => true,
                        "0" | "none" => false,
                        _ => return Err(format!("{}: sync={v}: give 0, 1, none, sync or dsync", o.at)),
                    }
                }
                "verify" => self.verify = !matches!(v, "0" | "null" | ""),
                "buffer_compress_percentage" => {
                    self.data.content = match num(v)? {
                        0 => Content::Random,
                        p @ 1..=100 => Content::Compressible(p as u8),
                        _ => return Err(bad("give 0 to 100".into())),
                    }
                }
                "dedupe_percentage" => {
                    self.data.dedupe_pct =
                        num(v)?.try_into().ok().filter(|p| *p <= 100).ok_or_else(|| bad("give 0 to 100".into()))?
                }
                // iogauge makes every written block afresh (data::Blocks): as fio's refilled buffers.
                "refill_buffers" | "scramble_buffers" => {}
                // fio's logs: iogauge writes lat, clat, bw and iops together, named by worker,
                // in the directory of the prefix.
                "write_lat_log" | "write_bw_log" | "write_iops_log" => {
                    let dir = Path::new(v).parent().filter(|p| !p.as_os_str().is_empty());
                    self.log_dir = Some(dir.map_or_else(|| PathBuf::from("."), Path::to_path_buf));
                }
                "log_avg_msec" => self.log_avg_ms = num(v)?,
                // fio's 0 polls without waiting; iogauge waits for at least one.
                "iodepth_batch_complete_min" | "iodepth_batch_complete" => {
                    self.completion_batch = num(v)?.clamp(1, u32::MAX as u64) as u32
                }
                "iodepth_batch_submit" | "iodepth_batch" => self.submit_batch = num(v)?.min(u32::MAX as u64) as u32,
                // iogauge's logs always give each I/O's offset.
                "log_offset" => {}
                "stonewall" | "wait_for_previous" => self.stonewall = flag(o)?,
                "new_group" => self.new_group = flag(o)?,
                "wait_for" => self.wait_for = Some((v.trim().to_string(), o.at.clone())),
                // Reporting and process model: no bearing on what runs (iogauge reports the
                // group's totals and each worker anyway).
                "group_reporting" | "thread" | "threads" => {}
                // What fio measures and prints: iogauge times every I/O (its clock costs ~20 ns
                // an I/O, docs/performance.md) and gives every percentile anyway.
                "gtod_reduce"
                | "disable_lat"
                | "disable_clat"
                | "disable_slat"
                | "disable_bw"
                | "clat_percentiles"
                | "lat_percentiles"
                | "percentile_list"
                | "unified_rw_reporting" => {
                    if !notes.contains(&o.key) {
                        notes.push(o.key.clone());
                    }
                }
                "description" => self.description = Some(v.to_string()),
                "blockalign" | "ba" => {
                    if v.contains(',') {
                        return Err(format!("{}: {}={v}: one alignment for reads and writes together", o.at, o.key));
                    }
                    self.align = Some(size(v)?);
                }
                "loops" => self.loops = num(v)?.max(1),
                "rate_process" => {
                    self.poisson = match v.trim() {
                        "linear" => false,
                        "poisson" => true,
                        _ => return Err(bad(format!("{v}: give linear or poisson"))),
                    }
                }
                // What iogauge always does: uniform random offsets without a map of the blocks
                // done, from a fixed seed (docs/interop.md: fio's default map differs).
                "norandommap" => self.norandommap = flag(o)?,
                "randrepeat" => {}
                // What iogauge's io_uring engine does wherever the kernel allows, and a cap on
                // the completions fio reaps in one call (iogauge reaps every one there is):
                // fio's loop, not the I/O it asks for.
                "registerfiles" | "fixedbufs" | "iodepth_batch_complete_max" => {}
                // fio drops a buffered job's cached pages first whether it says so or not (its
                // default); iogauge never does (docs/interop.md), and direct I/O skips the cache.
                "invalidate" => {}
                "randseed" => self.seed = Some(num(v)?),
                // Read before the loop: it applies to every size of the section.
                "kb_base" => {}
                "continue_on_error" => {
                    self.continue_on_error = match v.trim() {
                        "1" | "all" | "io" => true,
                        "0" | "none" => false,
                        _ => {
                            return Err(bad(format!(
                                "{v}: iogauge goes on after every kind of failed I/O or after none: give all or none"
                            )));
                        }
                    }
                }
                // Every written block the same: all zeros, or one byte repeated.
                "zero_buffers" => {
                    if flag(o)? {
                        self.data.content = Content::Repeat(0);
                    }
                }
                "buffer_pattern" => self.data.content = Content::Repeat(one_byte_pattern(v).map_err(bad)?),
                "cpus_allowed" => self.cpus = crate::placement::parse_cpu_list(v).map_err(bad)?,
                "cpumask" => self.cpus = cpu_mask(v).map_err(bad)?,
                "cpus_allowed_policy" => {
                    self.cpus_split = match v.trim() {
                        "shared" => false,
                        "split" => true,
                        _ => return Err(bad(format!("{v}: give shared or split"))),
                    }
                }
                other => {
                    if !import.ignore_unknown {
                        return Err(format!(
                            "{}: option {other} in [{}] is not supported: remove it, or give --ignore-unknown to run \
                             without it",
                            o.at, self.name
                        ));
                    }
                    ignored.push((other.to_string(), o.at.clone()));
                }
            }
            self.note_opposite(&units, || format!("{}: {}={}", o.at, o.key, v.trim()));
        }
        if let Some((rw, at)) = rw {
            let units = Units::new(kb_base);
            let hole = |n: &str| {
                let bytes = units.size(n.trim_start_matches('-'))?;
                let bytes = i64::try_from(bytes).map_err(|_| format!("{n}: too large a size"))?;
                Ok(if n.starts_with('-') { -bytes } else { bytes })
            };
            let p = pattern_with(&rw, hole).map_err(|e| format!("{at}: rw={rw}: {e}"))?;
            self.note_opposite(&units, || format!("{at}: rw={}", rw.trim()));
            (self.random, self.seek_every, self.skip) = (p.random, p.seek_every, p.skip);
            (self.trim, self.write_trimmed) = (p.trim, p.write_trimmed);
            // fio's mixes default to 50/50; rwmixwrite is the rest of rwmixread.
            self.read = p.read.unwrap_or(mix_read.or(mix_write.map(|w| 100 - w)).unwrap_or(50));
        }
        if let Some(each) = filesize {
            let whole = each.saturating_mul(self.targets(0).len() as u64);
            self.size = Some(self.size.map_or(whole, |s| s.min(whole)));
        }
        Ok(())
    }

    /// Keeps `at` (where, and how written) as the first size in fio's opposite units, if
    /// `units` read one.
    fn note_opposite(&mut self, units: &Units, at: impl FnOnce() -> String) {
        if units.opposite() && self.opposite_units.is_none() {
            self.opposite_units = Some(at());
        }
    }

    /// The job's access specification: one line per transfer size (reads' and writes' own
    /// when `bs=R,W` differ), shares as fio's.
    fn spec(&self) -> Result<AccessSpec, String> {
        let delay_ms = self.thinktime.as_micros();
        if delay_ms % 1000 != 0 {
            return Err(format!(
                "{}: thinktime {} us: iogauge delays in whole milliseconds (Iometer's delay)",
                self.at, delay_ms
            ));
        }
        // fio flushes and syncs only what writes: a read job of a [global] with fsync=N has none.
        let line = |size, share, read: u32| {
            let writes = read + self.trim < 100 || self.write_trimmed;
            SpecLine {
                delay_ms: (delay_ms / 1000) as u32,
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
        let lines: Vec<SpecLine> = if self.sizes[0] == self.sizes[1] || self.read == 100 || self.read == 0 {
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
        let spec = AccessSpec { name, description, lines };
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
    fn copies_apart(&self) -> bool {
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
    fn cpus_of(&self, thread: u32) -> Vec<u32> {
        match self.split() {
            true => vec![self.cpus[thread as usize % self.cpus.len()]],
            false => self.cpus.clone(),
        }
    }

    /// The bytes a job of one transfer size bounded by `size` moves, as fio counts them: the
    /// whole transfers that fit in each file's part (fio 3.33 and 3.42, 512,000-byte transfers
    /// in 2 MiB: 4 for read, write, randread, randwrite and randrw), after each the hole of a
    /// sequential job that skips one (`rw=read:512k`). Where fio crosses the size (5 there for
    /// rw, randread:2 and a random job without its map of blocks done, `norandommap`), and for
    /// a job of several sizes, `size` and the transfer that crosses it, as iogauge does.
    fn covered(&self, size: u64) -> u64 {
        let [reads, writes] = &self.sizes;
        let bs = match (self.read, reads.as_slice(), writes.as_slice()) {
            (100, [(bs, _)], _) | (0, _, [(bs, _)]) => *bs,
            (_, [(r, _)], [(w, _)]) if r == w => *r,
            _ => return size,
        };
        let crosses = match self.random {
            0 => !matches!(self.read, 0 | 100),
            _ => self.norandommap || self.seek_every > 1,
        };
        if crosses || self.skip < 0 {
            return size;
        }
        let files = self.targets(0).len().max(1) as u64;
        let part = size / files;
        let fit = if part >= bs { (part - bs) / (bs + self.skip as u64) + 1 } else { 0 };
        fit * bs * files
    }

    /// What fio does without a size: the whole of each of the job's files or devices (from its
    /// offset on), when each exists; None otherwise.
    fn whole(&self) -> Option<u64> {
        if matches!(self.engine, Engine::Null | Engine::Nbd | Engine::Libiscsi) {
            return None;
        }
        let sizes = self.targets(0).into_iter().map(|f| crate::targets::existing_size(Path::new(&f)).ok());
        sizes.map(|s| s.map(|s| s.saturating_sub(self.offset))).sum::<Option<u64>>().filter(|&b| b > 0)
    }

    /// Each copy's targets: the files named (`directory` in front of relative names), or fio's
    /// own file `NAME.N.0` in the directory; `null` for the null engine.
    fn targets(&self, copy: u32) -> Vec<String> {
        match (self.engine, &self.uri) {
            (Engine::Null, _) => return vec!["null".into()],
            // fio's nbd engine reaches the export named by uri= (checked to be there).
            (Engine::Nbd, Some(uri)) => return vec![uri.clone()],
            _ => {}
        }
        let dir = |f: &str| match &self.directory {
            Some(d) if !f.starts_with('/') => Path::new(d).join(f).display().to_string(),
            _ => f.to_string(),
        };
        if self.filenames.is_empty() {
            return vec![dir(&format!("{}.{copy}.0", self.name))];
        }
        self.filenames.iter().map(|f| dir(f)).collect()
    }
}

/// A bsrange read as `MIN/0:MAX/0`: every multiple of MIN up to MAX, equally likely.
fn range(ends: &[(u64, u32)]) -> Result<Vec<(u64, u32)>, String> {
    let [(lo, _), (hi, _)] = ends else { return Err("give MIN-MAX, e.g. 4k-64k".into()) };
    let n = (hi / lo) as u32;
    if *lo == 0 || hi < lo || hi % lo != 0 || n == 0 || 100 % n != 0 {
        return Err(format!(
            "{lo}-{hi}: iogauge mixes sizes in whole % of I/Os; give a range of 1, 2, 4, 5, 10, 20, 25, 50 or 100 \
             multiples of its minimum, or a bssplit"
        ));
    }
    Ok((1..=n as u64).map(|k| (k * lo, 100 / n)).collect())
}

/// fio's colon-separated `filename` list; `\:` is a colon inside a name.
fn split_filenames(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                out.last_mut().unwrap().push(':');
            }
            ':' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Reads a fio job file into a job; returns it with the warnings of ignored options.
pub fn parse(text: &str, file: &Path, import: &Import) -> Result<(Job, Vec<String>), String> {
    let mut secs = Vec::new();
    sections(text, file, 0, &mut secs)?;
    let mut global: Vec<Opt> = Vec::new();
    let mut jobs = Vec::new();
    let (mut ignored, mut notes) = (Vec::new(), Vec::new());
    for s in &secs {
        if s.name.starts_with("global") {
            global.extend(s.opts.iter().cloned());
            continue;
        }
        let mut job = FioJob::new(s);
        let opts: Vec<Opt> = global.iter().chain(&s.opts).cloned().collect();
        let mut skipped = Vec::new();
        job.apply(&opts, import, &mut skipped, &mut notes)?;
        for (option, at) in skipped {
            match ignored.iter_mut().find(|(o, _, _): &&mut (String, String, Vec<String>)| *o == option) {
                Some((_, _, names)) if names.last() != Some(&job.name) => names.push(job.name.clone()),
                Some(_) => {}
                None => ignored.push((option, at, vec![job.name.clone()])),
            }
        }
        // fio: stonewall set in [global] applies to every job after it.
        jobs.push(job);
    }
    if jobs.is_empty() {
        return Err(format!("{}: no job section: add one, e.g. [job1]", file.display()));
    }
    waits(&mut jobs)?;
    // Each option said once: where it was first given (a [global] one reaches every job) and the
    // jobs it was skipped for.
    let mut warnings: Vec<String> = ignored
        .into_iter()
        .map(|(option, at, names)| {
            let jobs = match names.len() {
                n if n == jobs.len() && n > 1 => format!("all {n} jobs"),
                n if n > 3 => format!("[{}] and {} more jobs", names[..3].join("], ["), n - 3),
                _ => format!("[{}]", names.join("], [")),
            };
            format!("{at}: option {option} is not supported: ignored in {jobs} (--ignore-unknown)")
        })
        .collect();
    if let Some(first) = jobs.iter().find_map(|j| j.opposite_units.as_ref()) {
        warnings.push(format!(
            "{first}: fio reads kib, mib, gib, tib and pib as powers of 1000 under its default kb_base=1024 \
             (4KiB is 4000 bytes), and so does iogauge: write 4k for 4096 bytes"
        ));
    }
    if !notes.is_empty() {
        warnings.push(format!(
            "{}: {}: fio's reporting options; iogauge times every I/O and reports every percentile whatever they say",
            file.display(),
            notes.join(", ")
        ));
    }
    warnings.extend(differences(&jobs));
    to_job(&jobs, file).map(|j| (j, warnings))
}

/// A setting's value as a message shows it: `unset` for none, without Rust's `Some("...")`.
fn shown<T: std::fmt::Debug>(v: &T) -> String {
    let text = format!("{v:?}");
    match text.strip_prefix("Some(").and_then(|t| t.strip_suffix(')')) {
        Some(inner) => inner.trim_matches('"').to_string(),
        None if text == "None" => "unset".into(),
        None => text,
    }
}

/// Where the job runs otherwise than under fio, each said once (docs/interop.md): fio's
/// libaio on buffered files, fio's random map with mixed sizes, fio's read-back of a verify job.
fn differences(jobs: &[FioJob]) -> Vec<String> {
    let first = |f: &dyn Fn(&FioJob) -> bool| jobs.iter().find(|j| f(j));
    let mut said = Vec::new();
    if let Some(j) = first(&|j| !j.direct && matches!(j.engine_name.as_str(), "libaio" | "posixaio") && j.iodepth > 1) {
        said.push(format!(
            "{}: [{}]: ioengine={} on buffered I/O (direct=0): fio's submission waits for each I/O there, so fio \
             keeps about one in flight; iogauge's io_uring keeps iodepth={}: expect more I/Os per second than fio's",
            j.at, j.name, j.engine_name, j.iodepth
        ));
    }
    let mixed = |j: &FioJob| j.sizes.iter().any(|s| s.len() > 1);
    if let Some(j) = first(&|j| j.random > 0 && mixed(j) && !j.norandommap) {
        said.push(format!(
            "{}: [{}]: fio keeps a map of the blocks a random job has done and cuts an I/O short where the blocks \
             after its offset are done, so its transfer sizes drift from bs/bssplit; iogauge draws offsets with \
             repeats, as fio does with norandommap",
            j.at, j.name
        ));
    }
    if let Some(j) = jobs.iter().skip(1).find(|j| j.new_group && !(j.stonewall || j.waits)) {
        said.push(format!(
            "{}: [{}]: new_group starts a reporting group of fio's, not a wait: iogauge runs its jobs with the ones \
             before it, as fio does, and reports them in one workload (--detail workers: a row per worker)",
            j.at, j.name
        ));
    }
    // A stonewall and new_group start a reporting group of fio's; wait_for alone does not.
    let alone = |j: &FioJob| j.waits && !j.stonewall && !j.new_group;
    if let Some((j, (name, at))) = jobs.iter().filter(|j| alone(j)).find_map(|j| Some((j, j.wait_for.as_ref()?))) {
        said.push(format!(
            "{at}: [{}]: wait_for={name}: iogauge runs it after [{name}], as fio does, and reports it as a workload of \
             its own, where fio reports the two in one group",
            j.name
        ));
    }
    if let Some(j) = first(&|j| j.verify && j.read == 0) {
        said.push(format!(
            "{}: [{}]: fio reads back and checks what a verify job wrote once it has written it; iogauge checks the \
             reads a test does and keeps a map of what it wrote: `iogauge verify --target TARGET` reads it back",
            j.at, j.name
        ));
    }
    said
}

/// Each `wait_for=NAME` as the stonewall it is where NAME is the only job still running (the
/// group before the waiting job is NAME's copies alone); any other wait is refused, since
/// iogauge starts workers together or one group after another.
fn waits(jobs: &mut [FioJob]) -> Result<(), String> {
    let mut group_start = 0;
    for i in 0..jobs.len() {
        if let Some((name, at)) = jobs[i].wait_for.clone() {
            let running = &jobs[group_start..i];
            if !jobs[..i].iter().any(|j| j.name == name) {
                return Err(format!("{at}: wait_for={name}: no job named {name} before [{}]", jobs[i].name));
            }
            if !(running.iter().all(|j| j.name == name) || jobs[i].stonewall) {
                return Err(format!(
                    "{at}: wait_for={name}: other jobs run beside [{name}] when [{}] starts: iogauge starts a job with \
                     the ones before it or after all of them, give stonewall",
                    jobs[i].name
                ));
            }
            jobs[i].waits = true;
        }
        if jobs[i].stonewall || jobs[i].waits {
            group_start = i;
        }
    }
    Ok(())
}

/// The settings all jobs must share, since iogauge's are the test's.
fn same<T: PartialEq + std::fmt::Debug>(jobs: &[FioJob], what: &str, f: impl Fn(&FioJob) -> T) -> Result<T, String> {
    let first = f(&jobs[0]);
    if let Some(j) = jobs.iter().find(|j| f(j) != first) {
        return Err(format!(
            "{}: [{}] and [{}] differ in {what} ({} and {}): iogauge runs one {what} for all jobs",
            j.at,
            jobs[0].name,
            j.name,
            shown(&first),
            shown(&f(j))
        ));
    }
    Ok(first)
}

fn to_job(jobs: &[FioJob], file: &Path) -> Result<Job, String> {
    if let Some(j) = jobs.iter().find(|j| j.engine == Engine::Nbd && j.uri.is_none()) {
        return Err(format!(
            "{}: [{}]: ioengine=nbd needs uri=nbd://HOST[:PORT]/EXPORT (the export to reach)",
            j.at, j.name
        ));
    }
    // fio's libiscsi engine takes only iSCSI URLs, its colons escaped in filename=.
    let not_iscsi = |j: &&FioJob| j.filenames.is_empty() || j.filenames.iter().any(|f| !f.starts_with("iscsi://"));
    if let Some(j) = jobs.iter().filter(|j| j.engine == Engine::Libiscsi).find(not_iscsi) {
        return Err(format!(
            "{}: [{}]: ioengine=libiscsi needs filename=iscsi\\://HOST[\\:PORT]/IQN/LUN (each LUN to reach)",
            j.at, j.name
        ));
    }
    let mut job = Job::default();
    settings(jobs, file, &mut job.test)?;
    let groups = groups(jobs);
    job.workers = workers(&groups[0], 0)?;
    let (specs, run) = specifications(&groups, &job.workers)?;
    if groups.len() > 1 {
        job.test.run = run.iter().map(|g| g[0].name.clone()).collect();
    } else {
        // One group: each job its own specification (workers of one job share it).
        let mut i = 0;
        for (j, spec) in groups[0].iter().zip(&run[0]) {
            let n = if j.copies_apart() { j.numjobs as usize } else { 1 };
            for w in &mut job.workers[i..i + n] {
                w.spec = Some(spec.name.clone());
            }
            i += n;
        }
    }
    job.specs = specs;
    Ok(job)
}

/// The jobs in groups: a stonewall starts one; each group after the first must be the same
/// workers with one specification of its own (a workload).
fn groups(jobs: &[FioJob]) -> Vec<Vec<&FioJob>> {
    let mut groups: Vec<Vec<&FioJob>> = Vec::new();
    for j in jobs {
        match groups.last_mut() {
            Some(g) if !(j.stonewall || j.waits) => g.push(j),
            _ => groups.push(vec![j]),
        }
    }
    groups
}

/// The `[test]` settings every job must share: direct, verify, logs, ramp, engine, and how
/// the test ends.
fn settings(jobs: &[FioJob], file: &Path, test: &mut TestSettings) -> Result<(), String> {
    let name = file.display();
    test.buffered = !same(jobs, "direct", |j| j.direct)?;
    test.verify = same(jobs, "verify", |j| j.verify)?;
    test.data = same(
        jobs,
        "written data (buffer_compress_percentage, dedupe_percentage, buffer_pattern, zero_buffers)",
        |j| j.data,
    )?;
    if test.data.dedupe_pct > 0 && test.data.all_alike() {
        return Err(format!(
            "{name}: dedupe_percentage={} with every block alike already (buffer_compress_percentage=100, \
             zero_buffers or buffer_pattern): remove one of them",
            test.data.dedupe_pct
        ));
    }
    test.log_dir = same(jobs, "write_*_log", |j| j.log_dir.clone())?;
    test.log_avg_ms = same(jobs, "log_avg_msec", |j| j.log_avg_ms)?;
    // fio's 0 submits as many as the job's depth.
    test.submit_batch =
        same(jobs, "iodepth_batch_submit", |j| if j.submit_batch == 0 { j.iodepth } else { j.submit_batch })?;
    test.completion_batch = same(jobs, "iodepth_batch_complete_min", |j| j.completion_batch)?;
    if same(jobs, "rate_process", |j| j.poisson)? {
        test.arrivals = crate::config::Arrivals::Poisson;
    }
    test.ramp = same(jobs, "ramp_time", |j| j.ramp)?;
    if let Some(seed) = same(jobs, "randseed", |j| j.seed)? {
        test.seed = seed;
    }
    if same(jobs, "continue_on_error", |j| j.continue_on_error)? {
        test.on_error = crate::config::OnError::Continue;
    }
    test.engine = match same(jobs, "ioengine kind", |j| j.engine == Engine::Sync)? {
        true => EngineKind::Psync,
        false => EngineKind::IoUring,
    };
    // How the test ends: fio runs `runtime` with time_based; without it, each job does its
    // size (or io_size / number_ios) once, ending early at runtime.
    let time_based = same(jobs, "time_based", |j| j.time_based)?;
    let runtime = same(jobs, "runtime", |j| j.runtime)?;
    if time_based {
        test.time = runtime.ok_or_else(|| format!("{name}: time_based without runtime: give runtime"))?;
    } else {
        // Each group (between stonewalls) is a workload of its own, ending on its own jobs'
        // count: the groups' counts must agree, since iogauge's is the test's.
        let groups = groups(jobs);
        let count = |g: &Vec<&FioJob>| {
            // Each copy of a job does its count, `loops` times over.
            let times = |j: &FioJob| j.numjobs as u64 * j.loops;
            let ios = g.iter().map(|j| j.number_ios.map(|n| n * times(j))).sum::<Option<u64>>();
            let bytes = g.iter().map(|j| j.io_size.or(j.size.or_else(|| j.whole()).map(|s| j.covered(s))));
            let bytes = bytes.zip(g).map(|(b, j)| b.map(|b| b * times(j)));
            (ios, bytes.sum::<Option<u64>>())
        };
        let (ios, bytes) = count(&groups[0]);
        if let Some(g) = groups.iter().find(|g| count(g) != (ios, bytes)) {
            return Err(format!(
                "{}: the group [{}] starts does other I/O than the first group's (size, io_size or number_ios): \
                 iogauge ends every workload on one count; give the groups the same",
                g[0].at, g[0].name
            ));
        }
        // A runtime without time_based caps a job that ends on its size.
        match (ios, bytes, runtime) {
            (Some(n), _, t) => (test.ios, test.max_time) = (Some(n), t),
            (None, Some(b), t) => (test.bytes, test.max_time) = (Some(b), t),
            (None, None, Some(t)) => test.time = t,
            (None, None, None) => {
                let j = groups[0].iter().find(|j| j.whole().is_none()).unwrap_or(&groups[0][0]);
                return Err(format!(
                    "{name}: [{}] has no size, io_size, number_ios or runtime, and {} is not an existing file or \
                     device whose size fio would take: give size=",
                    j.name,
                    j.targets(0).join(":")
                ));
            }
        }
    }
    if !test.counted() && !test.ramp.is_zero() && !time_based {
        return Err(format!("{name}: ramp_time needs time_based"));
    }
    if let Some(s) = jobs.iter().filter_map(|j| j.size.map(|s| s / j.targets(0).len() as u64)).max() {
        test.file_size = s;
    }
    Ok(())
}

/// The workers of one group of jobs, whose first thread is the file's `first_thread`: a job's
/// `numjobs` copies are one entry with a `count`, or one entry each when every copy has its
/// own file, its own offset (`offset_increment`) or its own CPU (`cpus_allowed_policy=split`).
fn workers(group: &[&FioJob], first_thread: u32) -> Result<Vec<WorkerConfig>, String> {
    let mut out = Vec::new();
    let mut thread = first_thread;
    for j in group {
        let targets = j.targets(0);
        let files = targets.len() as u32;
        let outstanding = if j.engine == Engine::Sync { 1 } else { j.iodepth };
        if outstanding % files != 0 {
            return Err(format!(
                "{}: iodepth={} over {files} files: iogauge keeps the same outstanding I/Os on each target; give \
                 an iodepth that is a multiple of the files",
                j.at, j.iodepth
            ));
        }
        let base = WorkerConfig {
            outstanding: outstanding / files,
            working_set: j.size.map(|s| s / files as u64),
            offset: j.offset,
            rate_iops: j.rate_iops,
            rate_mbps: j.rate_mbps,
            cpus: j.cpus_of(thread),
            ..WorkerConfig::default()
        };
        if j.offset_increment > 0 && j.size.is_none() && j.io_size.is_none() && j.number_ios.is_none() && !j.time_based
        {
            return Err(format!(
                "{}: offset_increment without size: each copy would do the rest of the file from its own offset; give size=",
                j.at
            ));
        }
        if j.copies_apart() {
            for c in 0..j.numjobs {
                let name = Some(if j.numjobs > 1 { format!("{}.{c}", j.name) } else { j.name.clone() });
                let offset = j.offset + c as u64 * j.offset_increment;
                let cpus = j.cpus_of(thread + c);
                out.push(WorkerConfig { name, targets: j.targets(c), offset, cpus, ..base.clone() });
            }
        } else {
            out.push(WorkerConfig { name: Some(j.name.clone()), count: j.numjobs, targets, ..base });
        }
        thread += j.numjobs;
    }
    Ok(out)
}

/// What first differs between a group's workers and the first group's, in fio's words.
fn how_workers_differ(these: &[WorkerConfig], first: &[WorkerConfig]) -> String {
    let threads = |w: &[WorkerConfig]| w.iter().map(|x| x.count).sum::<u32>();
    if threads(these) != threads(first) {
        return format!("{} threads (numjobs) against {}", threads(these), threads(first));
    }
    let pairs = these.iter().flat_map(|w| std::iter::repeat_n(w, w.count as usize));
    let firsts = first.iter().flat_map(|w| std::iter::repeat_n(w, w.count as usize));
    for (a, b) in pairs.zip(firsts) {
        if a.targets != b.targets {
            return format!(
                "files {} against {}: without filename=, fio names each job's files after the job; give the jobs \
                 one filename=",
                a.targets.join(":"),
                b.targets.join(":")
            );
        }
        if a.outstanding != b.outstanding {
            return format!("iodepth={} against {}", a.outstanding, b.outstanding);
        }
        if (a.working_set, a.offset) != (b.working_set, b.offset) {
            return "another size or offset".into();
        }
        if (a.rate_iops, a.rate_mbps) != (b.rate_iops, b.rate_mbps) {
            return "another rate".into();
        }
        if a.cpus != b.cpus {
            return "other CPUs".into();
        }
    }
    "another job layout".into()
}

/// Every group's specifications (a group after the first must be `first`'s workers with one
/// specification), and the distinct ones in order of first use.
fn specifications(
    groups: &[Vec<&FioJob>],
    first: &[WorkerConfig],
) -> Result<(Vec<AccessSpec>, Vec<Vec<AccessSpec>>), String> {
    let unnamed = |w: &[WorkerConfig]| w.iter().map(|x| WorkerConfig { name: None, ..x.clone() }).collect::<Vec<_>>();
    let mut specs: Vec<AccessSpec> = Vec::new();
    let mut run = Vec::new();
    let mut first_thread = 0;
    for (k, g) in groups.iter().enumerate() {
        let these = unnamed(&workers(g, first_thread)?);
        if k > 0 && these != unnamed(first) {
            return Err(format!(
                "{}: [{}] starts a group (stonewall) with other workers than the first group's ({}): iogauge runs \
                 groups one after another only as the same workers with another rw/bs",
                g[0].at,
                g[0].name,
                how_workers_differ(&these, &unnamed(first))
            ));
        }
        let group_specs = g.iter().map(|j| j.spec()).collect::<Result<Vec<_>, _>>()?;
        for s in &group_specs {
            if !specs.iter().any(|x| x.name == s.name) {
                specs.push(s.clone());
            }
        }
        if groups.len() > 1 && !group_specs.iter().all(|s| s.lines == group_specs[0].lines) {
            return Err(format!(
                "{}: the jobs of a group (between stonewalls) run different rw/bs: iogauge runs one specification per \
                 group",
                g[0].at
            ));
        }
        run.push(group_specs);
        first_thread += g.iter().map(|j| j.numjobs).sum::<u32>();
    }
    Ok((specs, run))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times_are_fios() {
        // fio 3.33 and 3.42 (tests/it/fio_jobs.rs checks these against the fio installed):
        // under kb_base=1024 k is 1024 and kib 1000, under 1000 the other way round.
        for (text, kb_base, bytes) in [
            ("4k", 1024, 4096),
            ("4KB", 1024, 4096),
            ("4ki", 1024, 4096),
            ("4KiB", 1024, 4000),
            ("1MiB", 1024, 1_000_000),
            ("10G", 1024, 10 << 30),
            ("0x1000", 1024, 4096),
            ("4000b", 1024, 4000),
            ("4k", 1000, 4000),
            ("4kib", 1000, 4096),
        ] {
            assert_eq!(fio_size(text, kb_base).map(|(b, _)| b), Ok(bytes), "{text} under kb_base={kb_base}");
        }
        for (text, says) in
            [("1.5k", "as 1 byte)"), ("0x10k", "(16 bytes there)"), ("4q", "(4 bytes there)"), ("4 k", "as no unit")]
        {
            let err = fio_size(text, 1024).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        let s = Duration::from_secs(1);
        assert_eq!(time("60", s), Ok(Duration::from_secs(60)));
        assert_eq!(time("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(time("1d", s), Ok(Duration::from_secs(86_400)));
        assert_eq!(time("500", Duration::from_micros(1)), Ok(Duration::from_micros(500)));
        assert_eq!(time("5msec", s), Ok(Duration::from_millis(5)));
    }

    #[test]
    fn filenames_split_on_colons_but_not_escaped_ones() {
        assert_eq!(split_filenames("/dev/sdb:/dev/sdc"), ["/dev/sdb", "/dev/sdc"]);
        assert_eq!(split_filenames(r"/tmp/a\:b:/tmp/c"), ["/tmp/a:b", "/tmp/c"]);
    }

    #[test]
    fn bssplit_and_read_write_sizes() {
        assert_eq!(sizes("4k/60:64k/40", true, &Units::new(1024)).unwrap()[0], vec![(4096, 60), (65536, 40)]);
        assert_eq!(
            sizes("4k/50:8k:16k", true, &Units::new(1024)).unwrap()[0],
            vec![(4096, 50), (8192, 25), (16384, 25)]
        );
        let [r, w] = sizes("4k,64k", false, &Units::new(1024)).unwrap();
        assert_eq!((r, w), (vec![(4096, 100)], vec![(65536, 100)]));
        assert_eq!(range(&[(4096, 0), (16384, 0)]).unwrap(), vec![(4096, 25), (8192, 25), (12288, 25), (16384, 25)]);
    }
}
