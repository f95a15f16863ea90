//! Network targets: NBD exports (libnbd, [`crate::net::nbd`]) and iSCSI LUNs (libiscsi,
//! [`crate::net::iscsi`]) reached from userspace. Inspected over the protocol (size, block
//! size, what the server can do), checked for data before any write as block devices are (the
//! first and last MiB read over the protocol and probed by libblkid), and opened as
//! `connections` connections (iSCSI: sessions) per worker.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Identity, TargetInfo, TargetKind, blkid};
use crate::engine::Target;
use crate::engine::network::{Connection, Protocol, protocol_of};
use crate::error::{Error, Result, input, runtime};
use crate::net::{Address, TargetName};
use crate::spec::AccessSpec;

/// What a network target is and what its server said it can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remote {
    /// The protocol's name (`nbd`, `iscsi`), as the target's `kind` says it.
    pub protocol: String,
    /// The server: `ADDRESS:PORT` as resolved, or `unix:PATH`.
    pub server: String,
    /// The NBD export's name (`""`: the server's default export), or the iSCSI target's IQN.
    pub export: String,
    /// The iSCSI LUN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lun: Option<u32>,
    /// What the LUN says it is: SCSI INQUIRY's vendor and product, and its unit serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Connections each worker opens to it (I/Os spread round-robin over them).
    pub connections: u32,
    /// The server takes trims (NBD_CMD_TRIM; iSCSI: UNMAP, where the LUN is thin).
    pub can_trim: bool,
    /// The server takes flushes (NBD_CMD_FLUSH; iSCSI: SYNCHRONIZE CACHE, always).
    pub can_flush: bool,
    /// The server takes FUA writes (NBD_CMD_FLAG_FUA; iSCSI: MODE SENSE's DPOFUA).
    pub can_fua: bool,
    /// The server says several connections see each other's writes at once (NBD's
    /// multi-conn; an iSCSI LUN's sessions always do).
    pub multi_conn: bool,
    /// The export is read-only.
    pub read_only: bool,
    /// The target as its inspection read its name: what every later connection takes (its
    /// server as resolved then, its user and password). Never written; None in a document
    /// read back.
    #[serde(skip)]
    pub address: Option<Address>,
}

/// Learns what the network target `name` of protocol `p` is, over one connection made and
/// closed here, writing nothing.
pub fn inspect(p: &'static dyn Protocol, name: &TargetName, connections: u32, timeout: Duration) -> Result<TargetInfo> {
    let at = p.address(name)?;
    let e = connect(p, &at, timeout).map_err(Error::into_input)?.export(&at.locator);
    if e.size == 0 {
        return Err(input(format!("target {name}: the {} is empty (0 bytes)", p.noun())));
    }
    let locator = &at.locator;
    let remote = Remote {
        protocol: p.name().into(),
        server: locator.server.clone(),
        export: locator.export.clone(),
        lun: locator.lun,
        device: e.device,
        connections,
        can_trim: e.can_trim,
        can_flush: e.can_flush,
        can_fua: e.can_fua,
        multi_conn: e.multi_conn,
        read_only: e.read_only,
        address: None,
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (locator, e.size).hash(&mut hasher);
    Ok(TargetInfo {
        path: name.to_string(),
        kind: TargetKind::Network(p),
        size: e.size,
        // Offsets and sizes are kept to 512-byte multiples, or the server's block.
        logical_block: e.block.max(512),
        // No page cache between iogauge and the server.
        direct: true,
        model: e.model,
        exists: true,
        created_by_iogauge: false,
        numa_node: None,
        identity: Some(Identity::Network(hasher.finish())),
        network: Some(Remote { address: Some(at), ..remote }),
    })
}

/// What the inspection found a network target to be: its protocol, and its address (as
/// resolved then: a worker's connections look no name up again).
fn inspected(info: &TargetInfo) -> Result<(&'static dyn Protocol, &Address)> {
    match (info.kind, info.network.as_ref().and_then(|r| r.address.as_ref())) {
        (TargetKind::Network(p), Some(at)) => Ok((p, at)),
        _ => Err(runtime(format!("target {}: not a network target inspected", info.path))),
    }
}

/// One connection to the target at `at` (an NBD connection, an iSCSI session logged in), or
/// why not ("target URL: cannot connect: ...", a runtime error: the inspection makes it the
/// user's).
pub fn connect(p: &dyn Protocol, at: &Address, timeout: Duration) -> Result<Box<dyn Connection>> {
    p.connect(at, timeout).map_err(|e| e.context(format!("target {at}: cannot connect")))
}

/// Whether the allowance `allowed` (a URL, as `--allow-write` gives it) names the network
/// target `info`: the same server, export and LUN, however spelt.
pub fn names(allowed: &str, info: &TargetInfo) -> bool {
    let (TargetKind::Network(p), Some(r)) = (info.kind, &info.network) else { return false };
    let Some(a) = protocol_of(allowed).filter(|a| *a == p).and_then(|a| a.locate(allowed).ok()) else { return false };
    a.server == r.server && a.export == r.export && a.lun == r.lun
}

/// Whether the server lets every operation of `spec` through (writes, trims, flushes, FUA
/// writes); the refusal names the target and what its server said. Any other target: Ok.
pub fn check_ops(info: &TargetInfo, spec: &AccessSpec) -> Result<()> {
    let (TargetKind::Network(p), Some(r)) = (info.kind, &info.network) else { return Ok(()) };
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
        Some((what, fix)) => Err(input(format!("target {}: {} says it {what}; {fix}", info.path, p.speaker()))),
        None => Ok(()),
    }
}

