//! fio's values as its options.c reads them: `rw` patterns, sizes under `kb_base`, times,
//! `bs`/`bssplit`/`bsrange`, CPU masks.

use std::cell::Cell;
use std::time::Duration;

use crate::units::{parse_duration, parse_signed_size};

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
pub(super) fn pattern_with(rw: &str, hole: impl Fn(&str) -> Result<i64, String>) -> Result<Pattern, String> {
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
pub(super) fn time(v: &str, unit: Duration) -> Result<Duration, String> {
    let v = v.trim();
    match v.parse::<u32>() {
        Ok(n) => Ok(unit * n),
        Err(_) => Ok(parse_duration(v)?),
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
pub(super) struct Units {
    kb_base: u64,
    thousands: Cell<bool>,
}

impl Units {
    pub(super) fn new(kb_base: u64) -> Units {
        Units { kb_base, thousands: Cell::new(false) }
    }

    /// A size ([`fio_size`]), its unit noted.
    pub(super) fn size(&self, v: &str) -> Result<u64, String> {
        let (bytes, base) = fio_size(v, self.kb_base)?;
        self.thousands.set(self.thousands.get() || base == 1000);
        Ok(bytes)
    }

    /// Whether a size read so far was in fio's opposite units under its default kb_base=1024
    /// (4KiB is 4000 bytes there), which a reader of the job file may not expect.
    pub(super) fn opposite(&self) -> bool {
        self.kb_base == 1024 && self.thousands.get()
    }
}

/// Transfer sizes as iogauge takes them, whole 512-byte sectors: one that is not, written `v`
/// with a unit of 1000 (fio's `kib`... under kb_base=1024, its `k`... under 1000), is refused
/// with how fio reads it, which its writer may not have meant (plain bytes are left to the
/// specification's own check).
pub(super) fn sectors(v: &str, units: &Units, split: bool) -> Result<[Vec<(u64, u32)>; 2], String> {
    let sizes = sizes(v, split, units)?;
    if sizes.iter().flatten().any(|(bytes, _)| *bytes == 0) {
        return Err("a transfer of 0 bytes: give a whole number of 512-byte sectors (4k)".into());
    }
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
pub(super) fn one_byte_pattern(v: &str) -> Result<u8, String> {
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
pub(super) fn whole_number(v: &str) -> Option<u64> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// fio's `cpumask`: a bit mask of CPUs (bit N is CPU N).
pub(super) fn cpu_mask(v: &str) -> Result<Vec<u32>, String> {
    let v = v.trim();
    let mask = whole_number(v)
        .ok_or_else(|| format!("{v}: give a bit mask of CPUs (34 or 0x22: CPUs 1 and 5), or cpus_allowed=1,5"))?;
    match (0..64).filter(|b| mask >> b & 1 == 1).collect::<Vec<u32>>() {
        cpus if cpus.is_empty() => Err(format!("{v}: no CPU in the mask")),
        cpus => Ok(cpus),
    }
}

/// fio's colon-separated `filename` list; `\:` is a colon inside a name.
pub(super) fn split_filenames(v: &str) -> Vec<String> {
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
    fn bssplit_and_read_write_sizes() {
        assert_eq!(sizes("4k/60:64k/40", true, &Units::new(1024)).unwrap()[0], vec![(4096, 60), (65536, 40)]);
        assert_eq!(
            sizes("4k/50:8k:16k", true, &Units::new(1024)).unwrap()[0],
            vec![(4096, 50), (8192, 25), (16384, 25)]
        );
        let [r, w] = sizes("4k,64k", false, &Units::new(1024)).unwrap();
        assert_eq!((r, w), (vec![(4096, 100)], vec![(65536, 100)]));
        // Found by fuzz::jobs: bs=0 divided by zero counting a size-bounded job's transfers.
        assert!(sectors("0", &Units::new(1024), false).unwrap_err().contains("0 bytes"));
        assert!(sectors("4k/50:0/50", &Units::new(1024), true).is_err());
    }

    #[test]
    fn filenames_split_on_colons_but_not_escaped_ones() {
        assert_eq!(split_filenames("/dev/sdb:/dev/sdc"), ["/dev/sdb", "/dev/sdc"]);
        assert_eq!(split_filenames(r"/tmp/a\:b:/tmp/c"), ["/tmp/a:b", "/tmp/c"]);
    }
}
