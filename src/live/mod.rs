//! Watching a test while it runs: the live line on the terminal, `--live-json` lines,
//! `--metrics` (Prometheus) and `--http` (a live page). Each interval's [`Snapshot`] is made
//! once and handed to all of them; the servers read the [`board::Board`] it updates.

pub mod board;
mod line;
pub mod lines;
mod metrics;
mod page;
mod routes;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::export::output::Guard;
use crate::http::{self, Listener};
use crate::result::WorkloadResult;
use crate::run::{Counters, Snapshot};
use board::Board;
use lines::Lines;
use routes::Routes;

/// What the user asked to watch the test with.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// `--metrics ADDR:PORT`.
    pub metrics: Option<SocketAddr>,
    /// `--http ADDR:PORT`.
    pub http: Option<SocketAddr>,
    /// `--live-json FILE` (`-`: stdout).
    pub live_json: Option<PathBuf>,
    /// How long the servers stay after the test ends.
    pub linger: Duration,
    /// Draw the live line (stdout is a terminal and holds nothing else).
    pub line: bool,
}

/// The live outputs of a command, open.
pub struct Live {
    line: bool,
    lines: Option<Lines>,
    board: Option<Arc<Board>>,
    linger: Duration,
}

impl Live {
    /// Nothing live.
    pub fn none() -> Live {
        Live { line: false, lines: None, board: None, linger: Duration::ZERO }
    }

    /// Opens what `asked` names: binds the servers' ports and opens the lines' file now, so a
    /// port in use or a bad path fails before anything is measured; says where each server
    /// listens. `managers`: every manager's rank and host.
    pub fn open(asked: &Asked, managers: Vec<(u32, String)>, guard: &mut Guard) -> Result<Live> {
        let lines = match &asked.live_json {
            None => None,
            Some(p) => Some(Lines::new(guard.lines("--live-json", p)?)?),
        };
        // (address, metrics, page)
        let mut listeners: Vec<(SocketAddr, bool, bool)> = Vec::new();
        let mut add = |addr: Option<SocketAddr>, metrics: bool, page: bool| {
            let Some(addr) = addr else { return };
            // --metrics and --http on one address: one server with both.
            match listeners.iter_mut().find(|(a, _, _)| *a == addr && addr.port() != 0) {
                Some((_, m, p)) => (*m, *p) = (*m || metrics, *p || page),
                None => listeners.push((addr, metrics, page)),
            }
        };
        add(asked.metrics, true, false);
        add(asked.http, false, true);
        let board = if listeners.is_empty() {
            None
        } else {
            let board = Arc::new(Board::new(managers));
            let mut bound = Vec::new();
            for (addr, metrics, page) in listeners {
                let flag = if metrics { "--metrics" } else { "--http" };
                let routes = Routes { board: Arc::clone(&board), metrics, page };
                let l = Listener::bind(flag, addr, Arc::new(routes))?;
                let at = l.addr();
                if metrics {
                    say!("metrics at http://{at}/metrics");
                }
                if page {
                    say!("live page at http://{at}/");
                }
                bound.push(l);
            }
            http::start(bound)?;
            Some(board)
        };
        Ok(Live { line: asked.line, lines, board, linger: asked.linger })
    }

    /// A workload starts on this manager: the servers read its counts as they are.
    pub fn workload_started(&mut self, counters: &Counters) {
        if let Some(b) = &self.board {
            b.workload_started(counters);
        }
    }

    /// An interval has ended.
    pub fn interval(&mut self, s: &Snapshot) {
        if self.line {
            line::draw(s);
        }
        if let Some(l) = &mut self.lines {
            l.write(lines::line(s));
        }
        if let Some(b) = &self.board {
            b.interval(s);
        }
    }

    /// A workload has ended.
    pub fn workload_done(&mut self, r: &WorkloadResult) {
        if self.line {
            line::clear();
        }
        if let Some(b) = &self.board {
            b.workload_done(r);
        }
    }

    /// The command has ended: the lines still waiting are written (for a few seconds at most),
    /// the servers show the final figures for the linger time (or until `stop` says so), then
    /// the process may end.
    pub fn end(&mut self, stop: &dyn Fn() -> bool) {
        if let Some(l) = &mut self.lines {
            l.finish();
        }
        let Some(b) = &self.board else { return };
        b.ended();
        let until = Instant::now() + self.linger;
        while Instant::now() < until && !stop() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
