//! The workbench's run: one `iogauge run` or `iogauge study` at a time, started as a child of
//! this process (the binary itself), given the job's TOML on its stdin and followed through its
//! `--live-json` lines. The child is the command line's own path: it refuses what the command
//! line refuses, saves its result to the history, and stops as on Ctrl-C (SIGINT), keeping
//! what it measured. Under MPI the run is every rank's, in this process: the lead's main
//! thread takes it from a queue and hands it to every rank ([`super::serve`]), its live lines
//! come through a pipe, and Stop asks it as Ctrl-C does.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Ended, Order};

use crate::error::{Result, input, runtime};

/// The recent lines kept (an hour at 1 s).
const KEPT_LINES: usize = 3600;
/// The end of the child's messages kept.
const KEPT_MESSAGES: usize = 64 << 10;
/// How long the workbench, when it ends, waits for a run it stopped to save its result, beyond
/// the run's own bound: stopped at once, its I/Os in flight get `io_timeout` to complete
/// (then they are given up), and a study's next point may wait that long for its server.
const END_GRACE: Duration = Duration::from_secs(60);

/// How long, after a child's exit, its last words are waited for (see `spawn`).
const READ_AFTER_EXIT: Duration = Duration::from_secs(5);

/// Which command runs the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `iogauge run`: a test.
    Run,
    /// `iogauge study`: a job with a `[study]` or `[fs]` section.
    Study,
}

/// What a run has said so far.
#[derive(Debug, Clone, Default, Serialize)]
struct Said {
    /// Its `--live-json` lines, numbered from 1, the last [`KEPT_LINES`].
    lines: Vec<(u64, serde_json::Value)>,
    seq: u64,
    /// The end of its messages (stderr).
    messages: String,
    /// Its exit status, once it has ended (128 + N: killed by signal N).
    exit_status: Option<i32>,
    /// The history id it saved its result under.
    history_id: Option<i64>,
    /// How many times the user asked it to stop: 1, it stops (a study's point too), keeping
    /// what it measured; 2, at once, giving up the I/Os in flight. Never more: a third signal
    /// would end the command without saving.
    stops: u8,
    /// A run of the ranks: the main thread has taken it (a stop asked before is its end).
    taken: bool,
}

/// One run, started by [`Runs::start`].
struct Run {
    id: u64,
    kind: Kind,
    toml: String,
    /// The job's `io_timeout`: what bounds its end once stopped.
    io_timeout: Duration,
    /// The child's pid; none for a run of the ranks in this process.
    pid: Option<u32>,
    said: Arc<Mutex<Said>>,
}

/// A run for the lead's main thread to make (under MPI): its order, the pipe its live lines
/// go into, and what it has said so far.
pub struct Queued {
    /// What to run.
    pub order: Order,
    /// The write end of the pipe its live lines are read from.
    pub live: File,
    said: Arc<Mutex<Said>>,
}

impl Queued {
    /// The run, now taken by the main thread; None if it was stopped before (and ended then).
    pub fn take(self) -> Option<Queued> {
        let mut s = lock(&self.said);
        if s.stops > 0 {
            return None;
        }
        s.taken = true;
        drop(s);
        Some(self)
    }

    /// Records how the run ended; its live lines end with the pipe.
    pub fn ended(self, e: Ended) {
        let Queued { live, said, .. } = self;
        drop(live);
        let mut s = lock(&said);
        s.messages.push_str(&e.message);
        s.history_id = e.history_id;
        s.exit_status = Some(e.exit_status);
    }
}

/// How runs are made.
pub enum Maker {
    /// A child process of the binary.
    Child(PathBuf),
    /// By every rank, in this process: queued for the lead's main thread; `stop` asks the run
    /// going to stop.
    Ranks {
        /// Where runs wait for the main thread.
        queue: mpsc::Sender<Queued>,
        /// Asks the run going to stop: 1, as SIGTERM does (a study's point too); 2, at once.
        stop: fn(u8),
    },
}

/// The state of a run, as the API gives it.
#[derive(Debug, Serialize)]
pub struct State {
    /// The run's number since the workbench started, from 1.
    pub id: u64,
    /// `run` or `study`.
    pub kind: Kind,
    /// `running`, `stopping` (what is measured is kept), `stopping_now` (the I/Os in flight
    /// are given up) or `ended`.
    pub state: &'static str,
    /// The job it runs (TOML).
    pub job: String,
    /// The live lines after the one asked for.
    pub lines: Vec<serde_json::Value>,
    /// The number of the last line (ask for those after it next).
    pub seq: u64,
    /// What it printed on stderr (warnings, errors, where it saved).
    pub messages: String,
    /// Once ended: 0, 1 (an I/O or runtime failure), 2 (the job was refused: nothing was
    /// written), 130 (stopped).
    pub exit_status: Option<i32>,
    /// The history entry of its result.
    pub history_id: Option<i64>,
}

