//! Refuses writes that could destroy someone's data.
//!
//! A block device is refused when libblkid finds anything on it (every signature `wipefs -n`
//! lists: filesystems, swap, RAID, LVM, LUKS, partition tables, backup headers), or when it is
//! in use: mounted (itself or a partition), with partitions, held by device-mapper or md
//! (holders), under a loop device, an active swap area, or open or memory-mapped in another
//! process (itself, a partition, or the disk it is a partition of). `--allow-write DEV` allows
//! all of that except a mounted filesystem, which needs `--allow-mounted-write DEV` (fio's
//! `allow_mounted_write`). An existing regular file is refused unless iogauge created it or
//! `--allow-write` names it. A network target (an NBD export, an iSCSI LUN) is refused when libblkid finds
//! anything in its first or last MiB, read over the protocol, unless `--allow-write URL` names
//! it (the same server, export or IQN and LUN, however spelt).
//!
//! Everything is decided by identity, not by name: devices by their device number (an alias
//! made with mknod, a symlink, `/dev/../dev/x` are the same device), files by device and inode.
//! The device probed is the one opened ([`Identity::of`]), and a worker refuses to write to a
//! path that no longer leads to it (`targets::open`).

use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::{Identity, TargetInfo, TargetKind, blkid, network};
use crate::error::{Result, input};
use crate::host::sysblock;
use crate::net::TargetName;

/// What makes a target unsafe to write, and which word allows it.
struct Findings {
    /// Reasons `--allow-write` overrides.
    data: Vec<String>,
    /// Mounts, which only `--allow-mounted-write` overrides.
    mounted: Vec<String>,
}

/// Ok if writing to `info` is safe or allowed; else why not and how to allow it. A network
/// target's server gets `timeout` to answer.
pub fn check_write(
    info: &TargetInfo,
    allow_write: &[TargetName],
    allow_mounted_write: &[TargetName],
    timeout: std::time::Duration,
) -> Result<()> {
    let Some(id) = info.identity else { return Ok(()) }; // the null target, or a file to create
    let allowed =
        |list: &[TargetName]| list.iter().any(|a| Identity::of_path(a).ok() == Some(id) || network::names(a, info));
    if allowed(allow_mounted_write) {
        return Ok(());
    }
    let f = match info.kind {
        TargetKind::Null => return Ok(()),
        TargetKind::File if info.created_by_iogauge => return Ok(()),
        TargetKind::File => Findings {
            data: vec![format!("{} is an existing file iogauge did not create", info.path)],
            mounted: Vec::new(),
        },
        // Allowed to be written: only a mount can still refuse it, and nothing is read from
        // it (the device's own counters then show the test's I/O alone).
        TargetKind::Block if allowed(allow_write) => Findings { data: Vec::new(), mounted: mounted(id) },
        TargetKind::Block => block_findings(info, id, Probe::Exclusive)?,
        // A network target, whatever its protocol.
        _ if allowed(allow_write) => return Ok(()),
        _ => Findings { data: network::signatures(info, timeout)?, mounted: Vec::new() },
    };
    let path = &info.path;
    if !f.mounted.is_empty() {
        let all: Vec<String> = f.mounted.iter().chain(&f.data).cloned().collect();
        return Err(input(format!(
            "refusing to write to {path}: {}; a mounted filesystem is written only with --allow-mounted-write {path} \
             (unmount it first: writing under a mounted filesystem corrupts it)",
            all.join(", ")
        )));
    }
    if !f.data.is_empty() && !allowed(allow_write) {
        return Err(input(format!(
            "refusing to write to {path}: {}; pass --allow-write {path} (or allow_write in the job file) to destroy its data",
            f.data.join(", ")
        )));
    }
    Ok(())
}

