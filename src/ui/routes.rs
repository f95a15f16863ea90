//! Every call of the workbench's API (docs/ui.md's table, held to [`ROUTES`] by a test): one
//! function each, its request's body read as its own type.

use std::collections::BTreeMap;

use hyper::StatusCode;
use hyper::http::request::Parts;
use serde::{Deserialize, Serialize};

use super::api::{
    Answer, Api, Failure, checked, from_here, job_answer, json, lock, number, parse, query, read, refused, same_origin,
    toml_logging_in, toml_of, with_status,
};
use super::run::Kind;
use super::{topology, words};
use crate::config::{Job, Key};
use crate::document::Document;
use crate::error::{Error, Result, input};
use crate::history::Filter;
use crate::http::{Handler, Reply, reply};
use crate::import::{Import, icf};
use crate::net::TargetName;

/// The page: its markup, styles and script, inline.
const PAGE: &str = include_str!("page.html");

/// One call: its method, its path (upper-case segments, `ID` and `NAME`, stand for the values
/// given there), what answers it, and whether it reads files or targets the request names
/// (which may not answer: a silent server, a FIFO).
pub(super) struct Route {
    pub method: &'static str,
    pub path: &'static str,
    handle: fn(&Api, &Call) -> Answer,
    reads: bool,
}

const fn route(method: &'static str, path: &'static str, handle: fn(&Api, &Call) -> Answer) -> Route {
    Route { method, path, handle, reads: false }
}

/// A call that reads files or targets the request names: it takes a place among
/// [`super::api::READING_CALLS`] while it does.
const fn reading(method: &'static str, path: &'static str, handle: fn(&Api, &Call) -> Answer) -> Route {
    Route { method, path, handle, reads: true }
}

/// Every call the workbench answers.
pub(super) const ROUTES: &[Route] = &[
    route("GET", "/", page),
    route("GET", "/api/host", host),
    route("GET", "/api/settings", settings),
    route("GET", "/api/worker-keys", worker_keys),
    reading("GET", "/api/targets", targets),
    reading("POST", "/api/targets/inspect", inspect),
    route("GET", "/api/specs", specs),
    reading("POST", "/api/specs/file", spec_file),
    reading("POST", "/api/specs/read", spec_read),
    route("GET", "/api/studies", studies),
    reading("POST", "/api/studies/NAME", study),
    reading("POST", "/api/job", build_job),
    reading("POST", "/api/job/read", read_job),
    route("POST", "/api/runs", start),
    route("GET", "/api/runs/ID", run_state),
    route("POST", "/api/runs/ID/stop", stop),
    route("GET", "/api/history", history),
    route("GET", "/api/history/ID", history_document),
    route("GET", "/api/history/ID/result", history_result),
    route("GET", "/api/history/ID/export", history_export),
    route("GET", "/api/history/ID/job", history_job),
    route("GET", "/api/history/ID/report", history_report),
    route("GET", "/api/compare", compare),
];

/// A request as its route's function reads it.
pub(super) struct Call<'a> {
    head: &'a Parts,
    body: &'a [u8],
    /// The values of the route's upper-case segments, in order.
    params: Vec<&'a str>,
}

impl Call<'_> {
    /// The path's `k`-th value (`ID`, `NAME`).
    fn param(&self, k: usize) -> &str {
        self.params[k]
    }

    /// The body, as the call's request type.
    fn body<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        parse(self.body)
    }

    /// A number of the query, or `default` where it gives none.
    fn query_number(&self, key: &str, default: i64) -> Result<i64> {
        query(self.head, key).map_or(Ok(default), |v| number(&v))
    }
}

/// Every request: from this workbench's page or a script holding its token, for its host
/// name, then answered by its route.
impl Handler for Api {
    fn respond(&self, head: &Parts, body: &[u8]) -> Reply {
        if !self.named_host(head) {
            return refused(
                StatusCode::FORBIDDEN,
                "a request for another host name (its Host header): open the address iogauge ui printed",
            );
        }
        if !same_origin(head) {
            return refused(StatusCode::FORBIDDEN, "a request from a page of another origin: refused");
        }
        if !self.authorised(head) {
            return refused(
                StatusCode::FORBIDDEN,
                "no token, or not this workbench's: open the address iogauge ui printed (it carries ?token=...)",
            );
        }
        match dispatch(self, head, body) {
            Ok(r) => r,
            Err(f) => f.reply(),
        }
    }

