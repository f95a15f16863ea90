//! The command line: the commands, run from the flags `args` parses.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

mod args;
mod history;
mod verify;

pub use args::{
    Cli, Command, OutputFlags, ProfileArgs, RunArgs, SettingFlags, StudyArgs, TestFlags, WorkerFlags, profile_config,
    run_config,
};

use crate::compare;
use crate::config::{Run, TestConfig};
use crate::document::Document;
use crate::error::{Error, Result, input, runtime};
use crate::export;
use crate::job;
use crate::managers;
use crate::plan;
use crate::run::{self, LiveStatus, Phase, Progress, Silent};
use crate::spec;
use crate::study;

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
