//! The command line: flags, their translation into a [`TestConfig`], and the commands.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

mod history;
mod verify;

use crate::compare;
use crate::config::{DataPattern, EngineKind, OnError, Run, TestConfig, WorkerConfig};
use crate::document::Document;
use crate::error::{Error, Result, input, runtime};
use crate::export;
use crate::job;
use crate::managers;
use crate::plan;
use crate::profile;
use crate::run::{self, LiveStatus, Phase, Progress, Silent};
use crate::spec;
use crate::study;
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
    /// Run a test: from a job file, or from flags.
    Run(RunArgs),
    /// Characterise a target with the standard suite and print one table (the main job).
    Profile(ProfileArgs),
    /// Run a study: many tests, one per point (a job file's [study] section, or a built-in one).
    Study(StudyArgs),
    /// Compare two result or study documents, workload by workload.
    Compare {
        /// The reference: a JSON document, or a history id.
        a: String,
        /// The one compared with it: a JSON document, or a history id.
        b: String,
        #[command(flatten)]
        /// The history database.
        db: history::DbFlag,
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
    },
    /// Write a stored run's or study's JSON document back out.
    Export {
        /// The history id (iogauge history lists them).
        id: i64,
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
    /// List the built-in access specifications, or show one's lines.
    Specs {
        /// A specification to show.
        name: Option<String>,
    },
}

fn size(s: &str) -> std::result::Result<u64, String> {
    parse_size(s)
}
fn duration(s: &str) -> std::result::Result<Duration, String> {
    parse_duration(s)
}

/// Settings of the whole test.
#[derive(Args, Debug, Default)]
pub struct SettingFlags {
    /// Ramp-up before recording (e.g. 2s).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub ramp: Option<Duration>,
    /// Recorded run time (e.g. 30s, 2m).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub time: Option<Duration>,
    /// Stop after this many I/Os in all (no ramp-up).
    #[arg(long, value_name = "N")]
    pub ios: Option<u64>,
    /// Stop after this many bytes in all (no ramp-up).
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub bytes: Option<u64>,
    /// I/O engine: io_uring or psync.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<EngineKind>,
    /// Size of a test file iogauge creates (default 1G).
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub file_size: Option<u64>,
    /// Use the page cache for files (numbers may then come from memory).
    #[arg(long)]
    pub buffered: bool,
    /// Written data: random, repeat, repeat:0xNN or compress:PCT.
    #[arg(long, value_name = "PATTERN")]
    pub data: Option<DataPattern>,
    /// Interval of the time series and the live line (default 1s).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub interval: Option<Duration>,
    /// Seed of the offset and mix generators.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// What a failed I/O does: stop (the test ends there, the default) or continue (counted).
    #[arg(long, value_name = "stop|continue")]
    pub on_error: Option<OnError>,
    /// Under MPI: the longest a manager waits for the others during a run (default 60s).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub sync_timeout: Option<Duration>,
    /// Give up an I/O outstanding this long (ETIMEDOUT); a test where a worker completes no
    /// I/O for this long stops (default 30s).
    #[arg(long, value_parser = duration, value_name = "DURATION")]
    pub io_timeout: Option<Duration>,
    /// Verify data: stamp every written block (header + CRC-32C), check every read of one,
    /// and leave a map of the last writes for `iogauge verify`.
    #[arg(long)]
    pub verify: bool,
    /// Verify data and record every write in DIR, durably, before and after it (for
    /// `iogauge verify --journal DIR` after a crash).
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Allow writing to this device or existing file although it holds data (repeatable).
    #[arg(long, value_name = "PATH")]
    pub allow_write: Vec<String>,
}

/// How workers and targets are laid out (flags form only).
#[derive(Args, Debug, Default)]
pub struct WorkerFlags {
    /// Target: block device, file, or `null` (repeatable; default ./iogauge.tst).
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<String>,
    /// Workers (threads), each on every target.
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// Outstanding I/Os per target per worker.
    #[arg(long, visible_alias = "qd", value_name = "N")]
    pub outstanding: Option<u32>,
    /// Working set as % of each target (the seeds' drive stroke).
    #[arg(long, value_name = "PCT")]
    pub stroke: Option<f64>,
    /// Working set as a size.
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub working_set: Option<u64>,
    /// Start of the working set on each target.
    #[arg(long, value_parser = size, value_name = "SIZE")]
    pub offset: Option<u64>,
}

