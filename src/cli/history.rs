//! The commands on stored documents: saving runs into the history, `history`, `show`,
//! `export`, `report`, and reading a document from a file or a history id.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::document::Document;
use crate::error::{Result, input};
use crate::export::output::Guard;
use crate::format::{grid, thousands};
use crate::history::{self, Filter, History};
use crate::report;
use crate::result::Detail;

/// Where a run or study is saved.
#[derive(Args, Debug, Default)]
pub struct SaveFlags {
    /// History database (default $XDG_DATA_HOME/iogauge/history.sqlite).
    #[arg(long, value_name = "PATH", conflicts_with = "no_history")]
    pub db: Option<PathBuf>,
    /// Do not save this run in the history.
    #[arg(long)]
    pub no_history: bool,
}

/// The history database a command reads.
#[derive(Args, Debug, Default)]
pub struct DbFlag {
    /// History database (default $XDG_DATA_HOME/iogauge/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Rows under each workload in a table or report.
#[derive(Args, Debug, Default)]
pub struct DetailFlag {
    /// Also a row per worker or per target under each workload (Iometer's WORKER and DISK rows;
    /// all: both).
    #[arg(long, value_name = "workers|targets|all")]
    pub detail: Option<Detail>,
}

/// The guard of a command's outputs (`export::output::Guard`): none may be the history
/// database, the command's `--db` nor the default one, whether or not it saves there, nor
/// replace a trace or any SQLite database (but a trace of its own kind, by an output that
/// writes one: `capture -o`, `--iolog`).
pub(super) fn guard(db: Option<&Path>) -> Guard {
    Guard::new(db.map(Path::to_path_buf).into_iter().chain(history::default_path()).collect())
        .keeping(history::kind_of)
        .keeping(crate::trace::kind_of)
}

/// Saves documents into the history, if there is one. A save that fails once the database
/// is open makes the command fail (exit 1), said once its other outputs are written
/// ([`Saver::after`]): a run whose row is lost must not pass for one kept.
pub struct Saver {
    history: Option<History>,
    id: Option<i64>,
    quiet: bool,
    /// Why the last save failed (a later one that succeeds clears it: a study saved after
    /// every point keeps its last state).
    failed: Option<crate::error::Error>,
}

impl SaveFlags {
    /// Opens the database before any I/O: a bad `--db` fails at once; the default one only
    /// warns if it cannot be opened.
    pub fn saver(&self, quiet: bool) -> Result<Saver> {
        let history = match (&self.db, self.no_history) {
            (_, true) => None,
            (Some(path), false) => Some(History::open(path)?),
            (None, false) => match history::default_path().map(|p| History::open_default(&p)) {
                Some(Ok(h)) => Some(h),
                Some(Err(e)) => {
                    say!("warning: not saving to the history: {e} (give --db PATH or --no-history)");
                    None
                }
                None => {
                    say!("warning: not saving to the history: neither XDG_DATA_HOME nor HOME is set");
                    None
                }
            },
        };
        Ok(Saver { history, id: None, quiet, failed: None })
    }
}

impl Saver {
    /// Saves nothing (a manager that does not lead).
    pub fn none() -> Saver {
        Saver { history: None, id: None, quiet: true, failed: None }
    }

    /// The id the document was saved under, once saved.
    pub fn id(&self) -> Option<i64> {
        self.id
    }

    /// The database saved into, if any.
    pub fn db(&self) -> Option<&std::path::Path> {
        self.history.as_ref().map(History::path)
    }

    /// Saves `doc` (again, in place, after the first time) and says under which id.
    pub fn save(&mut self, doc: &Document) {
        self.save_quietly(doc);
        self.announce(doc.kind());
    }

    /// Says under which id the `kind` (run or study) was saved, unless quiet or its last save
    /// failed.
    pub fn announce(&self, kind: &str) {
        if let Some(id) = self.id.filter(|_| !self.quiet && self.failed.is_none()) {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "{}", history::saved_line(kind, id));
        }
    }

