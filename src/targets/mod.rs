//! Targets: block devices, regular files, the `null` target, NBD exports and iSCSI LUNs
//! (`network`).
//!
//! [`inspect`] learns what a target is without writing anything; [`prepare`] creates and fills
//! a missing test file (only once every check of the test has passed); [`open`] opens a target
//! for one worker, as what its engine does I/O on ([`crate::engine::Target`]).

mod blkid;
pub mod fit;
pub mod network;
pub mod safety;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config::{DataPattern, TestSettings};
use crate::content;
use crate::engine::Target;
use crate::engine::network::{Protocol, protocol_of, schemes};
use crate::error::{Result, input, runtime};
use crate::host::{files, placement, sysblock};
use crate::net::TargetName;
use crate::verify::map::TargetFacts;

/// The extended attribute that marks a file iogauge created (and so may overwrite).
pub const CREATED_XATTR: &str = "user.iogauge.created";

/// What a target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// No I/O at all; every I/O completes at once.
    Null,
    /// A block device, opened O_DIRECT unless the test is buffered.
    Block,
    /// A regular file.
    File,
    /// A network target reached from userspace, by its protocol's name (`nbd`, `iscsi`).
    #[serde(untagged)]
    Network(&'static dyn Protocol),
}

impl TargetKind {
    /// Reached over the network from userspace (an NBD export, an iSCSI LUN).
    pub fn network(self) -> bool {
        matches!(self, TargetKind::Network(_))
    }
}

/// What iogauge learned about a target before running.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// The path as given (`null` for the null target).
    pub path: String,
    /// Block device, file or null.
    pub kind: TargetKind,
    /// Size in bytes (for a file still to be created, the size it will have).
    pub size: u64,
    /// Logical block size: offsets and sizes must be multiples of it under O_DIRECT.
    pub logical_block: u64,
    /// Opened with O_DIRECT (false: buffered, numbers may come from the page cache).
    pub direct: bool,
    /// Device model, or what backs the file or device.
    pub model: String,
    /// False for a file iogauge will create.
    pub exists: bool,
    /// A file iogauge created (so it may write it without --allow-write).
    pub created_by_iogauge: bool,
    /// The NUMA node of the device (of a file: of the device its file system is on), where
    /// the machine says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// A network target's protocol, server, export, connections and what its server can do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<network::Remote>,
    /// What the path led to when inspected (None: the null target, or a file still to create).
    #[serde(skip)]
    pub identity: Option<Identity>,
}

impl TargetInfo {
    /// The device number of a block-device target (None for files, network targets and null).
    pub fn device(&self) -> Option<u64> {
        match (self.kind, self.identity) {
            (TargetKind::Block, Some(Identity::Device(rdev))) => Some(rdev),
            _ => None,
        }
    }
}

/// What a target is as an object, whatever its name: a block device by its device number, a
/// file by its filesystem and inode. Two paths to the same device (a symlink, an alias made
/// with mknod) have one identity; a path re-pointed elsewhere gets another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// A block device's `st_rdev`.
    Device(u64),
    /// A file's `st_dev` and `st_ino`.
    File {
        /// The filesystem it is on.
        dev: u64,
        /// Its inode there.
        ino: u64,
    },
    /// A network target: a digest of its protocol, resolved server, export (IQN and LUN) and
    /// size, so two URLs spelling one export differently are one target.
    Network(u64),
}

impl Identity {
    fn from_meta(m: &std::fs::Metadata) -> Identity {
        if m.file_type().is_block_device() {
            Identity::Device(m.rdev())
        } else {
            Identity::File { dev: m.dev(), ino: m.ino() }
        }
    }

    /// The identity of what `f` has open.
    pub fn of(f: &File) -> std::io::Result<Identity> {
        f.metadata().map(|m| Identity::from_meta(&m))
    }

    /// The identity of what `path` leads to now.
    pub fn of_path(path: &str) -> std::io::Result<Identity> {
        std::fs::metadata(path).map(|m| Identity::from_meta(&m))
    }
}

/// The null target's name.
pub const NULL: &str = "null";

/// Whether a word given where a file to read goes names a target instead: a block device,
/// or, where no such file exists, `null` or a URL.
pub fn names_one(word: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(word) {
        Ok(m) => m.file_type().is_block_device(),
        Err(_) => word.as_os_str() == NULL || word.to_string_lossy().contains("://"),
    }
}