/// What the checks above find on an inspected block device, mounts first: what writing to it
/// needs `--allow-write` (or `--allow-mounted-write`) for. Empty: nothing is found on it.
/// For a listing, so without the check's exclusive open: a `mount` at that instant would fail
/// with EBUSY because a list was drawn. A device held only that way is found when written.
pub fn block_holds(info: &TargetInfo) -> Result<Vec<String>> {
    match info.identity {
        Some(id) if info.kind == TargetKind::Block => {
            let f = block_findings(info, id, Probe::Shared)?;
            Ok(f.mounted.into_iter().chain(f.data).collect())
        }
        _ => Ok(Vec::new()),
    }
}

/// Whether the checks open the device exclusively for a moment, to find a holder that shows
/// nowhere else (a write's check), or not (a listing).
#[derive(PartialEq)]
enum Probe {
    Exclusive,
    Shared,
}

/// Everything that shows the block device `id` holds data or is in use.
fn block_findings(info: &TargetInfo, id: Identity, probe: Probe) -> Result<Findings> {
    let path = &info.path;
    let Identity::Device(rdev) = id else { unreachable!("a block target has a device number") };
    let sys = sysblock::dir(rdev);
    let parts = partitions(&sys);
    // The device and its partitions: what is mounted, held or stacked on any of them is on it.
    let mut family = vec![rdev];
    family.extend(parts.iter().map(|(_, d)| *d));
    // Which processes use it, looked for before this one opens it: another iogauge probing it
    // at the same moment (a page's list of disks, another manager on this host) would see this
    // probe's descriptor through all its looks, as this one would see its. A process using the
    // whole disk uses its partitions too.
    let mut watched = family.clone();
    watched.extend(parent(&sys));
    let users = users(&watched);
    // Probe the device this path leads to now, and only if it is still the one inspected:
    // `open` then checks that a worker writes to this same device.
    let file = std::fs::File::open(path).map_err(|e| input(format!("target {path}: cannot open: {e}")))?;
    if Identity::of(&file).ok() != Some(id) {
        return Err(input(format!("target {path} changed while iogauge checked it: refusing to write to it")));
    }
    let loops = loops_over(&family);
    let stacked: Vec<u64> = family.iter().copied().chain(loops.iter().map(|(_, d)| *d)).collect();
    let mut found = Findings { data: Vec::new(), mounted: mounted_on(&stacked) };
    if !parts.is_empty() {
        let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
        found.data.push(format!("has partitions ({})", names.join(", ")));
    }
    for d in &family {
        for h in holders(*d) {
            found.data.push(format!("in use by {h}"));
        }
    }
    for (name, _) in &loops {
        found.data.push(format!("{name} is a loop device over it"));
    }
    if swaps().iter().any(|d| family.contains(d)) {
        found.data.push("an active swap area".into());
    }
    for (pid, comm, how) in users {
        found.data.push(format!("{how} in process {pid} ({comm})"));
    }
    if probe == Probe::Exclusive && found.data.is_empty() && found.mounted.is_empty() {
        let exclusive = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(path);
        if exclusive.is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY)) {
            found.data.push("held open exclusively by another process".into())
        }
    }
    match blkid::signatures(file.as_raw_fd()) {
        Ok(sigs) => found.data.extend(sigs.iter().map(|s| format!("{s} on {path}"))),
        Err(e) => found.data.push(format!("no device can be called blank without libblkid: {e}")),
    }
    Ok(found)
}

/// Where a filesystem on the device `id`, one of its partitions or a loop device over either
/// is mounted.
fn mounted(id: Identity) -> Vec<String> {
    let Identity::Device(rdev) = id else { return Vec::new() };
    let mut family = vec![rdev];
    family.extend(partitions(&sysblock::dir(rdev)).iter().map(|(_, d)| *d));
    let loops = loops_over(&family);
    family.extend(loops.iter().map(|(_, d)| *d));
    mounted_on(&family)
}

/// Where a filesystem on one of `devices` is mounted.
fn mounted_on(devices: &[u64]) -> Vec<String> {
    mounts().into_iter().filter(|(dev, _)| devices.contains(dev)).map(|(_, at)| format!("mounted at {at}")).collect()
}