impl WorkerFlags {
    fn any(&self) -> bool {
        !self.targets.is_empty()
            || self.workers.is_some()
            || self.outstanding.is_some()
            || self.stroke.is_some()
            || self.working_set.is_some()
            || self.offset.is_some()
    }

    /// The workers these flags describe: `workers` identical workers, each on every target.
    fn workers(&self, default_outstanding: u32) -> Result<Vec<WorkerConfig>> {
        let n = self.workers.unwrap_or(1);
        if n == 0 {
            return Err(input("--workers 0: give at least 1 worker"));
        }
        Ok(vec![WorkerConfig {
            count: n,
            outstanding: self.outstanding.unwrap_or(default_outstanding),
            targets: self.targets.clone(),
            stroke: self.stroke,
            working_set: self.working_set,
            offset: self.offset.unwrap_or(0),
            ..WorkerConfig::default()
        }])
    }
}

/// Where results go.
#[derive(Args, Debug, Default)]
pub struct OutputFlags {
    /// Write the result document (JSON); `-` for stdout, which then holds nothing else.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write Iometer's results CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// No live line and no table.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    /// Where the run is saved.
    pub history: history::SaveFlags,
}

/// `iogauge run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A job file (TOML); see docs/job-file.md.
    pub job: Option<PathBuf>,
    /// Access specification (repeatable: run one after another; default random-read-4k).
    #[arg(long = "spec", value_name = "NAME")]
    pub specs: Vec<String>,
    #[command(flatten)]
    /// Workers, targets, settings and outputs.
    pub flags: TestFlags,
}

/// `iogauge study`.
#[derive(Args, Debug)]
pub struct StudyArgs {
    /// A job file (TOML) with a [study] section (docs/job-file.md), or a built-in study's name;
    /// none lists the built-in studies.
    pub job: Option<String>,
    /// A built-in study's targets: block devices, files or `null` (repeatable).
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<String>,
    /// Runs of each point (the headline is their median).
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    #[command(flatten)]
    /// Settings of every test of the study.
    pub settings: SettingFlags,
    /// Write the study document (JSON), rewritten after every point; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one CSV row per point and access specification; `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// No live line and no table.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    /// Where the study is saved.
    pub history: history::SaveFlags,
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
    fn apply(&self, c: &mut TestConfig) {
        let t = &mut c.test;
        if let Some(v) = self.ramp {
            t.ramp = v;
        }
        if let Some(v) = self.time {
            t.time = v;
        }
        if self.ios.is_some() {
            t.ios = self.ios;
        }
        if self.bytes.is_some() {
            t.bytes = self.bytes;
        }
        if let Some(v) = self.engine {
            t.engine = v;
        }
        if let Some(v) = self.file_size {
            t.file_size = v;
        }
        t.buffered |= self.buffered;
        if let Some(v) = self.data {
            t.data = v;
        }
        if let Some(v) = self.interval {
            t.interval = v;
        }
        if let Some(v) = self.seed {
            t.seed = v;
        }
        if let Some(v) = self.on_error {
            t.on_error = v;
        }
        if let Some(v) = self.sync_timeout {
            t.sync_timeout = v;
        }
        if let Some(v) = self.io_timeout {
            t.io_timeout = v;
        }
        t.verify |= self.verify;
        if let Some(v) = &self.journal {
            t.journal = Some(v.clone());
        }
        t.allow_write.extend(self.allow_write.iter().cloned());
    }
}

/// Resolves a configuration built from flags; errors name the setting.
fn resolve_flags(mut c: TestConfig) -> Result<(TestConfig, Vec<Run>)> {
    let runs = c.resolve().map_err(|e| input(e.message))?;
    Ok((c, runs))
}

/// The configuration `iogauge run` describes.
pub fn run_config(a: &RunArgs) -> Result<(TestConfig, Vec<Run>)> {
    let (mut c, from_job) = match &a.job {
        Some(path) => {
            if a.flags.workers.any() {
                return Err(input(format!(
                    "--target, --workers, --outstanding, --stroke, --working-set and --offset cannot be combined with job file {}: edit its [[worker]] sections",
                    path.display()
                )));
            }
            let (c, _) = job::load(path)?;
            if c.study.is_some() {
                return Err(input(format!("{} has a [study] section: run it with iogauge study {0}", path.display())));
            }
            (c, true)
        }
        None => (TestConfig::default(), false),
    };
    if !from_job {
        c.workers = a.flags.workers.workers(1)?;
        c.test.run = if a.specs.is_empty() { vec!["random-read-4k".into()] } else { a.specs.clone() };
    } else if !a.specs.is_empty() {
        c.test.run = a.specs.clone();
    }
    a.flags.settings.apply(&mut c);
    resolve_flags(c)
}

