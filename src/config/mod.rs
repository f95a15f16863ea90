//! The job as written: what a job file says and the command-line flags build ([`Job`]), and
//! the test it resolves to ([`Test`], made by [`Test::from_job`]). A result document records
//! the resolved test written back as a job (`config`), so it reruns the same test.
//!
//! ```toml
//! [test]
//! ramp = "2s"
//! time = "30s"
//! run = ["oltp-8k", "file-server"]    # one result per spec, one after another
//!
//! [[worker]]
//! count = 2
//! outstanding = 16                    # per target
//! targets = ["/dev/zram0"]
//! ```

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::config::storage::Storage;
use crate::error::Unreadable;
use crate::spec::AccessSpec;
pub use crate::trace::replay::{Fit, Replay, Speed};

mod fs;
mod keys;
mod settings;
pub(crate) mod storage;
mod study;
mod test;
mod worker;

pub use fs::{FS_TESTS, FsConfig, FsTest, check_job as check_fs_job};
pub use keys::{Key, flag_of};
pub use settings::{KEYS, TestSettingFlags, TestSettings};
pub use study::{Curve, Limit, Measure, Precondition, Steady, Steps, StudyConfig, TargetsIn, Value};
pub use test::{Test, Workload, printable_names};
pub use worker::{CpuList, CpusPolicy, Rate, WORKER_KEYS, Worker, WorkerConfig, WorkerFlags};

/// The default test file, created in the current directory when no target is named.
pub const DEFAULT_TARGET: &str = "iogauge.tst";

/// A job as written: settings, custom specifications, `[[worker]]` entries, and a study.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// Settings for the whole test.
    #[serde(default)]
    pub test: TestSettings,
    /// Inline access specifications (`[[spec]]`); in a result's `config`, every one used.
    #[serde(default, rename = "spec", skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<AccessSpec>,
    /// The workers (`[[worker]]`).
    #[serde(default, rename = "worker")]
    pub workers: Vec<WorkerConfig>,
    /// A study of many points (`[study]`), run by `iogauge study`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub study: Option<StudyConfig>,
    /// What is behind the targets (`[storage]`), for the theoretical maximum of a study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
    /// A file-system test (`[fs]`), run by `iogauge fs` or `iogauge study`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsConfig>,
}

impl Job {
    /// Every specification the job runs (its run list's and its workers' own) with its random
    /// offsets following `law`: each a new inline `[[spec]]` named for it (`--distribution`).
    pub fn set_distribution(&mut self, law: &crate::spec::Distribution) -> crate::error::Result<()> {
        self.derive_specs(|spec| spec.with_distribution(law))
    }

    /// Every specification the job runs with fio's random map (`--random-map`), named for it.
    pub fn set_random_map(&mut self) -> crate::error::Result<()> {
        self.derive_specs(AccessSpec::with_random_map)
    }

    /// Every specification the job runs (its run list's and its workers' own) replaced by
    /// `derive` of it: a new inline `[[spec]]` under the name `derive` gives it, where the
    /// name changes.
    fn derive_specs(&mut self, derive: impl Fn(&AccessSpec) -> AccessSpec) -> crate::error::Result<()> {
        let mut renamed: Vec<(String, String)> = Vec::new();
        let names = self.test.run.iter().chain(self.workers.iter().filter_map(|w| w.spec.as_ref()));
        for name in names.cloned().collect::<Vec<_>>() {
            if renamed.iter().any(|(old, _)| *old == name) {
                continue;
            }
            let spec = match self.specs.iter().find(|s| s.name == name) {
                Some(s) => s.clone(),
                None => crate::spec::find_builtin(&name)?,
            };
            let derived = derive(&spec);
            if derived.name != name {
                renamed.push((name, derived.name.clone()));
                self.specs.push(derived);
            }
        }
        let rename = |name: &mut String| {
            if let Some((_, new)) = renamed.iter().find(|(old, _)| old == name) {
                *name = new.clone();
            }
        };
        self.test.run.iter_mut().for_each(rename);
        self.workers.iter_mut().filter_map(|w| w.spec.as_mut()).for_each(rename);
        Ok(())
    }
}

/// What a failed I/O does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    /// The test stops at the first failed I/O; the results up to it are kept.
    Stop,
    /// Failed I/Os are counted (per target and errno) and the test goes on.
    Continue,
}

impl FromStr for OnError {
    type Err = Unreadable;
    fn from_str(s: &str) -> Result<Self, Unreadable> {
        match s {
            "stop" => Ok(OnError::Stop),
            "continue" => Ok(OnError::Continue),
            _ => Err(Unreadable(format!("--on-error {s}: use stop or continue"))),
        }
    }
}

