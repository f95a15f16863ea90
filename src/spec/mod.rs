//! Access specifications, as Iometer defines them, and the built-in ones taken from the seeds.
//! A line's `distribution` (where its random offsets fall) is `crate::spec::distribution`.
//!
//! A specification is a list of lines; each I/O picks a line with probability `share` %, then is
//! a read with probability `read` %, a trim with `trim` %, a flush with `flush` % and else a
//! write, and random (else sequential) with probability `random` %.

pub mod distribution;
pub(crate) mod random_map;

use serde::{Deserialize, Serialize};

pub use crate::spec::distribution::{Distribution, Zone};

use crate::error::{Result, input};
use crate::units::{format_size, serde_size};

/// Smallest and largest transfer sizes accepted.
pub const MIN_TRANSFER: u64 = 512;
/// Largest transfer size accepted (16 MiB) for I/Os that move data: each outstanding I/O
/// holds a buffer of it.
pub const MAX_TRANSFER: u64 = 16 << 20;
/// Largest trim or flush (4 GiB less a sector): they move no data and hold no buffer; the
/// kernel and fio issue discards of GiB (fio's t/jobs/t0038.iolog trims 2 GiB at a time).
pub const MAX_DISCARD: u64 = (4 << 30) - 512;

/// One line of an access specification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecLine {
    /// Transfer size in bytes.
    #[serde(with = "serde_size")]
    pub size: u64,
    /// With it, each I/O's size is drawn between `size` and this as fio's `bsrange` draws it:
    /// `size` plus a uniform share of this, rounded down to a multiple of `size`, at most this
    /// (every multiple of `size` up to it equally likely, and this itself with what is left);
    /// redrawn until the I/O fits in the working set.
    #[serde(default, with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub size_max: Option<u64>,
    /// Percentage of this specification's I/Os that use this line (Iometer's "% of size").
    #[serde(default = "hundred")]
    pub share: u32,
    /// Percentage of reads.
    pub read: u32,
    /// Percentage of trims (discards); writes are what reads, trims and flushes leave.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim: u32,
    /// Percentage of flushes (fdatasync, or fsync with `fsync`) of the I/O's target.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush: u32,
    /// A flush of a target after every this many writes to it (fio's `fdatasync=N`); 0: none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_every: u32,
    /// Flushes are fsync (metadata too) rather than fdatasync.
    #[serde(default, skip_serializing_if = "is_false")]
    pub fsync: bool,
    /// Writes are on stable media when they complete (`RWF_DSYNC`: FUA where the device has
    /// it): a database log's writes (seed 004's SQL Server log).
    #[serde(default, skip_serializing_if = "is_false")]
    pub fua: bool,
    /// Each trim is followed by a write of the blocks it trimmed (fio's `trimwrite`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub write_trimmed: bool,
    /// Percentage of random I/Os; the rest are sequential.
    pub random: u32,
    /// Alignment of random offsets in bytes; default: the transfer size rounded up to the
    /// target's logical block size.
    #[serde(default, with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
    /// Transfer delay in milliseconds after each burst (Iometer's "delay").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u32,
    /// I/Os per burst between delays (Iometer's "burst"); default 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub burst: u32,
    /// A line's I/Os come in runs of this many: the first of each run is random or sequential
    /// by `random`, the rest follow it sequentially (fio's `rw=randread:N`: one seek every N
    /// I/Os); default 1, every I/O drawn.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub seek_every: u32,
    /// Bytes left between a sequential I/O's end and the next one's start (fio's holes,
    /// `rw=write:4k`); negative steps back (`-8K` after 4 KiB reads is backwards reading).
    #[serde(default, skip_serializing_if = "is_zero_i64", with = "serde_size::signed")]
    pub skip: i64,
    /// Where random offsets fall (`uniform`, `zipf:1.2`, `pareto:0.2`, `normal:10`,
    /// `zoned:80/20:20/80`); default uniform.
    #[serde(default, skip_serializing_if = "Distribution::is_uniform")]
    pub distribution: Distribution,
}