    fn blocks(&self) -> bool {
        true
    }
}

/// The answer of the route that `head` asks for.
pub(super) fn dispatch(api: &Api, head: &Parts, body: &[u8]) -> Answer {
    let path = head.uri.path();
    let segs: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    for r in ROUTES.iter().filter(|r| r.method == head.method.as_str()) {
        let pattern: Vec<&str> = r.path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
        if pattern.len() != segs.len() {
            continue;
        }
        let is_value = |p: &str| p.bytes().all(|b| b.is_ascii_uppercase());
        if pattern.iter().zip(&segs).all(|(p, s)| p == s || is_value(p)) {
            let params = pattern.iter().zip(&segs).filter(|(p, _)| is_value(p)).map(|(_, s)| *s).collect();
            let _place = if r.reads { Some(api.reading()?) } else { None };
            return (r.handle)(api, &Call { head, body, params });
        }
    }
    Err(Failure::Status(StatusCode::NOT_FOUND, format!("no such call: {} {path} (docs/ui.md lists them)", head.method)))
}

/// `GET /`: the page.
fn page(_: &Api, _: &Call) -> Answer {
    let html = crate::report::html::app("iogauge workbench", PAGE);
    Ok(reply(StatusCode::OK, "text/html; charset=utf-8", html.into_bytes()))
}

/// `GET /api/host`: this host, and every manager.
fn host(api: &Api, _: &Call) -> Answer {
    let managers: Vec<_> =
        api.managers.iter().map(|m| serde_json::json!({ "rank": m.rank, "host": m.host, "cpus": m.cpus })).collect();
    json(&serde_json::json!({
        "host": crate::host::name(),
        "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
        "version": env!("CARGO_PKG_VERSION"),
        "managers": managers,
    }))
}

/// One key as Test Setup and the worker's panel show it.
#[derive(Serialize)]
struct Setting {
    name: &'static str,
    default: &'static str,
    /// How the form takes it: `switch`, `list` or `value` ([`Key::form`]).
    form: &'static str,
    /// What it sets, in one short line (the first sentence of its flag's help).
    short: String,
    summary: String,
    meaning: String,
}

/// The keys of a section as the page's forms show them.
fn key_forms(keys: &[Key]) -> Answer {
    let keys = keys.iter().map(|k| Setting {
        name: k.name,
        default: k.default,
        form: k.form(),
        short: short_line(&k.summary()),
        summary: k.summary(),
        meaning: k.meaning(),
    });
    json(&keys.collect::<Vec<_>>())
}

/// `GET /api/settings`: every `[test]` key.
fn settings(_: &Api, _: &Call) -> Answer {
    key_forms(crate::config::KEYS)
}

/// `GET /api/worker-keys`: every `[[worker]]` key.
fn worker_keys(_: &Api, _: &Call) -> Answer {
    key_forms(crate::config::WORKER_KEYS)
}

/// The most characters of Test Setup's line for a key.
const SHORT: usize = 100;

/// A key's help as one short line: its first sentence, cut where a clause ends (or a word,
/// failing that) within [`SHORT`] characters, an ellipsis saying so.
fn short_line(text: &str) -> String {
    let sentence = first_sentence(text);
    if sentence.chars().count() <= SHORT {
        return sentence.to_string();
    }
    let within = &sentence[..sentence.char_indices().nth(SHORT).map_or(sentence.len(), |(i, _)| i)];
    let clauses = outside_brackets(within).filter(|&i| [", ", "; ", " ("].iter().any(|p| within[i..].starts_with(p)));
    let cut = clauses.last().or_else(|| within.rfind(' ')).unwrap_or(within.len());
    format!("{}…", within[..cut].trim_end_matches([',', ';', ':', ' ', '.', '…']))
}