/// Spacing of open-loop arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly, 1/rate apart.
    Uniform,
    /// A Poisson process: exponentially distributed gaps of mean 1/rate.
    Poisson,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_true(b: &bool) -> bool {
    *b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What written blocks contain: their bytes, and the share of them that repeat earlier ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPattern {
    /// The bytes of each block.
    pub content: Content,
    /// % of written 4 KiB blocks that repeat an earlier block of the worker (fio's
    /// dedupe_percentage); the others are each unlike any other.
    pub dedupe_pct: u8,
}

/// The bytes of written blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Pseudo-random bytes: incompressible.
    Random,
    /// One byte repeated: every block the same.
    Repeat(u8),
    /// Each 4 KiB chunk is this % zeros and the rest random (fio's buffer_compress_percentage).
    Compressible(u8),
}

impl From<Content> for DataPattern {
    fn from(content: Content) -> Self {
        DataPattern { content, dedupe_pct: 0 }
    }
}

impl DataPattern {
    /// Whether blocks are identical by design (a repeated byte, all zeros), so none can be
    /// made unique or repeat another.
    pub fn all_alike(&self) -> bool {
        matches!(self.content, Content::Repeat(_) | Content::Compressible(100))
    }
}

impl FromStr for DataPattern {
    type Err = Unreadable;
    fn from_str(s: &str) -> Result<Self, Unreadable> {
        let bad = || {
            Unreadable(format!(
                "unknown data pattern '{s}': use random, repeat, repeat:0xNN or compress:PCT, optionally with \
                 dedupe:PCT (compress:50,dedupe:30)"
            ))
        };
        let pct = |p: &str| p.trim().trim_end_matches('%').parse::<u8>().ok().filter(|p| *p <= 100);
        let (mut content, mut dedupe) = (None, None);
        for part in s.split(',').map(str::trim) {
            let (c, d) = match part.split_once(':') {
                None if part == "random" => (Some(Content::Random), None),
                None if part == "repeat" => (Some(Content::Repeat(0xa5)), None),
                Some(("repeat", b)) => (
                    Some(u8::from_str_radix(b.trim_start_matches("0x"), 16).map(Content::Repeat).map_err(|_| bad())?),
                    None,
                ),
                Some(("compress", p)) => (Some(Content::Compressible(pct(p).ok_or_else(bad)?)), None),
                Some(("dedupe", p)) => (None, Some(pct(p).ok_or_else(bad)?)),
                _ => return Err(bad()),
            };
            if (c.is_some() && content.is_some()) || (d.is_some() && dedupe.is_some()) {
                return Err(Unreadable(format!("data pattern '{s}': give one content and at most one dedupe:PCT")));
            }
            (content, dedupe) = (content.or(c), dedupe.or(d));
        }
        let p = DataPattern { content: content.unwrap_or(Content::Random), dedupe_pct: dedupe.unwrap_or(0) };
        if p.dedupe_pct > 0 && p.all_alike() {
            return Err(Unreadable(format!(
                "data pattern '{s}': every block of {} is the same already; dedupe goes with random or compress:PCT below 100",
                p.content
            )));
        }
        Ok(p)
    }
}

impl std::fmt::Display for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Content::Random => f.write_str("random"),
            Content::Repeat(b) => write!(f, "repeat:0x{b:02x}"),
            Content::Compressible(p) => write!(f, "compress:{p}"),
        }
    }
}

impl std::fmt::Display for DataPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.content)?;
        if self.dedupe_pct > 0 {
            write!(f, ",dedupe:{}", self.dedupe_pct)?;
        }
        Ok(())
    }
}

impl Serialize for DataPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DataPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// One step of a configuration path, so an error can be located in a job file.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// A table key.
    Key(&'static str),
    /// An array index.
    Index(usize),
}

/// A configuration mistake and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    /// Where: e.g. `[Key("worker"), Index(1), Key("spec")]`.
    pub path: Vec<Seg>,
    /// What is wrong and what would be right.
    pub message: String,
}

/// A configuration mistake is bad input (job files name its place: `job::locate`).
impl From<ConfigError> for crate::error::Error {
    fn from(e: ConfigError) -> Self {
        crate::error::Error::Input(e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_patterns_round_trip() {
        for text in ["random", "repeat:0x00", "compress:50", "random,dedupe:30", "compress:50,dedupe:25"] {
            assert_eq!(text.parse::<DataPattern>().unwrap().to_string(), text);
        }
        let p: DataPattern = "dedupe:30, compress:40".parse().unwrap();
        assert_eq!(p, DataPattern { content: Content::Compressible(40), dedupe_pct: 30 });
        for bad in
            ["compress:101", "dedupe:30,dedupe:20", "random,compress:5", "repeat,dedupe:10", "compress:100,dedupe:5"]
        {
            assert!(bad.parse::<DataPattern>().is_err(), "{bad}");
        }
    }
}
