//! The command line's flags and commands (clap), and their translation into a [`Job`], resolved
//! once into the [`Test`] that runs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use super::workload::SpecFlags;
use super::{history, verify};
use crate::cli::profile;
use crate::config::{
    FsConfig, FsTest, Job, KEYS, Seg, StudyConfig, Test, TestSettingFlags, WORKER_KEYS, WorkerConfig, WorkerFlags,
    flag_of,
};
use crate::error::{Result, Unreadable, input};
use crate::import::Import;
use crate::job;
use crate::net::TargetName;
use crate::spec::Distribution;
use crate::units::{parse_duration, parse_size};

/// iogauge: storage I/O workload generator and performance characterisation for Linux.
#[derive(Parser, Debug)]
#[command(name = "iogauge", version, about, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a test: from a job file, or from flags (a flag given wins over the job file's key).
    Run(RunArgs),
    /// Characterise a target with the standard suite and print one table (the main job):
    /// random-read-4k, random-write-4k, oltp-8k, file-server, web-server, streaming-read-64k
    /// and streaming-write-64k, each 1 s of ramp-up and 4 s recorded at 16 outstanding I/Os
    /// (`iogauge specs NAME` shows one).
    #[command(mut_arg("outstanding", |a| a.help(format!("Outstanding I/Os per target [default: {}]", profile::OUTSTANDING))
        .long_help(format!("Outstanding I/Os per target [default: {}]", profile::OUTSTANDING))))]
    Profile(ProfileArgs),
    /// Run a study: many tests, one per point (a job file's `[study]` section, or a built-in one).
    Study(StudyArgs),
    /// Test a file system as IOzone's throughput mode does: each thread writes files of its
    /// own, then rewrites, reads, re-reads them...; one point per thread count and test.
    Fs(FsArgs),
    /// Print the iogauge job (TOML) a fio job file or an Iometer configuration (.icf) runs as.
    Convert {
        /// The fio job file or .icf.
        file: PathBuf,
        #[command(flatten)]
        /// How its targets map to this machine.
        import: ImportFlags,
    },
    /// Compare two result or study documents, workload by workload.
    Compare {
        /// The reference: a JSON document, or a history id.
        a: String,
        /// The one compared with it: a JSON document, or a history id.
        b: String,
        #[command(flatten)]
        /// The history database.
        db: history::DbFlag,
        #[command(flatten)]
        /// Rows per worker or target.
        detail: history::DetailFlag,
    },
    /// Write an HTML report (charts and tables) of result or study documents or history ids.
    Report(history::ReportArgs),
    /// List the runs and studies in the history, newest first.
    History(history::HistoryArgs),
    /// Show a stored run's or study's table.
    Show {
        /// The history id (iogauge history lists them).
        id: i64,
        #[command(flatten)]
        /// The history database.
        db: history::DbFlag,
        #[command(flatten)]
        /// Rows per worker or target.
        detail: history::DetailFlag,
    },
    /// Write a stored run's or study's document back out: its JSON, or the CSV or Iometer
    /// results file its run would have written with --csv or --iometer-csv.
    Export {
        /// The history id (iogauge history lists them).
        id: i64,
        /// The file's format.
        #[arg(long, value_name = "json|csv|iometer-csv", default_value = "json")]
        format: crate::export::Format,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        /// The history database.
        db: history::DbFlag,
    },
    /// Re-read a target and check every block against the last write a verified test
    /// (--verify, --journal) made there.
    Verify(verify::VerifyArgs),
    /// Record every request the block layer issues to a device and completes (offset, size,
    /// operation, flags, issue and completion times, process) into a trace file.
    Capture(CaptureArgs),
    /// Replay a trace (an iogauge capture, a fio iolog, a blktrace) on a target at its own times,
    /// or as fast as possible, and say how late each I/O was against its schedule.
    #[command(mut_arg("targets", |a| a.required(true).help(REPLAY_TARGET).long_help(REPLAY_TARGET)))]
    #[command(mut_arg("outstanding", |a| a.help(REPLAY_OUTSTANDING).long_help(REPLAY_OUTSTANDING)))]
    Replay(ReplayArgs),
    /// Sum a trace up as a job file: access specifications with its size mix, read and random
    /// shares, seek runs, hot zones, trims and flushes, and how its I/Os arrived, per phase;
    /// --check TARGET runs the replay and the distilled job side by side.
    Distil(DistilArgs),
    /// Iometer's workbench in a browser: build a test (managers, workers, targets, access
    /// specifications, cycling or a seed's study), run it, watch it, keep it (docs/ui.md).
    Ui {
        /// Where to listen: PORT (on 127.0.0.1) or ADDR:PORT (0 picks a free port).
        #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
        listen: String,
        /// The history database runs save into and the page lists.
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// List the built-in access specifications, or show one's lines.
    Specs {
        /// A specification to show.
        name: Option<String>,
    },
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell
    /// (e.g. `iogauge completions bash > /etc/bash_completion.d/iogauge`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): iogauge's, or a command's (`iogauge man run > iogauge-run.1`).
    Man {
        /// The command whose page to print (run, study, ...); none: iogauge's own.
        command: Option<String>,
        /// Write every page (iogauge.1 and iogauge-COMMAND.1 for each command) into DIR
        /// instead, as a package installs them.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

impl Command {
    /// Whether the command drives I/O and so runs in a session of its own (crate::host::session).
    pub fn tests_storage(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Profile(_)
                | Command::Study(_)
                | Command::Fs(_)
                | Command::Replay(_)
                | Command::Distil(_)
        )
    }
}

/// For a target given without its flag to a command that takes `--target` (`iogauge profile
/// /dev/sdb`, a test file): the line that names the flag. None for any other word.
pub fn target_flag_hint(command: &str, arg: &str) -> Option<String> {
    use clap::CommandFactory;
    let takes_target = Cli::command()
        .find_subcommand(command)
        .is_some_and(|c| c.get_arguments().any(|a| a.get_long() == Some("target")));
    let target = crate::targets::names_one(std::path::Path::new(arg)) || std::path::Path::new(arg).is_file();
    // Named as every target is shown: a URL without its password.
    let name = TargetName::read(arg);
    (takes_target && target && !arg.starts_with('-'))
        .then(|| format!("{name}: a target is named with --target {name} (see 'iogauge {command} --help')"))
}

/// The iogauge flag for a flag a fio user types (`--iodepth=32`, `--numjobs`): None if `arg`
/// is not fio's.
pub fn fio_flag_hint(arg: &str) -> Option<&'static str> {
    let name = arg.split('=').next().unwrap_or(arg).trim_start_matches('-');
    Some(match name {
        "iodepth" => "use --qd N (outstanding I/Os per target per worker)",
        "numjobs" => "use --workers N (threads, each on every target)",
        "runtime" => "use --time DURATION (e.g. 30s; runs are timed by default)",
        "ramp_time" => "use --ramp DURATION (e.g. 5s)",
        "filename" => "use --target PATH (repeatable)",
        "size" => {
            "use --file-size SIZE (of a test file iogauge creates) or --working-set SIZE (the part of a target used)"
        }
        "io_size" | "io_limit" => "use --bytes SIZE",
        "number_ios" => "use --ios N",
        "ioengine" => "use --engine io_uring|psync",
        "direct" => "O_DIRECT is the default (--buffered uses the page cache)",
        "time_based" => "runs are timed by default (--time), --ios or --bytes end on a count",
        "blocksize" | "bssplit" => "use --bs SIZE or --bs 4k:60,64k:40",
        "readwrite" => "use --rw PATTERN",
        "rate_iops" => "use --rate-iops N (per worker)",
        "rate" => "use --rate-mbps N (per worker, 10^6 bytes/s)",
        "randseed" | "randrepeat" => "use --seed N",
        "cpus_allowed" | "cpumask" => "use --cpus LIST (e.g. 0-3,8)",
        "cpus_allowed_policy" => "use --cpus-policy shared|split (with --cpus LIST)",
        "iodepth_batch_complete_min" | "iodepth_batch_complete" => "use --completion-batch N",
        "iodepth_batch_submit" | "iodepth_batch" => "use --submit-batch N",
        "buffer_pattern" | "zero_buffers" => "use --data repeat:0xNN (every written block that byte)",
        "buffer_compress_percentage" | "dedupe_percentage" => "use --data compress:PCT,dedupe:PCT",
        "continue_on_error" => "use --on-error continue",
        "random_distribution" => "use --distribution LAW",
        "norandommap" => {
            "random offsets repeat by default (Iometer's draws); --random-map takes each block once per pass (fio's default)"
        }
        "write_lat_log" | "write_bw_log" | "write_iops_log" => "use --log-dir DIR (every log, named by worker)",
        "log_avg_msec" => "use --log-avg MS",
        "allow_mounted_write" => "use --allow-mounted-write DEV",
        "output-format" | "output" => "use --json FILE (- for stdout) or --csv FILE",
        "group_reporting" => "totals are reported by default",
        "name" => "a workload is named by its access specification",
        _ => return None,
    })
}