/// The workbench's runs: the current or last one.
pub struct Runs {
    maker: Maker,
    db: Option<PathBuf>,
    last: Mutex<Option<Run>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Runs {
    /// Runs made by `maker`, saving into the history `db` (None: the default one).
    pub fn new(maker: Maker, db: Option<PathBuf>) -> Runs {
        Runs { maker, db, last: Mutex::new(None) }
    }

    /// Starts the job `toml` (already checked) with `kind`'s command, unless a run is going.
    pub fn start(&self, kind: Kind, toml: String) -> Result<u64> {
        let mut last = lock(&self.last);
        if last.as_ref().is_some_and(|r| lock(&r.said).exit_status.is_none()) {
            return Err(input("a run is going: stop it first, or wait for its end"));
        }
        let id = last.as_ref().map_or(1, |r| r.id + 1);
        let said = Arc::new(Mutex::new(Said::default()));
        let pid = match &self.maker {
            Maker::Child(exe) => Some(self.spawn(exe, kind, &toml, &said)?),
            Maker::Ranks { queue, .. } => {
                let (lines, live) = pipe().map_err(|e| runtime(format!("no pipe for the live lines: {e}")))?;
                read_lines(lines, &said);
                let order = Order { kind, toml: toml.clone(), db: self.db.clone() };
                queue
                    .send(Queued { order, live, said: Arc::clone(&said) })
                    .map_err(|_| runtime("the workbench is ending: no run is started"))?;
                None
            }
        };
        let io_timeout =
            crate::job::parse(&toml, "the workbench's job").map_or(Duration::from_secs(30), |j| j.test.io_timeout);
        *last = Some(Run { id, kind, toml, io_timeout, pid, said });
        Ok(id)
    }

    /// Starts `kind`'s command on the job `toml` as a child, followed into `said`: its pid.
    fn spawn(&self, exe: &Path, kind: Kind, toml: &str, said: &Arc<Mutex<Said>>) -> Result<u32> {
        // A group of its own: Ctrl-C at the workbench's terminal reaches the workbench, which
        // asks the run to stop once (a second SIGINT would give up the I/Os in flight).
        let mut child = self
            .command(exe, kind)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| runtime(format!("cannot start {}: {e}", exe.display())))?;
        let mut stdin = child.stdin.take().expect("piped");
        // A job is far smaller than a pipe's buffer; a child that died at once leaves EPIPE,
        // and its exit status says why.
        let _ = stdin.write_all(toml.as_bytes());
        drop(stdin);
        let readers = follow(&mut child, said);
        let pid = child.id();
        let waiter = Arc::clone(said);
        std::thread::spawn(move || reap(child, readers, &waiter));
        Ok(pid)
    }