fn hundred() -> u32 {
    100
}
fn one() -> u32 {
    1
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero_i64(n: &i64) -> bool {
    *n == 0
}
fn is_false(b: &bool) -> bool {
    !*b
}

impl SpecLine {
    /// A line of `size`-byte transfers taking `share` % of the I/Os, `read` % reads and
    /// `random` % random, with every other setting at its default.
    pub fn new(size: u64, share: u32, read: u32, random: u32) -> SpecLine {
        SpecLine {
            size,
            size_max: None,
            share,
            read,
            trim: 0,
            flush: 0,
            flush_every: 0,
            fsync: false,
            fua: false,
            write_trimmed: false,
            random,
            align: None,
            delay_ms: 0,
            burst: 1,
            seek_every: 1,
            skip: 0,
            distribution: Distribution::Uniform,
        }
    }

    /// Percentage of writes: what reads, trims and flushes leave.
    pub fn write(&self) -> u32 {
        100u32.saturating_sub(self.read + self.trim + self.flush)
    }

    /// Its largest transfer: `size_max`, else `size`.
    pub fn largest(&self) -> u64 {
        self.size_max.unwrap_or(self.size)
    }

    /// Whether its I/Os move data (reads or writes), and so hold a buffer of its size; a line
    /// of trims alone (not rewritten) or flushes alone does not.
    pub fn moves_data(&self) -> bool {
        self.read > 0 || self.write() > 0 || self.write_trimmed
    }

    /// Whether it changes what a target holds (writes or trims).
    pub fn changes_data(&self) -> bool {
        self.share > 0 && (self.write() > 0 || self.trim > 0)
    }

    /// Checks the operations' percentages and options against each other.
    fn check_ops(&self) -> Result<()> {
        let (read, trim, flush) = (self.read, self.trim, self.flush);
        if read + trim + flush > 100 {
            return Err(input(format!(
                "read {read} % + trim {trim} % + flush {flush} % = {} %: at most 100 (writes are the rest)",
                read + trim + flush
            )));
        }
        let writes = self.write() > 0 || self.write_trimmed;
        let refusal = if self.write_trimmed && trim == 0 {
            Some("write_trimmed writes what trims trimmed: give trim > 0")
        } else if self.flush_every > 0 && !writes {
            Some("flush_every counts writes, and this line has none")
        } else if self.fua && !writes {
            Some("fua makes writes stable, and this line has none")
        } else if self.fsync && flush == 0 && self.flush_every == 0 {
            Some("fsync says how to flush, and this line has no flush or flush_every")
        } else {
            None
        };
        refusal.map_or(Ok(()), |r| Err(input(r)))
    }
}

/// Whole percentages of `weights` that sum to 100 (when any weight is positive): each
/// positive weight gets at least 1, a zero weight 0, and the largest remainders take what
/// rounding down left. How a line's share is made from counts (a trace's replay, a distilled
/// trace's sizes and zones).
pub(crate) fn percent_shares(weights: &[u64]) -> Vec<u32> {
    let total = weights.iter().sum::<u64>().max(1);
    let mut out: Vec<u32> =
        weights.iter().map(|&w| if w == 0 { 0 } else { ((w * 100 / total) as u32).max(1) }).collect();
    let mut order: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((weights[i] * 100) % total));
    for i in 0..(order.len() * 100) {
        if out.iter().sum::<u32>() >= 100 {
            break;
        }
        out[order[i % order.len()]] += 1;
    }
    while out.iter().sum::<u32>() > 100 {
        let big = (0..out.len()).max_by_key(|&i| out[i]).expect("a weight");
        out[big] -= 1;
    }
    out
}

/// A named access specification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// Name, as given to `--spec`.
    pub name: String,
    /// Where it comes from and what it models.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The lines; their shares sum to 100.
    pub lines: Vec<SpecLine>,
    /// A sequential read follows the target's last read and a write its last write, as fio's
    /// do (a place per direction), instead of the I/O before it, as Iometer's do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sequential_per_direction: bool,
    /// Random I/Os take each place of the working set once per pass, as fio's do by default
    /// (its random map): a draw on a place taken already this pass takes the next free one,
    /// and a new pass starts when all are taken. Lines of the uniform law only (a skewed law
    /// repeats places by design, and `lfsr` takes each once anyway); Iometer's draws, and
    /// iogauge's by default, repeat places.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_map: bool,
}