/// The configuration `iogauge profile` describes.
pub fn profile_config(a: &ProfileArgs) -> Result<(TestConfig, Vec<Run>)> {
    let mut c = TestConfig::default();
    c.test.ramp = profile::RAMP;
    c.test.time = profile::TIME;
    c.test.run = profile::SUITE.iter().map(|s| s.to_string()).collect();
    c.workers = a.flags.workers.workers(profile::OUTSTANDING)?;
    a.flags.settings.apply(&mut c);
    resolve_flags(c)
}

/// The live line on a terminal: rewritten in place, cleared when a run ends.
struct LiveLine;

impl Progress for LiveLine {
    fn live(&mut self, s: &LiveStatus) {
        let phase = match s.phase {
            Phase::Ramp => "ramp",
            Phase::Run => "run ",
        };
        let total = s.total_s.map_or(String::new(), |t| format!("/{t:.0}"));
        let avg = s.avg_response_ms.map_or("-".into(), |v| format!("{v:.3}"));
        let mut out = std::io::stdout().lock();
        let _ = write!(
            out,
            "\r\x1b[K{} {phase} {:.0}{total} s  IOPS {}  MB/s {:.1}  avg {avg} ms  CPU {:.0} %",
            s.spec,
            s.elapsed_s,
            export::table::thousands(s.iops),
            s.mbps,
            s.cpu_pct
        );
        let _ = out.flush();
    }

    fn done(&mut self) {
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[K");
        let _ = out.flush();
    }
}

/// Where a command's machine output goes: each file created before any I/O, so a bad path
/// fails at once (`None` inside: stdout, which then holds nothing else).
struct Outputs {
    json: Option<Option<std::fs::File>>,
    csv: Option<Option<std::fs::File>>,
}

impl Outputs {
    fn open(json: Option<&PathBuf>, csv: Option<&PathBuf>) -> Result<Outputs> {
        let to_stdout = |p: Option<&PathBuf>| p.is_some_and(|p| p.as_os_str() == "-");
        if to_stdout(json) && to_stdout(csv) {
            return Err(input("--json - and --csv - cannot both use stdout: give one a file"));
        }
        let open = |path: &PathBuf| -> Result<Option<std::fs::File>> {
            if path.as_os_str() == "-" {
                return Ok(None);
            }
            std::fs::File::create(path).map(Some).map_err(|e| input(format!("cannot write {}: {e}", path.display())))
        };
        Ok(Outputs { json: json.map(open).transpose()?, csv: csv.map(open).transpose()? })
    }

    /// The outputs and the history, opened by the lead manager only (the others write
    /// nothing); every manager learns if that failed.
    fn open_on(
        group: &dyn managers::Group,
        json: Option<&PathBuf>,
        csv: Option<&PathBuf>,
        history: &history::SaveFlags,
        quiet: bool,
    ) -> Result<(Outputs, history::Saver)> {
        let opened = if group.leads() {
            Outputs::open(json, csv).and_then(|f| Ok((f, history.saver(quiet)?)))
        } else {
            Ok((Outputs { json: None, csv: None }, history::Saver::none()))
        };
        managers::all_ok(group, opened, "opening the outputs")
    }

