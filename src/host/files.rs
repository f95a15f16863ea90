//! What a path is on this host, asked of the kernel: a device or a file, and its size.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Whether `path` is a device, block or character: never a file to read to its end (a disk
/// would be read whole into memory, /dev/zero forever).
pub fn is_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
}

/// Whether `path` is a block device.
pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The size of an existing block device or regular file (a block device is opened read-only,
/// and only asked its size). What fio takes as a job's size when it gives none.
pub fn existing_size(path: &Path) -> std::io::Result<u64> {
    let meta = std::fs::metadata(path)?;
    if meta.file_type().is_block_device() {
        return Ok(block_geometry(&File::open(path)?)?.0);
    }
    match meta.is_file() {
        true => Ok(meta.len()),
        false => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "neither a block device nor a file")),
    }
}

/// Size and logical block size of a block device.
pub fn block_geometry(f: &File) -> std::io::Result<(u64, u64)> {
    let mut size: u64 = 0;
    let mut lbs: libc::c_int = 0;
    // SAFETY: both ioctls write one integer of the given type through the pointer.
    unsafe {
        if libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) != 0
            || libc::ioctl(f.as_raw_fd(), libc::BLKSSZGET, &mut lbs) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((size, lbs.max(512) as u64))
}

/// `_IOR(0x12, 114, size_t)`: not exported by the libc crate.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// What an output that replaces a file only of its own kind writes, and how to tell one
/// (`capture -o`: an iogauge capture; `--iolog`: fio's iolog v3; `--log-dir`: fio's logs).
pub struct Ours {
    /// What it is, as messages say it ("an iogauge capture").
    pub what: &'static str,
    /// Whether the existing regular file at a path is one.
    pub is: fn(&Path) -> bool,
}