/// A text's first sentence: up to the first full stop, outside brackets and code, that ends
/// a word before a capital (not "e.g. 4k").
fn first_sentence(text: &str) -> &str {
    let bytes = text.as_bytes();
    let end = outside_brackets(text).find(|&i| {
        bytes[i] == b'.' && bytes.get(i + 1) == Some(&b' ') && bytes.get(i + 2).is_some_and(u8::is_ascii_uppercase)
    });
    end.map_or(text, |i| &text[..=i])
}

/// The byte positions of `text` outside brackets and `code`.
fn outside_brackets(text: &str) -> impl Iterator<Item = usize> + '_ {
    let (mut depth, mut code) = (0i32, false);
    text.bytes().enumerate().filter_map(move |(i, b)| {
        match b {
            b'`' => code = !code,
            b'(' | b'[' if !code => depth += 1,
            b')' | b']' if !code => depth -= 1,
            _ => {}
        }
        (!code && depth == 0 && b != b'`').then_some(i)
    })
}

/// `GET /api/targets?rank=R`: what manager R (0: this host) offers as targets.
fn targets(api: &Api, c: &Call) -> Answer {
    let rank = c.query_number("rank", 0)?;
    let rank = u32::try_from(rank).map_err(|_| input(format!("rank {rank}: ranks are from 0")))?;
    json(&api.targets_of(rank)?)
}

/// `POST /api/targets/inspect`'s body: the target typed.
#[derive(Debug, Deserialize)]
pub struct Inspect {
    /// A file, device or URL (its password kept by the workbench, answered without it).
    pub path: TargetName,
}

/// `POST /api/targets/inspect`: what the target typed is, as the page lists it (without the
/// password its URL may carry, kept for the runs that name it).
fn inspect(api: &Api, c: &Call) -> Answer {
    let name = c.body::<Inspect>()?.path;
    let offered = topology::inspect(&name)?;
    api.remember([&name]);
    json(&offered)
}

/// `GET /api/specs`: the built-in access specifications.
fn specs(_: &Api, _: &Call) -> Answer {
    json(&crate::spec::builtin())
}

/// `POST /api/specs/file`'s body: the specifications to write as a spec file.
#[derive(Debug, Deserialize)]
pub struct SpecFile {
    /// As a job file's `[[spec]]` tables.
    pub specs: Vec<crate::spec::AccessSpec>,
}

/// `POST /api/specs/file`: a spec file of the specifications given, each checked.
fn spec_file(_: &Api, c: &Call) -> Answer {
    let specs = c.body::<SpecFile>().map_err(|e| as_a_spec_file(c, e))?.specs;
    let text = crate::job::specs_text(&specs)?;
    crate::job::parse_specs(&text, "specs.toml").map_err(|e| words::error(e, &text))?;
    json(&serde_json::json!({ "toml": text }))
}

/// Why specifications sent to be kept are not ones, as a spec file's check says it and by the
/// page's control (`% read` typed `abc`: the JSON's reader says only where in the request it
/// is); `e`, the request's own error, where that finds nothing wrong.
fn as_a_spec_file(c: &Call, e: Error) -> Error {
    let specs = c.body::<serde_json::Value>().ok().map(|v| serde_json::json!({ "spec": v["specs"] }));
    let text = specs.and_then(|s| crate::job::to_toml(&s).ok());
    match text.as_deref().map(|t| (t, crate::job::parse_specs(t, "specs.toml"))) {
        Some((t, Err(why))) => words::error(why, t),
        _ => e,
    }
}

/// A file the user loaded in the page: its name and text.
#[derive(Debug, Deserialize)]
pub struct Loaded {
    /// Its name (its extension says its format).
    pub name: String,
    /// What it holds.
    pub text: String,
}

/// `POST /api/specs/read`: the specifications of a spec file (TOML or `.icf`).
fn spec_read(_: &Api, c: &Call) -> Answer {
    let f: Loaded = c.body()?;
    json(&crate::job::parse_specs(&f.text, &f.name)?)
}

