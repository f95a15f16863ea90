//! The history: every run and study in one SQLite database, whole documents (histograms
//! included, so results can be merged again later) plus indexed columns to find them.
//!
//! Each save is one transaction, and the database is in WAL mode with full sync: a process
//! killed at any moment leaves the last committed state, never a torn one. The schema version
//! is SQLite's `user_version`; [`MIGRATIONS`] brings an older database up to date.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::document::Document;
use crate::error::{Result, Unreadable, input, runtime};

/// The schema, one step per version: step N (from 0) brings version N to N + 1.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs with their documents, and what they touched.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,                 -- 'run' or 'study'
        started_at TEXT NOT NULL,           -- RFC 3339, UTC
        started_unix REAL NOT NULL,         -- the same, as seconds since 1970
        duration_s REAL NOT NULL,
        host TEXT NOT NULL,
        specs TEXT NOT NULL,                -- JSON array, in run order; run_specs is the index
        targets TEXT NOT NULL,              -- JSON array, in order; run_targets is the index
        results INTEGER NOT NULL,           -- results of a run, points of a study
        iops REAL,                          -- a run's one result's, or the highest of its results
        mbps REAL,                          -- or a study's point medians (then avg_response_ms is NULL)
        avg_response_ms REAL,
        errors INTEGER NOT NULL,
        interrupted INTEGER NOT NULL,
        tool_version TEXT NOT NULL,
        document TEXT NOT NULL              -- the whole JSON document
    );
    CREATE INDEX runs_started ON runs(started_unix);
    CREATE INDEX runs_host ON runs(host);
    CREATE TABLE run_specs (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        spec TEXT NOT NULL,
        PRIMARY KEY (run_id, spec)
    );
    CREATE INDEX run_specs_spec ON run_specs(spec);
    CREATE TABLE run_targets (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        target TEXT NOT NULL,
        PRIMARY KEY (run_id, target)
    );
    CREATE INDEX run_targets_target ON run_targets(target);",
    // 2: which workload (a study: which point and workload) gave the highest IOPS and MB/s of
    // a document of several; NULL for one result, and for rows saved before.
    "ALTER TABLE runs ADD COLUMN iops_of TEXT;
    ALTER TABLE runs ADD COLUMN mbps_of TEXT;",
];

/// An open history database.
pub struct History {
    conn: Connection,
    path: PathBuf,
}

/// One line of `iogauge history`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    /// The id `show`, `export`, `compare` and `report` take.
    pub id: i64,
    /// `run` or `study`.
    pub kind: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// Wall time (s).
    pub duration_s: f64,
    /// The machine.
    pub host: String,
    /// Access specifications, in order.
    pub specs: Vec<String>,
    /// Targets, in order.
    pub targets: Vec<String>,
    /// Results of a run, points of a study.
    pub results: u64,
    /// IOPS of a run with one result.
    pub iops: Option<f64>,
    /// MB/s (10^6 bytes/s) of a run with one result.
    pub mbps: Option<f64>,
    /// Mean response time (ms) of a run with one result.
    pub avg_response_ms: Option<f64>,
    /// Of several results: the workload (a study's: point and workload) `iops` is of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops_of: Option<String>,
    /// And the one `mbps` is of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mbps_of: Option<String>,
    /// Whether any I/O failed.
    pub errors: bool,
    /// Stopped before its end.
    pub interrupted: bool,
}

/// Which runs `iogauge history` lists.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Runs that used a target whose path contains this.
    pub target: Option<String>,
    /// Runs of this access specification.
    pub spec: Option<String>,
    /// Runs on this host.
    pub host: Option<String>,
    /// Runs started at or after this time.
    pub since: Option<SystemTime>,
    /// Runs started before this time.
    pub until: Option<SystemTime>,
    /// At most this many (newest first).
    pub limit: Option<u64>,
}

/// The history database `db` names, or the default one.
pub fn path_of(db: Option<&Path>) -> Result<PathBuf> {
    match db {
        Some(p) => Ok(p.to_path_buf()),
        None => default_path().ok_or_else(|| input("no history database: set HOME or give --db PATH")),
    }
}