    /// Whether machine output takes stdout (no live line, no table then).
    fn stdout_taken(&self) -> bool {
        matches!(self.json, Some(None)) || matches!(self.csv, Some(None))
    }
}

/// Writes `bytes` to `file`, or to stdout.
fn write_out(file: Option<&mut std::fs::File>, bytes: &[u8], what: &str) -> Result<()> {
    let done = match file {
        Some(f) => f.write_all(bytes),
        None => std::io::stdout().write_all(bytes),
    };
    done.map_err(|e| runtime(format!("writing {what}: {e}")))
}

/// The live line on a terminal, unless stdout is to stay quiet.
fn progress(quiet_stdout: bool) -> Box<dyn Progress> {
    if !quiet_stdout && std::io::stdout().is_terminal() { Box::new(LiveLine) } else { Box::new(Silent) }
}

/// Prepares, runs and reports a test. Returns the exit status (0, or 1 if any I/O failed).
///
/// Under MPI every manager runs this; only the lead (rank 0) opens outputs and writes.
pub fn execute(config: TestConfig, runs: Vec<Run>, out: &OutputFlags) -> Result<i32> {
    let group = managers::join(config.test.sync_timeout)?;
    said(group.as_ref(), execute_on(group.as_ref(), config, runs, out))
}

/// Under MPI the lead says why a command failed while every manager is still there: once
/// they have all finished, the launcher may stop the lead before it could print.
fn said(group: &dyn managers::Group, r: Result<i32>) -> Result<i32> {
    match r {
        Err(e) if group.all().len() > 1 => {
            if group.leads() {
                eprintln!("iogauge: {e}");
            }
            Ok(e.exit_code())
        }
        r => r,
    }
}

fn execute_on(group: &dyn managers::Group, config: TestConfig, runs: Vec<Run>, out: &OutputFlags) -> Result<i32> {
    let lead = group.leads();
    let (mut files, mut saver) = Outputs::open_on(group, out.json.as_ref(), out.csv.as_ref(), &out.history, out.quiet)?;
    let prep = plan::prepare_for(group, config, runs)?;
    let quiet_stdout = out.quiet || files.stdout_taken() || !lead;
    if lead {
        for w in &prep.warnings {
            eprintln!("iogauge: warning: {w}");
        }
    }
    stop_on_interrupt();
    let run::Tested { doc, maps } = run::run_test(&prep, group, progress(quiet_stdout).as_mut(), &STOP)?;
    let status = match (doc.interrupted, doc.has_errors()) {
        (true, _) => Error::Stopped.exit_code(),
        (false, true) => 1,
        (false, false) => 0,
    };
    // Every manager keeps the maps of its own targets, on its own host.
    verify::save_maps(&maps);
    if !lead {
        return Ok(status);
    }
    if let Some(f) = &mut files.json {
        write_out(f.as_mut(), &export::json::to_bytes(&doc), "the JSON document")?;
    }
    if let Some(f) = &mut files.csv {
        write_out(f.as_mut(), &export::csv::to_bytes(&doc), "the CSV file")?;
    }
    if !quiet_stdout {
        write_out(None, &export::table::to_bytes(&doc), "the table")?;
    }
    if doc.interrupted {
        eprintln!("iogauge: stopped: the results so far are kept, marked interrupted");
    }
    saver.save(&Document::Run(Box::new(doc)));
    Ok(status)
}

/// Runs a study and writes its outputs. Returns the exit status (0, or 1 if any I/O failed,
/// 130 if stopped by Ctrl-C).
pub fn study(a: &StudyArgs) -> Result<i32> {
    let Some(job) = &a.job else {
        for (name, about) in study::builtin::BUILTINS {
            println!("{name:<20} {about}");
        }
        return Ok(0);
    };
    let path = std::path::Path::new(job);
    let mut config = if path.exists() || job.ends_with(".toml") {
        if !a.targets.is_empty() {
            return Err(input(format!("--target goes with a built-in study: {job} names its own targets")));
        }
        let (config, _) = job::load(path)?;
        if config.study.is_none() {
            return Err(input(format!(
                "{job} has no [study] section: add one (docs/job-file.md) or run it with iogauge run"
            )));
        }
        config
    } else {
        study::builtin::builtin(job, &a.targets).map_err(input)?
    };
    a.settings.apply(&mut config);
    if let (Some(r), Some(s)) = (a.repeat, config.study.as_mut()) {
        s.repeat = r;
    }
    config.resolve().map_err(|e| input(e.message))?;
    let points = study::points(&config).map_err(|e| input(e.message))?;
    let group = managers::join(config.test.sync_timeout)?;
    said(group.as_ref(), study_on(group.as_ref(), a, job, &config, &points))
}

fn study_on(
    group: &dyn managers::Group,
    a: &StudyArgs,
    job: &str,
    config: &TestConfig,
    points: &[study::Point],
) -> Result<i32> {
    let lead = group.leads();
    let (mut files, mut saver) = Outputs::open_on(group, a.json.as_ref(), a.csv.as_ref(), &a.history, a.quiet)?;
    let quiet_stdout = a.quiet || files.stdout_taken() || !lead;
    // The JSON file and the history entry are rewritten after every point, so a study cut
    // short keeps its points.
    let json_path = a.json.as_ref().filter(|_| matches!(files.json, Some(Some(_))));
    let mut after_point = |doc: &study::run::StudyDoc| -> Result<()> {
        saver.save_quietly(&Document::Study(Box::new(doc.clone())));
        match json_path {
            Some(p) => std::fs::write(p, export::json::to_bytes(doc))
                .map_err(|e| runtime(format!("writing {}: {e}", p.display()))),
            None => Ok(()),
        }
    };
    stop_on_interrupt();
    let study::run::Studied { doc, maps } =
        study::run::run_study(config, points, progress(quiet_stdout).as_mut(), &mut after_point, &STOP, group)?;
    // Every manager keeps the maps of its own targets, on its own host.
    verify::save_maps(&maps);
    // Once more with the end state (complete or stopped, the whole duration).
    after_point(&doc)?;
    if !lead {
        return Ok(study_status(&doc));
    }
    saver.announce("study");
    if let Some(None) = &files.json {
        write_out(None, &export::json::to_bytes(&doc), "the JSON document")?;
    }
    if let Some(f) = &mut files.csv {
        write_out(f.as_mut(), &export::study_csv::to_bytes(&doc), "the CSV file")?;
    }
    if !quiet_stdout {
        write_out(None, &export::table::study_to_bytes(&doc), "the table")?;
        if job == "baseline" {
            write_out(None, study::builtin::drive_figures(&doc).unwrap_or_default().as_bytes(), "the table")?;
        }
    }
    if doc.interrupted {
        eprintln!("iogauge: stopped: {} point(s) kept", doc.points.len());
    }
    Ok(study_status(&doc))
}

/// 130 if the study was stopped, 1 if any I/O failed, else 0.
fn study_status(doc: &study::run::StudyDoc) -> i32 {
    if doc.interrupted {
        return Error::Stopped.exit_code();
    }
    let errors = doc.points.iter().flat_map(|p| &p.summary).any(|s| s.errors > 0);
    if errors { 1 } else { 0 }
}

/// Set by the first Ctrl-C (or SIGTERM): a run stops at once and keeps what it measured; a
/// study finishes its current point and keeps the points done.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: libc::c_int) {
    if STOP.swap(true, Relaxed) {
        // SAFETY: _exit is async-signal-safe. A second Ctrl-C leaves at once.
        unsafe { libc::_exit(130) };
    }
    let msg = b"\niogauge: stopping; what is measured is kept (Ctrl-C again to stop at once)\n";
    // SAFETY: write(2) is async-signal-safe; msg outlives the call.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

fn stop_on_interrupt() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler touches only an atomic and async-signal-safe calls.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
}

