//! The workbench's HTTP answers: the page, and the JSON calls it makes, which scripts may make
//! too (docs/ui.md lists them; [`super::routes`] answers each). Every call carries the token
//! `iogauge ui` printed, in an `Authorization: Bearer TOKEN` header (or, for a link the browser
//! opens, `?token=TOKEN`); without it the answer is 403 and nothing is done. A call from a page
//! of another origin is refused too, token or not, and so is one whose `Host` is another
//! site's (a DNS rebinding).
//!
//! A target's password, typed in its URL (or in a job the page loads), is taken out as the
//! request is read: every answer names the target without it. The workbench keeps it, in
//! memory, for the runs it starts that name that target ([`Api::remember`]).

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use hyper::StatusCode;
use hyper::header::{AUTHORIZATION, HOST, ORIGIN};
use hyper::http::request::Parts;
use serde::de::DeserializeOwned;

use super::run::{Maker, Runs};
use super::topology::{self, ManagerView};
use crate::config::Job;
use crate::document::Document;
use crate::error::{Error, Result, input};
use crate::history::{self, History};
use crate::http::{Reply, reply};
use crate::import::{Format, Import, fio, icf};
use crate::net::TargetName;

/// Calls that read files or targets a request names (an inspection, a job, a spec file) at
/// once; one more is refused. A server that does not answer holds a thread of the server's
/// pool (4) for io_timeout, a FIFO until a writer comes: two leave two for every other call,
/// Stop among them.
pub(super) const READING_CALLS: usize = 2;

/// What answers the workbench's requests.
pub struct Api {
    token: String,
    db: Option<PathBuf>,
    pub(super) runs: Runs,
    /// Every manager, by rank; this one (the lead) is the first.
    pub(super) managers: Vec<ManagerView>,
    /// The address it listens on: which `Host` a request may name.
    listen: IpAddr,
    /// Every target named with a password in a request, that password kept for the runs
    /// started here that name the target without one ([`Api::remember`]).
    passwords: Mutex<Vec<TargetName>>,
    /// The last run started: its id and its job as the API shows it (without passwords).
    pub(super) shown: Mutex<Option<(u64, String)>>,
    /// Calls reading what their request names, now.
    reading: AtomicUsize,
}

impl Api {
    /// The answers for the token `token`, the history `db` (None: the default one), runs made
    /// by `maker`, showing `managers`, listening on `listen`.
    pub fn new(token: String, db: Option<PathBuf>, maker: Maker, managers: Vec<ManagerView>, listen: IpAddr) -> Api {
        let runs = Runs::new(maker, db.clone());
        let (passwords, shown, reading) = (Mutex::default(), Mutex::default(), AtomicUsize::new(0));
        Api { token, db, runs, managers, listen, passwords, shown, reading }
    }