/// Learns what target `path` is (a path, `null`, or a network target's URL), writing nothing.
pub fn inspect(path: &TargetName, s: &TestSettings) -> Result<TargetInfo> {
    match protocol_of(path) {
        Some(p) => network::inspect(p, path, s.connections, s.io_timeout),
        // A URL of a scheme iogauge does not know (or one in capitals) is no file's path.
        None if path.contains("://") => Err(input(format!(
            "{path}: not a target iogauge reaches: give a block device, a file, null, or a URL of {} \
             (the scheme in lower case)",
            schemes().join(", ")
        ))),
        None => inspect_local(path, s.file_size, s.buffered),
    }
}

/// Learns what local `path` is, writing nothing. A missing path becomes a file to create of
/// `file_size` bytes, if its directory exists.
pub fn inspect_local(path: &str, file_size: u64, buffered: bool) -> Result<TargetInfo> {
    if path == NULL {
        return Ok(TargetInfo {
            path: path.into(),
            kind: TargetKind::Null,
            size: u64::MAX / 2,
            logical_block: 512,
            direct: false,
            model: "null (no I/O)".into(),
            exists: true,
            created_by_iogauge: false,
            numa_node: None,
            network: None,
            identity: None,
        });
    }
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return missing(path, file_size, buffered);
        }
        Err(e) => return Err(input(format!("target {path}: {e}"))),
    };
    let ft = meta.file_type();
    if ft.is_block_device() {
        let f = File::open(path).map_err(|e| input(cannot_open_device(path, &meta, e)))?;
        let (size, logical_block) = files::block_geometry(&f).map_err(|e| runtime(format!("target {path}: {e}")))?;
        // What was opened, which is what the geometry describes.
        let identity = Identity::of(&f).map_err(|e| runtime(format!("target {path}: {e}")))?;
        let Identity::Device(rdev) = identity else {
            return Err(input(format!("target {path} changed while iogauge inspected it")));
        };
        Ok(TargetInfo {
            path: path.into(),
            kind: TargetKind::Block,
            size,
            logical_block,
            // `buffered` goes through the page cache on a device too (fio's default).
            direct: !buffered,
            model: device_model(rdev),
            exists: true,
            created_by_iogauge: false,
            numa_node: placement::node_of_device(rdev),
            network: None,
            identity: Some(identity),
        })
    } else if ft.is_file() {
        let direct = !buffered && supports_direct(path);
        Ok(TargetInfo {
            path: path.into(),
            kind: TargetKind::File,
            size: meta.len(),
            logical_block: if direct { dio_alignment(path) } else { 512 },
            direct,
            model: file_model(meta.dev()),
            exists: true,
            created_by_iogauge: has_created_mark(path),
            numa_node: placement::node_of_device(meta.dev()),
            network: None,
            identity: Some(Identity::from_meta(&meta)),
        })
    } else {
        Err(input(format!("target {path} is neither a block device nor a regular file")))
    }
}

fn missing(path: &str, file_size: u64, buffered: bool) -> Result<TargetInfo> {
    if path.starts_with("/dev/") {
        return Err(input(format!("target {path} does not exist: name an existing block device")));
    }
    let parent = Path::new(path).parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let pmeta = std::fs::metadata(parent)
        .map_err(|_| input(format!("target {path}: directory {} does not exist", parent.display())))?;
    Ok(TargetInfo {
        path: path.into(),
        kind: TargetKind::File,
        size: file_size,
        // Most filesystems accept 512-byte direct I/O; `prepare` re-checks once the file exists.
        logical_block: 512,
        direct: !buffered,
        model: file_model(pmeta.dev()),
        exists: false,
        created_by_iogauge: true,
        numa_node: placement::node_of_device(pmeta.dev()),
        network: None,
        identity: None,
    })
}