/// `GET /api/studies`: the seeds' studies.
fn studies(_: &Api, _: &Call) -> Answer {
    let all =
        crate::study::builtin::BUILTINS.iter().map(|(name, about)| serde_json::json!({ "name": name, "about": about }));
    json(&all.collect::<Vec<_>>())
}

/// `POST /api/studies/NAME`'s body: where the study runs.
#[derive(Debug, Default, Deserialize)]
pub struct StudyOn {
    /// Its targets (the selected worker's).
    #[serde(default)]
    pub targets: Vec<TargetName>,
    /// A file-system study's directory.
    pub dir: Option<String>,
    /// A file-system study's total size (bytes).
    pub total: Option<u64>,
}

/// `POST /api/studies/NAME`: the study's job.
fn study(api: &Api, c: &Call) -> Answer {
    let on: StudyOn = c.body()?;
    api.remember(&on.targets);
    let given = crate::study::builtin::Given { targets: &on.targets, dir: on.dir.as_deref(), total: on.total };
    job_answer(crate::study::builtin::builtin(c.param(0), &given)?)
}

/// `POST /api/job`'s body: a job built on the page.
#[derive(Debug, Deserialize)]
pub struct Build {
    /// A job file's tables, as JSON.
    pub job: Job,
}

/// `POST /api/job`: the job and its TOML, checked as `iogauge run` checks a job file; what is
/// wrong is said by the page's control for it.
fn build_job(api: &Api, c: &Call) -> Answer {
    let job = c.body::<Build>().map_err(|e| as_a_job_file(c, e))?.job;
    api.remember(job.workers.iter().flat_map(|w| &w.targets));
    let text = toml_of(&job)?;
    job_answer(checked(&text).map_err(|e| words::error(e, &text))?)
}

/// Why a job built on the page is not one, as a job file's check says it and by the page's
/// control (a duration typed wrong: the JSON's reader says only where in the request it is);
/// `e`, the request's own error, where that finds nothing wrong.
fn as_a_job_file(c: &Call, e: Error) -> Error {
    let job = c.body::<serde_json::Value>().ok().map(|v| v["job"].clone());
    let text = job.and_then(|j| crate::job::to_toml(&j).ok());
    match text.as_deref().map(|t| (t, checked(t))) {
        Some((t, Err(why))) => words::error(why, t),
        _ => e,
    }
}

/// `POST /api/job/read`'s body: a job file loaded, and for an Iometer `.icf` the Linux path
/// of each target it names (`--map-target`'s NAME=PATH).
#[derive(Debug, Deserialize)]
pub struct JobFile {
    /// Its name (its extension says its format).
    pub name: String,
    /// What it holds.
    pub text: String,
    /// An Iometer target name (`PHYSICALDRIVE:1`, `E:`) and the path (or `null`) it stands for.
    #[serde(default)]
    pub map_target: BTreeMap<String, String>,
}

/// `POST /api/job/read`: the job of a job file, `.icf` or fio job. An `.icf` whose targets
/// have no Linux path yet is answered 400 with them (`unmapped`): the page asks for each.
fn read_job(api: &Api, c: &Call) -> Answer {
    let f: JobFile = c.body()?;
    let import = Import { map_target: f.map_target.into_iter().collect(), ..Import::default() };
    if crate::import::Format::of(std::path::Path::new(&f.name), &f.text) == crate::import::Format::Icf {
        let unmapped = icf::unmapped(&f.text, &f.name, &import)?;
        if !unmapped.is_empty() {
            let why = format!(
                "{}: its targets need a Linux path (a device, a file or null): {}",
                f.name,
                unmapped.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
            );
            let more = serde_json::Map::from_iter([("unmapped".to_string(), serde_json::json!(unmapped))]);
            return Err(Failure::Detailed(StatusCode::BAD_REQUEST, why, more));
        }
    }
    let job = read(&f.name, &f.text, &import)?;
    api.remember(job.workers.iter().flat_map(|w| &w.targets));
    job_answer(job)
}

