//! Refuses writes that could destroy someone's data, unless `--allow-write` names the target.
//!
//! A block device is refused when it is mounted (itself or a partition), has partitions, is held
//! by device-mapper/md (holders), is an active swap area, is open in another process (held
//! exclusively or not), or carries a partition table or a filesystem, RAID, LVM, LUKS or swap
//! signature.
//! An existing regular file is refused unless iogauge created it.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};

use super::{TargetInfo, TargetKind};

/// Bytes read from the start of a device to look for signatures (btrfs's sits at 64 KiB).
const PROBE_BYTES: usize = 69_632;

/// Bytes read at the end of a device: md 0.90 metadata lies between 64 and 128 KiB from it.
const TAIL_BYTES: usize = 128 << 10;

/// Why writing to `info` is refused, or Ok if it is safe or allowed.
pub fn check_write(info: &TargetInfo, allowed: &[String]) -> crate::error::Result<()> {
    if is_allowed(&info.path, allowed) {
        return Ok(());
    }
    let found = match info.kind {
        TargetKind::Null => return Ok(()),
        TargetKind::File if !info.exists || info.created_by_iogauge => return Ok(()),
        TargetKind::File => vec![format!("{} is an existing file iogauge did not create", info.path)],
        TargetKind::Block => block_findings(&info.path),
    };
    if found.is_empty() {
        return Ok(());
    }
    Err(crate::error::input(format!(
        "refusing to write to {}: {}; pass --allow-write {} (or allow_write in the job file) to destroy its data",
        info.path,
        found.join(", "),
        info.path
    )))
}

fn is_allowed(path: &str, allowed: &[String]) -> bool {
    let canon = |p: &str| std::fs::canonicalize(p).ok();
    let me = canon(path);
    allowed.iter().any(|a| a == path || (me.is_some() && canon(a) == me))
}

/// Everything that shows the device holds data or is in use.
pub fn block_findings(path: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(meta) = std::fs::metadata(path) else {
        return found;
    };
    let (major, minor) = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    let sys = format!("/sys/dev/block/{major}:{minor}");
    let parts = partitions(&sys);
    let mut devs: Vec<String> = vec![format!("{major}:{minor}")];
    devs.extend(parts.iter().map(|(_, d)| d.clone()));
    if let Ok(mounts) = std::fs::read_to_string("/proc/self/mountinfo") {
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 4 && devs.iter().any(|d| d == f[2]) {
                found.push(format!("mounted at {}", f[4]));
            }
        }
    }
    if !parts.is_empty() {
        let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
        found.push(format!("has partitions ({})", names.join(", ")));
    }
    if let Ok(rd) = std::fs::read_dir(format!("{sys}/holders")) {
        for h in rd.flatten() {
            found.push(format!("in use by {}", h.file_name().to_string_lossy()));
        }
    }
    if let (Ok(swaps), Ok(canon)) = (std::fs::read_to_string("/proc/swaps"), std::fs::canonicalize(path)) {
        if swaps.lines().skip(1).any(|l| l.split_whitespace().next() == Some(&*canon.to_string_lossy())) {
            found.push("an active swap area".into());
        }
    }
    let names: Vec<String> = std::iter::once(path.to_string())
        .chain(parts.iter().map(|(n, _)| format!("/dev/{n}")))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    // Tools look at devices for a moment (udev's blkid, losetup finding a free loop device):
    // only a process that keeps it open over a few looks counts.
    let mut open = opened_by(&names);
    for _ in 0..3 {
        if open.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        let again = opened_by(&names);
        open.retain(|p| again.contains(p));
    }
    for (pid, comm) in open {
        found.push(format!("open in process {pid} ({comm})"));
    }
    match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(path) {
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) && found.is_empty() => {
            found.push("held open exclusively by another process".into())
        }
        _ => {}
    }
    if let Ok(f) = File::open(path) {
        let mut buf = vec![0u8; PROBE_BYTES];
        let n = read_at_most(&f, &mut buf, 0);
        let mut sigs = signatures(&buf[..n]);
        let size = (&f).seek(SeekFrom::End(0)).unwrap_or(0);
        let tail_start = size.saturating_sub(TAIL_BYTES as u64);
        let mut tail = vec![0u8; (size - tail_start) as usize];
        let n = read_at_most(&f, &mut tail, tail_start);
        for sig in end_signatures(&tail[..n], tail_start, size) {
            if !sigs.contains(&sig) {
                sigs.push(sig);
            }
        }
        for sig in sigs {
            found.push(format!("{sig} on {path}"));
        }
    }
    found
}

