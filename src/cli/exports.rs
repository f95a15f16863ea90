//! Where a command's results go (hyperfine's `ExportManager`): every output is opened before
//! the first I/O, so a bad path fails before anything is measured, and written after every run
//! or study point. The same object is the command's observer: it hands each interval to the
//! live outputs (`crate::live`) and asks `interrupt` whether to stop.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::history::{SaveFlags, Saver};
use super::interrupt;
use crate::document::Document;
use crate::error::{Result, input, runtime};
use crate::export;
use crate::live::Live;
use crate::managers::{self, Group};
use crate::result::{Detail, ResultDoc, WorkloadResult};
use crate::run::{Counters, Observer, Snapshot};
use crate::study::doc::StudyDoc;
use crate::study::run::StudyObserver;

/// One output: stdout, a file that is not a regular file (a pipe, /dev/null), written in
/// place, or a regular file, replaced whole through a temporary file beside it.
enum Output {
    Stdout,
    InPlace(File),
    Whole { path: PathBuf, tmp: PathBuf },
}

impl Output {
    /// Checks that `path` can be written, writing nothing to it: a regular file's directory
    /// takes a temporary file; a block device is refused.
    fn open(path: &Path) -> Result<Output> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        let cannot = |e: std::io::Error| input(format!("cannot write {}: {e}", path.display()));
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => {
                Err(input(format!("{} is a block device: give a file for the output", path.display())))
            }
            Ok(m) if !m.is_file() => Ok(Output::InPlace(File::options().write(true).open(path).map_err(cannot)?)),
            _ => {
                // A symlink to a file is followed: the file it names is replaced, not the link.
                let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let name = path.file_name().ok_or_else(|| input(format!("{}: not a file name", path.display())))?;
                let tmp =
                    path.with_file_name(format!(".{}.iogauge-{}.tmp", name.to_string_lossy(), std::process::id()));
                File::create(&tmp).map_err(cannot)?;
                Ok(Output::Whole { path, tmp })
            }
        }
    }

    /// Writes `bytes` as the whole output (again, replacing it, on a later call).
    fn write(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        let failed = |e: std::io::Error| runtime(format!("writing {what}: {e}"));
        match self {
            Output::Stdout => std::io::stdout().write_all(bytes).map_err(failed),
            Output::InPlace(f) => f.write_all(bytes).map_err(failed),
            Output::Whole { path, tmp } => {
                let mut f = File::create(&*tmp).map_err(failed)?;
                f.write_all(bytes).and_then(|()| f.sync_all()).map_err(failed)?;
                std::fs::rename(&*tmp, &*path).map_err(failed)
            }
        }
    }
}

/// A directory of files, each replaced whole through a temporary file beside it.
pub(super) struct OutputDir(PathBuf);

impl OutputDir {
    /// Makes the directory if it is missing and checks that it takes files, writing nothing
    /// that stays.
    pub(super) fn open(path: &Path, flag: &str) -> Result<OutputDir> {
        crate::targets::output_dir(path, flag)?;
        Ok(OutputDir(path.to_path_buf()))
    }