/// The default database: `history.sqlite` in the [data directory](crate::host::dirs::data).
pub fn default_path() -> Option<PathBuf> {
    Some(crate::host::dirs::data()?.join("history.sqlite"))
}

fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs_f64()
}

/// Parses a date for a filter: `2026-11-22`, `2026-11-22 10:00`, RFC 3339, or an age (`7d`,
/// `2h`: that long ago). A plain date `until` means the end of that day.
pub fn parse_when(s: &str, end_of_day: bool) -> std::result::Result<SystemTime, Unreadable> {
    if let Ok(age) = humantime::parse_duration(s) {
        return Ok(SystemTime::now() - age);
    }
    let date_only = s.len() == 10;
    let full = if date_only {
        format!("{s} 00:00:00")
    } else if s.len() == 16 {
        format!("{s}:00")
    } else {
        s.into()
    };
    let t = humantime::parse_rfc3339_weak(&full).map_err(|_| {
        Unreadable(format!("'{s}' is not a date: give YYYY-MM-DD, 'YYYY-MM-DD HH:MM', RFC 3339, or an age like 7d"))
    })?;
    Ok(if date_only && end_of_day { t + Duration::from_secs(86_400) } else { t })
}

/// "a SQLite database" where `path` holds one (a history, or any other), for the output guard:
/// no output replaces one (`export::output::Guard::keeping`).
pub fn kind_of(path: &Path) -> Option<&'static str> {
    let mut head = [0u8; 16];
    let read = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
    (read.is_ok() && &head == b"SQLite format 3\0").then_some("a SQLite database")
}

fn db_err(path: &Path) -> impl Fn(rusqlite::Error) -> crate::error::Error + '_ {
    move |e| runtime(format!("history database {}: {e}", path.display()))
}

/// Refuses a `--db` that is there and no regular file: SQLite would write its pages onto a
/// device (or into a pipe) as into a file. The workbench asks at its start, before it serves.
pub fn check_path(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            Err(input(format!("--db {}: not a regular file; give a file for the history database", path.display())))
        }
        _ => Ok(()),
    }
}