/// `POST /api/runs`'s body: the job to run.
#[derive(Debug, Deserialize)]
pub struct Start {
    /// Its TOML.
    pub job: String,
}

/// `POST /api/runs`: starts the job given as TOML, logging in with the passwords its URLs or
/// earlier requests gave for its targets. A worker without a target is refused: the page's
/// test names every target it writes (a job file's default, `./iogauge.tst`, would be made in
/// the workbench's directory without a word).
fn start(api: &Api, c: &Call) -> Answer {
    // The caller's own text (the page's was checked as it was built): its lines say where.
    let job = from_here(checked(&c.body::<Start>()?.job)?)?;
    every_worker_has_a_target(&job)?;
    every_device_is_here(&job, api.managers.len())?;
    api.remember(job.workers.iter().flat_map(|w| &w.targets));
    let job = api.with_passwords(job);
    let kind = if job.study.is_some() || job.fs.is_some() { Kind::Study } else { Kind::Run };
    let shown_text = toml_of(&job)?;
    // Not locked while the run starts: handing a child its job is a pipe write, which would
    // hold every GET /api/runs/ID waiting on the lock (one run at a time: starts never race).
    let id = api.runs.start(kind, toml_logging_in(&job)?).map_err(|e| match e {
        Error::Input(m) => Failure::Status(StatusCode::CONFLICT, m),
        e => e.into(),
    })?;
    *lock(&api.shown) = Some((id, shown_text));
    Ok(with_status(StatusCode::ACCEPTED, json(&serde_json::json!({ "id": id, "kind": kind }))?))
}

/// Refuses a job with a worker that names no target, saying which.
fn every_worker_has_a_target(job: &Job) -> Result<()> {
    match job.workers.iter().enumerate().find(|(_, w)| w.targets.is_empty()) {
        None => Ok(()),
        Some((i, w)) => Err(input(format!(
            "{} has no target: tick one in its Disk Targets (null, a device, a file), or remove the worker; \
             nothing was started",
            worker_named(i, w)
        ))),
    }
}

/// Refuses a job naming a device of this host that is gone since it was ticked (a loop device
/// detached, a disk removed), saying which worker's and why: the run would meet an empty
/// device or none. A worker placed on another manager's host is that host's to check.
fn every_device_is_here(job: &Job, managers: usize) -> Result<()> {
    let here = |w: &crate::config::WorkerConfig| w.ranks == [0] || (w.ranks.is_empty() && managers == 1);
    for (i, w) in job.workers.iter().enumerate().filter(|(_, w)| here(w)) {
        if let Some((t, why)) = w.targets.iter().find_map(|t| Some((t, topology::gone(t.as_str())?))) {
            return Err(input(format!(
                "{}'s target {t} {why}: untick it in Disk Targets (Refresh the list shows the host's disks now); \
                 nothing was started",
                worker_named(i, w)
            )));
        }
    }
    Ok(())
}

/// The `i`-th worker as the page names it.
fn worker_named(i: usize, w: &crate::config::WorkerConfig) -> String {
    w.name.clone().map_or(format!("worker {}", i + 1), |n| format!("worker \"{n}\""))
}

/// `GET /api/runs/ID?after=N`: the run `ID` (`current`: the last) and its live lines after
/// the Nth, its job as the API shows it (the text the run was handed holds the passwords it
/// logs in with).
fn run_state(api: &Api, c: &Call) -> Answer {
    // 0 stands for the current run inside; a caller names it `current`.
    let id = if c.param(0) == "current" { 0 } else { run_id(c.param(0))? };
    let after = c.query_number("after", 0)?.max(0) as u64;
    let Some(mut s) = api.runs.state(id, after) else {
        return Err(Failure::Status(StatusCode::NOT_FOUND, format!("no run {id}: start one with POST /api/runs")));
    };
    let shown = lock(&api.shown);
    s.job = shown.as_ref().filter(|(i, _)| *i == s.id).map(|(_, text)| text.clone()).unwrap_or_default();
    s.messages = words::said(&s.messages, &s.job);
    json(&s)
}

