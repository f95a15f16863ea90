//! `iogauge ui`: Iometer's workbench in a browser. The binary serves one page (assets
//! inline, nothing fetched from elsewhere) and the JSON calls it makes: this host as a manager
//! and its targets, the access specifications, the seeds' studies, a job built, checked and
//! shown as its TOML, one run at a time started and stopped (the command line's own `run` or
//! `study`, as a child process, followed through its live lines), and the history. It listens
//! on the loopback by default, and every call carries a random token printed at start, as
//! Jupyter does. Started by `mpirun`, every rank is a manager the page shows with its targets;
//! rank 0 serves, the others wait for its end. docs/ui.md is the user's side.

mod api;
mod run;
mod topology;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Result, runtime};
use crate::http::{self, Listener};
use crate::managers::{self, Group};

/// What `iogauge ui` was asked.
pub struct Options {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The history database runs save into and the page lists (None: the default one).
    pub db: Option<PathBuf>,
}

/// The longest the managers wait for one another to describe themselves.
const MEET: Duration = Duration::from_secs(60);

/// Serves the workbench until `stop` says so; then stops the run going, if any, lets it save
/// its result, and returns. Under MPI every rank of `group` describes itself (host, CPUs,
/// targets) to the lead, which serves; the others wait for the lead's end.
pub fn serve(o: Options, stop: &dyn Fn() -> bool, group: &dyn Group) -> Result<()> {
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
    if !group.leads() {
        group.all_gather(&[], "the workbench's end", None);
        return Ok(());
    }
    let served = serve_lead(o, stop, managers);
    group.all_gather(&[], "the workbench's end", None);
    served
}

/// The lead's workbench, with every manager's description.
fn serve_lead(o: Options, stop: &dyn Fn() -> bool, managers: Vec<topology::ManagerView>) -> Result<()> {
    // A run that ends before reading its job closes the pipe the job is written into: that
    // write fails (the run's exit status says why) instead of ending the workbench.
    // SAFETY: sets one signal's disposition; the handler is the kernel's own.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let exe = std::env::current_exe().map_err(|e| runtime(format!("cannot find iogauge's own binary: {e}")))?;
    let token = token()?;
    let api = Arc::new(api::Api::new(token.clone(), o.db, exe, managers));
    let listener = Listener::bind("--listen", o.listen, Arc::clone(&api) as Arc<dyn http::Handler>)?;
    let at = listener.addr();
    http::start(vec![listener])?;
    eprintln!("iogauge: workbench at http://{at}/?token={token}");
    eprintln!("iogauge: Ctrl-C stops it (and a run going, which keeps what it measured)");
    while !stop() {
        std::thread::sleep(Duration::from_millis(100));
    }
    api.end();
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