    /// Saves `doc` (again, in place, after the first time); returns its id. A failure is kept
    /// for [`Saver::after`].
    pub fn save_quietly(&mut self, doc: &Document) -> Option<i64> {
        let history = self.history.as_mut()?;
        match history.save(self.id, doc) {
            Ok(id) => {
                (self.id, self.failed) = (Some(id), None);
                Some(id)
            }
            Err(e) => {
                self.failed = Some(e.context("not saved to the history"));
                None
            }
        }
    }

    /// The command's outcome once its other outputs are written (`written`): theirs, and a
    /// failed save fails it too (exit 1). Beside another output's failure, which the command
    /// then ends with, the save's is said on a line of its own.
    pub fn after(&self, written: Result<()>) -> Result<()> {
        match (&self.failed, written) {
            (None, written) => written,
            (Some(e), Ok(())) => Err(e.clone()),
            (Some(e), Err(other)) => {
                say!("{e}");
                Err(other)
            }
        }
    }
}

fn open(db: &DbFlag) -> Result<History> {
    History::read(db.db.as_deref())
}

/// Reads documents named by path or history id, opening the history once if needed.
pub struct Documents<'a> {
    db: &'a DbFlag,
    history: Option<History>,
}

impl<'a> Documents<'a> {
    /// Reads from the history `db` names when an argument is an id.
    pub fn new(db: &'a DbFlag) -> Documents<'a> {
        Documents { db, history: None }
    }

    /// The document in file `arg`, or history entry `arg` (a number that names no file), and
    /// what to call it: the path, or `#ID`.
    pub fn load(&mut self, arg: &str) -> Result<(String, Document)> {
        let path = Path::new(arg);
        if path.exists() {
            return Ok((arg.to_string(), Document::read(path)?));
        }
        let Ok(id) = arg.trim_start_matches('#').parse::<i64>() else {
            return Err(input(format!("{arg}: no such file, and not a history id (iogauge history lists them)")));
        };
        if self.history.is_none() {
            self.history = Some(open(self.db)?);
        }
        Ok((format!("#{id}"), self.history.as_ref().expect("opened above").document(id)?))
    }
}

/// `iogauge history`.
#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Only runs on a target whose path contains this (e.g. zram0).
    #[arg(long, value_name = "PATH")]
    pub target: Option<String>,
    /// Only runs of this access specification.
    #[arg(long, value_name = "NAME")]
    pub spec: Option<String>,
    /// Only runs on this host.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Only runs started at or after: YYYY-MM-DD, 'YYYY-MM-DD HH:MM', RFC 3339, or an age (7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started before (a plain date includes that day).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// At most this many.
    #[arg(long, short = 'n', value_name = "N")]
    pub limit: Option<u64>,
    /// Print the list as JSON (one array) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    /// The history database.
    pub db: DbFlag,
}

