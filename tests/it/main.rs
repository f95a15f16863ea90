//! iogauge's integration tests: one binary, one module per subject (docs/testing.md). Most run
//! the built `iogauge` against real targets (loop devices, /dev/zram0, FUSE, nbdkit) and check
//! it against independent truth: the kernel's counters, Little's law, exact counts on the null
//! target. One binary rather than one per file: the suite links once, and the test threads
//! share out the slow cases of every module.

// A scenario reads top to bottom as a user would do it; the 100-line bound is the library's.
#![allow(clippy::too_many_lines)]

mod common;

mod bad_input;
mod compare;
mod cost;
mod data;
mod devices;
mod docs;
mod everyday;
mod examples;
mod faults;
mod fio_jobs;
mod fio_json;
mod fs;
mod fuzz;
mod history;
mod icf;
mod interrupt;
mod iometer;
mod iscsi;
mod layers;
mod live;
// Real Open MPI jobs: built with `--features mpi` (scripts/test does).
#[cfg(feature = "mpi")]
mod managers;
mod network;
mod null_target;
mod operations;
mod outputs;
mod package;
mod placement;
mod promises;
mod readers;
mod report;
mod resolution;
mod safety;
mod secrets;
mod steady;
mod study;
mod tables;
mod time_series;
mod trace;
mod ui;
mod verify;
mod workload_flags;
