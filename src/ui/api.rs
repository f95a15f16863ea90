//! The workbench's HTTP answers: the page, and the JSON calls it makes, which scripts may make
//! too (docs/ui.md lists them). Every call carries the token `iogauge ui` printed, in an
//! `Authorization: Bearer TOKEN` header (or, for a link the browser opens, `?token=TOKEN`);
//! without it the answer is 403 and nothing is done. A call from a page of another origin is
//! refused too, token or not, and so is one whose `Host` is another site's (a DNS rebinding).
//!
//! A target's password, typed in its URL (or in a job the page loads), is taken out as the
//! request is read: every answer names the target without it. The workbench keeps it, in
//! memory, for the runs it starts that name that target ([`Api::remember`]).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use hyper::header::{AUTHORIZATION, HOST, ORIGIN};
use hyper::http::request::Parts;
use hyper::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::run::{Kind, Maker, Runs};
use super::topology::{self, ManagerView};
use crate::config::Job;
use crate::document::Document;
use crate::error::{Error, Result, input};
use crate::history::{self, Filter, History};
use crate::http::{Handler, Reply, reply};
use crate::import::{Format, Import, fio, icf};
use crate::net::TargetName;

/// The page: its markup, styles and script, inline.
const PAGE: &str = include_str!("page.html");

/// Targets inspected at once (`POST /api/targets/inspect`); one more is refused. An
/// inspection of a server that does not answer holds a thread of the server's pool (4) for
/// io_timeout: two leave two for every other call, Stop among them.
const INSPECTIONS: usize = 2;

/// What answers the workbench's requests.
pub struct Api {
    token: String,
    db: Option<PathBuf>,
    runs: Runs,
    /// Every manager, by rank; this one (the lead) is the first.
    managers: Vec<ManagerView>,
    /// The address it listens on: which `Host` a request may name.
    listen: IpAddr,
    /// Every target named with a password in a request, that password kept for the runs
    /// started here that name the target without one ([`Api::remember`]).
    passwords: Mutex<Vec<TargetName>>,
    /// The last run started: its id and its job as the API shows it (without passwords).
    shown: Mutex<Option<(u64, String)>>,
    /// Targets being inspected now.
    inspecting: AtomicUsize,
}

impl Api {
    /// The answers for the token `token`, the history `db` (None: the default one), runs made
    /// by `maker`, showing `managers`, listening on `listen`.
    pub fn new(token: String, db: Option<PathBuf>, maker: Maker, managers: Vec<ManagerView>, listen: IpAddr) -> Api {
        let runs = Runs::new(maker, db.clone());
        let (passwords, shown, inspecting) = (Mutex::default(), Mutex::default(), AtomicUsize::new(0));
        Api { token, db, runs, managers, listen, passwords, shown, inspecting }
    }

