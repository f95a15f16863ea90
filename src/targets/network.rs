//! Network targets: NBD exports reached from userspace (libnbd, [`crate::net::nbd`]). Inspected
//! over the protocol (size, block size, what the server can do), checked for data before any
//! write as block devices are (the first and last MiB read over the protocol and probed by
//! libblkid), and opened as `connections` connections per worker.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Identity, TargetInfo, TargetKind, blkid};
use crate::engine::Target;
use crate::error::{Result, input, runtime};
use crate::net::{self, Protocol, nbd};
use crate::spec::AccessSpec;

/// What a network target is and what its server said it can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remote {
    /// `nbd`.
    pub protocol: String,
    /// The server: `ADDRESS:PORT` as resolved, or `unix:PATH`.
    pub server: String,
    /// The NBD export's name (`""`: the server's default export).
    pub export: String,
    /// Connections each worker opens to it (I/Os spread round-robin over them).
    pub connections: u32,
    /// The server takes trims (NBD_CMD_TRIM).
    pub can_trim: bool,
    /// The server takes flushes (NBD_CMD_FLUSH).
    pub can_flush: bool,
    /// The server takes FUA writes (NBD_CMD_FLAG_FUA).
    pub can_fua: bool,
    /// The server says several connections see each other's writes at once (multi-conn).
    pub multi_conn: bool,
    /// The export is read-only.
    pub read_only: bool,
}

/// Learns what the network target `url` is, over one
/// connection made and closed here, writing nothing.
pub fn inspect(url: &str, connections: u32, timeout: Duration) -> Result<TargetInfo> {
    let locator = net::locate(url).map_err(input)?;
    if net::protocol(url) == Some(Protocol::Iscsi) {
        return Err(input(format!(
            "target {url}: iscsi:// targets are not reached from userspace yet; log in with iscsiadm and name \
             the block device it makes (/dev/sdX)"
        )));
    }
    let h = connect(url, timeout).map_err(input)?;
    let e = h.export();
    if e.size == 0 {
        return Err(input(format!("target {url}: the export is empty (0 bytes)")));
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (&locator, e.size).hash(&mut hasher);
    let name = if e.name.is_empty() { "(default)".to_string() } else { format!("'{}'", e.name) };
    Ok(TargetInfo {
        path: url.into(),
        kind: TargetKind::Nbd,
        size: e.size,
        // Offsets and sizes are kept to 512-byte multiples, or the server's minimum block.
        logical_block: e.min_block.max(512),
        // No page cache between iogauge and the server.
        direct: true,
        model: format!("NBD export {name} on {} ({}, libnbd)", locator.server, e.protocol),
        exists: true,
        created_by_iogauge: false,
        numa_node: None,
        identity: Some(Identity::Network(hasher.finish())),
        network: Some(Remote {
            protocol: locator.protocol.into(),
            server: locator.server,
            export: locator.export,
            connections,
            can_trim: e.can_trim,
            can_flush: e.can_flush,
            can_fua: e.can_fua,
            multi_conn: e.multi_conn,
            read_only: e.read_only,
        }),
    })
}

/// One connection to `url`, or why not ("target URL: cannot connect: ...").
fn connect(url: &str, timeout: Duration) -> std::result::Result<nbd::Handle, String> {
    nbd::Handle::connect(url, timeout).map_err(|e| format!("target {url}: cannot connect: {e}"))
}

/// Whether the allowance `allowed` (a URL, as `--allow-write` gives it) names the network
/// target `info`: the same server, export and LUN, however spelt.
pub fn names(allowed: &str, info: &TargetInfo) -> bool {
    let (Some(r), Ok(a)) = (&info.network, net::locate(allowed)) else { return false };
    a.protocol == r.protocol && a.server == r.server && a.export == r.export
}

/// Whether the server lets every operation of `spec` through (writes, trims, flushes, FUA
/// writes); the refusal names the target and what its server said. Any other target: Ok.
pub fn check_ops(info: &TargetInfo, spec: &AccessSpec) -> std::result::Result<(), String> {
    let Some(r) = &info.network else { return Ok(()) };
    let lines = || spec.lines.iter().filter(|l| l.share > 0);
    let refusal = if spec.writes() && r.read_only {
        Some(("is read-only", "run a workload that only reads, or export it writable"))
    } else if spec.trims() && !r.can_trim {
        Some(("takes no trims", "run it without trims"))
    } else if lines().any(|l| l.flush > 0 || l.flush_every > 0) && !r.can_flush {
        Some(("takes no flushes", "run it without flushes"))
    } else if lines().any(|l| l.fua) && !r.can_fua {
        Some(("takes no FUA writes", "run it without fua"))
    } else {
        None
    };
    match refusal {
        Some((what, fix)) => Err(format!("target {}: the NBD server says it {what}; {fix}", info.path)),
        None => Ok(()),
    }
}

/// The signatures libblkid finds in the network target's first and last MiB, read over the
/// protocol: the same check a block device gets (`wipefs -n`'s list), made on a sparse copy of
/// the ends in memory, where every superblock and partition table has its magic.
pub fn signatures(info: &TargetInfo, timeout: Duration) -> Result<Vec<String>> {
    const END: u64 = 1 << 20;
    let h = connect(&info.path, timeout).map_err(input)?;
    let copy = memfd().map_err(|e| runtime(format!("target {}: a copy of its ends in memory: {e}", info.path)))?;
    copy.set_len(info.size).map_err(|e| runtime(format!("target {}: {e}", info.path)))?;
    let head = END.min(info.size);
    let tail_at = info.size.saturating_sub(END).max(head);
    for (at, len) in [(0, head), (tail_at, info.size - tail_at)] {
        if len == 0 {
            continue;
        }
        let mut buf = vec![0u8; len as usize];
        h.read(&mut buf, at, timeout)
            .map_err(|e| input(format!("target {}: reading its first and last MiB: {e}", info.path)))?;
        std::os::unix::fs::FileExt::write_all_at(&copy, &buf, at)
            .map_err(|e| runtime(format!("target {}: {e}", info.path)))?;
    }
    use std::os::fd::AsRawFd;
    blkid::signatures(copy.as_raw_fd())
        .map(|sigs| sigs.iter().map(|s| format!("{s} on {}", info.path)).collect())
        .map_err(|e| input(format!("target {}: no target can be called blank without libblkid: {e}", info.path)))
}

/// An anonymous file in memory (memfd_create), sparse as tmpfs files are.
fn memfd() -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: a NUL-terminated name; a non-negative return is a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c"iogauge-ends".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is ours alone.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Opens `connections` connections to the network target `info` for a worker, each checked
/// to lead to the export inspected (its size).
pub fn open(info: &TargetInfo, timeout: Duration) -> Result<Target> {
    let n = info.network.as_ref().map_or(1, |r| r.connections.max(1));
    let mut conns = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let h = connect(&info.path, timeout).map_err(runtime)?;
        if h.export().size != info.size {
            return Err(runtime(format!(
                "target {} is no longer what iogauge checked (its size changed): nothing written",
                info.path
            )));
        }
        conns.push(h);
    }
    Ok(Target::Nbd(conns))
}

/// What names a network target for a verify map: the protocol, server and export, and its size.
pub fn facts(info: &TargetInfo) -> Option<crate::verify::map::TargetFacts> {
    let r = info.network.as_ref()?;
    Some(crate::verify::map::TargetFacts {
        device: None,
        inode: None,
        size: info.size,
        serial: Some(format!("{} {} export '{}'", r.protocol, r.server, r.export)),
    })
}
