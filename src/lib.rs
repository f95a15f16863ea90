//! iogauge: a storage I/O workload generator and performance-characterisation tool for Linux.
//!
//! The data path reads top-down (docs/architecture.md): a job as written ([`config::Job`],
//! from a [`job`] file or the [`cli`]'s flags) resolves once into a [`config::Test`]; [`plan`]
//! takes this manager's share of it and checks it against the [`targets`]; [`worker`]s drive an
//! [`engine`] and count into [`stats`]; [`run`] turns those into a [`result`] document, which
//! [`export`] writes out. Under MPI every rank is one of the test's [`managers`]: each runs its
//! share and they merge one document. A [`study`] varies the job over many points;
//! [`compare`] sets two documents side by side. Every [`document`] is kept in the
//! [`history`], and [`report`] draws documents as one HTML page.

#![deny(missing_docs)]

pub mod cli;
pub mod compare;
pub mod config;
pub mod cpu;
pub mod data;
pub mod document;
pub mod engine;
pub mod error;
pub mod export;
pub mod format;
pub mod history;
pub mod host;
pub mod job;
pub mod managers;
pub mod model;
pub mod plan;
pub mod profile;
pub mod report;
pub mod result;
pub mod rng;
pub mod run;
pub mod spec;
pub mod stats;
pub mod study;
pub mod targets;
pub mod units;
pub mod verify;
pub mod worker;
