//! The block layer's own count of a block-device target's I/Os over the recorded window
//! (/sys/dev/block/MAJ:MIN/stat, as iostat reads it): what the device took, beside what the
//! workers measured. A response time holds the device's time and the host's (the tool's loop,
//! thread hand-overs, a woken CPU); the kernel's counts hold the first alone.

use crate::host::sysblock;
use crate::result::DeviceTime;

/// A block device's counters at one instant: reads, writes and discards together.
#[derive(Debug, Clone, Copy)]
pub(super) struct DeviceCount {
    /// Requests completed.
    requests: u64,
    /// I/Os merged into another's request (each counts once in `requests`).
    merged: u64,
    /// The requests' times from issue to completion, summed (ms: the kernel sums ns and
    /// prints the sum in ms).
    ticks_ms: u64,
}

/// The counters now of each device in `devices` (a block device's `st_rdev`; None for a
/// target that is none, and where the kernel shows no counts).
pub(super) fn read_all(devices: &[Option<u64>]) -> Vec<Option<DeviceCount>> {
    devices.iter().map(|d| d.and_then(read)).collect()
}

fn read(rdev: u64) -> Option<DeviceCount> {
    let f: Vec<u64> = sysblock::read(rdev, "stat")?.split_whitespace().map(|v| v.parse().unwrap_or(0)).collect();
    // Fields (Documentation/block/stat.rst): reads 0-3, writes 4-7, discards 11-14 (since
    // 4.18), each as requests, merged, sectors, ticks (ms).
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    (f.len() >= 11).then(|| DeviceCount {
        requests: at(0) + at(4) + at(11),
        merged: at(1) + at(5) + at(12),
        ticks_ms: at(3) + at(7) + at(14),
    })
}

/// The device's I/Os, their mean time and how many it held at once on average, between two
/// readings `window_ns` apart.
pub(super) fn between(start: &DeviceCount, end: &DeviceCount, window_ns: u64) -> DeviceTime {
    let requests = end.requests.saturating_sub(start.requests);
    let ticks_ms = end.ticks_ms.saturating_sub(start.ticks_ms);
    DeviceTime {
        ios: requests + end.merged.saturating_sub(start.merged),
        avg_ms: (requests > 0).then(|| ticks_ms as f64 / requests as f64),
        // Each request's time is in the sum once it completes: over the window, the sum is
        // the time integral of the requests in flight (Little's law at the device).
        avg_in_flight: (window_ns > 0).then(|| ticks_ms as f64 * 1e6 / window_ns as f64),
    }
}