/// A human name for block device `rdev`: its model, or what backs a loop, zram or dm device.
pub fn device_model(rdev: u64) -> String {
    if let Some(m) = sysblock::read(rdev, "device/model") {
        let vendor = sysblock::read(rdev, "device/vendor").unwrap_or_default();
        return format!("{vendor} {m}").trim().to_string();
    }
    if let Some(f) = sysblock::read(rdev, "loop/backing_file") {
        return format!("loop over {f}");
    }
    if let Some(c) = sysblock::read(rdev, "comp_algorithm") {
        let algo = c.split_whitespace().find(|a| a.starts_with('[')).unwrap_or(&c).trim_matches(['[', ']']);
        return format!("zram ({algo})");
    }
    if let Some(n) = sysblock::read(rdev, "dm/name") {
        return format!("device-mapper {n}");
    }
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    sysblock::name(rdev).map_or_else(|| format!("block device {major}:{minor}"), |n| format!("{n} ({major}:{minor})"))
}

/// What holds a target's data when that is memory, not a storage device: a file on tmpfs or
/// ramfs, a zram or brd RAM disk, a loop device over any of those. None for storage (and the
/// null target, which holds nothing).
pub fn in_memory(t: &TargetInfo) -> Option<String> {
    match (t.kind, t.device()) {
        (TargetKind::File, _) => memory_filesystem(Path::new(&t.path)),
        (_, Some(rdev)) => {
            if let Some(backing) = sysblock::read(rdev, "loop/backing_file") {
                return memory_filesystem(Path::new(&backing)).map(|fs| format!("a loop device over a file on {fs}"));
            }
            sysblock::ram_disk(rdev).map(String::from)
        }
        _ => None,
    }
}

/// How much of a target holds no data the kernel must read, where it can tell: the share (%)
/// of a file, or of a loop device's backing file, with no blocks allocated (never written, or
/// discarded), and that file; None under 10 % (a file's metadata and tail), or elsewhere.
/// Reads there are answered with zeros without reaching the storage.
pub fn unwritten(t: &TargetInfo) -> Option<(f64, String)> {
    let file = match (t.kind, t.device()) {
        (TargetKind::File, _) => t.path.clone(),
        (_, Some(rdev)) => sysblock::read(rdev, "loop/backing_file")?,
        _ => return None,
    };
    let m = std::fs::metadata(&file).ok().filter(|m| m.len() > 0)?;
    let pct = 100.0 * (1.0 - (m.blocks() * 512) as f64 / m.len() as f64);
    (pct >= 10.0).then_some((pct, file))
}

/// "tmpfs" or "ramfs" if `path` (or, not yet made, its directory) is on one.
pub fn memory_filesystem(path: &Path) -> Option<String> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let on = if path.exists() {
        path
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
    };
    let c = std::ffi::CString::new(on.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statfs is plain data (all zeroes is valid); statfs only writes into it.
    let st = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        (libc::statfs(c.as_ptr(), &mut st) == 0).then_some(st)
    }?;
    match st.f_type as i64 {
        TMPFS_MAGIC => Some("tmpfs".into()),
        RAMFS_MAGIC => Some("ramfs".into()),
        _ => None,
    }
}

/// What target `info` is, for a verify map (None: the null target, or a path gone).
pub fn facts_of(info: &TargetInfo) -> Option<TargetFacts> {
    match info.kind {
        k if k.network() => network::facts(info),
        _ => facts(&info.path).ok(),
    }
}

/// What target `path` (a path, or a network target's URL, whose server gets `timeout`) is
/// now, for a verify map.
pub fn facts_now(path: &TargetName, timeout: std::time::Duration) -> Result<TargetFacts> {
    if let Some(p) = protocol_of(path) {
        let info = network::inspect(p, path, 1, timeout)?;
        return network::facts(&info).ok_or_else(|| input(format!("target {path}: not a network target")));
    }
    facts(path).map_err(|e| input(format!("target {path}: {e}")))
}

/// Fills a buffer from a byte offset of a target, or says why not.
pub type ReadAt = Box<dyn FnMut(&mut [u8], u64) -> Result<()>>;