/// Other processes that have one of `devices` (canonical paths) open: a database on a raw
/// device need not hold it exclusively. Processes we may not look into are skipped.
fn opened_by(devices: &[String]) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else { return found };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else { continue };
        let open = fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| devices.iter().any(|d| t.as_os_str() == d.as_str())));
        if open {
            let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push((pid, comm.trim().to_string()));
        }
    }
    found
}

fn read_at_most(f: &File, buf: &mut [u8], from: u64) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], from + n as u64) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// Partitions of the device at sysfs dir `sys`: (name, "major:minor").
fn partitions(sys: &str) -> Vec<(String, String)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(sys) else {
        return v;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.join("partition").exists() {
            if let Ok(dev) = std::fs::read_to_string(p.join("dev")) {
                v.push((e.file_name().to_string_lossy().into_owned(), dev.trim().to_string()));
            }
        }
    }
    v.sort();
    v
}

const MD: &str = "Linux RAID (md) member";
const MD_SB_MAGIC: u32 = 0xa92b_4efc;
const MD_MAGIC: [u8; 4] = MD_SB_MAGIC.to_le_bytes();

/// Whether `buf[i..]`, at byte `on_disk` of the device, is an md superblock of metadata 1.x:
/// the magic, version 1, and its own position in sectors (as blkid checks).
fn md_v1(buf: &[u8], i: usize, on_disk: u64) -> bool {
    let le =
        |at: usize, n: usize| buf.get(i + at..i + at + n).map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | x as u64));
    at(buf, i, &MD_MAGIC) && le(4, 4) == Some(1) && le(144, 8) == Some(on_disk >> 9)
}

/// The formats whose signatures sit near the end of a device of `size` bytes, from `buf`, its
/// bytes from `start` on: md metadata 0.90 (64 KiB-aligned, 64 KiB from the end) and 1.0
/// (4 KiB-aligned, 8 KiB from the end), which RAID 1 members such as mirrored /boot
/// partitions often use.
pub fn end_signatures(buf: &[u8], start: u64, size: u64) -> Vec<&'static str> {
    let in_buf = |off: u64| off.checked_sub(start).map(|i| i as usize);
    let v090 = (size & !0xffff)
        .checked_sub(0x10000)
        .and_then(in_buf)
        .is_some_and(|i| at(buf, i, &MD_MAGIC) || at(buf, i, &MD_SB_MAGIC.to_be_bytes())); // 0.90: either byte order
    let v10 = (size & !0xfff).checked_sub(0x2000).is_some_and(|off| in_buf(off).is_some_and(|i| md_v1(buf, i, off)));
    if size > 0x10000 && (v090 || v10) { vec![MD] } else { Vec::new() }
}

fn at(buf: &[u8], offset: usize, magic: &[u8]) -> bool {
    buf.get(offset..offset + magic.len()) == Some(magic)
}