    /// Keeps the passwords `names` carry, each for its target's name (a later one for the
    /// same name replaces it).
    fn remember<'a>(&self, names: impl IntoIterator<Item = &'a TargetName>) {
        let mut kept = lock(&self.passwords);
        for n in names.into_iter().filter(|n| n.secret().is_some()) {
            kept.retain(|k| k.as_str() != n.as_str());
            kept.push(n.clone());
        }
    }

    /// `job`'s targets, each with the password kept for its name if its URL gave none: the
    /// job a run started here logs in with.
    fn with_passwords(&self, mut job: Job) -> Job {
        let kept = lock(&self.passwords);
        for t in job.workers.iter_mut().flat_map(|w| w.targets.iter_mut()) {
            *t = kept.iter().fold(std::mem::take(t), |t, k| t.or_secret_of(k));
        }
        job
    }

    /// `POST /api/targets/inspect`: what the target typed is, as the page lists it (without
    /// the password its URL may carry, kept for the runs that name it).
    fn inspect(&self, body: &[u8]) -> Answer {
        #[derive(Deserialize)]
        struct Ask {
            path: TargetName,
        }
        let name = parse::<Ask>(body)?.path;
        let _place = self.inspection()?;
        let offered = topology::inspect(&name)?;
        self.remember([&name]);
        json(&offered)
    }

    /// `POST /api/runs`: starts the job given as TOML, logging in with the passwords its URLs
    /// or earlier requests gave for its targets.
    fn start(&self, body: &[u8]) -> Answer {
        #[derive(Deserialize)]
        struct Start {
            job: String,
        }
        let job = from_here(checked(&parse::<Start>(body)?.job)?)?;
        self.remember(job.workers.iter().flat_map(|w| &w.targets));
        let job = self.with_passwords(job);
        let kind = if job.study.is_some() || job.fs.is_some() { Kind::Study } else { Kind::Run };
        let mut shown = lock(&self.shown);
        let id = self.runs.start(kind, toml_logging_in(&job)?).map_err(|e| match e {
            Error::Input(m) => Failure::Status(StatusCode::CONFLICT, m),
            e => e.into(),
        })?;
        *shown = Some((id, toml_of(&job)?));
        Ok(with_status(StatusCode::ACCEPTED, json(&serde_json::json!({ "id": id, "kind": kind }))?))
    }

    /// `GET /api/runs/ID`: the run `id` (0: the current or last one) and its live lines after
    /// `after`, its job as the API shows it (the text the run was handed holds the passwords
    /// it logs in with).
    fn state(&self, id: u64, after: u64) -> Answer {
        let Some(mut s) = self.runs.state(id, after) else {
            return Err(Failure::Status(StatusCode::NOT_FOUND, format!("no run {id}: start one with POST /api/runs")));
        };
        let shown = lock(&self.shown);
        s.job = shown.as_ref().filter(|(i, _)| *i == s.id).map(|(_, text)| text.clone()).unwrap_or_default();
        json(&s)
    }

    /// A place among the [`INSPECTIONS`] in flight, given back on drop; refused beyond.
    fn inspection(&self) -> std::result::Result<Inspection<'_>, Failure> {
        if self.inspecting.fetch_add(1, Ordering::SeqCst) >= INSPECTIONS {
            self.inspecting.fetch_sub(1, Ordering::SeqCst);
            return Err(Failure::Status(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{INSPECTIONS} targets are being inspected (a server that does not answer takes up to \
                     io_timeout): try again when one has answered"
                ),
            ));
        }
        Ok(Inspection(&self.inspecting))
    }

    /// The targets manager `rank` offers: this host's as they are now, another's as it
    /// described them when the workbench started.
    fn targets_of(&self, rank: u32) -> Result<Vec<topology::Offered>> {
        match self.managers.iter().find(|m| m.rank == rank) {
            Some(_) if rank == 0 => Ok(topology::offered()),
            Some(m) => Ok(m.targets.clone()),
            None => Err(input(format!("no manager {rank}: the workbench has {} (ranks from 0)", self.managers.len()))),
        }
    }

    /// Stops the run going, if any, and lets it save, unless `leave` says not to wait.
    pub fn end(&self, leave: &dyn Fn() -> bool) {
        self.runs.end(leave);
    }

    /// Whether the request carries the token.
    fn authorised(&self, head: &Parts) -> bool {
        let bearer =
            head.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        let query = query(head, "token");
        [bearer.map(str::to_string), query].iter().flatten().any(|t| same(t.as_bytes(), self.token.as_bytes()))
    }

    /// The history runs save into; None where none has been saved yet.
    fn history(&self) -> Result<Option<History>> {
        let path = history::path_of(self.db.as_deref())?;
        if !path.exists() {
            return Ok(None);
        }
        History::open_existing(&path).map(Some)
    }

    /// The history, where something has been saved.
    fn saved(&self) -> Result<History> {
        self.history()?.ok_or_else(|| input("nothing has been saved in the history yet"))
    }

    /// The document saved under `id`.
    fn document(&self, id: &str) -> Result<Document> {
        self.saved()?.document(number(id)?)
    }

    /// The answer to an authorised call.
    fn call(&self, method: &Method, path: &str, head: &Parts, body: &[u8]) -> Answer {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        match (method, segs.as_slice()) {
            (&Method::GET, ["api", "host"]) => json(&serde_json::json!({
                "host": crate::host::name(),
                "cpus": std::thread::available_parallelism().map_or(1, |n| n.get()),
                "version": env!("CARGO_PKG_VERSION"),
                "managers": self.managers.iter().map(|m| serde_json::json!({ "rank": m.rank, "host": m.host, "cpus": m.cpus })).collect::<Vec<_>>(),
            })),
            (&Method::GET, ["api", "settings"]) => json(
                &crate::config::KEYS
                    .iter()
                    .map(|k| {
                        serde_json::json!({ "name": k.name, "default": k.default, "summary": k.summary(), "meaning": k.meaning() })
                    })
                    .collect::<Vec<_>>(),
            ),
            (&Method::GET, ["api", "targets"]) => {
                let rank = query(head, "rank").map_or(Ok(0), |r| number(&r))?;
                let rank = u32::try_from(rank).map_err(|_| input(format!("rank {rank}: no such manager")))?;
                json(&self.targets_of(rank)?)
            }
            (&Method::POST, ["api", "targets", "inspect"]) => self.inspect(body),
            (&Method::GET, ["api", "specs"]) => json(&crate::spec::builtin()),
            (&Method::POST, ["api", "specs", "file"]) => {
                #[derive(Deserialize)]
                struct Specs {
                    specs: Vec<crate::spec::AccessSpec>,
                }
                json(&serde_json::json!({ "toml": crate::job::specs_toml(&parse::<Specs>(body)?.specs)? }))
            }
            (&Method::POST, ["api", "specs", "read"]) => {
                let f: File = parse(body)?;
                json(&crate::job::parse_specs(&f.text, &f.name)?)
            }
            (&Method::GET, ["api", "studies"]) => json(
                &crate::study::builtin::BUILTINS
                    .iter()
                    .map(|(name, about)| serde_json::json!({ "name": name, "about": about }))
                    .collect::<Vec<_>>(),
            ),
            (&Method::POST, ["api", "studies", name]) => {
                #[derive(Deserialize)]
                struct On {
                    #[serde(default)]
                    targets: Vec<TargetName>,
                    dir: Option<String>,
                    total: Option<u64>,
                }
                let on: On = parse(body)?;
                self.remember(&on.targets);
                let given =
                    crate::study::builtin::Given { targets: &on.targets, dir: on.dir.as_deref(), total: on.total };
                job_answer(crate::study::builtin::builtin(name, &given)?)
            }
            (&Method::POST, ["api", "job"]) => {
                #[derive(Deserialize)]
                struct Build {
                    job: Job,
                }
                let job = parse::<Build>(body)?.job;
                self.remember(job.workers.iter().flat_map(|w| &w.targets));
                job_answer(checked(&toml_of(&job)?)?)
            }
            (&Method::POST, ["api", "job", "read"]) => {
                let f: File = parse(body)?;
                let job = read(&f.name, &f.text)?;
                self.remember(job.workers.iter().flat_map(|w| &w.targets));
                job_answer(job)
            }
            (&Method::POST, ["api", "runs"]) => self.start(body),
            (&Method::GET, ["api", "runs", id]) => {
                let id = if *id == "current" { 0 } else { number(id)? as u64 };
                self.state(id, query(head, "after").and_then(|a| a.parse().ok()).unwrap_or(0))
            }
            (&Method::POST, ["api", "runs", id, "stop"]) => match self.runs.stop(number(id)? as u64) {
                true => Ok(with_status(StatusCode::ACCEPTED, json(&serde_json::json!({ "stopping": true }))?)),
                false => Err(Failure::Status(StatusCode::CONFLICT, format!("run {id} is not going"))),
            },
            (&Method::GET, ["api", "history"]) => {
                let limit = query(head, "limit").and_then(|n| n.parse().ok()).or(Some(100));
                match self.history()? {
                    Some(h) => json(&h.list(&Filter { limit, ..Filter::default() })?),
                    None => json(&serde_json::json!([])),
                }
            }
            (&Method::GET, ["api", "history", id]) => {
                Ok(reply(StatusCode::OK, "application/json", self.saved()?.document_bytes(number(id)?)?))
            }
            (&Method::GET, ["api", "history", id, "job"]) => {
                let job = match self.document(id)? {
                    Document::Run(d) => d.config.clone(),
                    Document::Study(d) => d.config.clone(),
                };
                job_answer(job)
            }
            (&Method::GET, ["api", "history", id, "report"]) => {
                let doc = self.document(id)?;
                let inputs = [crate::report::Input { label: format!("#{id}"), doc }];
                let rep = crate::report::build(&format!("iogauge #{id}"), &inputs, Default::default());
                Ok(reply(StatusCode::OK, "text/html; charset=utf-8", rep.html.into_bytes()))
            }
            (&Method::GET, ["api", "compare"]) => {
                let ids = [query(head, "a"), query(head, "b")];
                let [Some(a), Some(b)] = ids.map(|i| i.and_then(|i| i.parse::<i64>().ok())) else {
                    return Err(input("compare needs two history ids: ?a=ID&b=ID").into());
                };
                let (da, db) = (self.document(&a.to_string())?, self.document(&b.to_string())?);
                let text = crate::compare::text([&format!("#{a}"), &format!("#{b}")], &da, &db, Default::default())?;
                json(&serde_json::json!({ "text": text }))
            }
            _ => Err(Failure::Status(
                StatusCode::NOT_FOUND,
                format!("no such call: {method} {path} (docs/ui.md lists them)"),
            )),
        }
    }
}