    /// Keeps the passwords `names` carry, each for its target's name (a later one for the
    /// same name replaces it).
    pub(super) fn remember<'a>(&self, names: impl IntoIterator<Item = &'a TargetName>) {
        let mut kept = lock(&self.passwords);
        for n in names.into_iter().filter(|n| n.secret().is_some()) {
            kept.retain(|k| k.as_str() != n.as_str());
            kept.push(n.clone());
        }
    }

    /// `job`'s targets, each with the password kept for its name if its URL gave none: the
    /// job a run started here logs in with.
    pub(super) fn with_passwords(&self, mut job: Job) -> Job {
        let kept = lock(&self.passwords);
        for t in job.workers.iter_mut().flat_map(|w| w.targets.iter_mut()) {
            *t = kept.iter().fold(std::mem::take(t), |t, k| t.or_secret_of(k));
        }
        job
    }

    /// A place among the [`READING_CALLS`] under way, given back on drop; refused beyond.
    pub(super) fn reading(&self) -> std::result::Result<Reading<'_>, Failure> {
        if self.reading.fetch_add(1, Ordering::SeqCst) >= READING_CALLS {
            self.reading.fetch_sub(1, Ordering::SeqCst);
            return Err(Failure::Status(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{READING_CALLS} calls are reading files or targets (a server that does not answer takes up \
                     to io_timeout, a FIFO until it is written): try again when one has answered"
                ),
            ));
        }
        Ok(Reading(&self.reading))
    }

    /// The targets manager `rank` offers: this host's as they are now, another's as it
    /// described them when the workbench started.
    pub(super) fn targets_of(&self, rank: u32) -> Result<Vec<topology::Offered>> {
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
    pub(super) fn authorised(&self, head: &Parts) -> bool {
        let bearer =
            head.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        let query = query(head, "token");
        [bearer.map(str::to_string), query].iter().flatten().any(|t| same(t.as_bytes(), self.token.as_bytes()))
    }

    /// The history runs save into; None where none has been saved yet.
    pub(super) fn history(&self) -> Result<Option<History>> {
        let path = history::path_of(self.db.as_deref())?;
        if !path.exists() {
            return Ok(None);
        }
        History::open_existing(&path).map(Some)
    }

    /// The history, where something has been saved.
    pub(super) fn saved(&self) -> Result<History> {
        self.history()?.ok_or_else(|| input("nothing has been saved in the history yet"))
    }

    /// The document saved under `id`.
    pub(super) fn document(&self, id: &str) -> Result<Document> {
        self.saved()?.document(number(id)?)
    }

    /// Whether the request's `Host` names this workbench, as Jupyter checks it: `localhost` or
    /// a loopback address where it listens on the loopback; elsewhere also any address, or
    /// this host's name as `hostname` says it. A page of another site whose name a DNS server
    /// points at this machine (a DNS rebinding) names that site, and is refused.
    pub(super) fn named_host(&self, head: &Parts) -> bool {
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

/// Equal, in a time that does not depend on where they first differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A request with no `Origin`, or one naming the host it was sent to (the page's own calls).
pub(super) fn same_origin(head: &Parts) -> bool {
    let Some(origin) = head.headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else { return true };
    let host = head.headers.get(HOST).and_then(|v| v.to_str().ok()).unwrap_or("");
    origin.strip_prefix("http://").is_some_and(|o| o == host)
}

/// The value of `key` in the request's query string.
pub(super) fn query(head: &Parts, key: &str) -> Option<String> {
    head.uri.query()?.split('&').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')).map(str::to_string)
}

/// A number given in a path or a query.
pub(super) fn number(text: &str) -> Result<i64> {
    text.parse().map_err(|_| input(format!("{text}: not a number")))
}

/// A request's body as its type.
pub(super) fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    serde_json::from_slice(body).map_err(|e| input(format!("the request's JSON: {e}")))
}

/// `v` as a JSON answer.
pub(super) fn json<T: serde::Serialize>(v: &T) -> Answer {
    Ok(reply(StatusCode::OK, "application/json", serde_json::to_vec(v).expect("answers serialise")))
}

/// `r` with the status `status`.
pub(super) fn with_status(status: StatusCode, mut r: Reply) -> Reply {
    *r.status_mut() = status;
    r
}

/// A call's answer, or why it failed.
pub(super) type Answer = std::result::Result<Reply, Failure>;

/// Why a call failed: an error of its class (input: 400; else 500), or a status of its own,
/// with what else the answer holds beside its `error` line.
pub(super) enum Failure {
    Error(Error),
    Status(StatusCode, String),
    Detailed(StatusCode, String, serde_json::Map<String, serde_json::Value>),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::Error(e)
    }
}

impl Failure {
    /// The answer: `{"error": "one line", ...}`.
    pub(super) fn reply(self) -> Reply {
        let (status, why, more) = match self {
            Failure::Status(status, why) => (status, why, serde_json::Map::new()),
            Failure::Detailed(status, why, more) => (status, why, more),
            Failure::Error(e) => {
                let status =
                    if e.exit_code() == 2 { StatusCode::BAD_REQUEST } else { StatusCode::INTERNAL_SERVER_ERROR };
                (status, e.to_string(), serde_json::Map::new())
            }
        };
        let mut body = more;
        // One line, as the command line's: whatever a name in the request held.
        let why = crate::format::visible(&crate::net::without_passwords(&why)).into_owned();
        body.insert("error".into(), why.into());
        reply(status, "application/json", serde_json::to_vec(&body).expect("serialises"))
    }
}

/// An error's answer; a URL it quotes (a parser's message, say) loses its password.
pub(super) fn refused(status: StatusCode, why: &str) -> Reply {
    Failure::Status(status, why.to_string()).reply()
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A call reading what its request names: its place among the [`READING_CALLS`], given back
/// on drop.
pub(super) struct Reading<'a>(&'a AtomicUsize);

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A job as TOML, as `iogauge convert` writes it: its targets named without their passwords.
pub(super) fn toml_of(job: &Job) -> Result<String> {
    crate::job::to_toml(job).map_err(|e| input(format!("the job cannot be written as TOML: {e}")))
}

/// A job as TOML for the run's own process, each target's password put back into its URL
/// (that process takes it out again as it reads the job): handed to it on a pipe, never
/// answered.
pub(super) fn toml_logging_in(job: &Job) -> Result<String> {
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
pub(super) fn from_here(mut job: Job) -> Result<Job> {
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
pub(super) fn checked(text: &str) -> Result<Job> {
    crate::job::parse(text, "job")
}

/// A job and its TOML, its targets named without their passwords.
pub(super) fn job_answer(job: Job) -> Answer {
    let toml = toml_of(&job)?;
    json(&serde_json::json!({ "job": job, "toml": toml }))
}

/// A job file as the user loaded it: iogauge's TOML, an Iometer `.icf` (its targets given
/// Linux paths by `import`) or a fio job file.
pub(super) fn read(name: &str, text: &str, import: &Import) -> Result<Job> {
    let job = match Format::of(Path::new(name), text) {
        Format::Toml => return checked(text),
        Format::Icf => icf::parse(text, name, import)?.0,
        Format::Fio => fio::parse(text, Path::new(name), import).map_err(input)?.0,
    };
    checked(&toml_of(&job)?)
}