    /// Writes each (name, bytes) into the directory, whole.
    pub(super) fn write(&self, files: &[(String, Vec<u8>)], what: &str) -> Result<()> {
        for (name, bytes) in files {
            Output::Whole {
                path: self.0.join(name),
                tmp: self.0.join(format!(".{name}.iogauge-{}.tmp", std::process::id())),
            }
            .write(bytes, what)?;
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::Whole { tmp, .. } = self {
            // Left only when nothing was written (bad input, a failed run) or a write failed.
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Refuses outputs that would overwrite the history database or each other (by identity:
/// another name for the same file is the same file), or share stdout.
fn apart(outputs: &[(&str, Option<&PathBuf>)], db: Option<&Path>) -> Result<()> {
    let stdout: Vec<&str> =
        outputs.iter().filter(|(_, p)| p.is_some_and(|p| p.as_os_str() == "-")).map(|o| o.0).collect();
    if let [a, b, ..] = stdout[..] {
        return Err(input(format!("{a} - and {b} - cannot both use stdout: give one a file")));
    }
    let id = |p: &Path| crate::targets::Identity::of_path(&p.to_string_lossy()).ok();
    let db = db.and_then(id);
    let files: Vec<(&str, &PathBuf)> =
        outputs.iter().filter_map(|(flag, p)| Some((*flag, (*p)?))).filter(|(_, p)| p.as_os_str() != "-").collect();
    for (flag, p) in &files {
        if db.is_some() && id(p) == db {
            return Err(input(format!(
                "{flag} {} is the history database: give another file for the output",
                p.display()
            )));
        }
    }
    for (i, (fa, a)) in files.iter().enumerate() {
        for (fb, b) in &files[i + 1..] {
            if a == b || id(a).is_some_and(|x| id(b) == Some(x)) {
                return Err(input(format!("{fa} and {fb} both name {}: give each its own file", a.display())));
            }
        }
    }
    Ok(())
}

/// The outputs of `run`, `profile` and `study`, and the history.
pub(super) struct ExportManager {
    json: Option<Output>,
    csv: Option<Output>,
    /// A study as Iometer's results file of a cycling test.
    iometer_csv: Option<Output>,
    /// A run in fio's JSON.
    fio_json: Option<Output>,
    /// A study in fio's JSON, a file per point.
    fio_dir: Option<OutputDir>,
    /// A file-system study's tables in IOzone's report layout.
    iozone_csv: Option<Output>,
    saver: Saver,
    /// Writes anything at all (the lead manager; the others only run).
    lead: bool,
    /// No table and no live line: asked, or stdout holds machine output.
    quiet_stdout: bool,
    /// The live line, lines, metrics and page.
    live: Live,
    /// The table's rows under each workload.
    detail: Detail,
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
    pub(super) history: &'a SaveFlags,
    pub(super) quiet: bool,
    pub(super) live: &'a super::args::LiveFlags,
    pub(super) detail: Detail,
}

impl ExportManager {
    /// Opens the outputs and the history on the lead manager (the others write nothing); every
    /// manager learns if that failed.
    pub(super) fn open(group: &dyn Group, to: Destinations) -> Result<ExportManager> {
        let to_stdout = |p: Option<&PathBuf>| p.is_some_and(|p| p.as_os_str() == "-");
        let lead = group.leads();
        let outputs = [
            ("--json", to.json),
            ("--csv", to.csv),
            ("--iometer-csv", to.iometer_csv),
            ("--iozone-csv", to.iozone_csv),
            ("--fio-json", to.fio_json.or(to.fio_dir)),
            ("--live-json", to.live.live_json.as_ref()),
        ];
        let quiet_stdout = to.quiet || outputs.iter().any(|o| to_stdout(o.1)) || !lead;
        let asked = to.live.asked(!quiet_stdout && std::io::stdout().is_terminal());
        let opened = if !lead {
            asked.map(|_| ([None, None, None, None, None], None, Saver::none(), Live::none()))
        } else {
            let saver = to.history.saver(to.quiet);
            let checked = saver.as_ref().map_err(Clone::clone).and_then(|s| apart(&outputs, s.db()));
            checked.and_then(|()| {
                let open = |p: Option<&PathBuf>| p.map(|p| Output::open(p)).transpose();
                let files =
                    [open(to.json)?, open(to.csv)?, open(to.iometer_csv)?, open(to.iozone_csv)?, open(to.fio_json)?];
                let dir = to.fio_dir.map(|p| OutputDir::open(p, "--fio-json")).transpose()?;
                let managers = group.all().iter().map(|m| (m.rank, m.host.clone())).collect();
                let live = Live::open(&asked?, managers)?;
                Ok((files, dir, saver?, live))
            })
        };
        let ([json, csv, iometer_csv, iozone_csv, fio_json], fio_dir, saver, live) =
            managers::all_ok(group, opened, "opening the outputs")?;
        Ok(ExportManager {
            json,
            csv,
            iometer_csv,
            iozone_csv,
            fio_json,
            fio_dir,
            saver,
            lead,
            quiet_stdout,
            live,
            detail: to.detail,
        })
    }

    /// Saves a test's result in the history, then writes its JSON, CSV and table.
    pub(super) fn write_run(&mut self, doc: ResultDoc) -> Result<()> {
        if !self.lead {
            return Ok(());
        }
        // The history first: a result is kept whatever happens to the other outputs.
        let doc = Document::Run(Box::new(doc));
        self.saver.save_quietly(&doc);
        let Document::Run(doc) = doc else { unreachable!("made above") };
        let written = self.write_outputs(&doc);
        // Said even when an output failed: the result is in the history.
        self.saver.announce("run");
        self.live.end(&interrupt::requested);
        written
    }

    fn write_outputs(&mut self, doc: &ResultDoc) -> Result<()> {
        if let Some(o) = &mut self.json {
            o.write(&export::json::to_bytes(doc), "the JSON document")?;
        }
        if let Some(o) = &mut self.csv {
            o.write(&export::iometer::to_bytes(doc), "the CSV file")?;
        }
        if let Some(o) = &mut self.fio_json {
            o.write(&export::fio_json::to_bytes(doc), "the fio JSON document")?;
        }
        if !self.quiet_stdout {
            Output::Stdout.write(&export::table::to_bytes(doc, self.detail), "the table")?;
        }
        if doc.interrupted {
            eprintln!("iogauge: stopped: the results so far are kept, marked interrupted");
        }
        Ok(())
    }

    /// Writes a finished (or stopped) study's outputs; `extra` goes under its table.
    pub(super) fn write_study(&mut self, doc: &StudyDoc, extra: Option<String>) -> Result<()> {
        // Once more with the end state (complete or stopped, the whole duration).
        self.point_done(doc)?;
        if !self.lead {
            return Ok(());
        }
        self.saver.announce("study");
        if let Some(o @ (Output::Stdout | Output::InPlace(_))) = &mut self.json {
            o.write(&export::json::to_bytes(doc), "the JSON document")?;
        }
        if let Some(o) = &mut self.csv {
            o.write(&export::study_csv::to_bytes(doc), "the CSV file")?;
        }
        if let Some(o) = &mut self.iometer_csv {
            o.write(&export::iometer::study_to_bytes(doc), "the Iometer results file")?;
        }
        if let Some(d) = &self.fio_dir {
            d.write(&export::fio_json::study_files(doc), "the fio JSON files")?;
        }
        if let Some(o) = &mut self.iozone_csv {
            o.write(&export::iozone::to_csv(doc), "the IOzone CSV file")?;
        }
        if !self.quiet_stdout {
            Output::Stdout.write(&export::table::study_to_bytes(doc), "the table")?;
            if let Some(extra) = extra {
                Output::Stdout.write(extra.as_bytes(), "the table")?;
            }
        }
        if doc.interrupted {
            eprintln!("iogauge: stopped: {} point(s) kept", doc.points.len());
        }
        self.live.end(&interrupt::requested);
        Ok(())
    }
}

impl Observer for ExportManager {
    fn workload_started(&mut self, counters: &Counters) {
        self.live.workload_started(counters);
    }

    fn interval(&mut self, s: &Snapshot) {
        self.live.interval(s);
    }

    fn run_done(&mut self, result: &WorkloadResult) {
        self.live.workload_done(result);
    }

    fn stop_requested(&self) -> bool {
        interrupt::requested()
    }
}

impl StudyObserver for ExportManager {
    /// The history entry and a JSON file are rewritten after every point, so a study cut
    /// short keeps its points (stdout and pipes get the document once, at the end).
    fn point_done(&mut self, doc: &StudyDoc) -> Result<()> {
        if !self.lead {
            return Ok(());
        }
        self.saver.save_quietly(&Document::Study(Box::new(doc.clone())));
        match &mut self.json {
            Some(o @ Output::Whole { .. }) => o.write(&export::json::to_bytes(doc), "the JSON document"),
            _ => Ok(()),
        }
    }
}