impl AccessSpec {
    /// Checks what can be checked without a target: shares, percentages, sizes.
    pub fn validate(&self) -> Result<()> {
        let name = &self.name;
        // `--spec ''`, the worker's choice and the results would name nothing.
        if name.trim().is_empty() {
            return Err(input("an access specification without a name (name = \"\"): give it one"));
        }
        if self.lines.is_empty() {
            return Err(input(format!("access specification '{name}' has no lines: give at least one")));
        }
        let total: u32 = self.lines.iter().map(|l| l.share).sum();
        if total != 100 {
            return Err(input(format!(
                "access specification '{name}': line shares sum to {total} %, they must sum to 100 %"
            )));
        }
        for (i, l) in self.lines.iter().enumerate() {
            let at = format!("access specification '{name}' line {}", i + 1);
            let max = if l.moves_data() { MAX_TRANSFER } else { MAX_DISCARD };
            if let Some(m) = l.size_max.filter(|&m| m < l.size || m % 512 != 0 || m > MAX_TRANSFER) {
                return Err(input(format!(
                    "{at}: size_max {} must be a multiple of 512 bytes from the line's size {} to {}",
                    crate::units::human_size(m),
                    crate::units::human_size(l.size),
                    crate::units::human_size(MAX_TRANSFER)
                )));
            }
            if !(MIN_TRANSFER..=max).contains(&l.size) || l.size % 512 != 0 {
                let (size, most) = (crate::units::human_size(l.size), crate::units::human_size(max));
                let what = if l.moves_data() { "" } else { " (of trims or flushes alone)" };
                return Err(input(format!(
                    "{at}: transfer size{what} {size} must be a multiple of 512 bytes from 512 bytes to {most}"
                )));
            }
            for (what, v) in [("read", l.read), ("random", l.random), ("share", l.share)] {
                if v > 100 {
                    return Err(input(format!("{at}: {what} = {v} %, must be 0 to 100")));
                }
            }
            l.check_ops().map_err(|e| e.context(&at))?;
            if let Some(a) = l.align {
                if a == 0 || a % 512 != 0 {
                    return Err(input(format!("{at}: align {a} must be a positive multiple of 512")));
                }
            }
            if l.burst == 0 {
                return Err(input(format!("{at}: burst must be at least 1")));
            }
            if l.seek_every == 0 {
                return Err(input(format!("{at}: seek_every must be at least 1 (1: every I/O is drawn)")));
            }
            if l.skip % 512 != 0 || l.skip.unsigned_abs() > 1 << 40 {
                return Err(input(format!("{at}: skip {} must be a multiple of 512 bytes, within 1 TiB", l.skip)));
            }
        }
        Ok(())
    }

    /// Largest transfer size of any line that moves data: the size of each outstanding I/O's
    /// buffer (512 bytes when no line moves data).
    pub fn max_transfer(&self) -> u64 {
        self.lines.iter().filter(|l| l.moves_data()).map(SpecLine::largest).max().unwrap_or(MIN_TRANSFER)
    }

    /// Whether any line changes what a target holds (writes or trims): the safety rules
    /// apply.
    pub fn writes(&self) -> bool {
        self.lines.iter().any(SpecLine::changes_data)
    }

    /// Whether any line reads.
    pub fn reads(&self) -> bool {
        self.lines.iter().any(|l| l.share > 0 && l.read > 0 && l.moves_data())
    }

    /// Whether any line trims.
    pub fn trims(&self) -> bool {
        self.lines.iter().any(|l| l.share > 0 && l.trim > 0)
    }

    /// Its name without the transfer size it ends in when every line has that one size
    /// (`streaming-read` for `streaming-read-64k`), else its name.
    pub fn stem(&self) -> &str {
        let one = self.lines.first().map(|l| l.size).filter(|s| self.lines.iter().all(|l| l.size == *s));
        one.and_then(|s| self.name.strip_suffix(&format!("-{}", size_name(s)))).unwrap_or(&self.name)
    }