impl Handler for Api {
    fn respond(&self, head: &Parts, body: &[u8]) -> Reply {
        let path = head.uri.path();
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
        if head.method == Method::GET && path == "/" {
            return reply(
                StatusCode::OK,
                "text/html; charset=utf-8",
                crate::report::html::app("iogauge workbench", PAGE).into_bytes(),
            );
        }
        match self.call(&head.method, path, head, body) {
            Ok(r) => r,
            Err(Failure::Status(status, why)) => refused(status, &why),
            Err(Failure::Error(e)) => {
                let status =
                    if e.exit_code() == 2 { StatusCode::BAD_REQUEST } else { StatusCode::INTERNAL_SERVER_ERROR };
                refused(status, &e.to_string())
            }
        }
    }

    fn blocks(&self) -> bool {
        true
    }
}

/// A file the user loaded in the page: its name and text.
#[derive(Deserialize)]
struct File {
    name: String,
    text: String,
}

/// Equal, in a time that does not depend on where they first differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

impl Api {
    /// Whether the request's `Host` names this workbench, as Jupyter checks it: `localhost` or
    /// a loopback address where it listens on the loopback; elsewhere also any address, or
    /// this host's name as `hostname` says it. A page of another site whose name a DNS server
    /// points at this machine (a DNS rebinding) names that site, and is refused.
    fn named_host(&self, head: &Parts) -> bool {
        let Some(host) = head.headers.get(HOST).and_then(|v| v.to_str().ok()) else { return false };
        // HOST[:PORT], an IPv6 address in brackets.
        let name = match host.strip_prefix('[') {
            Some(v6) => v6.split_once(']').map_or(v6, |(a, _)| a),
            None => host.rsplit_once(':').map_or(host, |(h, _)| h),
        };
        let ip = name.parse::<IpAddr>().ok();
        let loopback = name.eq_ignore_ascii_case("localhost") || ip.is_some_and(|a| a.is_loopback());
        if self.listen.is_loopback() {
            return loopback;
        }
        loopback || ip.is_some() || name.eq_ignore_ascii_case(&crate::host::name())
    }
}