/// Why device `path` does not open, with who may open it where that is why: a device's
/// "Permission denied" says nothing of the group (`disk`, where udev makes the nodes) whose
/// members may.
fn cannot_open_device(path: &str, meta: &std::fs::Metadata, e: std::io::Error) -> String {
    let said = format!("target {path}: cannot open: {e}");
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // Refused to root too (EPERM: the kernel holds it, a mount or a lock): no advice to give.
    if e.kind() != std::io::ErrorKind::PermissionDenied || root {
        return said;
    }
    if meta.mode() & 0o040 == 0 {
        return format!("{said}: run as root");
    }
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: libc::group is integers and pointers, for which all zeroes (nulls) is a value.
    let mut group: libc::group = unsafe { std::mem::zeroed() };
    let mut found = std::ptr::null_mut();
    // SAFETY: getgrgid_r writes the entry into `group` and its strings into `buf`, both ours
    // and of the sizes given; `found` is null or points at `group`.
    let name = unsafe {
        let r = libc::getgrgid_r(meta.gid(), &mut group, buf.as_mut_ptr(), buf.len(), &mut found);
        (r == 0 && !found.is_null()).then(|| std::ffi::CStr::from_ptr(group.gr_name).to_string_lossy().into_owned())
    };
    let group = name.unwrap_or_else(|| meta.gid().to_string());
    format!("{said}: run as root, or as a member of group {group}, which may read it")
}

/// Reads target `path` for a check (`iogauge verify`): a file or device through
/// `read_exact_at`, O_DIRECT so the storage is read and not a cached copy (tmpfs and the like
/// refuse it: then without), or a network target over its protocol.
pub fn read_for_check(path: &TargetName, timeout: std::time::Duration) -> Result<ReadAt> {
    if let Some(p) = protocol_of(path) {
        let at = p.address(path)?;
        let mut c = network::connect(p, &at, timeout).map_err(|e| e.into_input())?;
        return Ok(Box::new(move |buf, at| c.read_now(buf, at, timeout)));
    }
    use std::os::unix::fs::FileExt;
    let open = |flags| OpenOptions::new().read(true).custom_flags(flags).open(path);
    let file =
        open(libc::O_DIRECT).or_else(|_| open(0)).map_err(|e| runtime(format!("target {path}: cannot open: {e}")))?;
    Ok(Box::new(move |buf, at| file.read_exact_at(buf, at).map_err(|e| runtime(e.to_string()))))
}

/// What `path` is now, for a verify map: device number or inode, size, and what names a
/// device across reboots (WWID, serial, device-mapper UUID, a loop device's backing file).
pub fn facts(path: &str) -> std::io::Result<TargetFacts> {
    let f = File::open(path)?;
    let m = f.metadata()?;
    if !m.file_type().is_block_device() {
        return Ok(TargetFacts { device: None, inode: Some((m.dev(), m.ino())), size: m.len(), serial: None });
    }
    let rdev = m.rdev();
    let backing = sysblock::read(rdev, "loop/backing_file");
    let serial = ["device/wwid", "wwid", "device/serial", "serial", "dm/uuid"]
        .iter()
        .find_map(|f| sysblock::read(rdev, f))
        .or_else(|| backing.as_ref().map(|b| format!("loop over {b}")));
    let inode = backing.and_then(|b| std::fs::metadata(b).ok()).map(|m| (m.dev(), m.ino()));
    let (size, _) = files::block_geometry(&f)?;
    let device = Some(format!("{}:{}", libc::major(rdev), libc::minor(rdev)));
    Ok(TargetFacts { device, inode, size, serial })
}

fn file_model(dev: u64) -> String {
    format!("file on {}", device_model(dev))
}

fn supports_direct(path: &str) -> bool {
    OpenOptions::new().read(true).custom_flags(libc::O_DIRECT).open(path).is_ok()
}

/// The file's required direct-I/O offset alignment (statx STATX_DIOALIGN, Linux 6.1+), else 512.
fn dio_alignment(path: &str) -> u64 {
    let Ok(c) = std::ffi::CString::new(path) else {
        return 512;
    };
    // SAFETY: statx writes into the zeroed struct we pass; the path is NUL-terminated.
    unsafe {
        let mut sx: libc::statx = std::mem::zeroed();
        if libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_DIOALIGN, &mut sx) == 0
            && sx.stx_mask & libc::STATX_DIOALIGN != 0
            && sx.stx_dio_offset_align > 0
        {
            return (sx.stx_dio_offset_align as u64).max(512);
        }
    }
    512
}

