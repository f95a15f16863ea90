//! What the workbench shows as this manager's targets (Iometer's Disk Targets tab): every
//! block device and partition of the host with its size and model, and what the safety checks
//! see on it (mounted, signatures libblkid finds, holders, other users), probed as a write
//! would be, writing nothing.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::net::TargetName;
use crate::targets::{self, TargetInfo, safety};

/// One target the page offers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Offered {
    /// The path to give as a target.
    pub path: String,
    /// `block`, `null`.
    pub kind: String,
    /// Its size (bytes).
    pub size_bytes: u64,
    /// Its model, or what backs it.
    pub model: String,
    /// Mounted at, signatures, holders, users: what writing to it needs to be allowed by its
    /// name. Empty: nothing found.
    pub holds: Vec<String>,
    /// The kernel will not write to it.
    pub read_only: bool,
}

/// One manager as the page shows it (Iometer's topology): its rank, host, CPUs, and the
/// targets it offered when the workbench started.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManagerView {
    /// Its MPI rank (0 alone).
    pub rank: u32,
    /// Its host name.
    pub host: String,
    /// The CPUs it may use.
    pub cpus: usize,
    /// What it offers as targets.
    pub targets: Vec<Offered>,
}

impl ManagerView {
    /// This process's manager, as `group` numbers it.
    pub fn mine(group: &dyn crate::managers::Group) -> ManagerView {
        ManagerView {
            rank: group.me().rank,
            host: group.me().host.clone(),
            cpus: crate::host::placement::usable_cpus().len(),
            targets: offered(),
        }
    }
}

/// The null target, then every block device and partition of a non-zero size, by name (those
/// `lsblk` lists, and RAM disks): one that cannot be inspected is listed with the reason.
pub fn offered() -> Vec<Offered> {
    let mut out = vec![Offered {
        path: targets::NULL.into(),
        kind: "null".into(),
        size_bytes: 0,
        model: "null target: no I/O, for the engine's own cost".into(),
        holds: Vec::new(),
        read_only: false,
    }];
    let mut names = devices();
    names.sort();
    for (name, read_only) in names {
        let path = format!("/dev/{name}");
        match targets::inspect_local(&path, 0, false) {
            Ok(info) if info.size == 0 => {}
            Ok(info) => out.push(block(info, read_only)),
            Err(e) => out.extend(uninspected(&name, path, read_only, &e)),
        }
    }
    out
}

/// A device the safety checks could not inspect, as sysfs describes it, `why` its only hold:
/// none where sysfs gives it no size (an empty loop device, as lsblk leaves out).
fn uninspected(name: &str, path: String, read_only: bool, why: &crate::error::Error) -> Option<Offered> {
    let sys = std::path::Path::new("/sys/class/block").join(name);
    let read = |f: &str| std::fs::read_to_string(sys.join(f)).map(|s| s.trim().to_string()).unwrap_or_default();
    let size_bytes = read("size").parse::<u64>().unwrap_or(0) * 512;
    (size_bytes > 0).then(|| Offered {
        path,
        kind: "block".into(),
        size_bytes,
        model: read("device/model"),
        holds: vec![format!("cannot be inspected: {why}")],
        read_only,
    })
}

fn block(info: TargetInfo, read_only: bool) -> Offered {
    let holds = safety::block_holds(&info).unwrap_or_else(|e| vec![e.to_string()]);
    Offered { path: info.path, kind: "block".into(), size_bytes: info.size, model: info.model, holds, read_only }
}

/// Block devices and their partitions as sysfs names them, each with whether it is read-only.
fn devices() -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let Ok(disks) = std::fs::read_dir("/sys/block") else { return out };
    for disk in disks.flatten() {
        let dir = disk.path();
        let ro = |d: &std::path::Path| std::fs::read_to_string(d.join("ro")).is_ok_and(|s| s.trim() == "1");
        out.push((disk.file_name().to_string_lossy().into_owned(), ro(&dir)));
        let Ok(parts) = std::fs::read_dir(&dir) else { continue };
        for p in parts.flatten().filter(|p| p.path().join("partition").exists()) {
            out.push((p.file_name().to_string_lossy().into_owned(), ro(&p.path())));
        }
    }
    out
}

/// Why a device of this host named as a target is no target now: none is there by that name,
/// or the one there is empty (a loop device detached, a medium taken out), as sysfs says by
/// its device number. None for what is not a device path, and for a device with a size.
pub fn gone(path: &str) -> Option<&'static str> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    if !path.starts_with("/dev/") {
        return None;
    }
    let Ok(m) = std::fs::metadata(path) else { return Some("is gone from this host") };
    if !m.file_type().is_block_device() {
        return None;
    }
    let sectors: u64 = crate::host::sysblock::read(m.rdev(), "size")?.parse().ok()?;
    (sectors == 0).then_some("is empty now (a loop device detached, a medium taken out)")
}

/// What a path the user typed (a file, a device, a network URL) is, as the page shows it (by
/// its name, without the password its URL may carry): for anything but a block device, the
/// refusal a write would meet, if any.
pub fn inspect(path: &TargetName) -> Result<Offered> {
    let settings = crate::config::TestSettings::default();
    let info = targets::inspect(path, &settings)?;
    let kind = match info.kind {
        targets::TargetKind::Block => return Ok(block(info, false)),
        targets::TargetKind::Null => "null",
        targets::TargetKind::File => "file",
        _ => "network",
    };
    let holds = match safety::check_write(&info, &[], &[], settings.io_timeout) {
        Ok(()) => Vec::new(),
        Err(e) => vec![e.to_string()],
    };
    // A file not there yet is made at the size the test sets, not the default's 1 GiB shown
    // as if it were the file's.
    let made = kind == "file" && !std::path::Path::new(&info.path).exists();
    Ok(Offered {
        size_bytes: if made { 0 } else { info.size },
        model: if made { "will be created (file_size in Test Setup; 1 GiB unless set)".into() } else { info.model },
        path: info.path,
        kind: kind.into(),
        holds,
        read_only: false,
    })
}