/// "major:minor" as sysfs and mountinfo write it.
fn parse_dev(s: &str) -> Option<u64> {
    let (a, b) = s.trim().split_once(':')?;
    Some(libc::makedev(a.parse().ok()?, b.parse().ok()?))
}

/// Partitions of the device at sysfs dir `sys`: (name, device number).
fn partitions(sys: &Path) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys) else { return v };
    for e in rd.flatten() {
        let p = e.path();
        if p.join("partition").exists() {
            if let Some(d) = std::fs::read_to_string(p.join("dev")).ok().and_then(|d| parse_dev(&d)) {
                v.push((e.file_name().to_string_lossy().into_owned(), d));
            }
        }
    }
    v.sort();
    v
}

/// The disk a partition belongs to (None for a whole disk).
fn parent(sys: &Path) -> Option<u64> {
    let dir = std::fs::canonicalize(sys).ok()?;
    dir.join("partition").exists().then_some(())?;
    parse_dev(&std::fs::read_to_string(dir.parent()?.join("dev")).ok()?)
}

/// Mounted filesystems: (device number, mount point), from this process's mountinfo.
fn mounts() -> Vec<(u64, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((parse_dev(f.get(2)?)?, f.get(4)?.to_string()))
        })
        .collect()
}

/// What holds device `d` (device-mapper, md, bcache...), by name.
fn holders(d: u64) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(sysblock::dir(d).join("holders")) else { return Vec::new() };
    rd.flatten().map(|h| h.file_name().to_string_lossy().into_owned()).collect()
}

/// Loop devices whose backing file is one of `devices` (a loop device over the target, at any
/// offset): (name, device number of the loop device).
fn loops_over(devices: &[u64]) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else { return v };
    for e in rd.flatten() {
        let Ok(backing) = std::fs::read_to_string(e.path().join("loop/backing_file")) else { continue };
        if rdev_of(backing.trim()).is_some_and(|b| devices.contains(&b)) {
            if let Some(d) = std::fs::read_to_string(e.path().join("dev")).ok().and_then(|d| parse_dev(&d)) {
                v.push((format!("/dev/{}", e.file_name().to_string_lossy()), d));
            }
        }
    }
    v
}

/// Device numbers of the active swap areas.
fn swaps() -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    text.lines().skip(1).filter_map(|l| rdev_of(l.split_whitespace().next()?)).collect()
}

/// The device number `path` leads to, if it is a block device.
fn rdev_of(path: &str) -> Option<u64> {
    let m = std::fs::metadata(path).ok()?;
    m.file_type().is_block_device().then(|| m.rdev())
}

/// Other processes that have one of `devices` open or memory-mapped, by any name: (pid,
/// command, "open" or "mapped"). Tools look at devices for a moment (udev's blkid, losetup
/// finding a free loop device): only a use seen over a few looks counts. Processes we may not
/// look into are skipped.
fn users(devices: &[u64]) -> Vec<(u32, String, &'static str)> {
    let mut seen = users_now(devices);
    for _ in 0..3 {
        if seen.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        let again = users_now(devices);
        seen.retain(|p| again.contains(p));
    }
    seen
}

fn users_now(devices: &[u64]) -> Vec<(u32, String, &'static str)> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else { return found };
    let ours = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device() && devices.contains(&m.rdev()))
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        // An open descriptor, followed to what it opened: its device number whatever its name.
        let open = std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| fds.flatten().any(|fd| ours(&fd.path())));
        // A mapping names the file mapped; a device mapped is a block device there.
        let mapped = !open
            && std::fs::read_to_string(p.path().join("maps")).is_ok_and(|maps| {
                maps.lines().filter_map(|l| l.split_whitespace().nth(5)).any(|f| f.starts_with('/') && ours(f.as_ref()))
            });
        if open || mapped {
            let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push((pid, comm.trim().to_string(), if open { "open" } else { "mapped" }));
        }
    }
    found
}