/// The signatures libblkid finds in the network target's first and last MiB, read over the
/// protocol: the same check a block device gets (`wipefs -n`'s list), made on a sparse copy of
/// the ends in memory, where every superblock and partition table has its magic.
pub fn signatures(info: &TargetInfo, timeout: Duration) -> Result<Vec<String>> {
    const END: u64 = 1 << 20;
    let (p, at) = inspected(info)?;
    let mut h = connect(p, at, timeout).map_err(Error::into_input)?;
    let copy = memfd().map_err(|e| runtime(format!("target {}: a copy of its ends in memory: {e}", info.path)))?;
    copy.set_len(info.size).map_err(|e| runtime(format!("target {}: {e}", info.path)))?;
    let head = END.min(info.size);
    let tail_at = info.size.saturating_sub(END).max(head);
    for (at, len) in [(0, head), (tail_at, info.size - tail_at)] {
        if len == 0 {
            continue;
        }
        let mut buf = vec![0u8; len as usize];
        h.read_now(&mut buf, at, timeout)
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
/// to lead to the export or LUN inspected (its size).
pub fn open(info: &TargetInfo, timeout: Duration) -> Result<Target> {
    let n = info.network.as_ref().map_or(1, |r| r.connections.max(1));
    let mut conns = Vec::with_capacity(n as usize);
    let (p, at) = inspected(info)?;
    for _ in 0..n {
        let c = connect(p, at, timeout)?;
        if c.export(&at.locator).size != info.size {
            return Err(runtime(format!(
                "target {} is no longer what iogauge checked (its size changed): nothing written",
                info.path
            )));
        }
        conns.push(c);
    }
    Ok(Target::Network(conns))
}

/// What names a network target for a verify map: the protocol, server, export or IQN and LUN,
/// the LUN's own identifiers, and its size.
pub fn facts(info: &TargetInfo) -> Option<crate::verify::map::TargetFacts> {
    let r = info.network.as_ref()?;
    Some(crate::verify::map::TargetFacts {
        device: None,
        inode: None,
        size: info.size,
        serial: Some(match (r.lun, &r.device) {
            (Some(lun), Some(d)) => format!("{} {} target '{}' LUN {lun} ({d})", r.protocol, r.server, r.export),
            _ => format!("{} {} export '{}'", r.protocol, r.server, r.export),
        }),
    })
}