/// A run's number as a path gives it: 1 or more.
fn run_id(text: &str) -> Result<u64> {
    match text.parse::<u64>() {
        Ok(id @ 1..) => Ok(id),
        _ => Err(input(format!("{text}: not a run's number (1, 2, ... or current)"))),
    }
}

/// `POST /api/runs/ID/stop`: asks the run to stop (SIGTERM; again: at once).
fn stop(api: &Api, c: &Call) -> Answer {
    let id = c.param(0);
    match api.runs.stop(run_id(id)?) {
        true => Ok(with_status(StatusCode::ACCEPTED, json(&serde_json::json!({ "stopping": true }))?)),
        false => Err(Failure::Status(StatusCode::CONFLICT, format!("run {id} is not going"))),
    }
}

/// `GET /api/history?limit=N`: the entries, newest first.
fn history(api: &Api, c: &Call) -> Answer {
    let limit = Some(c.query_number("limit", 100)?.max(0) as u64);
    match api.history()? {
        Some(h) => json(&h.list(&Filter { limit, ..Filter::default() })?),
        None => json(&serde_json::json!([])),
    }
}

/// `GET /api/history/ID`: the document, as `iogauge export ID` writes it.
fn history_document(api: &Api, c: &Call) -> Answer {
    let bytes = api.saved()?.document_bytes(number(c.param(0))?)?;
    Ok(reply(StatusCode::OK, "application/json", bytes))
}

/// `GET /api/history/ID/result`: the result as the Results Display shows it, a block per
/// workload (and per point of a study, its title naming the point).
fn history_result(api: &Api, c: &Call) -> Answer {
    json(&super::results::blocks(&api.document(c.param(0))?))
}

/// `GET /api/history/ID/export?format=json|csv|iometer-csv`: the file `iogauge export ID
/// --format` writes, to be saved under the name its Content-Disposition gives.
fn history_export(api: &Api, c: &Call) -> Answer {
    let id = number(c.param(0))?;
    let format: crate::export::Format =
        query(c.head, "format").unwrap_or_else(|| "json".into()).parse().map_err(Error::from)?;
    let bytes = api.saved()?.export(id, format)?;
    let mut r = reply(StatusCode::OK, format.content_type(), bytes);
    let file = format!("attachment; filename=\"{}\"", format.file_name(id));
    r.headers_mut().insert(hyper::header::CONTENT_DISPOSITION, file.parse().expect("a plain file name"));
    Ok(r)
}

/// `GET /api/history/ID/job`: the job that reruns it.
fn history_job(api: &Api, c: &Call) -> Answer {
    let job = match api.document(c.param(0))? {
        Document::Run(d) => d.config.clone(),
        Document::Study(d) => d.config.clone(),
    };
    job_answer(job)
}

/// `GET /api/history/ID/report`: the HTML report, with a row per worker and per target.
fn history_report(api: &Api, c: &Call) -> Answer {
    let id = c.param(0);
    let inputs = [crate::report::Input { label: format!("#{id}"), doc: api.document(id)? }];
    let rep = crate::report::build(&format!("iogauge #{id}"), &inputs, crate::result::Detail::All);
    Ok(reply(StatusCode::OK, "text/html; charset=utf-8", rep.html.into_bytes()))
}

/// `GET /api/compare?a=ID&b=ID`: `iogauge compare`'s table.
fn compare(api: &Api, c: &Call) -> Answer {
    let ids = [query(c.head, "a"), query(c.head, "b")];
    let [Some(a), Some(b)] = ids.map(|i| i.and_then(|i| i.parse::<i64>().ok())) else {
        return Err(input("compare needs two history ids: ?a=ID&b=ID").into());
    };
    let (da, db) = (api.document(&a.to_string())?, api.document(&b.to_string())?);
    let text = crate::compare::text([&format!("#{a}"), &format!("#{b}")], &da, &db, Default::default())?;
    json(&serde_json::json!({ "text": text }))
}
