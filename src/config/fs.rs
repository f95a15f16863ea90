//! The `[fs]` section: a file-system test as IOzone's throughput mode makes one (seed 002).
//! Each thread has files of its own in `dir`; every thread writes them, then each test runs
//! on them with all threads at once.
//!
//! ```toml
//! [fs]
//! dir = "/mnt/test"
//! threads = [1, 2, 4, 8]
//! total = "8G"                     # all files together, the same at every thread count
//! record = "64K"
//! tests = ["write", "rewrite", "read", "reread"]
//! ```

use serde::{Deserialize, Serialize};

use super::{ConfigError, Seg};
use crate::error::input;
use crate::units::{format_size, serde_size};

/// One test of a file-system study, in IOzone's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FsTest {
    /// Creates each file and writes it sequentially (IOzone's initial write, `-i 0`).
    Write,
    /// Overwrites the existing files sequentially, without growing them (`-i 0`).
    Rewrite,
    /// Reads each file sequentially (`-i 1`).
    Read,
    /// Reads them again (`-i 1`): with buffered I/O, from the page cache if they fit.
    Reread,
    /// Reads every record once, in random order (`-i 2`).
    RandomRead,
    /// Writes every record once, in random order (`-i 2`).
    RandomWrite,
    /// Reads each file from its last record to its first (`-i 3`).
    BackwardsRead,
    /// Reads every `stride`-th record, then the next set, until all are read (`-i 5`).
    StrideRead,
}

/// Every test, in the order a study runs them.
pub const FS_TESTS: [FsTest; 8] = [
    FsTest::Write,
    FsTest::Rewrite,
    FsTest::Read,
    FsTest::Reread,
    FsTest::RandomRead,
    FsTest::RandomWrite,
    FsTest::BackwardsRead,
    FsTest::StrideRead,
];

impl FsTest {
    /// Its name: `write`, `random-read`...
    pub fn name(self) -> &'static str {
        match self {
            FsTest::Write => "write",
            FsTest::Rewrite => "rewrite",
            FsTest::Read => "read",
            FsTest::Reread => "reread",
            FsTest::RandomRead => "random-read",
            FsTest::RandomWrite => "random-write",
            FsTest::BackwardsRead => "backwards-read",
            FsTest::StrideRead => "stride-read",
        }
    }

    /// What IOzone's report calls it.
    pub fn iozone_name(self) -> &'static str {
        match self {
            FsTest::Write => "Initial write",
            FsTest::Rewrite => "Rewrite",
            FsTest::Read => "Read",
            FsTest::Reread => "Re-read",
            FsTest::RandomRead => "Random read",
            FsTest::RandomWrite => "Random write",
            FsTest::BackwardsRead => "Reverse Read",
            FsTest::StrideRead => "Stride read",
        }
    }

    /// True for the tests that write.
    pub fn writes(self) -> bool {
        matches!(self, FsTest::Write | FsTest::Rewrite | FsTest::RandomWrite)
    }

    /// The test named `s` (its name, or IOzone's `-i` number 0, 1, 2, 3, 5 for its group).
    pub fn parse_list(s: &str) -> Result<Vec<FsTest>, String> {
        let mut out = Vec::new();
        for word in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let group: &[FsTest] = match word {
                "0" => &[FsTest::Write, FsTest::Rewrite],
                "1" => &[FsTest::Read, FsTest::Reread],
                "2" => &[FsTest::RandomRead, FsTest::RandomWrite],
                "3" => &[FsTest::BackwardsRead],
                "5" => &[FsTest::StrideRead],
                _ => {
                    let w = word.to_ascii_lowercase().replace('_', "-");
                    let found = FS_TESTS.iter().find(|t| t.name() == w || t.name().replace('-', "") == w);
                    match found {
                        Some(t) => std::slice::from_ref(t),
                        None => {
                            let names: Vec<&str> = FS_TESTS.iter().map(|t| t.name()).collect();
                            return Err(format!("unknown test {word:?}: give some of {}", names.join(", ")));
                        }
                    }
                }
            };
            out.extend_from_slice(group);
        }
        Ok(out)
    }
}