/// Settings of the whole test: the `[test]` keys' flags (config/settings.rs), and the
/// specifications and offset law of every worker.
#[derive(Args, Debug, Default)]
pub struct SettingFlags {
    /// Access specifications from a library file, to name with --spec (repeatable): an Iometer
    /// configuration saved with its specifications, or TOML of [[spec]] tables.
    #[arg(long, value_name = "FILE", alias = "specs")]
    pub spec_file: Vec<std::path::PathBuf>,
    #[command(flatten)]
    /// The `[test]` keys.
    pub test: TestSettingFlags,
    /// Where random offsets fall: uniform (default), lfsr (each block once per pass),
    /// zipf:THETA, pareto:H, normal:STDDEV_PCT[:CENTER_PCT] or zoned:IO/RANGE:...
    /// (zoned:80/20:20/80), for every specification the test runs (each renamed NAME@LAW).
    #[arg(long, value_name = "LAW")]
    pub distribution: Option<Distribution>,
    /// Random I/Os take each block of the working set once per pass, as fio's by default (its
    /// random map), for every specification the test runs (each renamed NAME@random-map).
    #[arg(long)]
    pub random_map: bool,
}

/// The workers the flags describe (`--workers` identical workers, each on every target), at
/// `outstanding` I/Os per target unless `--outstanding` says.
fn flag_workers(flags: &WorkerFlags, outstanding: u32) -> Vec<WorkerConfig> {
    let mut worker = WorkerConfig { outstanding, ..WorkerConfig::default() };
    flags.apply(&mut worker);
    vec![worker]
}

