//! iogauge: a storage I/O workload generator and performance-characterisation tool for Linux.
//!
//! The data path reads top-down: [`spec`] and [`config`] describe a test, [`plan`] checks it
//! against the [`targets`], [`worker`]s drive an [`engine`] and count into [`stats`], [`run`]
//! turns those into a [`result`] document, and [`export`] writes it out. Under MPI every rank
//! is one of the test's [`managers`]: each runs its part and they merge one document. A
//! [`study`] runs many such tests, one per point; [`compare`] sets two documents side by side.
//! Every [`document`] is kept in the [`history`], and [`report`] draws documents as one HTML
//! page.

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