impl History {
    /// Opens the database at `path` to save into, creating the file (in a directory that must
    /// exist: a mistyped `--db` makes no directories) and migrating it.
    pub fn open(path: &Path) -> Result<History> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(input(format!(
                "--db {}: directory {} does not exist (iogauge creates the database, not its directory)",
                path.display(),
                dir.display()
            )));
        }
        Self::open_file(path)
    }

    /// Opens the default database to save into, creating it and its directory.
    pub fn open_default(path: &Path) -> Result<History> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| input(format!("cannot create {} for the history database: {e}", dir.display())))?;
        }
        Self::open_file(path)
    }

    /// Opens the database to read, `db` or the default one: creates nothing.
    pub fn read(db: Option<&Path>) -> Result<History> {
        Self::open_existing(&path_of(db)?)
    }

    /// Opens a database that exists, to read it: creates nothing.
    pub fn open_existing(path: &Path) -> Result<History> {
        if !path.is_file() {
            return Err(input(format!(
                "no history database at {}: runs save there as they end (or give --db PATH)",
                path.display()
            )));
        }
        Self::open_file(path)
    }

    fn open_file(path: &Path) -> Result<History> {
        check_path(path)?;
        let cannot = |e: rusqlite::Error| input(format!("cannot open history database {}: {e}", path.display()));
        let mut conn = Connection::open(path).map_err(cannot)?;
        // Another iogauge may be saving (a study and a run side by side): wait for it.
        conn.busy_timeout(Duration::from_secs(30)).map_err(cannot)?;
        // Switching to WAL (once, when the file is new) takes an exclusive lock and fails at
        // once, without the busy handler, while another iogauge opens the same new file.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while let Err(e) = conn.pragma_update(None, "journal_mode", "WAL") {
            let busy = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy);
            if !busy || std::time::Instant::now() > deadline {
                return Err(cannot(e));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        conn.pragma_update(None, "synchronous", "FULL").map_err(cannot)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(cannot)?;
        migrate(&mut conn).map_err(|e| match e {
            crate::error::Error::Input(m) | crate::error::Error::Runtime(m) => {
                input(format!("history database {}: {m}", path.display()))
            }
            other => other,
        })?;
        Ok(History { conn, path: path.to_path_buf() })
    }

    /// Where the database is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores `doc` as a new entry (`id` None) or in place of entry `id` (a study saved after
    /// every point); returns the entry's id.
    pub fn save(&mut self, id: Option<i64>, doc: &Document) -> Result<i64> {
        let e = db_err(&self.path);
        let row = Row::of(doc);
        // Compact: a document of many histograms is a sixth of its pretty size, in memory too.
        let text = doc.to_compact_json();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&e)?;
        let values = params![
            doc.kind(),
            doc.started_at(),
            row.started_unix,
            doc.duration_s(),
            row.host,
            serde_json::to_string(&row.specs).expect("strings serialise"),
            serde_json::to_string(&row.targets).expect("strings serialise"),
            row.results as i64,
            row.iops,
            row.mbps,
            row.avg_response_ms,
            row.errors,
            doc.interrupted(),
            row.tool_version,
            text,
            row.iops_of,
            row.mbps_of,
        ];
        let id = match id {
            None => {
                tx.execute(
                    "INSERT INTO runs (kind, started_at, started_unix, duration_s, host, specs, targets, results,
                        iops, mbps, avg_response_ms, errors, interrupted, tool_version, document, iops_of, mbps_of)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                    values,
                )
                .map_err(&e)?;
                tx.last_insert_rowid()
            }
            Some(id) => {
                tx.execute(
                    "UPDATE runs SET kind = ?1, started_at = ?2, started_unix = ?3, duration_s = ?4, host = ?5,
                        specs = ?6, targets = ?7, results = ?8, iops = ?9, mbps = ?10, avg_response_ms = ?11,
                        errors = ?12, interrupted = ?13, tool_version = ?14, document = ?15, iops_of = ?16,
                        mbps_of = ?17
                     WHERE id = ?18",
                    rusqlite::params_from_iter(values.iter().copied().chain([&id as &dyn rusqlite::ToSql])),
                )
                .map_err(&e)?;
                tx.execute("DELETE FROM run_specs WHERE run_id = ?1", [id]).map_err(&e)?;
                tx.execute("DELETE FROM run_targets WHERE run_id = ?1", [id]).map_err(&e)?;
                id
            }
        };
        for s in &row.specs {
            tx.execute("INSERT INTO run_specs (run_id, spec) VALUES (?1, ?2)", params![id, s]).map_err(&e)?;
        }
        for t in &row.targets {
            tx.execute("INSERT INTO run_targets (run_id, target) VALUES (?1, ?2)", params![id, t]).map_err(&e)?;
        }
        tx.commit().map_err(&e)?;
        Ok(id)
    }

    /// The entries `filter` selects, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Entry>> {
        let e = db_err(&self.path);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, kind, started_at, duration_s, host, results, iops, mbps, avg_response_ms, errors,
                        interrupted, specs, targets, iops_of, mbps_of
                 FROM runs
                 WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM run_targets
                                              WHERE run_id = runs.id AND instr(target, ?1) > 0))
                   AND (?2 IS NULL OR EXISTS (SELECT 1 FROM run_specs WHERE run_id = runs.id AND spec = ?2))
                   AND (?3 IS NULL OR host = ?3)
                   AND (?4 IS NULL OR started_unix >= ?4)
                   AND (?5 IS NULL OR started_unix < ?5)
                 ORDER BY started_unix DESC, id DESC
                 LIMIT ?6",
            )
            .map_err(&e)?;
        let limit = filter.limit.map_or(-1, |n| n as i64);
        let rows = stmt
            .query_map(
                params![
                    filter.target,
                    filter.spec,
                    filter.host,
                    filter.since.map(unix_s),
                    filter.until.map(unix_s),
                    limit
                ],
                |r| {
                    // Text as it may be printed, whoever wrote the database.
                    let text = |i: usize| -> rusqlite::Result<String> {
                        Ok(crate::format::visible(&r.get::<_, String>(i)?).into_owned())
                    };
                    let list = |i: usize| -> rusqlite::Result<Vec<String>> {
                        let names: Vec<String> = serde_json::from_str(&r.get::<_, String>(i)?).unwrap_or_default();
                        Ok(names.iter().map(|n| crate::format::visible(n).into_owned()).collect())
                    };
                    Ok(Entry {
                        id: r.get(0)?,
                        kind: text(1)?,
                        started_at: text(2)?,
                        duration_s: r.get(3)?,
                        host: text(4)?,
                        results: r.get::<_, i64>(5)? as u64,
                        iops: r.get(6)?,
                        mbps: r.get(7)?,
                        avg_response_ms: r.get(8)?,
                        errors: r.get(9)?,
                        interrupted: r.get(10)?,
                        specs: list(11)?,
                        targets: list(12)?,
                        iops_of: r.get(13)?,
                        mbps_of: r.get(14)?,
                    })
                },
            )
            .map_err(&e)?;
        rows.collect::<std::result::Result<Vec<_>, _>>().map_err(&e)
    }

    /// The JSON text of entry `id`, exactly as `--json` wrote it.
    pub fn document_bytes(&self, id: i64) -> Result<Vec<u8>> {
        let text = self.stored_text(id)?;
        // Stored compact (see `save`) and rendered as --json writes it; entries from before the
        // history stored compact text are already that.
        if text.starts_with("{\n") {
            return Ok(text.into_bytes());
        }
        Ok(parse(id, &text)?.to_bytes())
    }

    /// Entry `id` in `format` (`iogauge export --format`, the workbench's downloads): its JSON
    /// as `--json` wrote it, or the file its run's `--csv` or `--iometer-csv` would have.
    pub fn export(&self, id: i64, format: crate::export::Format) -> Result<Vec<u8>> {
        let Some(exporter) = format.exporter() else { return self.document_bytes(id) };
        Ok(match self.document(id)? {
            Document::Run(d) => exporter.run(&d),
            Document::Study(d) => match exporter.study(&d) {
                crate::export::Export::Bytes(b) => b,
                crate::export::Export::Files(_) => unreachable!("the formats of a saved document are one file each"),
            },
        })
    }

    /// Entry `id`'s document.
    pub fn document(&self, id: i64) -> Result<Document> {
        parse(id, &self.stored_text(id)?)
    }

    fn stored_text(&self, id: i64) -> Result<String> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT document FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(db_err(&self.path))?;
        text.ok_or_else(|| {
            input(format!("no run {id} in history database {}: iogauge history lists them", self.path.display()))
        })
    }
}