/// Where a document goes: the outputs of a run and of a study alike.
#[derive(Args, Debug, Default)]
pub struct DocumentFlags {
    /// Write the document (JSON): a run's result, or a study's, rewritten after every point;
    /// `-` for stdout, which then holds nothing else.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per workload (a study's: per point and workload); `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write Iometer's results file (CSV, as Iometer 1.1 writes it; a study as a cycling test,
    /// a `'Results` group per run of each point), for spreadsheets and scripts made for
    /// Iometer; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub iometer_csv: Option<PathBuf>,
    /// No live line and no table.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    /// Watching it while it runs.
    pub live: LiveFlags,
    #[command(flatten)]
    /// Where it is saved.
    pub history: history::SaveFlags,
}

impl DocumentFlags {
    /// Where the document goes, and no other output.
    fn destinations(&self) -> Destinations<'_> {
        Destinations {
            json: self.json.as_ref(),
            csv: self.csv.as_ref(),
            iometer_csv: self.iometer_csv.as_ref(),
            fio_json: None,
            fio_dir: None,
            iozone_csv: None,
            history: &self.history,
            quiet: self.quiet,
            live: &self.live,
            detail: Default::default(),
        }
    }
}

/// Where a run's results go.
#[derive(Args, Debug, Default)]
pub struct OutputFlags {
    #[command(flatten)]
    /// Its document, table and live outputs.
    pub document: DocumentFlags,
    /// Write the result in the shape of fio's --output-format=json (a job per worker), for
    /// tools made for fio; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub fio_json: Option<PathBuf>,
    #[command(flatten)]
    /// The table's rows.
    pub detail: history::DetailFlag,
}

impl OutputFlags {
    /// Where a run's results go.
    pub(super) fn destinations(&self) -> Destinations<'_> {
        Destinations {
            fio_json: self.fio_json.as_ref(),
            detail: self.detail.detail.unwrap_or_default(),
            ..self.document.destinations()
        }
    }
}

/// The flags that say where results go.
pub(super) struct Destinations<'a> {
    pub(super) json: Option<&'a PathBuf>,
    pub(super) csv: Option<&'a PathBuf>,
    pub(super) iometer_csv: Option<&'a PathBuf>,
    /// A run's fio JSON file.
    pub(super) fio_json: Option<&'a PathBuf>,
    /// A study's directory of fio JSON files.
    pub(super) fio_dir: Option<&'a PathBuf>,
    pub(super) iozone_csv: Option<&'a PathBuf>,
    pub(super) history: &'a history::SaveFlags,
    pub(super) quiet: bool,
    pub(super) live: &'a LiveFlags,
    pub(super) detail: crate::result::Detail,
}

