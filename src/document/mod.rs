//! A document iogauge writes and reads back: a test's result or a study's, told apart by
//! `schema`. Compare, report and history take either, and read its workloads alike; other
//! tools' results (fio's JSON, Iometer's results file) are read as result documents.

mod check;
mod fio;
mod iometer;
mod visible;

use serde::Deserialize;

use crate::error::{Result, input};
use crate::result::{Detail, Headline, ManagerResult, ResultDoc, Totals, WorkerResult, WorkloadResult};
use crate::study::doc::StudyDoc;
use crate::targets::{TargetInfo, TargetKind};

/// A workload of a document: its name, its figures, and the rows `--detail` asks for under
/// it (each worker or target, by its place), which `compare` and `report` pair by place.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The spec and, in a study, the point.
    pub name: String,
    /// The access specification it ran (a study's point's workload is named by the point too).
    pub spec: String,
    /// Its figures.
    pub headline: Headline,
    /// Its workers or targets, labelled by their place.
    pub parts: Vec<(String, Headline)>,
}

/// Reads a file the user named as a document: a file or a pipe, never a device.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    let name = path.display();
    if crate::host::files::is_device(path) {
        return Err(input(format!("{name} is a device, not a document: give a JSON file")));
    }
    crate::host::inputs::reading(path);
    std::fs::read(path).map_err(|e| input(format!("cannot read {name}: {e}")))
}

/// A result document or a study document.
#[derive(Debug, Clone)]
pub enum Document {
    /// `iogauge.result/1` or `/2`: one test. (Both boxed: they are large, and differ in size.)
    Run(Box<ResultDoc>),
    /// `iogauge.study/1` or `/2`: many tests, one per point.
    Study(Box<StudyDoc>),
}

impl Document {
    /// Its workloads, by name (the spec and, in a study, the point), with their headline
    /// figures and, with `detail`, each worker's or target's, labelled by its place
    /// ([`crate::result::WorkloadResult::parts`]).
    pub fn workloads(&self, detail: Detail) -> Vec<Workload> {
        let parts = |r: Option<&WorkloadResult>| -> Vec<(String, Headline)> {
            let parts = r.map(|r| r.parts(detail)).unwrap_or_default();
            parts.into_iter().map(|(n, m)| (n, Headline::of_part(m))).collect()
        };
        match self {
            Document::Run(doc) => doc
                .results
                .iter()
                .map(|r| Workload {
                    name: r.spec.clone(),
                    spec: r.spec.clone(),
                    headline: doc.headline(r),
                    parts: parts(Some(r)),
                })
                .collect(),
            Document::Study(doc) => doc
                .points
                .iter()
                .flat_map(|p| p.summary.iter().enumerate().map(move |(k, s)| (p, k, s)))
                .map(|(p, k, s)| {
                    // A point that cycles nothing (a study of one point, an Iometer test
                    // without cycling) is its workloads, named as a run names them.
                    let name = match p.params == crate::study::Point::default() {
                        true => s.spec.clone(),
                        false => format!("{} {}", p.params.label(), s.spec),
                    };
                    // A point's parts are its first run's (a study's summaries are of totals).
                    let run = p.runs.first().and_then(|d| d.results.iter().find(|r| r.spec == s.spec));
                    Workload { name, spec: s.spec.clone(), headline: p.headline(k), parts: parts(run) }
                })
                .collect(),
        }
    }

    /// Its workloads' names and headline figures, without parts.
    pub fn headlines(&self) -> Vec<(String, Headline)> {
        self.workloads(Detail::Totals).into_iter().map(|w| (w.name, w.headline)).collect()
    }

    /// Parses a document (iogauge's JSON, fio's, Iometer's results file); `name` (a path or a
    /// history id) appears in the error. What is read is bounded ([`check`]): a histogram
    /// within its layout and the histograms together within [`ROOM_BASE`] and [`ROOM_PER_BYTE`]
    /// times the text, times, figures and indexes as they must be, each refusal naming the field;
    /// strings are made printable ([`visible`]). Linear in the text's size.
    pub fn parse(bytes: &[u8], name: &str) -> Result<Document> {
        let room = ROOM_BASE.saturating_add(bytes.len().saturating_mul(ROOM_PER_BYTE));
        let doc = crate::stats::histogram::with_room(room, || Document::parse_any(bytes, name))?;
        match &doc {
            Document::Run(d) => check::run(d, ""),
            Document::Study(d) => check::study(d),
        }
        .map_err(|e| input(format!("{name}: {e}")))?;
        Ok(doc)
    }

