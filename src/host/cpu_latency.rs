//! The host's CPUs held awake for a test (`cpu_latency`): the kernel's CPU latency QoS.
//!
//! An idle CPU sleeps in an idle state (a C-state; a virtual machine's halted vCPU), and work
//! sent to it (a device's completion, a woken thread) waits for it to wake. At few outstanding
//! I/Os that wait is a large share of each response time, and it is the host's, not the
//! storage's: on this project's 2-CPU VM, whose idle vCPUs halt at once, a loop device at 1
//! outstanding did 28 K IOPS, 83 K with the CPUs held awake (docs/performance.md). While
//! /dev/cpu_dma_latency is open with a limit written to it, no CPU enters an idle state that
//! takes longer to leave; closing it, the process's exit included, lifts the limit, so no
//! setting of the host outlives the test (cyclictest and tuned's latency-performance profile
//! hold it the same way).

use std::fs::File;
use std::io::{Read, Write};
use std::time::Duration;

use crate::error::{Result, input};

/// The kernel's file for the CPU latency QoS request of a process.
const QOS: &str = "/dev/cpu_dma_latency";

/// What the file reads while nobody holds a limit (the kernel's PM_QOS_DEFAULT_VALUE, µs).
const UNHELD_US: i32 = 2_000_000_000;

/// A limit on the CPUs' wake-up latency, held until dropped.
#[derive(Debug)]
pub struct Hold {
    _file: File,
}

impl Hold {
    /// Holds every CPU of the host to wake within `limit` (whole µs; 0: they poll, never
    /// sleep). Refused in one line where the kernel will not take the request (not root, no
    /// such file).
    pub fn new(limit: Duration) -> Result<Hold> {
        let refused = |e: std::io::Error| {
            input(format!(
                "cpu_latency: cannot hold the CPUs' wake-up latency ({QOS}: {e}): it needs write access to that \
                 file (root's alone by default); leave cpu_latency out to run with the host's idle states as they are"
            ))
        };
        let mut file = std::fs::OpenOptions::new().write(true).open(QOS).map_err(refused)?;
        // The kernel reads one native-endian s32 of µs (the setting's check keeps it in range).
        let us = i32::try_from(limit.as_micros()).unwrap_or(i32::MAX);
        file.write_all(&us.to_ne_bytes()).map_err(refused)?;
        Ok(Hold { _file: file })
    }
}

/// How the host's idle CPUs sleep, for the result's `host.cpu_idle`: the kernel's cpuidle
/// driver (`none` without one), a guest's halt polling (`haltpoll`: 0 ns halts a vCPU at once),
/// and a wake-up limit in force (this test's `cpu_latency`, or another process's: tuned's
/// latency profiles hold one), where it can be read (root).
pub fn describe() -> String {
    let read = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string());
    let mut said = read("/sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_else(|| "none".into());
    if said == "haltpoll" {
        if let Some(ns) = read("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
            said += &format!(" (guest_halt_poll_ns {ns})");
        }
    }
    let mut limit = [0u8; 4];
    let held = File::open(QOS).and_then(|mut f| f.read_exact(&mut limit));
    match i32::from_ne_bytes(limit) {
        us if held.is_ok() && us < UNHELD_US => said + &format!(", held to wake within {us} µs"),
        _ => said,
    }
}