/// Watching a test while it runs (docs/live.md).
#[derive(Args, Debug, Default)]
pub struct LiveFlags {
    /// Serve Prometheus metrics at http://ADDR:PORT/metrics while the test runs (PORT alone:
    /// on 127.0.0.1; port 0 picks a free one and says which).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<String>,
    /// Serve a live page at http://ADDR:PORT/: IOPS, MB/s and p99 over time, and a study's
    /// progress (PORT alone: on 127.0.0.1).
    #[arg(long, value_name = "ADDR:PORT")]
    pub http: Option<String>,
    /// Write one JSON object per interval to FILE (docs/live-schema.json), each flushed as
    /// it ends; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub live_json: Option<PathBuf>,
    /// Keep serving --metrics and --http this long after the test ends, so the last scrape
    /// sees the final counts (Ctrl-C ends it sooner).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub linger: Option<Duration>,
}

impl LiveFlags {
    /// What the flags ask for; `line`: whether the live line is drawn.
    pub(super) fn asked(&self, line: bool) -> Result<crate::live::Asked> {
        let addr = |flag: &str, v: &Option<String>| v.as_deref().map(|t| crate::http::parse_addr(flag, t)).transpose();
        if self.linger.is_some() && self.metrics.is_none() && self.http.is_none() {
            return Err(input("--linger keeps --metrics or --http serving after the test: give one of them"));
        }
        Ok(crate::live::Asked {
            metrics: addr("--metrics", &self.metrics)?,
            http: addr("--http", &self.http)?,
            live_json: self.live_json.clone(),
            linger: self.linger.unwrap_or_default(),
            line,
        })
    }
}

/// `iogauge run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A job file (TOML; docs/job-file.md), an Iometer configuration (.icf) or a fio job file
    /// (docs/interop.md).
    pub job: Option<PathBuf>,
    /// Access specification (repeatable: run one after another; default random-read-4k).
    #[arg(long = "spec", value_name = "NAME")]
    pub specs: Vec<String>,
    #[command(flatten)]
    /// An access specification from flags instead of a name.
    pub workload: SpecFlags,
    #[command(flatten)]
    /// How another tool's configuration maps to this machine.
    pub import: ImportFlags,
    #[command(flatten)]
    /// Workers, targets, settings and outputs.
    pub flags: TestFlags,
}

/// What another tool's configuration (an Iometer .icf, a fio job file) needs to run here.
#[derive(Args, Debug, Default)]
pub struct ImportFlags {
    /// An Iometer target name and the Linux path it stands for (repeatable):
    /// `PHYSICALDRIVE:1=/dev/sdb`, `E:=/mnt/e` (a directory: its iobw.tst, as Iometer's drive).
    #[arg(long, value_parser = parse_mapping, value_name = "NAME=PATH")]
    pub map_target: Vec<(String, String)>,
    /// A fio job file's options outside what iogauge reads, and an Iometer configuration's
    /// test connection rate, are skipped with a warning each (else refused).
    #[arg(long)]
    pub ignore_unknown: bool,
}

impl ImportFlags {
    /// The import settings, with the run time flag for a file whose own is 0.
    pub fn import(&self, settings: &SettingFlags) -> Import {
        Import { map_target: self.map_target.clone(), time: settings.test.time, ignore_unknown: self.ignore_unknown }
    }
}

fn parse_mapping(s: &str) -> std::result::Result<(String, String), Unreadable> {
    match s.rsplit_once('=') {
        Some((name, path)) if !name.is_empty() && !path.is_empty() => Ok((name.to_string(), path.to_string())),
        _ => Err(Unreadable(format!("{s}: give NAME=PATH, e.g. PHYSICALDRIVE:1=/dev/sdb"))),
    }
}