/// The file at `path` carries iogauge's mark: iogauge made it, and may write or remove it.
pub fn has_created_mark(path: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(path) else {
        return false;
    };
    let name = std::ffi::CString::new(CREATED_XATTR).expect("no NUL");
    // SAFETY: a size query (null buffer, size 0) only reads the NUL-terminated strings.
    unsafe { libc::getxattr(c.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

/// Creates a missing test file and writes all of it, so no read ever hits a hole (Iometer's
/// iobw.tst). Marks it as iogauge's. Calls `progress` with the bytes written every 64 MiB.
/// Returns the target as it now is.
pub fn prepare(
    info: &TargetInfo,
    pattern: DataPattern,
    buffered: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<TargetInfo> {
    if info.exists || info.kind != TargetKind::File {
        return Ok(info.clone());
    }
    let path = &info.path;
    let fail = |what: &str, e: std::io::Error| runtime(format!("creating test file {path}: {what}: {e}"));
    let mut f = OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| fail("create", e))?;
    let mut chunk = vec![0u8; 1 << 20];
    content::fill(&mut chunk, pattern.content, 0x5eed);
    let mut left = info.size;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(|e| {
            let _ = std::fs::remove_file(path);
            fail("write", e)
        })?;
        left -= n as u64;
        if left % (64 << 20) == 0 {
            progress(info.size - left);
        }
    }
    f.sync_all().map_err(|e| fail("fsync", e))?;
    mark_created(path);
    inspect_local(path, info.size, buffered)
}

/// Marks the file at `path` as made by iogauge (a file system without user extended
/// attributes keeps no mark: such a file is then not known as iogauge's).
pub fn mark_created(path: &str) {
    if let (Ok(c), Ok(name)) = (std::ffi::CString::new(path), std::ffi::CString::new(CREATED_XATTR)) {
        // SAFETY: NUL-terminated path and name; the value is a 1-byte buffer we own.
        unsafe { libc::setxattr(c.as_ptr(), name.as_ptr(), b"1".as_ptr().cast(), 1, 0) };
    }
}

/// The file system `path` is on and what it is mounted from, as /proc/self/mountinfo says:
/// "ext4 on /dev/loop3" (the mount whose device number is the path's).
pub fn filesystem_of(path: &Path) -> String {
    let Ok(m) = std::fs::metadata(path) else { return "unknown".into() };
    let dev = format!("{}:{}", libc::major(m.dev()), libc::minor(m.dev()));
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    info.lines()
        .filter(|l| l.split(' ').nth(2) == Some(dev.as_str()))
        .find_map(|l| {
            let (_, after) = l.split_once(" - ")?;
            let mut f = after.split(' ');
            Some(format!("{} on {}", f.next()?, f.next()?))
        })
        .unwrap_or_else(|| format!("device {dev}"))
}

/// Opens a target for a worker, as its engine will do I/O on it: a file or device read-only
/// unless `write`, a network target's connections (each given `timeout` to connect).
pub fn open(info: &TargetInfo, write: bool, timeout: std::time::Duration) -> Result<Target> {
    match info.kind {
        TargetKind::Null => Ok(Target::Null),
        TargetKind::Block | TargetKind::File => open_file(info, write).map(Target::File),
        // A network target, whatever its protocol.
        _ => network::open(info, timeout),
    }
}

/// Opens a file or device: read-only unless `write`, O_DIRECT when the target is direct.
///
/// O_NOATIME as fio does: otherwise every read updates the inode's access time, a cost per
/// I/O in the kernel (1 % of a zram read's CPU) that belongs to neither the device nor the
/// workload. Only the file's owner (or CAP_FOWNER) may ask for it; anyone else opens without.
pub fn open_file(info: &TargetInfo, write: bool) -> Result<File> {
    let mut flags = libc::O_CLOEXEC;
    if info.direct {
        flags |= libc::O_DIRECT;
    }
    let open = |flags| OpenOptions::new().read(true).write(write).custom_flags(flags).open(&info.path);
    let f = match open(flags | libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(flags),
        r => r,
    }
    .map_err(|e| runtime(format!("target {}: cannot open: {e}", info.path)))?;
    // The path must still lead to what was checked (a symlink re-pointed since, a device
    // node replaced): else nothing is written.
    if info.identity.is_some() && Identity::of(&f).ok() != info.identity {
        return Err(runtime(format!(
            "target {} is no longer what iogauge checked (the path now leads elsewhere): nothing written",
            info.path
        )));
    }
    Ok(f)
}

/// Whether target `info` can be trimmed; the refusal names it and says why. A block device
/// says so in sysfs (`queue/discard_max_bytes`, a partition's in its disk's); a file (opened
/// for writing: call this only once the safety rules allow it) is asked to punch a hole past
/// its end, which holds no data, so a file system without holes refuses and nothing changes.
pub fn check_trim(info: &TargetInfo) -> Result<()> {
    let refuse = |why: String| input(format!("target {} cannot trim: {why}; run it without trims", info.path));
    match (info.kind, info.device()) {
        (_, Some(rdev)) => {
            let max = sysblock::read(rdev, "queue/discard_max_bytes")
                .or_else(|| sysblock::read(rdev, "../queue/discard_max_bytes"));
            match max.and_then(|m| m.parse::<u64>().ok()) {
                Some(0) => Err(refuse("the device does not discard (its queue/discard_max_bytes is 0)".into())),
                _ => Ok(()),
            }
        }
        (TargetKind::File, _) => {
            let f = open_file(info, true)?;
            let end = f.metadata().map_err(|e| refuse(e.to_string()))?.len();
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            // SAFETY: fallocate takes plain integers; past the end it punches nothing.
            match unsafe { libc::fallocate(f.as_raw_fd(), mode, end as libc::off_t, 4096) } {
                0 => Ok(()),
                _ => Err(refuse(format!("its file system punches no holes ({})", std::io::Error::last_os_error()))),
            }
        }
        _ => Ok(()),
    }
}

/// Makes directory `dir` for an output if it is missing, and checks that it takes files,
/// leaving nothing behind: one check for every output that is a directory (`--log-dir`,
/// `--fio-json DIR`).
pub fn output_dir(dir: &Path, flag: &str) -> Result<()> {
    let cannot = |e: std::io::Error| input(format!("{flag} {}: cannot write there: {e}", dir.display()));
    if dir.exists() && !dir.is_dir() {
        return Err(input(format!("{flag} {} is not a directory: give a directory for its files", dir.display())));
    }
    std::fs::create_dir_all(dir).map_err(cannot)?;
    probe_dir(dir, 0).map_err(cannot)
}

/// Whether `dir` takes a new file opened with `flags` (O_DIRECT, say): an unnamed file
/// (O_TMPFILE) where the filesystem makes one, else a file of a name nothing else holds,
/// created exclusively and removed. Nothing that was there before is touched.
pub fn probe_dir(dir: &Path, flags: i32) -> std::io::Result<()> {
    let tmp = OpenOptions::new().write(true).custom_flags(libc::O_TMPFILE | flags).open(dir);
    match tmp {
        Ok(_) => return Ok(()),
        // A filesystem without O_TMPFILE (FUSE, older NFS): a named file instead.
        Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) => {}
        Err(e) => return Err(e),
    }
    probe_named(dir, flags)
}

/// [`probe_dir`] with a named file: the first name of this process's that nothing holds,
/// created exclusively (`O_EXCL`), so only a file this call made is removed.
fn probe_named(dir: &Path, flags: i32) -> std::io::Result<()> {
    for n in 0..100 {
        let probe = dir.join(format!(".iogauge-probe.{}.{n}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).custom_flags(flags).open(&probe) {
            Ok(_) => return std::fs::remove_file(&probe),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe never removes what it did not make (issue 46: `fs --direct` removed a file of
    /// its probe's name that was already there, then said the directory took no O_DIRECT).
    #[test]
    fn probes_leave_files_they_did_not_make() {
        let dir = std::env::temp_dir().join(format!("iogauge-probe-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let theirs: Vec<std::path::PathBuf> =
            (0..3).map(|n| dir.join(format!(".iogauge-probe.{}.{n}", std::process::id()))).collect();
        for f in &theirs {
            std::fs::write(f, "theirs").unwrap();
        }
        probe_named(&dir, 0).unwrap();
        probe_dir(&dir, 0).unwrap();
        for f in &theirs {
            assert_eq!(std::fs::read_to_string(f).unwrap(), "theirs", "{}", f.display());
        }
        let left = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, theirs.len(), "a probe left a file behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