    /// The command line of `kind`'s command, reading its job from stdin.
    fn command(&self, exe: &Path, kind: Kind) -> Command {
        let mut cmd = Command::new(exe);
        cmd.arg(match kind {
            Kind::Run => "run",
            Kind::Study => "study",
        });
        // The job on stdin: the workbench writes no file of its own.
        cmd.args(["/dev/stdin", "--live-json", "-"]);
        if let Some(db) = &self.db {
            cmd.arg("--db").arg(db);
        }
        // One manager, this host, even when the workbench is a rank of an MPI job; and not held
        // to the CPUs the launcher bound the workbench to (Open MPI binds a rank to one core by
        // default), which were its choice for the page's server, not the user's for the test.
        if crate::managers::launched_rank().is_some() {
            for var in crate::managers::launcher_vars() {
                cmd.env_remove(var);
            }
            let host = crate::host::cpu::cpu_set(&crate::host::placement::online_cpus());
            // SAFETY: sched_setaffinity is async-signal-safe and reads the set, made before the
            // fork and moved into the closure.
            unsafe {
                cmd.pre_exec(move || {
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &host);
                    Ok(())
                });
            }
        }
        cmd
    }

    /// Asks the run `id` to stop: the first time it stops (a study at its point), keeping what
    /// it measured, as SIGTERM makes the command line's; the second, at once, giving up the
    /// I/Os in flight; later asks change nothing. False if it is not the one going.
    pub fn stop(&self, id: u64) -> bool {
        let last = lock(&self.last);
        let Some(r) = last.as_ref().filter(|r| r.id == id) else { return false };
        let mut said = lock(&r.said);
        if said.exit_status.is_some() {
            return false;
        }
        if said.stops >= 2 {
            return true;
        }
        said.stops += 1;
        let signal = if said.stops == 1 { libc::SIGTERM } else { libc::SIGINT };
        match (&self.maker, r.pid) {
            // SAFETY: kill(2) of a child not yet reaped: the waiter reaps it only under this
            // lock, and sets exit_status, checked above, as it does.
            (Maker::Child(_), Some(pid)) => unsafe {
                libc::kill(pid as libc::pid_t, signal);
            },
            (Maker::Ranks { stop, .. }, _) if said.taken => stop(said.stops),
            // Not started: it never will be (Queued::take).
            _ => {
                said.messages.push_str("iogauge: stopped before it started\n");
                said.exit_status = Some(crate::error::Error::Stopped.exit_code());
            }
        }
        true
    }

    /// The run `id` (0: the current or last one) and its lines after `after`.
    pub fn state(&self, id: u64, after: u64) -> Option<State> {
        let last = lock(&self.last);
        let r = last.as_ref().filter(|r| id == 0 || r.id == id)?;
        let said = lock(&r.said);
        let state = match (said.exit_status, said.stops) {
            (Some(_), _) => "ended",
            (None, 0) => "running",
            (None, 1) => "stopping",
            (None, _) => "stopping_now",
        };
        Some(State {
            id: r.id,
            kind: r.kind,
            state,
            job: r.toml.clone(),
            lines: said.lines.iter().filter(|(n, _)| *n > after).map(|(_, l)| l.clone()).collect(),
            seq: said.seq,
            messages: said.messages.clone(),
            exit_status: said.exit_status,
            history_id: said.history_id,
        })
    }

    /// Stops the run going, if any, and waits for it to save: as long as its own bound
    /// (`io_timeout` twice, and [`END_GRACE`]), or until `leave` says not to wait. A child left
    /// behind finishes on its own: it needs nothing of the workbench (a pipe whose reader went
    /// away only loses what would have gone there) and saves its result.
    pub fn end(&self, leave: &dyn Fn() -> bool) {
        let going = lock(&self.last).as_ref().map(|r| (r.id, r.io_timeout));
        let Some((id, io_timeout)) = going else { return };
        if self.state(id, u64::MAX).is_some_and(|s| s.state == "running") {
            self.stop(id);
        }
        let until = Instant::now() + io_timeout * 2 + END_GRACE;
        while self.state(id, u64::MAX).is_some_and(|s| s.exit_status.is_none()) {
            if leave() || Instant::now() > until {
                say!("run {id} is left to finish on its own: it saves its result in the history");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Waits for the child's end, then says it in `said` once `readers` have read its last words.
fn reap(mut child: Child, readers: [JoinHandle<()>; 2], said: &Mutex<Said>) {
    let pid = child.id();
    // Waits for the end without reaping, then reaps under the lock: `stop` never signals a
    // pid that could already belong to another process.
    // SAFETY: waitid writes into the zeroed siginfo it is given.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT);
    }
    // What it wrote last (the history id it was saved under) is read before its end is said:
    // on a loaded host a reader can run well after the exit. A pipe held open by something the
    // child left running ends the wait after a few seconds.
    let until = Instant::now() + READ_AFTER_EXIT;
    while readers.iter().any(|r| !r.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut said = lock(said);
    let status = child.wait().map_or(1, |s| {
        use std::os::unix::process::ExitStatusExt;
        s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
    });
    said.exit_status = Some(status);
}

/// Reads the child's stdout (its live lines) and stderr (its messages) into `said`, each on a
/// thread that ends with the child's end of the pipe: the two threads.
fn follow(child: &mut Child, said: &Arc<Mutex<Said>>) -> [JoinHandle<()>; 2] {
    let lines = read_lines(child.stdout.take().expect("piped"), said);
    let mut err = child.stderr.take().expect("piped");
    let s = Arc::clone(said);
    let messages = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut pending = String::new();
        while let Ok(n @ 1..) = err.read(&mut buf) {
            pending.push_str(&String::from_utf8_lossy(&buf[..n]));
            let mut s = lock(&s);
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                if let Some(id) = crate::history::saved_id(&line) {
                    s.history_id = Some(id);
                }
                s.messages.push_str(&line);
            }
            if s.messages.len() > KEPT_MESSAGES {
                let cut = s.messages.len() - KEPT_MESSAGES;
                let cut = (cut..s.messages.len()).find(|i| s.messages.is_char_boundary(*i)).unwrap_or(cut);
                s.messages.drain(..cut);
            }
        }
        lock(&s).messages.push_str(&pending);
    });
    [lines, messages]
}

/// Reads a run's live lines from `from` into `said`, on a thread that ends with the pipe: that
/// thread.
fn read_lines(from: impl Read + Send + 'static, said: &Arc<Mutex<Said>>) -> JoinHandle<()> {
    let s = Arc::clone(said);
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(std::result::Result::ok) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
            let mut s = lock(&s);
            s.seq += 1;
            let n = s.seq;
            s.lines.push((n, v));
            if s.lines.len() > KEPT_LINES {
                s.lines.remove(0);
            }
        }
    })
}

/// A pipe: its read end, its write end.
fn pipe() -> std::io::Result<(File, File)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: two fresh descriptors, each owned once, here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((File::from(r), File::from(w)))
}
