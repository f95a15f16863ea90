//! What the kernel says of a block device under `/sys/dev/block/MAJ:MIN`, by device number:
//! the one place that path is spelled (targets, safety, the engines, placement, the device's
//! own counts and `capture` all read there).

use std::path::PathBuf;

/// The sysfs directory of block device `rdev` (a link to the device's own directory).
pub fn dir(rdev: u64) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev)))
}

/// Entry `entry` (a path under [`dir`], `..` allowed) of block device `rdev`, trimmed; None
/// where it is missing, unreadable or empty.
pub fn read(rdev: u64, entry: &str) -> Option<String> {
    std::fs::read_to_string(dir(rdev).join(entry)).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// The kernel's name for block device `rdev` (`sda`, `zram0`, `loop3`).
pub fn name(rdev: u64) -> Option<String> {
    Some(std::fs::read_link(dir(rdev)).ok()?.file_name()?.to_string_lossy().into_owned())
}

/// The RAM disk block device `rdev` is, in words, by the kernel's name for that device
/// number: its data in memory (zram, brd). None for anything else.
pub fn ram_disk(rdev: u64) -> Option<&'static str> {
    let name = name(rdev)?;
    let numbered = |prefix: &str| name.strip_prefix(prefix).is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
    if numbered("zram") {
        Some("zram, a compressed RAM disk")
    } else if numbered("ram") {
        Some("brd, a RAM disk")
    } else {
        None
    }
}
