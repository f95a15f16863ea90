//! A command's outputs: the history, the files (`export::ExportManager`) and the live
//! outputs (`live::Live`), opened before the first I/O on the lead manager, and the command's
//! observer: each run or point is saved to the history first (a result is kept whatever
//! happens to the other outputs), then written; each interval goes to the live outputs; Ctrl-C
//! is asked of `interrupt`.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::config::TestSettings;
use crate::export::output::Guard;

use super::args::Destinations;
use super::history::Saver;
use super::interrupt;
use crate::document::Document;
use crate::error::Result;
use crate::export::table::Table;
use crate::export::{Destination, ExportManager, Exporter, csv, fio_json, iometer, iozone, json};
use crate::live::Live;
use crate::managers::Group;
use crate::result::{ResultDoc, WorkloadResult};
use crate::run::{Counters, Observer, Snapshot};
use crate::study::doc::StudyDoc;
use crate::study::run::StudyObserver;

/// The outputs of `run`, `profile`, `study` and `fs`.
pub(super) struct Outputs {
    saver: Saver,
    files: ExportManager,
    live: Live,
    /// Writes anything at all (the lead manager; the others only run).
    lead: bool,
}

impl Outputs {
    /// Opens the outputs and the history on the lead manager (the others write nothing).
    /// Every manager must learn whether that failed before anything runs: the caller agrees on
    /// it ([`crate::managers::all_ok`], or with the test's checks, `plan::prepare_with`).
    /// `settings`: the test's, whose `--log-dir` and `--iolog` the run writes itself, claimed
    /// here beside the rest.
    pub(super) fn open(group: &dyn Group, to: Destinations, settings: Option<&TestSettings>) -> Result<Outputs> {
        let to_stdout = |p: Option<&PathBuf>| p.is_some_and(|p| p.as_os_str() == "-");
        let lead = group.leads();
        let asked: [(&'static str, Option<&PathBuf>, Box<dyn Exporter>); 6] = [
            ("--json", to.json, Box::new(json::Json)),
            ("--csv", to.csv, Box::new(csv::Csv)),
            ("--iometer-csv", to.iometer_csv, Box::new(iometer::IometerCsv)),
            ("--iozone-csv", to.iozone_csv, Box::new(iozone::IozoneCsv)),
            ("--fio-json", to.fio_json.or(to.fio_dir), Box::new(fio_json::FioJson)),
            ("--live-json", to.live.live_json.as_ref(), Box::new(json::Json)),
        ];
        let quiet_stdout = to.quiet || asked.iter().any(|o| to_stdout(o.1)) || !lead;
        let live = to.live.asked(!quiet_stdout && std::io::stdout().is_terminal());
        let opened = if !lead {
            live.map(|_| (Saver::none(), ExportManager::none(), Live::none()))
        } else {
            let saver = to.history.saver(to.quiet);
            let mut guard = super::history::guard(to.history.db.as_deref());
            let logs = settings.map_or(Ok(()), |s| claim_logs(&mut guard, s));
            let checked = saver.as_ref().map_err(Clone::clone).and(logs);
            checked.and_then(|()| {
                // --live-json is a stream the live outputs open; the rest are documents.
                let destinations = asked
                    .into_iter()
                    .filter(|(flag, _, _)| *flag != "--live-json")
                    .filter_map(|(flag, path, exporter)| {
                        let dir = flag == "--fio-json" && to.fio_dir.is_some();
                        Some(Destination { exporter, flag, path: path?.clone(), dir })
                    })
                    .collect();
                let table = (!quiet_stdout).then_some(Table { detail: to.detail });
                let files = ExportManager::open(destinations, table, &mut guard)?;
                let managers = group.all().iter().map(|m| (m.rank, m.host.clone())).collect();
                Ok((saver?, files, Live::open(&live?, managers, &mut guard)?))
            })
        };
        let (saver, files, live) = opened?;
        Ok(Outputs { saver, files, live, lead })
    }

    /// The history id the run or study was saved under (on the lead, once saved).
    pub(super) fn saved_id(&self) -> Option<i64> {
        self.saver.id()
    }

    /// Saves a test's result in the history, then writes its files and table.
    pub(super) fn write_run(&mut self, doc: ResultDoc) -> Result<()> {
        if !self.lead {
            return Ok(());
        }
        // The history first: a result is kept whatever happens to the other outputs.
        let doc = Document::Run(Box::new(doc));
        self.saver.save_quietly(&doc);
        let Document::Run(doc) = doc else { unreachable!("made above") };
        let written = self.files.write_run(&doc);
        if doc.interrupted {
            say!("stopped: the results so far are kept, marked interrupted");
        }
        // Said even when an output failed: the result is in the history.
        self.saver.announce("run");
        self.live.end(&interrupt::requested);
        self.saver.after(written)
    }

    /// Writes a finished (or stopped) study's outputs; `extra` goes under its table.
    pub(super) fn write_study(&mut self, doc: &StudyDoc, extra: Option<String>) -> Result<()> {
        if !self.lead {
            return Ok(());
        }
        // Once more with the end state (complete or stopped, the whole duration).
        self.saver.save_quietly(&Document::Study(Box::new(doc.clone())));
        self.saver.announce("study");
        let written = self.files.write_study(doc, extra);
        if doc.interrupted {
            say!("stopped: {} point(s) kept", doc.points.len());
        }
        if let Some(why) = &doc.failed {
            say!("{why}; the {} point(s) before it are kept", doc.points.len());
        }
        self.live.end(&interrupt::requested);
        self.saver.after(written)
    }
}

/// Claims the logs a test writes itself: `--log-dir` (each file already there of a log's
/// name must be a log), `--journal` (each of a journal's names must be an iogauge journal's)
/// and `--iolog` (a file already there must be fio's iolog v3).
fn claim_logs(guard: &mut Guard, s: &TestSettings) -> Result<()> {
    if let Some(dir) = &s.log_dir {
        let name = s.log_name.clone();
        let named = std::rc::Rc::new(move |file: &str| crate::run::is_log_name(file, name.as_deref()));
        guard.claim_dir_of("--log-dir", dir, named, &crate::run::LOG)?;
    }
    if let Some(dir) = &s.journal {
        let named = std::rc::Rc::new(crate::verify::journal::journal_file);
        guard.claim_dir_of("--journal", dir, named, &crate::verify::journal::JOURNAL)?;
    }
    let Some(path) = &s.iolog else { return Ok(()) };
    guard.claim_of("--iolog", path, &crate::trace::FIO_IOLOG)?;
    // Written when the test ends: a directory that is not there is said before it starts.
    crate::export::output::can_write(path).map_err(|e| e.context("--iolog"))
}

impl Observer for Outputs {
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

    fn stop_point_requested(&self) -> bool {
        interrupt::point()
    }

    fn stop_now_requested(&self) -> bool {
        interrupt::now()
    }
}

impl StudyObserver for Outputs {
    /// The history entry and the files that keep a study cut short are rewritten after every
    /// point (stdout and pipes get the document once, at the end).
    fn point_done(&mut self, doc: &StudyDoc) -> Result<()> {
        if !self.lead {
            return Ok(());
        }
        self.saver.save_quietly(&Document::Study(Box::new(doc.clone())));
        self.files.point_done(doc)
    }
}
