//! The workbench's HTTP answers: the page, and the JSON calls it makes, which scripts may make
//! too (docs/ui.md lists them). Every call carries the token `iogauge ui` printed, in an
//! `Authorization: Bearer TOKEN` header (or, for a link the browser opens, `?token=TOKEN`);
//! without it the answer is 403 and nothing is done. A call from a page of another origin is
//! refused too, token or not.

use std::path::{Path, PathBuf};

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

/// The page: its markup, styles and script, inline.
const PAGE: &str = include_str!("page.html");

/// What answers the workbench's requests.
pub struct Api {
    token: String,
    db: Option<PathBuf>,
    runs: Runs,
    /// Every manager, by rank; this one (the lead) is the first.
    managers: Vec<ManagerView>,
}

impl Api {
    /// The answers for the token `token`, the history `db` (None: the default one), runs made
    /// by `maker`, showing `managers`.
    pub fn new(token: String, db: Option<PathBuf>, maker: Maker, managers: Vec<ManagerView>) -> Api {
        let runs = Runs::new(maker, db.clone());
        Api { token, db, runs, managers }
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
                json(&self.targets_of(query(head, "rank").map_or(Ok(0), |r| number(&r))? as u32)?)
            }
            (&Method::POST, ["api", "targets", "inspect"]) => {
                #[derive(Deserialize)]
                struct Ask {
                    path: String,
                }
                json(&topology::inspect(&parse::<Ask>(body)?.path)?)
            }
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
                    targets: Vec<String>,
                    dir: Option<String>,
                    total: Option<u64>,
                }
                let on: On = parse(body)?;
                let given =
                    crate::study::builtin::Given { targets: &on.targets, dir: on.dir.as_deref(), total: on.total };
                job_answer(crate::study::builtin::builtin(name, &given)?)
            }
            (&Method::POST, ["api", "job"]) => {
                #[derive(Deserialize)]
                struct Build {
                    job: Job,
                }
                job_answer(checked(&toml_of(&parse::<Build>(body)?.job)?)?)
            }
            (&Method::POST, ["api", "job", "read"]) => {
                let f: File = parse(body)?;
                job_answer(read(&f.name, &f.text)?)
            }
            (&Method::POST, ["api", "runs"]) => {
                #[derive(Deserialize)]
                struct Start {
                    job: String,
                }
                let text = parse::<Start>(body)?.job;
                let job = checked(&text)?;
                let kind = if job.study.is_some() || job.fs.is_some() { Kind::Study } else { Kind::Run };
                let id = self.runs.start(kind, text).map_err(|e| match e {
                    Error::Input(m) => Failure::Status(StatusCode::CONFLICT, m),
                    e => e.into(),
                })?;
                Ok(with_status(StatusCode::ACCEPTED, json(&serde_json::json!({ "id": id, "kind": kind }))?))
            }
            (&Method::GET, ["api", "runs", id]) => {
                let id = if *id == "current" { 0 } else { number(id)? as u64 };
                let after = query(head, "after").and_then(|a| a.parse().ok()).unwrap_or(0);
                match self.runs.state(id, after) {
                    Some(s) => json(&s),
                    None => Err(Failure::Status(
                        StatusCode::NOT_FOUND,
                        format!("no run {id}: start one with POST /api/runs"),
                    )),
                }
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

fn refused(status: StatusCode, why: &str) -> Reply {
    reply(status, "application/json", serde_json::to_vec(&serde_json::json!({ "error": why })).expect("serialises"))
}

/// A job as TOML, as `iogauge convert` writes it.
fn toml_of(job: &Job) -> Result<String> {
    toml::to_string(&job.without_secrets()).map_err(|e| input(format!("the job cannot be written as TOML: {e}")))
}

/// Job-file text read and checked as `iogauge run` reads a job file.
fn checked(text: &str) -> Result<Job> {
    crate::job::parse(text, "job")
}

/// A job and its TOML.
fn job_answer(job: Job) -> Answer {
    let toml = toml_of(&job)?;
    json(&serde_json::json!({ "job": job.without_secrets(), "toml": toml }))
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