    /// The specification with every line at transfer size `size` (a study's size cycle),
    /// named for it: a name that ends in its one size takes the new one (`streaming-read-64k`
    /// at 1M is `streaming-read-1m`), any other gets `@SIZE` (`file-server@1m`).
    pub fn at_size(&self, size: u64) -> AccessSpec {
        let stem = self.stem();
        let name = if stem.len() < self.name.len() {
            format!("{stem}-{}", size_name(size))
        } else {
            format!("{}@{}", self.name, size_name(size))
        };
        let lines = self.lines.iter().map(|l| SpecLine { size, ..l.clone() }).collect();
        AccessSpec { name, lines, ..self.clone() }
    }
}

impl AccessSpec {
    /// The specification with every line's random offsets following `law`, named for it
    /// (`oltp-8k@zipf:1.2`).
    pub fn with_distribution(&self, law: &Distribution) -> AccessSpec {
        let lines = self.lines.iter().map(|l| SpecLine { distribution: law.clone(), ..l.clone() }).collect();
        AccessSpec { name: format!("{}@{law}", self.name), lines, ..self.clone() }
    }

    /// The specification with fio's random map (`random_map`), named for it
    /// (`oltp-8k@random-map`); itself where it has one.
    pub fn with_random_map(&self) -> AccessSpec {
        if self.random_map {
            return self.clone();
        }
        AccessSpec { name: format!("{}@random-map", self.name), random_map: true, ..self.clone() }
    }
}

/// A specification's name without the transfer size [`AccessSpec::at_size`] gave it
/// (`streaming-read-1m` -> `streaming-read`): for study documents written before their
/// summaries said their workload (`SpecSummary::workload`).
pub fn name_without_size(name: &str, size: u64) -> &str {
    let s = size_name(size);
    name.strip_suffix(&format!("-{s}")).or_else(|| name.strip_suffix(&format!("@{s}"))).unwrap_or(name)
}

fn line(size: u64, share: u32, read: u32, random: u32) -> SpecLine {
    SpecLine::new(size, share, read, random)
}

fn single(name: String, description: &str, size: u64, read: u32, random: u32) -> AccessSpec {
    AccessSpec {
        name,
        description: description.into(),
        lines: vec![line(size, 100, read, random)],
        ..Default::default()
    }
}

/// Lower-case size suffix used in spec names: 512, 1k, 64k, 1m.
fn size_name(bytes: u64) -> String {
    format_size(bytes).to_lowercase()
}

const K: u64 = 1024;

/// The five storage-performance reports ("seeds") the built-in specifications and studies
/// take their workloads and methods from, for the listings that cite them.
pub const SEEDS: [(&str, &str); 5] = [
    ("000", "an iSCSI storage controller's streaming MB/s over 1 to 8 volumes and hosts (2006)"),
    ("001", "a Fibre Channel RAID controller's baseline with Iometer: OLTP, file and web server (2004)"),
    ("002", "software vs hardware iSCSI initiators with IOzone (2004)"),
    ("003", "maximum IOPS over 24 Fibre Channel ports (2010)"),
    ("004", "a 10 Gb iSCSI HBA vs a software initiator with Iometer, twelve workloads (2009)"),
];

/// The lines naming the seeds, under a listing that cites them.
pub fn seeds_legend() -> String {
    let mut out = String::from("seed NNN: the storage report a workload or method comes from:\n");
    for (n, what) in SEEDS {
        out.push_str(&format!("  {n}  {what}\n"));
    }
    out
}