    fn parse_any(bytes: &[u8], name: &str) -> Result<Document> {
        if iometer::is_iometer(bytes) {
            return Ok(Document::Run(Box::new(iometer::result(bytes, name).map_err(input)?)));
        }
        let text = visible::json(bytes);
        // fio prints notes before its JSON when a job warns: the JSON starts at the first '{'.
        let json = text.iter().position(|&b| b == b'{').map_or(&text[..], |i| &text[i..]);
        let not = |e: &dyn std::fmt::Display| {
            input(format!(
                "{name} is not an iogauge result or study document, fio's JSON output or Iometer's results file: {e}"
            ))
        };
        // fio writes "fio version" first: iogauge's own documents are not parsed twice.
        if json.windows(13).take(64).any(|w| w == b"\"fio version\"") {
            // fio's `--output-format=json,normal` prints its text after the JSON: the first value.
            let first = serde_json::Deserializer::from_slice(json).into_iter::<serde_json::Value>().next();
            if let Some(Ok(v)) = first {
                return Ok(Document::Run(Box::new(fio::result(&v, name).map_err(input)?)));
            }
        }
        let head: Head = serde_json::from_slice(json).map_err(|e| not(&crate::error::unquoted(&e)))?;
        let schema = head.schema.ok_or_else(|| not(&"no `schema` field"))?;
        if crate::result::READ.contains(&schema.as_str()) {
            Ok(Document::Run(typed(json, name, &schema)?))
        } else if crate::study::doc::READ.contains(&schema.as_str()) {
            Ok(Document::Study(typed(json, name, &schema)?))
        } else if schema.starts_with("iogauge.") {
            Err(input(format!(
                "{name}: unknown schema '{schema}': give iogauge.result/1 or /2, or iogauge.study/1 or /2 documents"
            )))
        } else {
            // Not quoted: a file that is none of these may hold anything.
            Err(not(&"its `schema` is not iogauge's"))
        }
    }

    /// Reads and parses the document in file `path`.
    pub fn read(path: &std::path::Path) -> Result<Document> {
        let name = path.display().to_string();
        Document::parse(&read_file(path)?, &name)
    }

    /// The JSON text, as `--json` writes it.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Document::Run(d) => crate::export::json::to_bytes(d),
            Document::Study(d) => crate::export::json::to_bytes(d),
        }
    }

    /// The JSON text without whitespace, as the history stores it.
    pub fn to_compact_json(&self) -> String {
        match self {
            Document::Run(d) => crate::export::json::to_compact(d),
            Document::Study(d) => crate::export::json::to_compact(d),
        }
    }

    /// When the test or study started (RFC 3339, UTC).
    pub fn started_at(&self) -> &str {
        match self {
            Document::Run(d) => &d.started_at,
            Document::Study(d) => &d.started_at,
        }
    }

    /// Every result document it holds: itself, or each run of each point of a study.
    pub fn runs(&self) -> Vec<&ResultDoc> {
        match self {
            Document::Run(d) => vec![d],
            Document::Study(d) => d.points.iter().flat_map(|p| &p.runs).collect(),
        }
    }

    /// The access specifications run, in order, each once.
    pub fn specs(&self) -> Vec<String> {
        let all = match self {
            Document::Run(d) => d.results.iter().map(|r| r.spec.clone()).collect::<Vec<_>>(),
            Document::Study(d) => d.points.iter().flat_map(|p| p.summary.iter().map(|s| s.spec.clone())).collect(),
        };
        once(all)
    }

    /// The targets used, in order, each once.
    pub fn targets(&self) -> Vec<String> {
        let runs = self.runs();
        // A file-system test's target is its directory.
        let dirs = runs.iter().filter_map(|r| Some(r.config.fs.as_ref()?.dir.clone()));
        once(runs.iter().flat_map(|r| &r.target_info).map(|t| t.path.clone()).chain(dirs))
    }

    /// Another tool's results it was read from (fio's JSON, Iometer's results file), if any.
    pub fn read_from(&self) -> Option<&str> {
        match self {
            Document::Run(d) => d.read_from.as_deref(),
            Document::Study(_) => None,
        }
    }

    /// True if it was stopped before its end.
    pub fn interrupted(&self) -> bool {
        match self {
            Document::Run(d) => d.interrupted,
            Document::Study(d) => d.interrupted,
        }
    }

    /// Wall time (s).
    pub fn duration_s(&self) -> f64 {
        match self {
            Document::Run(d) => d.duration_s,
            Document::Study(d) => d.duration_s,
        }
    }

    /// `run` or `study`.
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Run(_) => "run",
            Document::Study(_) => "study",
        }
    }
}