/// The `[fs]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsConfig {
    /// The directory the files are made in.
    pub dir: String,
    /// Thread counts, one after another (IOzone's `-t`, or `-l`/`-u`).
    #[serde(default = "one_thread")]
    pub threads: Vec<u32>,
    /// Each file's size (IOzone's `-s`; with one file per thread, each thread's).
    #[serde(default, with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// All files together, at every thread count: each file is `total / (threads x files)`
    /// (seed 002: 8 GB as 1 x 8, 2 x 4, 4 x 2, 8 x 1 GB). With neither `size` nor `total`:
    /// twice the host's memory, capped by 90 % of the directory's free space.
    #[serde(default, with = "serde_size::option", skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Bytes per read or write (IOzone's `-r`).
    #[serde(default = "default_record", with = "serde_size")]
    pub record: u64,
    /// The tests, run in this order after the files are written.
    #[serde(default = "default_tests")]
    pub tests: Vec<FsTest>,
    /// Files per thread, written and read one after another (small-file workloads).
    #[serde(default = "one")]
    pub files_per_thread: u32,
    /// Records between two reads of `stride-read` (IOzone's `-j`).
    #[serde(default = "default_stride")]
    pub stride: u32,
    /// O_DIRECT: past the page cache (IOzone's `-I`).
    #[serde(default)]
    pub direct: bool,
    /// fsync each file at the end of a writing test, inside its time (IOzone's `-e`).
    #[serde(default)]
    pub fsync: bool,
    /// Close inside the time (IOzone's `-c`).
    #[serde(default)]
    pub close: bool,
    /// Empty the page cache before every test (root: `/proc/sys/vm/drop_caches`).
    #[serde(default)]
    pub drop_caches: bool,
    /// Leave the files in `dir` at the end.
    #[serde(default)]
    pub keep: bool,
}

fn one_thread() -> Vec<u32> {
    vec![1]
}
fn one() -> u32 {
    1
}
fn default_record() -> u64 {
    64 << 10
}
fn default_stride() -> u32 {
    17
}
fn default_tests() -> Vec<FsTest> {
    vec![FsTest::Write, FsTest::Rewrite, FsTest::Read, FsTest::Reread]
}

impl FsConfig {
    /// A test in `dir` with every default: one thread, 64K records, write, rewrite, read, reread.
    pub fn new(dir: &str) -> FsConfig {
        FsConfig {
            dir: dir.into(),
            threads: one_thread(),
            size: None,
            total: None,
            record: default_record(),
            tests: default_tests(),
            files_per_thread: 1,
            stride: default_stride(),
            direct: false,
            fsync: false,
            close: false,
            drop_caches: false,
            keep: false,
        }
    }