/// Every built-in specification, in the order `iogauge specs` lists them.
pub fn builtin() -> Vec<AccessSpec> {
    let mut v = Vec::new();
    let s001 = "seed 001 (FC RAID baseline, Iometer)";
    for kb in [4, 8, 16, 32, 64] {
        v.push(single(format!("oltp-{kb}k"), &format!("{s001}: OLTP, 100 % random, 67 % read"), kb * K, 67, 100));
    }
    let streaming = [512, K, 2 * K, 4 * K, 8 * K, 16 * K, 32 * K, 64 * K, 128 * K, 256 * K, 512 * K, 1024 * K];
    for (dir, read) in [("read", 100), ("write", 0)] {
        for &s in &streaming {
            v.push(single(
                format!("streaming-{dir}-{}", size_name(s)),
                &format!("seeds 000/001: streaming (spiral) {dir}s, 100 % sequential"),
                s,
                read,
                0,
            ));
        }
    }
    let mix = |shares: &[(u64, u32)], read| shares.iter().map(|&(s, p)| line(s, p, read, 100)).collect();
    v.push(AccessSpec {
        name: "file-server".into(),
        description: format!("{s001}: File Server, 100 % random, 80 % read, 512 B to 64K mix"),
        lines: mix(
            &[(512, 10), (K, 5), (2 * K, 5), (4 * K, 60), (8 * K, 2), (16 * K, 4), (32 * K, 4), (64 * K, 10)],
            80,
        ),
        ..Default::default()
    });
    v.push(AccessSpec {
        name: "web-server".into(),
        description: format!("{s001}: Web Server, 100 % random, 100 % read, 512 B to 512K mix"),
        lines: mix(
            &[
                (512, 22),
                (K, 15),
                (2 * K, 8),
                (4 * K, 23),
                (8 * K, 15),
                (16 * K, 2),
                (32 * K, 6),
                (64 * K, 7),
                (128 * K, 1),
                (512 * K, 1),
            ],
            100,
        ),
        ..Default::default()
    });
    for (dir, read) in [("read", 100), ("write", 0)] {
        for s in [512, K, 2 * K, 4 * K, 8 * K] {
            v.push(single(
                format!("random-{dir}-{}", size_name(s)),
                &format!("seeds 001/003: random {dir}s, 100 % random"),
                s,
                read,
                100,
            ));
        }
    }
    for kb in [4, 8] {
        v.push(single(
            format!("database-mix-{kb}k"),
            "seed 003 (24 FC ports): database mix, 100 % random, 70 % read / 30 % write",
            kb * K,
            70,
            100,
        ));
    }
    let s004 = "seed 004 (10 Gb iSCSI, Iometer)";
    for (name, what, size, read, random) in [
        ("web-file-server-4k", "Web file server", 4 * K, 95, 75),
        ("web-file-server-8k", "Web file server", 8 * K, 95, 75),
        ("web-file-server-64k", "Web file server", 64 * K, 95, 75),
        ("dss-1m", "Decision support system", 1024 * K, 100, 100),
        ("media-streaming-64k", "Media streaming", 64 * K, 98, 0),
        ("sql-server-log-64k", "SQL Server log", 64 * K, 0, 0),
        ("os-paging-64k", "OS paging", 64 * K, 90, 0),
        ("web-server-log-8k", "Web server log", 8 * K, 0, 0),
        ("db-oltp-8k", "DB-OLTP", 8 * K, 70, 100),
        ("exchange-email-4k", "Exchange email", 4 * K, 67, 100),
        ("os-drive-8k", "OS drive", 8 * K, 70, 100),
        ("video-on-demand-512k", "Video on demand", 512 * K, 100, 100),
    ] {
        v.push(single(name.into(), &format!("{s004}: {what}, {read} % read, {random} % random"), size, read, random));
    }
    v.push(single(
        "iometer-default".into(),
        "Iometer's default specification: 2K, 67 % read, 100 % random",
        2 * K,
        67,
        100,
    ));
    v
}

/// The families of built-in names that take any transfer size: `random-read-16k`,
/// `streaming-write-1m`... (name prefix, % read, % random, what it is).
const SIZED: [(&str, u32, u32, &str); 4] = [
    ("random-read-", 100, 100, "random reads, 100 % random"),
    ("random-write-", 0, 100, "random writes, 100 % random"),
    ("streaming-read-", 100, 0, "streaming (spiral) reads, 100 % sequential"),
    ("streaming-write-", 0, 0, "streaming (spiral) writes, 100 % sequential"),
];