/// A request with no `Origin`, or one naming the host it was sent to (the page's own calls).
fn same_origin(head: &Parts) -> bool {
    let Some(origin) = head.headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else { return true };
    let host = head.headers.get(HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    origin.strip_prefix("http://").is_some_and(|o| o == host)
}

fn query(head: &Parts, key: &str) -> Option<String> {
    head.uri.query()?.split('&').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')).map(str::to_string)
}

fn number(text: &str) -> Result<i64> {
    text.parse().map_err(|_| input(format!("{text}: not a number")))
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| input(format!("the request's JSON: {e}")))
}

fn json<T: serde::Serialize>(v: &T) -> Answer {
    Ok(reply(StatusCode::OK, "application/json", serde_json::to_vec(v).expect("answers serialise")))
}

fn with_status(status: StatusCode, mut r: Reply) -> Reply {
    *r.status_mut() = status;
    r
}

/// A call's answer, or why it failed.
type Answer = std::result::Result<Reply, Failure>;

/// Why a call failed: an error of its class (input: 400; else 500), or a status of its own.
enum Failure {
    Error(Error),
    Status(StatusCode, String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

/// An error's answer; a URL it quotes (a parser's message, say) loses its password.
fn refused(status: StatusCode, why: &str) -> Reply {
    let why = crate::net::without_passwords(why);
    reply(status, "application/json", serde_json::to_vec(&serde_json::json!({ "error": why })).expect("serialises"))
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A target being inspected: its place among the [`INSPECTIONS`], given back on drop.
struct Inspection<'a>(&'a AtomicUsize);

impl Drop for Inspection<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A job as TOML, as `iogauge convert` writes it: its targets named without their passwords.
fn toml_of(job: &Job) -> Result<String> {
    crate::job::to_toml(job).map_err(|e| input(format!("the job cannot be written as TOML: {e}")))
}

/// A job as TOML for the run's own process, each target's password put back into its URL
/// (that process takes it out again as it reads the job): handed to it on a pipe, never
/// answered.
fn toml_logging_in(job: &Job) -> Result<String> {
    let bad = |e: &dyn std::fmt::Display| input(format!("the job cannot be written as TOML: {e}"));
    let mut table = toml::Table::try_from(job).map_err(|e| bad(&e))?;
    if let Some(toml::Value::Array(workers)) = table.get_mut("worker") {
        for (w, entry) in job.workers.iter().zip(workers) {
            if let Some(toml::Value::Array(targets)) = entry.get_mut("targets") {
                for (t, v) in w.targets.iter().zip(targets) {
                    *v = toml::Value::String(t.with_secret());
                }
            }
        }
    }
    crate::job::to_toml(&table).map_err(|e| bad(&e))
}

/// A job started from the page with the files it names by relative paths (a replayed trace,
/// a `[storage]` baseline) found where the workbench runs, as its checks found them, not
/// beside the run's job text, which has no directory of its own.
fn from_here(mut job: Job) -> Result<Job> {
    let here = std::env::current_dir().map_err(|e| input(format!("the workbench's working directory: {e}")))?;
    for r in job.workers.iter_mut().filter_map(|w| w.replay.as_mut()) {
        r.trace = here.join(r.trace.strip_prefix(".").unwrap_or(&r.trace));
    }
    if let Some(b) = job.storage.as_mut().and_then(|s| s.baseline.as_mut()) {
        *b = here.join(&*b).display().to_string();
    }
    Ok(job)
}

/// Job-file text read and checked as `iogauge run` reads a job file.
fn checked(text: &str) -> Result<Job> {
    crate::job::parse(text, "job")
}

/// A job and its TOML, its targets named without their passwords.
fn job_answer(job: Job) -> Answer {
    let toml = toml_of(&job)?;
    json(&serde_json::json!({ "job": job, "toml": toml }))
}

/// A job file as the user loaded it: iogauge's TOML, an Iometer `.icf` or a fio job file.
fn read(name: &str, text: &str) -> Result<Job> {
    let import = Import::default();
    let job = match Format::of(Path::new(name), text) {
        Format::Toml => return checked(text),
        Format::Icf => icf::parse(text, name, &import)?.0,
        Format::Fio => fio::parse(text, Path::new(name), &import).map_err(input)?.0,
    };
    checked(&toml_of(&job)?)
}