/// `iogauge study`.
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// A job file (TOML) with a `[study]` section (docs/job-file.md), an Iometer configuration
    /// (.icf: a cycling test is a study), or a built-in study's name; none lists the built-in
    /// studies.
    pub job: Option<String>,
    /// A built-in study's targets: block devices, files, nbd:// or iscsi:// URLs, or `null` (repeatable).
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<TargetName>,
    /// A built-in file-system study's directory (seed002-filesystem).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// A built-in file-system study's files together (default: twice the memory, capped by
    /// the free space).
    #[arg(long, value_parser = parse_size, value_name = "SIZE")]
    pub total: Option<u64>,
    /// Runs of each point (the headline is their median).
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    #[command(flatten)]
    /// How another tool's configuration maps to this machine.
    pub import: ImportFlags,
    #[command(flatten)]
    /// Settings of every test of the study.
    pub settings: SettingFlags,
    #[command(flatten)]
    /// Where its results go.
    pub outputs: StudyOutputs,
}

/// Where a study's results go (`study`, `fs`).
#[derive(Args, Debug)]
pub struct StudyOutputs {
    #[command(flatten)]
    /// Its document, table and live outputs.
    pub document: DocumentFlags,
    /// Write a fio JSON document per point and specification into DIR (made if missing), for
    /// fio-plot's graphs over queue depth and jobs.
    #[arg(long, value_name = "DIR")]
    pub fio_json: Option<PathBuf>,
    /// A file-system study: write its tables as IOzone's report lays them out (a table per
    /// figure, tests by thread counts, kB/s) as CSV; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub iozone_csv: Option<PathBuf>,
}

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
    /// Interval of the time series (`intervals`), the live line and the live outputs (as
    /// `[test] interval`; default 1s).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub interval: Option<Duration>,
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
        let mut job = Job { fs: Some(fs), study: Some(study), ..Job::default() };
        if let Some(every) = self.interval {
            job.test.interval = every;
        }
        job
    }
}

impl StudyOutputs {
    /// Where a study's results go.
    pub(super) fn destinations(&self) -> Destinations<'_> {
        Destinations {
            iozone_csv: self.iozone_csv.as_ref(),
            fio_dir: self.fio_json.as_ref(),
            ..self.document.destinations()
        }
    }
}

/// `iogauge profile`.
#[derive(Args, Debug)]
pub struct ProfileArgs {
    #[command(flatten)]
    /// Workers, targets, settings and outputs.
    pub flags: TestFlags,
}

/// The flags `run` and `profile` share.
#[derive(Args, Debug)]
pub struct TestFlags {
    #[command(flatten)]
    /// Workers and targets.
    pub workers: WorkerFlags,
    #[command(flatten)]
    /// Test settings.
    pub settings: SettingFlags,
    #[command(flatten)]
    /// Outputs.
    pub output: OutputFlags,
}

impl SettingFlags {
    /// Sets what the flags give in `c`'s test settings (flags win over a job file).
    pub(super) fn apply(&self, c: &mut Job) -> Result<()> {
        let f = &self.test;
        // A count ends the test and records every I/O: a time or ramp-up beside it would be
        // silently ignored.
        if let (Some(count), Some(time)) = (
            f.ios.map(|_| "--ios").or(f.bytes.map(|_| "--bytes")),
            f.time.map(|_| "--time").or(f.ramp.map(|_| "--ramp")),
        ) {
            return Err(input(format!(
                "{count} ends the test on a count and records every I/O (no ramp-up): {time} does not apply with it; give one"
            )));
        }
        if f.ios.is_some() && f.bytes.is_some() {
            return Err(input("--ios and --bytes both end the test: give one"));
        }
        f.apply(&mut c.test);
        // Each name's description: files of many specifications are added in linear time.
        let mut had: std::collections::HashMap<String, String> =
            c.specs.iter().map(|s| (s.name.clone(), s.description.clone())).collect();
        for file in &self.spec_file {
            for spec in crate::job::load_specs(file)? {
                if let Some(description) = had.get(&spec.name) {
                    return Err(input(format!(
                        "--spec-file {}: a specification named '{}' is there already ({description}): give each its own name",
                        file.display(),
                        spec.name,
                    )));
                }
                had.insert(spec.name.clone(), spec.description.clone());
                c.specs.push(spec);
            }
        }
        if let Some(law) = &self.distribution {
            c.set_distribution(law)?;
        }
        if self.random_map {
            c.set_random_map()?;
        }
        Ok(())
    }
}

