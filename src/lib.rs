//! iogauge: a storage I/O workload generator and performance-characterisation tool for Linux.
//!
//! The data path reads top-down (docs/architecture.md): a job as written ([`config::Job`],
//! from a [`job`] file or the [`cli`]'s flags) resolves once into a [`config::Test`]; [`plan`]
//! takes this manager's share of it and checks it against the targets; workers drive an I/O
//! engine and count into [`stats`]; [`run`] turns those into a [`result`] document, which the
//! exports write out. Under MPI every rank is one of the test's [`managers`]: each runs its
//! share and they merge one document. A [`study`] varies the job over many points; `compare`
//! sets two documents side by side; every document is kept in the history, and `report` draws
//! documents as one HTML page.
//!
//! The public modules are what the binary and the integration tests use: run a job
//! ([`job::parse`], [`config::Test::from_job`], [`plan::prepare_for`], [`run::run_test`]) and
//! read its [`result::ResultDoc`]. Everything else is the crate's own (`pub(crate)`), so the
//! compiler reports what nothing uses.

#![deny(missing_docs)]

/// Says one line to the user on stderr, after `iogauge: `. A stderr nobody reads any more (a
/// pipe to a workbench that ended, `2>&1 | head`) loses the line, never the test: `eprintln!`
/// panics there, and would end a run before its results were saved.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "iogauge: {}", format_args!($($arg)*));
    }};
}

pub mod cli;
pub(crate) mod compare;
pub mod config;
pub(crate) mod content;
pub(crate) mod document;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod export;
pub mod format;
pub(crate) mod fs;
pub(crate) mod history;
pub mod host;
pub(crate) mod http;
pub mod import;
pub mod job;
pub(crate) mod live;
pub mod managers;
pub(crate) mod net;
pub mod plan;
pub(crate) mod report;
pub mod result;
pub(crate) mod rng;
pub mod run;
pub mod spec;
pub mod stats;
pub mod study;
pub(crate) mod targets;
pub mod trace;
pub(crate) mod ui;
pub(crate) mod units;
pub mod verify;
pub(crate) mod worker;