/// Looks up a built-in specification by name, in any case: a listed one, or one of the sized
/// families at any transfer size (`random-read-16k`, `streaming-read-1.5m`).
pub fn find_builtin(name: &str) -> crate::error::Result<AccessSpec> {
    let wanted = name.trim().to_ascii_lowercase();
    let all = builtin();
    if let Some(s) = all.iter().find(|s| s.name == wanted) {
        return Ok(s.clone());
    }
    for (prefix, read, random, what) in SIZED {
        let Some(size) = wanted.strip_prefix(prefix) else { continue };
        let bytes = crate::units::parse_size(size).map_err(|_| {
            crate::error::input(format!(
                "unknown access specification '{name}': {prefix}SIZE takes a transfer size such as 4k, 64k or 1m"
            ))
        })?;
        let spec = single(format!("{prefix}{}", size_name(bytes)), what, bytes, read, random);
        spec.validate().map_err(|_| {
            crate::error::input(format!(
                "access specification '{name}': the transfer size must be a multiple of 512 bytes from 512 to 16m"
            ))
        })?;
        return Ok(spec);
    }
    // A name a letter or two off, or the names it starts (`oltp` for `oltp-4k`, `oltp-8k`).
    let near = all
        .iter()
        .map(|s| (strsim::damerau_levenshtein(&wanted, &s.name), &s.name))
        .filter(|(d, n)| *d <= 2.max(n.len() / 4))
        .min()
        .map(|(_, n)| format!("'{n}'"));
    let started: Vec<String> =
        all.iter().filter(|s| s.name.starts_with(&format!("{wanted}-"))).map(|s| format!("'{}'", s.name)).collect();
    let near = near.or_else(|| match started.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [most @ .., last] => Some(format!("{} or {last}", most.join(", "))),
    });
    let hint = near.map_or(String::new(), |n| format!("did you mean {n}? "));
    Err(crate::error::input(format!(
        "unknown access specification '{name}': {hint}'iogauge specs' lists the built-in ones (random-read-SIZE, \
         random-write-SIZE, streaming-read-SIZE and streaming-write-SIZE take any size)"
    )))
}

#[cfg(test)]
mod tests {

    #[test]
    fn percent_shares_sum_to_a_hundred_and_keep_every_weight() {
        assert_eq!(percent_shares(&[1, 1, 1]), [34, 33, 33]);
        assert_eq!(percent_shares(&[990, 5, 5]), [98, 1, 1]);
        assert_eq!(percent_shares(&[3, 0, 1]), [75, 0, 25]);
        assert_eq!(percent_shares(&[70, 29, 1]), [70, 29, 1]);
    }
    use super::*;