/// Names in order, each once (in linear time: a document may name many).
fn once(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names.into_iter().filter(|n| seen.insert(n.clone())).collect()
}

/// What the histograms of a document may take in memory: [`ROOM_BASE`] bytes, and
/// [`ROOM_PER_BYTE`] for each byte of its text (each non-empty histogram is held whole up to
/// its last bucket: a real document's take about its own size).
pub const ROOM_BASE: usize = 64 << 20;
/// See [`ROOM_BASE`].
pub const ROOM_PER_BYTE: usize = 32;

/// The one field every iogauge document has.
#[derive(Deserialize)]
struct Head {
    schema: Option<String>,
}

/// A document of a schema iogauge reads, refused with the path of the field that does not read.
fn typed<T: serde::de::DeserializeOwned>(json: &[u8], name: &str, schema: &str) -> Result<Box<T>> {
    let bad = |e: &dyn std::fmt::Display| input(format!("{name}: not a valid {schema} document: {e}"));
    let mut de = serde_json::Deserializer::from_slice(json);
    let doc = serde_path_to_error::deserialize(&mut de).map_err(|e| match e.path().to_string().as_str() {
        "." => bad(e.inner()),
        path => bad(&format!("{path}: {}", e.inner())),
    })?;
    de.end().map_err(|e| bad(&e))?;
    Ok(Box::new(doc))
}

/// A target as another tool's results name it: its name, its kind and whether it was opened
/// O_DIRECT; what iogauge would learn by inspecting it is not known.
fn foreign_target(path: &str, kind: TargetKind, direct: bool, from: &str) -> TargetInfo {
    TargetInfo {
        path: path.to_string(),
        kind,
        size: 0,
        logical_block: 512,
        direct,
        model: format!("(from {from})"),
        exists: true,
        created_by_iogauge: false,
        numa_node: None,
        network: None,
        identity: None,
    }
}

/// A workload of another tool's results: what its file says (name, time, totals, workers and
/// their targets, the managers or hosts that ran them); nothing iogauge alone records
/// (intervals, errors' details).
fn foreign_workload(
    spec: String,
    duration_s: f64,
    totals: Totals,
    workers: Vec<WorkerResult>,
    managers: Vec<ManagerResult>,
) -> WorkloadResult {
    WorkloadResult {
        spec,
        started_at: String::new(),
        duration_s,
        ramp_s: 0.0,
        totals,
        targets: workers.iter().flat_map(|w| w.targets.clone()).collect(),
        workers,
        intervals: Vec::new(),
        managers,
        start_skew_ms: 0.0,
        first_error: None,
        verify: None,
        fs: None,
        replay: None,
    }
}

/// Another tool's results as a result document, marked as read from `read_from`; no host, no
/// iogauge job (none ran).
fn foreign_doc(
    tool_version: String,
    started_at: String,
    target_info: Vec<TargetInfo>,
    results: Vec<WorkloadResult>,
    warnings: Vec<String>,
    failed: Option<String>,
    read_from: String,
) -> ResultDoc {
    ResultDoc {
        schema: crate::result::SCHEMA.into(),
        tool_version,
        started_at,
        duration_s: results.iter().map(|r| r.duration_s).sum(),
        host: crate::host::HostInfo::default(),
        config: crate::config::Job::default(),
        target_info,
        results,
        warnings,
        interrupted: false,
        failed,
        managers: Vec::new(),
        read_from: Some(read_from),
    }
}