/// Names of the on-disk formats whose signatures `buf` (the device's first bytes) holds.
pub fn signatures(buf: &[u8]) -> Vec<&'static str> {
    let mut v = Vec::new();
    if at(buf, 1080, &[0x53, 0xef]) {
        let incompat = buf.get(1120).copied().unwrap_or(0);
        let compat = buf.get(1116).copied().unwrap_or(0);
        v.push(if incompat & 0x40 != 0 {
            "ext4 filesystem"
        } else if compat & 0x04 != 0 {
            "ext3 filesystem"
        } else {
            "ext2 filesystem"
        });
    }
    let table: [(usize, &[u8], &'static str); 12] = [
        (0, b"XFSB", "xfs filesystem"),
        (65600, b"_BHRfS_M", "btrfs filesystem"),
        (3, b"NTFS    ", "ntfs filesystem"),
        (82, b"FAT32   ", "vfat filesystem"),
        (54, b"FAT1", "vfat filesystem"),
        (32769, b"CD001", "iso9660 filesystem"),
        (1024, &[0x10, 0x20, 0xf5, 0xf2], "f2fs filesystem"),
        (0, b"hsqs", "squashfs filesystem"),
        (0, b"LUKS\xba\xbe", "LUKS encrypted volume"),
        (4086, b"SWAPSPACE2", "swap area"),
        (4086, b"SWAP-SPACE", "swap area"),
        (512, b"EFI PART", "partition table (GPT)"),
    ];
    for (off, magic, name) in table {
        if at(buf, off, magic) && !v.contains(&name) {
            v.push(name);
        }
    }
    // md metadata 1.1 at the start, 1.2 at 4 KiB.
    if md_v1(buf, 0, 0) || md_v1(buf, 4096, 4096) {
        v.push(MD);
    }
    if (0..4).any(|s| at(buf, s * 512, b"LABELONE")) {
        v.push("LVM physical volume");
    }
    if at(buf, 4096, b"EFI PART") && !v.contains(&"partition table (GPT)") {
        v.push("partition table (GPT)");
    }
    let has_fs = v.iter().any(|s| s.contains("filesystem"));
    let mbr_types = (0..4).any(|i| buf.get(446 + 16 * i + 4).is_some_and(|&t| t != 0));
    if !has_fs && at(buf, 510, &[0x55, 0xaa]) && mbr_types && !v.contains(&"partition table (GPT)") {
        v.push("partition table (MBR)");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_superblocks_must_name_their_own_position() {
        let mut b = vec![0u8; PROBE_BYTES];
        b[4096..4100].copy_from_slice(&MD_MAGIC);
        // The magic alone (4 bytes of data that happen to match) is not a superblock.
        assert!(signatures(&b).is_empty());
        b[4100] = 1;
        b[4096 + 144] = 8; // super_offset: sector 8 = 4 KiB
        assert_eq!(signatures(&b), [MD]);
        // Metadata 1.0 at 8 KiB from the 4 KiB-aligned end, seen in a tail read from `start`.
        let (size, start): (u64, u64) = (10 * 65536 + 5000, 8 * 65536);
        let off = (size & !0xfff) - 0x2000;
        let mut t = vec![0u8; (size - start) as usize];
        let i = (off - start) as usize;
        t[i..i + 4].copy_from_slice(&MD_MAGIC);
        t[i + 4] = 1;
        t[i + 144..i + 152].copy_from_slice(&(off >> 9).to_le_bytes());
        assert_eq!(end_signatures(&t, start, size), [MD]);
        t[i + 144] ^= 1;
        assert!(end_signatures(&t, start, size).is_empty());
    }

    #[test]
    fn finds_signatures() {
        let mut b = vec![0u8; PROBE_BYTES];
        assert!(signatures(&b).is_empty());
        b[1080] = 0x53;
        b[1081] = 0xef;
        b[1120] = 0x40;
        assert_eq!(signatures(&b), ["ext4 filesystem"]);
        let mut b = vec![0u8; PROBE_BYTES];
        b[510] = 0x55;
        b[511] = 0xaa;
        b[446 + 4] = 0x83;
        assert_eq!(signatures(&b), ["partition table (MBR)"]);
        let mut b = vec![0u8; PROBE_BYTES];
        b[512..520].copy_from_slice(b"LABELONE");
        assert_eq!(signatures(&b), ["LVM physical volume"]);
    }
}