/// Lists the history, newest first.
pub fn history(a: &HistoryArgs) -> Result<i32> {
    let when = |s: &Option<String>, end: bool, flag: &str| {
        s.as_deref().map(|s| history::parse_when(s, end).map_err(|e| input(format!("--{flag}: {e}")))).transpose()
    };
    let filter = Filter {
        target: a.target.clone(),
        spec: a.spec.clone(),
        host: a.host.clone(),
        since: when(&a.since, false, "since")?,
        until: when(&a.until, true, "until")?,
        limit: a.limit,
    };
    let entries = open(&a.db)?.list(&filter)?;
    if a.json {
        print!("{}", String::from_utf8_lossy(&crate::export::json::to_bytes(&entries)));
        return Ok(0);
    }
    // One host for every entry (the usual case) is said once, not in a column.
    let one_host = entries.first().map(|e| &e.host).filter(|h| entries.iter().all(|e| &e.host == *h));
    let mut head =
        vec!["id", "started (UTC)", "kind", "host", "specs", "targets", "IOPS", "MB/s", "avg ms", "time", "note"];
    if one_host.is_some() {
        head.retain(|h| *h != "host");
    }
    let mut cells = vec![head.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    let join = |v: &[String]| if v.len() > 1 { format!("{} +{}", v[0], v.len() - 1) } else { v.join(", ") };
    for e in &entries {
        let note = match (e.interrupted, e.errors) {
            (true, true) => "stopped, errors",
            (true, false) => "stopped",
            (false, true) => "errors",
            (false, false) => "",
        };
        let kind = match (e.kind.as_str(), e.results) {
            ("run", 1) => "run".to_string(),
            (k, n) => format!("{k} x{n}"),
        };
        let mut row = vec![
            e.id.to_string(),
            e.started_at.get(..16).unwrap_or(&e.started_at).replace('T', " "),
            kind,
            e.host.clone(),
            join(&e.specs),
            join(&e.targets),
            labelled(e.iops.map_or("-".into(), thousands), &e.iops_of),
            labelled(e.mbps.map_or("-".into(), |v| format!("{v:.1}")), &e.mbps_of),
            e.avg_response_ms.map_or("-".into(), |v| format!("{v:.3}")),
            humantime::format_duration(std::time::Duration::from_secs(e.duration_s.round() as u64)).to_string(),
            note.into(),
        ];
        if one_host.is_some() {
            row.remove(3);
        }
        cells.push(row);
    }
    if let Some(h) = one_host {
        println!("on host {h}:");
    }
    if entries.is_empty() {
        say!("no run in the history matches");
    } else {
        print!("{}", grid(&cells));
        if entries.iter().any(|e| e.results > 1) {
            println!(
                "x N: N workloads or points; IOPS and MB/s are then the highest of them, with the workload each is of"
            );
        }
    }
    Ok(0)
}

/// A figure with the workload (a study's point and workload) it is of, when it is the best of
/// several.
fn labelled(figure: String, of: &Option<String>) -> String {
    of.as_ref().map_or(figure.clone(), |w| format!("{figure} ({w})"))
}

/// Prints a stored document's table, as its run printed it.
pub fn show(id: i64, db: &DbFlag, detail: Detail) -> Result<i32> {
    let bytes = match open(db)?.document(id)? {
        Document::Run(d) => crate::export::table::to_bytes(&d, detail),
        Document::Study(d) => crate::export::table::study_to_bytes(&d),
    };
    print!("{}", String::from_utf8_lossy(&bytes));
    Ok(0)
}

/// Writes a stored document in `format`: its JSON byte for byte as `--json` wrote it, or the
/// file `--csv` or `--iometer-csv` would have written.
pub fn export(id: i64, format: crate::export::Format, output: Option<&Path>, db: &DbFlag) -> Result<i32> {
    let mut out = guard(db.db.as_deref()).file("--output", output.unwrap_or(Path::new("-")))?;
    let bytes = open(db)?.export(id, format)?;
    out.write(&bytes, "the document")?;
    Ok(0)
}

/// `iogauge report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result or study documents (JSON files) or history ids; several are compared.
    #[arg(required = true, value_name = "FILE_OR_ID")]
    pub inputs: Vec<String>,
    /// The HTML file to write.
    #[arg(long, short, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Also write each chart as a standalone SVG file into this directory.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// The report's title.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    #[command(flatten)]
    /// Tables of workers or targets.
    pub detail: DetailFlag,
    #[command(flatten)]
    /// The history database (for ids).
    pub db: DbFlag,
}

/// Writes the HTML report (and the charts' SVG files).
pub fn report(a: &ReportArgs) -> Result<i32> {
    // The inputs first: the guard knows them then, and refuses an output that is one.
    let mut docs = Documents::new(&a.db);
    let inputs = a
        .inputs
        .iter()
        .map(|arg| docs.load(arg).map(|(label, doc)| report::Input { label, doc }))
        .collect::<Result<Vec<_>>>()?;
    let mut guard = guard(a.db.db.as_deref());
    let charts = a.charts.as_ref().map(|d| guard.dir("--charts", d)).transpose()?;
    let mut out = guard.file("--output", &a.output)?;
    let title = a.title.clone().unwrap_or_else(|| "iogauge report".into());
    let rep = report::build(&title, &inputs, a.detail.detail.unwrap_or_default());
    if let Some(dir) = charts {
        let files: Vec<(String, Vec<u8>)> =
            rep.charts.iter().map(|c| (format!("{}.svg", c.file_stem), c.svg.clone().into_bytes())).collect();
        dir.write(&files, "the charts")?;
    }
    out.write(rep.html.as_bytes(), "the report")?;
    say!("wrote {} ({} charts)", a.output.display(), rep.charts.len());
    Ok(0)
}