/// Resolves a job built or changed by flags; an error at a key a flag gave says it in the
/// flags' words: `count = 0: give...` as `--workers 0: give...`, each `key` it names as its flag.
pub(super) fn resolve_flags(job: &Job, flags: &TestFlags) -> Result<Test> {
    Test::from_job(job).map_err(|e| {
        let command = clap::Command::new("flags");
        let (given, command, keys) = match e.path.first() {
            Some(Seg::Key("test")) => (flags.settings.test.given(), TestSettingFlags::augment_args(command), KEYS),
            Some(Seg::Key("worker")) => (flags.workers.given(), WorkerFlags::augment_args(command), WORKER_KEYS),
            _ => return e.into(),
        };
        let flag = match e.path.last() {
            Some(Seg::Key(key)) if given.contains(key) => flag_of(&command, key).map(|flag| (flag, key)),
            _ => None,
        };
        let Some((flag, key)) = flag else { return e.into() };
        let mut message = e.message.clone();
        for k in keys {
            if let Some(f) = flag_of(&command, k.name) {
                message = message.replace(&format!("`{}`", k.name), &f);
            }
        }
        let value = message.strip_prefix(&format!("{key} = ")).and_then(|rest| rest.split_once(": "));
        match value.filter(|(value, _)| !value.contains(' ')) {
            Some((value, rest)) => input(format!("{flag} {value}: {rest}")),
            None => input(format!("{flag}: {message}")),
        }
    })
}

/// The test `iogauge run` describes: a job file's with the flags applied, or the flags' own.
pub fn run_test(a: &RunArgs) -> Result<Test> {
    let mut job = match &a.job {
        Some(path) => {
            job::refuse_target(path)?;
            // The workers' shape is the job file's; --target fills those that name no target.
            let given = a.flags.workers.given().into_iter().filter(|k| *k != "targets");
            let flags = WorkerFlags::augment_args(clap::Command::new("flags"));
            let shape: Vec<String> = given.filter_map(|k| flag_of(&flags, k)).collect();
            if !shape.is_empty() {
                return Err(input(format!(
                    "{} cannot be combined with job file {}: edit its [[worker]] sections",
                    shape.join(", "),
                    path.display()
                )));
            }
            let mut job = job::load(path, &a.import.import(&a.flags.settings))?;
            if job.study.is_some() {
                return Err(input(format!(
                    "{} describes a study (a [study] section, or Iometer's cycling): run it with iogauge study {0}",
                    path.display()
                )));
            }
            fill_targets(&mut job, &a.flags.workers.targets, path)?;
            job
        }
        None => Job { workers: flag_workers(&a.flags.workers, 1), ..Job::default() },
    };
    if a.workload.any() {
        if !a.specs.is_empty() {
            return Err(input(
                "--spec and --bs/--read/--random/--align/--rw/--rwmixread both name the workload: give one",
            ));
        }
        let spec = a.workload.spec()?;
        job.test.run = vec![spec.name.clone()];
        job.specs.retain(|s| s.name != spec.name);
        job.specs.push(spec);
    } else if !a.specs.is_empty() {
        job.test.run = a.specs.clone();
    } else if a.job.is_none() {
        job.test.run = vec!["random-read-4k".into()];
    }
    a.flags.settings.apply(&mut job)?;
    resolve_flags(&job, &a.flags)
}

/// `--target` with a job file: the targets of the workers that name none (a distilled job's,
/// a template's). Refused when every worker names its own: the flag would change nothing.
fn fill_targets(job: &mut Job, targets: &[TargetName], path: &std::path::Path) -> Result<()> {
    if targets.is_empty() {
        return Ok(());
    }
    let mut open: Vec<_> = job.workers.iter_mut().filter(|w| w.targets.is_empty()).collect();
    if open.is_empty() {
        return Err(input(format!(
            "--target fills the workers that name no target, and every worker of {} names its own: edit its \
             [[worker]] sections, or leave --target out",
            path.display()
        )));
    }
    for w in &mut open {
        w.targets = targets.to_vec();
    }
    Ok(())
}

/// The test `iogauge profile` describes.
pub fn profile_test(a: &ProfileArgs) -> Result<Test> {
    let mut job = Job::default();
    job.test.ramp = profile::RAMP;
    job.test.time = profile::TIME;
    job.test.run = profile::SUITE.iter().map(|s| s.to_string()).collect();
    job.workers = flag_workers(&a.flags.workers, profile::OUTSTANDING);
    a.flags.settings.apply(&mut job)?;
    resolve_flags(&job, &a.flags)
}

