//! `iogauge fs`: a file-system test as IOzone's throughput mode runs one (seed 002), and the
//! study it makes: one point per thread count and test.

use clap::Args;

use super::args::StudyOutputs;
use super::exports::{self, Destinations, ExportManager};
use crate::config::{FsConfig, FsTest, Job, StudyConfig};
use crate::error::Result;
use crate::managers::Solo;
use crate::units::parse_size;

/// `iogauge fs`.
#[derive(Args, Debug)]
pub struct FsArgs {
    /// The directory to make the files in, on the file system under test.
    #[arg(long, value_name = "DIR")]
    pub dir: String,
    /// Thread counts, one after another, each thread with files of its own (IOzone's -t).
    #[arg(long, value_delimiter = ',', default_value = "1", value_name = "N,N...")]
    pub threads: Vec<u32>,
    /// All files together, the same at every thread count: each file is TOTAL / (threads x
    /// files per thread), in whole records (seed 002: 8G as 1 x 8G, 2 x 4G ... 8 x 1G).
    #[arg(long, value_parser = parse_size, value_name = "SIZE", required_unless_present = "size", conflicts_with = "size")]
    pub total: Option<u64>,
    /// Each file's size instead (IOzone's -s).
    #[arg(long, value_parser = parse_size, value_name = "SIZE")]
    pub size: Option<u64>,
    /// Bytes per read or write (IOzone's -r).
    #[arg(long, value_parser = parse_size, value_name = "SIZE", default_value = "64K")]
    pub record: u64,
    /// The tests: write, rewrite, read, reread, random-read, random-write, backwards-read,
    /// stride-read (or IOzone's numbers 0, 1, 2, 3, 5). The files are written first in any case.
    #[arg(long, value_parser = FsTest::parse_list, value_name = "TEST,TEST...", default_value = "write,rewrite,read,reread")]
    pub tests: Vec<Vec<FsTest>>,
    /// Files per thread, one after another (small-file workloads: 10000 files of --size 64K).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub files_per_thread: u32,
    /// Records between two reads of stride-read (IOzone's -j).
    #[arg(long, value_name = "N", default_value_t = 17)]
    pub stride: u32,
    /// O_DIRECT: past the page cache (IOzone's -I).
    #[arg(long)]
    pub direct: bool,
    /// fsync each file at the end of a writing test, inside its time (IOzone's -e).
    #[arg(long)]
    pub fsync: bool,
    /// Count closing each file in the time (IOzone's -c).
    #[arg(long)]
    pub close: bool,
    /// Empty the page cache before every test (root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Leave the files in DIR at the end.
    #[arg(long)]
    pub keep: bool,
    /// Runs of each point (the headline is their median).
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    #[command(flatten)]
    /// Where its results go.
    pub outputs: StudyOutputs,
}

impl FsArgs {
    /// The job the flags describe: an `[fs]` section, repeated as asked.
    pub fn job(&self) -> Job {
        // A list such as "write,read" arrives as one parsed list per flag value.
        let fs = FsConfig {
            threads: self.threads.clone(),
            size: self.size,
            total: self.total,
            record: self.record,
            tests: self.tests.concat(),
            files_per_thread: self.files_per_thread,
            stride: self.stride,
            direct: self.direct,
            fsync: self.fsync,
            close: self.close,
            drop_caches: self.drop_caches,
            keep: self.keep,
            ..FsConfig::new(&self.dir)
        };
        let study = StudyConfig { repeat: self.repeat.unwrap_or(1), ..StudyConfig::default() };
        Job { fs: Some(fs), study: Some(study), ..Job::default() }
    }
}

/// Runs the file-system study of `job` and writes its outputs; returns the exit status (1 if
/// a test failed, 130 if stopped).
pub(super) fn run(job: &Job, to: Destinations) -> Result<i32> {
    // A file-system test runs on this host alone.
    let group = Solo::new();
    let mut exports = ExportManager::open(&group, to)?;
    exports::stop_on_interrupt();
    let doc = crate::fs::run_study(job, &mut exports)?;
    exports.write_study(&doc, None)?;
    for e in doc.points.iter().flat_map(|p| &p.runs).flat_map(|r| &r.results).filter_map(|r| r.first_error.as_ref()) {
        eprintln!("iogauge: {e}");
    }
    Ok(doc.exit_status())
}