    /// Checks what can be checked without touching the directory; errors name the key.
    pub fn check(&self) -> Result<(), ConfigError> {
        let err =
            |key: &'static str, message: String| ConfigError { path: vec![Seg::Key("fs"), Seg::Key(key)], message };
        if self.dir.is_empty() {
            return Err(err("dir", "dir is empty: give the directory to test in".into()));
        }
        if self.threads.is_empty() || self.threads.iter().any(|&t| t == 0 || t > 1024) {
            return Err(err("threads", format!("threads = {:?}: give thread counts from 1 to 1024", self.threads)));
        }
        if self.files_per_thread == 0 || self.files_per_thread > 10_000_000 {
            return Err(err("files_per_thread", "files_per_thread: give 1 to 10,000,000".into()));
        }
        if self.record == 0 || self.record > 1 << 30 {
            return Err(err("record", format!("record = {}: give 1 byte to 1G", self.record)));
        }
        if self.direct && self.record % 512 != 0 {
            return Err(err(
                "record",
                format!("record = {}: direct I/O needs a multiple of 512 bytes", format_size(self.record)),
            ));
        }
        if self.stride == 0 {
            return Err(err(
                "stride",
                "stride = 0: give the records between two reads (IOzone's default is 17)".into(),
            ));
        }
        if self.size.is_some() && self.total.is_some() {
            return Err(err("total", "give size (each file) or total (all files), not both".into()));
        }
        let mut seen = Vec::new();
        for t in &self.tests {
            if seen.contains(t) {
                return Err(err("tests", format!("{} is listed twice: give each test once", t.name())));
            }
            seen.push(*t);
        }
        // Without either, the total is the host's to say (`fs::run_study`).
        if self.size.is_some() || self.total.is_some() {
            for &n in &self.threads {
                self.file_size(n)
                    .map_err(|e| err(if self.size.is_some() { "size" } else { "total" }, e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Each file's size with `threads` threads: `size`, or `total` shared out, in whole records.
    pub fn file_size(&self, threads: u32) -> crate::error::Result<u64> {
        let files = u64::from(threads) * u64::from(self.files_per_thread);
        let (bytes, what) = match (self.size, self.total) {
            (Some(s), _) => (s, format!("size {}", format_size(s))),
            (None, Some(t)) => (t / files, format!("total {} over {files} file(s)", format_size(t))),
            (None, None) => return Err(input("give total (all files) or size (each file)")),
        };
        let whole = bytes / self.record * self.record;
        if whole == 0 {
            return Err(input(format!(
                "{what} is {} per file, less than one record ({}): give more bytes or a smaller record",
                format_size(bytes),
                format_size(self.record)
            )));
        }
        Ok(whole)
    }

    /// The tests to run, each once: `write` first (it makes the files), recorded only if listed.
    pub fn phases(&self) -> Vec<(FsTest, bool)> {
        let mut out = vec![(FsTest::Write, self.tests.contains(&FsTest::Write))];
        out.extend(self.tests.iter().filter(|t| **t != FsTest::Write).map(|t| (*t, true)));
        out
    }
}

/// Checks a job with an `[fs]` section: the section, its `[test]` keys (`interval` is the one
/// it uses), and nothing beside it that it would ignore.
pub fn check_job(job: &super::Job) -> Result<(), ConfigError> {
    let Some(fs) = &job.fs else { return Ok(()) };
    job.test.check_keys(&[Seg::Key("test")])?;
    if !job.workers.is_empty() {
        return Err(ConfigError {
            path: vec![Seg::Key("worker")],
            message: "a file-system test ([fs]) has no [[worker]]: give the one or the other".into(),
        });
    }
    if let Some(s) = &job.study {
        let only_repeat = super::StudyConfig { repeat: s.repeat, ..Default::default() };
        if *s != only_repeat {
            return Err(ConfigError {
                path: vec![Seg::Key("study")],
                message: "a file-system test's [study] takes only repeat (its threads are [fs] threads)".into(),
            });
        }
    }
    fs.check()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_share_the_total_in_whole_records() {
        let mut c = FsConfig::new("/tmp");
        c.total = Some(8 << 30);
        for (n, each) in [(1, 8u64 << 30), (2, 4 << 30), (4, 2 << 30), (8, 1 << 30)] {
            assert_eq!(c.file_size(n), Ok(each));
        }
        c.total = Some(1000 << 10);
        c.record = 64 << 10;
        assert_eq!(c.file_size(3), Ok(320 << 10), "333K per file is 5 whole 64K records");
        assert!(c.file_size(32).unwrap_err().to_string().contains("less than one record"));
        c.threads = vec![1, 32];
        assert!(c.check().unwrap_err().message.contains("less than one record"));
    }

    #[test]
    fn tests_parse_by_name_and_iozone_number() {
        assert_eq!(FsTest::parse_list("0,1").unwrap(), default_tests());
        assert_eq!(FsTest::parse_list("stride-read, randomread").unwrap(), [FsTest::StrideRead, FsTest::RandomRead]);
        assert!(FsTest::parse_list("wirte").unwrap_err().contains("unknown test \"wirte\""));
    }

    #[test]
    fn write_runs_first_and_counts_only_when_asked() {
        let mut c = FsConfig::new("/tmp");
        c.tests = vec![FsTest::Read, FsTest::Write];
        assert_eq!(c.phases(), [(FsTest::Write, true), (FsTest::Read, true)]);
        c.tests = vec![FsTest::Read];
        assert_eq!(c.phases(), [(FsTest::Write, false), (FsTest::Read, true)]);
    }
}