/// Parses the stored text of entry `id`.
fn parse(id: i64, text: &str) -> Result<Document> {
    Document::parse(text.as_bytes(), &format!("history run {id}"))
}

/// Brings the schema up to date, one version per transaction; refuses a newer database.
fn migrate(conn: &mut Connection) -> Result<()> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| runtime(e.to_string()))?;
        let version: i64 =
            tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| runtime(e.to_string()))?;
        let version = version as usize;
        if version > MIGRATIONS.len() {
            return Err(input(format!(
                "schema version {version} is newer than this iogauge knows ({}): use a newer iogauge or another --db",
                MIGRATIONS.len()
            )));
        }
        if version == MIGRATIONS.len() {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[version]).map_err(|e| runtime(format!("migration to {}: {e}", version + 1)))?;
        tx.pragma_update(None, "user_version", version as i64 + 1).map_err(|e| runtime(e.to_string()))?;
        tx.commit().map_err(|e| runtime(e.to_string()))?;
    }
}

/// The indexed and displayed columns of a document.
struct Row {
    started_unix: f64,
    host: String,
    specs: Vec<String>,
    targets: Vec<String>,
    results: u64,
    iops: Option<f64>,
    mbps: Option<f64>,
    avg_response_ms: Option<f64>,
    iops_of: Option<String>,
    mbps_of: Option<String>,
    errors: bool,
    tool_version: String,
}