/// `iogauge specs [NAME]`.
pub fn specs(name: Option<&str>) -> Result<String> {
    let mut out = String::new();
    match name {
        None => {
            for s in spec::builtin() {
                out.push_str(&format!("{:<22} {}\n", s.name, s.description));
            }
        }
        Some(n) => {
            let s = spec::find_builtin(n).map_err(input)?;
            out.push_str(&format!("{}: {}\n", s.name, s.description));
            out.push_str("  size  share  read  random  align  delay_ms  burst\n");
            for l in &s.lines {
                out.push_str(&format!(
                    "{:>6}  {:>4}%  {:>3}%  {:>5}%  {:>5}  {:>8}  {:>5}\n",
                    crate::units::format_size(l.size),
                    l.share,
                    l.read,
                    l.random,
                    l.align.map_or("size".into(), crate::units::format_size),
                    l.delay_ms,
                    l.burst
                ));
            }
        }
    }
    Ok(out)
}

/// Runs the parsed command line; returns the exit status.
pub fn main(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(a) => {
            let (c, runs) = run_config(&a)?;
            execute(c, runs, &a.flags.output)
        }
        Command::Profile(a) => {
            let (c, runs) = profile_config(&a)?;
            execute(c, runs, &a.flags.output)
        }
        Command::Study(a) => study(&a),
        Command::Compare { a, b, db } => {
            let mut docs = history::Documents::new(&db);
            let ((a, da), (b, db_)) = (docs.load(&a)?, docs.load(&b)?);
            let rows = compare::pair(&compare::workloads(&da), &compare::workloads(&db_));
            if rows.is_empty() {
                return Err(input(format!(
                    "{a} and {b} have no workload in common: compare runs of the same specifications"
                )));
            }
            print!("{}", compare::table(&a, &b, &rows));
            Ok(0)
        }
        Command::Report(a) => history::report(&a),
        Command::History(a) => history::history(&a),
        Command::Show { id, db } => history::show(id, &db),
        Command::Export { id, output, db } => history::export(id, output.as_deref(), &db),
        Command::Verify(a) => verify::verify(&a),
        Command::Specs { name } => {
            print!("{}", specs(name.as_deref())?);
            Ok(0)
        }
    }
}
