//! `iogauge ui`: Iometer's workbench in a browser. The binary serves one page (assets
//! inline, nothing fetched from elsewhere) and the JSON calls it makes: this host as a manager
//! and its targets, the access specifications, the seeds' studies, a job built, checked and
//! shown as its TOML, one run at a time started and stopped (the command line's own `run` or
//! `study`, as a child process, followed through its live lines), and the history. It listens
//! on the loopback by default, and every call carries a random token printed at start, as
//! Jupyter does. Started by `mpirun`, every rank is a manager the page shows with its targets;
//! rank 0 serves, and a run of the page is every rank's, made in each rank's process as rank 0
//! hands it out. docs/ui.md is the user's side.

mod api;
mod results;
mod routes;
mod run;
#[cfg(test)]
mod tests;
mod topology;
mod words;

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Result, runtime};
use crate::host::placement;
use crate::http::{self, Listener};
use crate::managers::{self, Group};
pub use run::Kind;
use run::{Maker, Queued};

/// What `iogauge ui` was asked.
pub struct Options {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The history database runs save into and the page lists (None: the default one).
    pub db: Option<PathBuf>,
}

/// The longest the managers wait for one another to describe themselves.
const MEET: Duration = Duration::from_secs(60);

/// A run of the page, as every rank makes it under MPI.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Order {
    /// `run` or `study`.
    pub kind: Kind,
    /// The job (TOML).
    pub toml: String,
    /// The history it is saved into (None: the default one).
    pub db: Option<PathBuf>,
}

/// How a run of the ranks ended.
pub struct Ended {
    /// As the command's: 0, 1, 2 (refused: nothing written), 130 (stopped).
    pub exit_status: i32,
    /// The history entry of its result.
    pub history_id: Option<i64>,
    /// What the command line would print besides its table: the warnings, and why it failed.
    pub message: String,
}

/// Runs an order on this rank; on the lead, its live lines go to the path given.
pub type Runner = dyn Fn(&dyn Group, &Order, Option<&Path>) -> Ended;

/// How the ranks run the page's jobs themselves under MPI: the command line's `run` and
/// `study`, which the command line gives (the workbench is below it).
pub struct InProcess<'a> {
    /// Runs an order on this rank.
    pub run: &'a Runner,
    /// Asks the run going to stop (from the server's thread): 1, as SIGTERM does; 2, at once,
    /// giving up the I/Os in flight.
    pub stop: fn(u8),
}

/// What ends the workbench: the user asked it to end (its first Ctrl-C or SIGTERM), and asked
/// again (it leaves at once; a run it stopped finishes and saves on its own).
pub struct Ending<'a> {
    /// Asked to end.
    pub asked: &'a dyn Fn() -> bool,
    /// Asked again.
    pub again: &'a dyn Fn() -> bool,
}

/// Serves the workbench until `ending` says so; then stops the run going, if any, lets it save
/// its result, and returns. Under MPI every rank of `group` describes itself (host, CPUs,
/// targets) to the lead, which serves; a run of the page is then every rank's, made by
/// `ranks` on each rank's main thread as the lead hands it out, until the lead's end.
pub fn serve(o: Options, ending: Ending, group: &dyn Group, ranks: InProcess) -> Result<()> {
    // One rank after another: a listing opens each device for a moment, which another rank of
    // the same host listing at that time would report as a process using it.
    let mut mine = None;
    for rank in 0..group.all().len() as u32 {
        if group.me().rank == rank {
            mine = Some(topology::ManagerView::mine(group));
        }
        group.barrier("the workbench's managers");
    }
    let mine = mine.expect("every rank has its turn");
    let managers = managers::agree(group, Ok(mine), "the workbench's managers", Some(MEET))?;
    if group.all().len() < 2 {
        let exe = std::env::current_exe().map_err(|e| runtime(format!("cannot find iogauge's own binary: {e}")))?;
        return serve_lead(o, ending, managers, Maker::Child(exe), &mut || std::thread::sleep(TICK));
    }
    // The runs' threads are made by this one: given the host's CPUs, not the one core Open
    // MPI binds a rank to by default (the launcher's choice for the page's server, not the
    // user's for the test).
    let _ = placement::pin_thread(&placement::online_cpus());
    if !group.leads() {
        while let Some(order) = next_order(group, None) {
            (ranks.run)(group, &order, None);
        }
        return Ok(());
    }
    let (queue, queued) = mpsc::channel::<Queued>();
    let mut take = || {
        let Some(q) = queued.recv_timeout(TICK).ok().and_then(Queued::take) else { return };
        next_order(group, Some(&q.order));
        let live = PathBuf::from(format!("/proc/self/fd/{}", q.live.as_raw_fd()));
        let ended = (ranks.run)(group, &q.order, Some(&live));
        q.ended(ended);
    };
    let served = serve_lead(o, ending, managers, Maker::Ranks { queue, stop: ranks.stop }, &mut take);
    // The others' end.
    next_order(group, None);
    served
}

/// How often the lead's main thread looks at the stop and the queue.
const TICK: Duration = Duration::from_millis(100);

/// The lead's next order to every rank, or None: the workbench ends (the others send nothing
/// and receive it). Waits for as long as the lead serves: its end is the deadline.
fn next_order(group: &dyn Group, mine: Option<&Order>) -> Option<Order> {
    let bytes = mine.map(|o| serde_json::to_vec(o).expect("orders serialise")).unwrap_or_default();
    let all = group.all_gather(&bytes, "the workbench's next run", None);
    serde_json::from_slice(all.first()?).ok()
}

/// The lead's workbench, with every manager's description, its runs made by `maker`; `tick`
/// is the main thread's work between two looks at `ending` (a pause, or a queued run). Its
/// caller ignores SIGPIPE: a run that ends before reading its job closes the pipe the job is
/// written into, and that write fails (the run's exit status says why).
fn serve_lead(
    o: Options,
    ending: Ending,
    managers: Vec<topology::ManagerView>,
    maker: Maker,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let token = token()?;
    let api = Arc::new(api::Api::new(token.clone(), o.db, maker, managers, o.listen.ip()));
    let listener = Listener::bind("--listen", o.listen, Arc::clone(&api) as Arc<dyn http::Handler>)?;
    let at = listener.addr();
    http::start(vec![listener])?;
    say!("workbench at http://{at}/?token={token}");
    say!("Ctrl-C stops it (and a run going, which keeps what it measured)");
    loop {
        tick();
        if (ending.asked)() {
            break;
        }
    }
    api.end(ending.again);
    Ok(())
}

/// 128 random bits from the kernel, in hex.
fn token() -> Result<String> {
    let mut bytes = [0u8; 16];
    // SAFETY: getrandom writes at most `len` bytes into the buffer it is given.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        return Err(runtime(format!("no random token: {}", std::io::Error::last_os_error())));
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