impl Row {
    fn of(doc: &Document) -> Row {
        let runs = doc.runs();
        // A study stopped before its first point holds no run: it ran here, on this host.
        let host = runs.first().map_or_else(|| crate::host::current(Vec::new()).name, |r| r.host.name.clone());
        let started_unix = humantime::parse_rfc3339_weak(doc.started_at()).map_or(0.0, unix_s);
        let (results, single, tool_version) = match doc {
            Document::Run(d) => (
                d.results.len() as u64,
                (d.results.len() == 1).then(|| &d.results[0].totals.metrics),
                d.tool_version.clone(),
            ),
            Document::Study(d) => (d.points.len() as u64, None, d.tool_version.clone()),
        };
        // Several workloads (a profile, a study): the best IOPS and the best MB/s of them, and
        // whose each is.
        let heads = doc.headlines();
        let best = |f: fn(&crate::result::Headline) -> f64| {
            heads.iter().map(|(name, h)| (f(h), name)).reduce(|a, b| if b.0 > a.0 { b } else { a })
        };
        let (iops, mbps) = (best(|h| h.iops), best(|h| h.mbps));
        let of = |b: Option<(f64, &String)>| b.filter(|_| single.is_none()).map(|(_, n)| n.clone());
        Row {
            started_unix,
            host,
            specs: doc.specs(),
            targets: doc.targets(),
            results,
            iops: single.map(|m| m.iops).or(iops.map(|b| b.0)),
            mbps: single.map(|m| m.mbps).or(mbps.map(|b| b.0)),
            avg_response_ms: single.and_then(|m| m.avg_response_ms),
            iops_of: of(iops),
            mbps_of: of(mbps),
            errors: runs.iter().any(|r| r.has_errors()),
            tool_version,
        }
    }
}

/// The line a command says where it saved a run or study (`kind`) under `id`, on stderr; the
/// workbench (`iogauge ui`) reads the id back from it with [`saved_id`].
pub fn saved_line(kind: &str, id: i64) -> String {
    format!("iogauge: saved as {kind} {id} in the history (iogauge show {id})")
}

/// The history id in a line made by [`saved_line`].
pub fn saved_id(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("iogauge: saved as ")?;
    let rest = rest.strip_prefix("run ").or_else(|| rest.strip_prefix("study "))?;
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_saved_line_gives_its_id_back() {
        assert_eq!(super::saved_id(&super::saved_line("run", 12)), Some(12));
        assert_eq!(super::saved_id(&format!("{}\n", super::saved_line("study", 3))), Some(3));
        assert_eq!(super::saved_id("iogauge: warning: saved as run 4"), None);
    }

    use super::*;

    #[test]
    fn dates_parse_as_days_times_and_ages() {
        let day = parse_when("2026-11-22", false).unwrap();
        assert_eq!(unix_s(day), 1_795_305_600.0);
        assert_eq!(unix_s(parse_when("2026-11-22", true).unwrap()), 1_795_305_600.0 + 86_400.0);
        assert_eq!(unix_s(parse_when("2026-11-22 01:30", false).unwrap()), 1_795_305_600.0 + 5_400.0);
        assert_eq!(unix_s(parse_when("2026-11-22T01:30:00Z", false).unwrap()), 1_795_305_600.0 + 5_400.0);
        let ago = unix_s(SystemTime::now()) - unix_s(parse_when("2h", false).unwrap());
        assert!((ago - 7200.0).abs() < 5.0, "{ago}");
        assert!(parse_when("yesterday-ish", false).unwrap_err().0.contains("YYYY-MM-DD"));
    }

    #[test]
    fn a_newer_schema_is_refused_and_an_empty_one_migrated() {
        let dir = std::env::temp_dir().join(format!("iogauge-history-unit-{}", std::process::id()));
        let path = dir.join("h.sqlite");
        let h = History::open_default(&path).unwrap();
        let v: i64 = h.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(v, MIGRATIONS.len() as i64);
        h.conn.pragma_update(None, "user_version", MIGRATIONS.len() as i64 + 1).unwrap();
        drop(h);
        let err = History::open(&path).err().unwrap().to_string();
        assert!(err.contains("newer than this iogauge knows"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