    #[test]
    fn builtins_are_valid_and_unique() {
        let all = builtin();
        for s in &all {
            s.validate().unwrap();
        }
        let mut names: Vec<_> = all.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn seed_mixes_are_exact() {
        let fs = find_builtin("file-server").unwrap();
        let shares: Vec<_> = fs.lines.iter().map(|l| (l.size, l.share)).collect();
        assert_eq!(
            shares,
            [(512, 10), (1024, 5), (2048, 5), (4096, 60), (8192, 2), (16384, 4), (32768, 4), (65536, 10)]
        );
        assert!(fs.lines.iter().all(|l| l.read == 80 && l.random == 100));
        let ws = find_builtin("web-server").unwrap();
        assert_eq!(ws.lines.len(), 10);
        assert_eq!(ws.lines[9].size, 512 * 1024);
        let v = find_builtin("web-file-server-8k").unwrap().lines[0].clone();
        assert_eq!((v.size, v.read, v.random), (8192, 95, 75));
        for name in ["streaming-read-512", "streaming-write-1m", "random-write-2k", "database-mix-8k", "oltp-64k"] {
            find_builtin(name).unwrap();
        }
    }

    #[test]
    fn bad_specs_say_why() {
        let mut s = find_builtin("file-server").unwrap();
        s.lines[0].share = 11;
        assert!(s.validate().unwrap_err().to_string().contains("sum to 101 %"));
        for name in ["", "  "] {
            let unnamed = AccessSpec { name: name.into(), ..find_builtin("oltp-8k").unwrap() };
            assert!(unnamed.validate().unwrap_err().to_string().contains("without a name"), "{name:?}");
        }
        assert!(find_builtin("nope").unwrap_err().to_string().contains("unknown access specification 'nope'"));
    }

    #[test]
    fn operations_are_checked_against_each_other() {
        let spec = |l: SpecLine| AccessSpec { name: "t".into(), lines: vec![l], ..Default::default() };
        let base = SpecLine::new(4096, 100, 50, 100);
        for (line, says) in [
            (SpecLine { trim: 40, flush: 20, ..base.clone() }, "= 110 %: at most 100"),
            (SpecLine { write_trimmed: true, ..base.clone() }, "give trim > 0"),
            (SpecLine { flush_every: 8, ..SpecLine::new(4096, 100, 100, 100) }, "has none"),
            (SpecLine { fua: true, read: 90, trim: 10, ..base.clone() }, "fua makes writes stable"),
            (SpecLine { fsync: true, ..base.clone() }, "no flush or flush_every"),
        ] {
            let e = spec(line).validate().unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let ok = SpecLine { trim: 10, flush: 5, flush_every: 4, fsync: true, fua: true, ..base };
        assert_eq!(ok.write(), 35);
        spec(ok.clone()).validate().unwrap();
        assert!(spec(ok).trims());
        // A trim-only line changes data: the safety rules apply to it as to writes.
        let trims = spec(SpecLine { trim: 100, ..SpecLine::new(4096, 100, 0, 100) });
        assert!(trims.writes() && trims.trims());
        assert!(!spec(SpecLine { flush: 10, ..SpecLine::new(4096, 100, 90, 100) }).writes());
    }

    #[test]
    fn a_size_sweep_names_each_point_by_its_size() {
        let s = find_builtin("streaming-read-64k").unwrap().at_size(1 << 20);
        assert_eq!((s.name.as_str(), s.lines[0].size), ("streaming-read-1m", 1 << 20));
        assert_eq!(name_without_size(&s.name, 1 << 20), "streaming-read");
        let fs = find_builtin("file-server").unwrap().at_size(8192);
        assert_eq!(fs.name, "file-server@8k");
        assert!(fs.lines.iter().all(|l| l.size == 8192 && l.read == 80));
        assert_eq!(name_without_size(&fs.name, 8192), "file-server");
        assert_eq!(find_builtin("oltp-8k").unwrap().at_size(4096).name, "oltp-4k");
        // The stem is what a size names: the series a size cycle makes.
        assert_eq!(find_builtin("streaming-read-64k").unwrap().stem(), "streaming-read");
        assert_eq!(find_builtin("file-server").unwrap().stem(), "file-server");
    }

    #[test]
    fn names_in_any_case_and_sized_families_at_any_size() {
        assert_eq!(find_builtin("OLTP-8K").unwrap().name, "oltp-8k");
        let s = find_builtin("Random-Read-16K").unwrap();
        assert_eq!(
            (s.name.as_str(), s.lines[0].size, s.lines[0].read, s.lines[0].random),
            ("random-read-16k", 16384, 100, 100)
        );
        let s = find_builtin("streaming-write-1.5m").unwrap();
        assert_eq!(
            (s.name.as_str(), s.lines[0].size, s.lines[0].read, s.lines[0].random),
            ("streaming-write-1536k", 1536 << 10, 0, 0)
        );
        assert_eq!(find_builtin("random-write-2m").unwrap().lines[0].size, 2 << 20);
        // A listed size keeps its seed's description.
        assert!(find_builtin("random-read-4k").unwrap().description.contains("seeds"));
        for (bad, says) in [
            ("random-read-3000", "multiple of 512"),
            ("random-read-32m", "multiple of 512"),
            ("random-read-big", "takes a transfer size"),
            ("olpt-8k", "did you mean 'oltp-8k'"),
            ("file-sever", "did you mean 'file-server'"),
            ("webserver", "did you mean 'web-server'"),
        ] {
            let e = find_builtin(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(!find_builtin("completely-different").unwrap_err().to_string().contains("did you mean"));
    }
}
