//! Output formats, one file each, each an [`Exporter`] returning bytes, and the
//! [`ExportManager`] that writes them (hyperfine's export layout): every output opened before
//! the first I/O, each written whole after every run, or after every study point where that
//! keeps a study cut short.

pub mod csv;
pub mod fio_json;
pub mod iometer;
pub mod iozone;
pub mod json;
pub mod output;
pub mod table;

use std::path::PathBuf;

use crate::error::{Result, Unreadable};
use crate::result::ResultDoc;
use crate::study::doc::StudyDoc;
use output::{Output, OutputDir};

/// What a format makes of a study: one file, or (fio's JSON) a file per point.
pub enum Export {
    /// One file's bytes.
    Bytes(Vec<u8>),
    /// Files by name, into a directory.
    Files(Vec<(String, Vec<u8>)>),
}

/// An output format (hyperfine's `Exporter`): what it makes of a run's document and of a
/// study's.
pub trait Exporter {
    /// What it writes, for messages ("the JSON document").
    fn what(&self) -> &'static str;
    /// A run's document in this format.
    fn run(&self, doc: &ResultDoc) -> Vec<u8>;
    /// A study's document in this format.
    fn study(&self, doc: &StudyDoc) -> Export;
    /// Rewritten after every point of a study, so a study cut short keeps its points there
    /// (a regular file only: a pipe or stdout gets the document once, at the end).
    fn every_point(&self) -> bool {
        false
    }
}

/// One output asked for: its format, the flag that asked, and where (`-`: stdout).
pub struct Destination {
    /// The format.
    pub exporter: Box<dyn Exporter>,
    /// The flag, for messages.
    pub flag: &'static str,
    /// The path given.
    pub path: PathBuf,
    /// A directory of files (a study's `--fio-json`) rather than one file.
    pub dir: bool,
}

enum Place {
    File(Output),
    Dir(OutputDir),
}

/// The outputs of a command, open.
pub struct ExportManager {
    outputs: Vec<(Box<dyn Exporter>, Place)>,
    /// The table on stdout, unless asked not to or stdout holds machine output.
    table: Option<table::Table>,
}

impl ExportManager {
    /// Nothing to write (a manager that is not the lead).
    pub fn none() -> ExportManager {
        ExportManager { outputs: Vec::new(), table: None }
    }

    /// Opens every destination, writing nothing to any yet; `table`: the table to print.
    pub fn open(
        destinations: Vec<Destination>,
        table: Option<table::Table>,
        guard: &mut output::Guard,
    ) -> Result<ExportManager> {
        let mut outputs = Vec::new();
        for d in destinations {
            let place = match d.dir {
                true => Place::Dir(guard.dir(d.flag, &d.path)?),
                false => Place::File(guard.file(d.flag, &d.path)?),
            };
            outputs.push((d.exporter, place));
        }
        Ok(ExportManager { outputs, table })
    }

    /// Writes a run's document in every format, then its table; one that fails stops none of
    /// the others (the first failure is returned).
    pub fn write_run(&mut self, doc: &ResultDoc) -> Result<()> {
        let mut written = Ok(());
        for (e, place) in &mut self.outputs {
            let Place::File(o) = place else { unreachable!("a run's outputs are files") };
            written = written.and(o.write(&e.run(doc), e.what()));
        }
        if let Some(t) = &self.table {
            written = written.and(Output::Stdout.write(&t.run(doc), "the table"));
        }
        written
    }

    /// A study point has ended: rewrites the files that keep a study cut short.
    pub fn point_done(&mut self, doc: &StudyDoc) -> Result<()> {
        let mut written = Ok(());
        for (e, place) in &mut self.outputs {
            if let (true, Place::File(o @ Output::Whole { .. })) = (e.every_point(), place) {
                written = written.and(write(o, e.as_ref(), doc));
            }
        }
        written
    }

    /// Writes a finished (or stopped) study's document in every format, then its table and
    /// `extra` under it; one that fails stops none of the others (the first failure is
    /// returned).
    pub fn write_study(&mut self, doc: &StudyDoc, extra: Option<String>) -> Result<()> {
        let mut written = self.point_done(doc);
        for (e, place) in &mut self.outputs {
            written = written.and(match place {
                // Written after the last point already.
                Place::File(Output::Whole { .. }) if e.every_point() => Ok(()),
                Place::File(o) => write(o, e.as_ref(), doc),
                Place::Dir(d) => {
                    let Export::Files(files) = e.study(doc) else { unreachable!("a directory is asked of files") };
                    d.write(&files, e.what())
                }
            });
        }
        if let Some(t) = &self.table {
            let mut table = t.study(doc);
            table.extend(extra.unwrap_or_default().into_bytes());
            written = written.and(Output::Stdout.write(&table, "the table"));
        }
        written
    }
}

/// A study's document into one file.
fn write(o: &mut Output, e: &dyn Exporter, doc: &StudyDoc) -> Result<()> {
    let Export::Bytes(bytes) = e.study(doc) else { unreachable!("a file is asked of one document") };
    o.write(&bytes, e.what())
}

/// The formats a saved document is written back out in (`iogauge export --format`, the
/// workbench's downloads), each by the exporter its run's flag writes with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// The JSON document, byte for byte as `--json` wrote it.
    #[default]
    Json,
    /// `--csv`'s file.
    Csv,
    /// Iometer's results file, as `--iometer-csv` writes it.
    IometerCsv,
}

impl std::str::FromStr for Format {
    type Err = Unreadable;
    fn from_str(s: &str) -> std::result::Result<Format, Unreadable> {
        match s {
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "iometer-csv" | "iometer" => Ok(Format::IometerCsv),
            _ => Err(Unreadable(format!("--format {s}: use json, csv or iometer-csv"))),
        }
    }
}

impl Format {
    /// The name of the file a download of history entry `id` in this format is saved as.
    pub fn file_name(self, id: i64) -> String {
        match self {
            Format::Json => format!("iogauge-{id}.json"),
            Format::Csv => format!("iogauge-{id}.csv"),
            Format::IometerCsv => format!("iogauge-{id}-iometer.csv"),
        }
    }

    /// The exporter that writes it; none for the JSON, which is the document itself.
    pub fn exporter(self) -> Option<Box<dyn Exporter>> {
        match self {
            Format::Json => None,
            Format::Csv => Some(Box::new(csv::Csv)),
            Format::IometerCsv => Some(Box::new(iometer::IometerCsv)),
        }
    }

    /// Its media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Csv | Format::IometerCsv => "text/csv; charset=utf-8",
        }
    }
}