/// `iogauge capture` flags.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The block device whose requests to record (needs root and tracefs).
    #[arg(long, value_name = "DEV")]
    pub device: PathBuf,
    /// How long to record (Ctrl-C ends it sooner and keeps what was recorded).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION", default_value = "60s")]
    pub time: Duration,
    /// The trace file (`-`: stdout), written whole when the capture ends.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
}

/// `iogauge replay` flags.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: an iogauge capture, a fio iolog (v2 or v3; write_iolog's), blktrace's files
    /// (DEV or any one DEV.blktrace.N stands for every CPU's; a file of `blkparse -d`), or
    /// blkparse's text.
    pub trace: PathBuf,
    /// How fast: 1 at the trace's own times (default), 2 twice as fast, max as fast as the
    /// outstanding I/Os allow.
    #[arg(long, value_parser = crate::config::Speed::parse, default_value = "1", value_name = "FACTOR|max", allow_negative_numbers = true)]
    pub speed: crate::config::Speed,
    /// Offsets past the working set: wrap (modulo it) or scale (by working set / the trace's
    /// reach); default: refused.
    #[arg(long, value_enum, value_name = "wrap|scale")]
    pub fit: Option<FitFlag>,
    #[command(flatten)]
    /// The worker that replays it, its target (its writes need --allow-write as any test's),
    /// settings (--time replays only the trace's first DURATION) and outputs.
    pub flags: TestFlags,
}

/// `replay --target`'s help: one, and no default file.
const REPLAY_TARGET: &str = "The target to replay onto: a block device, file, nbd:// or iscsi:// URL, or null";

/// `replay --outstanding`'s help: its default is the trace's.
const REPLAY_OUTSTANDING: &str = "I/Os in flight at most (default: at the trace's times, enough for twice what the trace \
     had in flight, at least 64; at max, what a capture kept in flight on average, else 1)";

/// `--fit`.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum FitFlag {
    /// Offsets modulo the working set.
    Wrap,
    /// Offsets scaled by the working set over the trace's reach.
    Scale,
}

/// `iogauge distil` flags.
#[derive(Args, Debug)]
pub struct DistilArgs {
    /// The trace: an iogauge capture, a fio iolog (v2 or v3), blktrace's files (DEV or any
    /// one DEV.blktrace.N stands for every CPU's), or blkparse's text.
    pub trace: PathBuf,
    /// The length of the windows compared for phases (default: a tenth of the trace).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub window: Option<Duration>,
    /// The specifications' name (default: the trace's file name without extension).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The target the job names (default: iogauge's test file).
    #[arg(long, value_name = "PATH")]
    pub target: Option<TargetName>,
    /// Write the job here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also run the trace's replay and the distilled job on TARGET, one after the other, and
    /// print their figures side by side (both are kept in the history).
    #[arg(long, value_name = "TARGET")]
    pub check: Option<TargetName>,
    /// With --check: the targets that may be written (as run's --allow-write).
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<TargetName>,
    /// With --check: the comparison as JSON (schema iogauge.distil-check/1) on stdout.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--help` says each default as the code has it (issue 48): the defaults live in
    /// constants, the help in doc comments, and this holds them together.
    #[test]
    fn help_tells_the_defaults_the_code_uses() {
        let help = |cmd: &str| {
            let mut c = Cli::command();
            c.find_subcommand_mut(cmd).expect("a command").render_long_help().to_string()
        };
        let (run, profile) = (help("run"), help("profile"));
        let d = crate::config::TestSettings::default();
        for says in [
            format!("[default: {}]", crate::units::format_duration(d.ramp)),
            format!("[default: {}]", crate::units::format_duration(d.time)),
            "(16 under `iogauge profile`) [default: 1]".to_string(),
            "Identical workers (threads), each on every target [default: 1]".to_string(),
        ] {
            assert!(run.contains(&says), "run --help lacks {says}");
        }
        assert_eq!(profile::RAMP, d.ramp, "profile's ramp-up is the default the help gives");
        assert_eq!(profile::OUTSTANDING, 16, "profile's outstanding I/Os are those --outstanding's help gives");
        for w in profile::SUITE {
            assert!(profile.contains(w), "profile --help names {w}");
        }
        assert!(profile.contains(&format!("{} outstanding", profile::OUTSTANDING)));
        assert!(profile.contains(&format!("Outstanding I/Os per target [default: {}]", profile::OUTSTANDING)));
        assert!(profile.contains(&format!("{} s recorded", profile::TIME.as_secs())));
    }
}
