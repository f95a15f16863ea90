//! Data safety: devices that hold data are refused for writes and stay byte-identical, unless
//! --allow-write names them. Reads are always allowed.

use crate::common;

use std::process::Command;

use common::*;

fn sh(cmd: &str) {
    let out = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
}

/// What `wipefs -n` lists on `dev`: one line per signature (type and offset), none if blank.
fn wipefs(dev: &str) -> Vec<String> {
    let out = Command::new("wipefs").args(["-n", "--noheadings", "-O", "TYPE,OFFSET", dev]).output().unwrap();
    assert!(out.status.success(), "wipefs -n {dev}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
}

/// Every on-disk format the real tools make, one loop device each: iogauge refuses to write
/// exactly when `wipefs -n` finds a signature (libblkid is the judge, not a list of ours), and
/// a refused device keeps every byte. Damaged primaries with intact backups, swap with several
/// page sizes, a hibernation image and a FAT volume with a blank type label are the cases a
/// hand-written probe missed. Each device is as small as its tool allows (xfs 300 MiB, btrfs
/// 114, nilfs2 128...): every refused device is read whole twice, before and after.
#[test]
fn every_format_wipefs_finds_is_refused() {
    const MIB: u64 = 1 << 20;
    let image = |tool: &str| {
        format!(
            "d=$(mktemp -d) && mkdir $d/src && echo data > $d/src/f && {tool} && dd if=$d/img of=$DEV conv=notrunc status=none"
        )
    };
    let luks = |kind: &str| {
        format!(
            "printf secret > /tmp/iogauge-key && cryptsetup luksFormat -q --type {kind} --pbkdf pbkdf2 --pbkdf-force-iterations 1000 $DEV /tmp/iogauge-key"
        )
    };
    let mut cases: Vec<(String, u64, String)> = vec![
        ("blank".into(), 16 * MIB, "true".into()),
        ("random data".into(), 16 * MIB, "head -c 4M /dev/urandom | dd of=$DEV conv=notrunc status=none".into()),
    ];
    for (name, size, cmd) in [
        ("ext2", 16, "mkfs.ext2 -q -F $DEV"),
        ("ext3", 16, "mkfs.ext3 -q -F $DEV"),
        ("ext4", 16, "mkfs.ext4 -q -F $DEV"),
        ("xfs", 320, "mkfs.xfs -q -f $DEV"),
        ("btrfs", 128, "mkfs.btrfs -q -f $DEV"),
        ("vfat", 16, "mkfs.vfat $DEV"),
        // A FAT32 volume whose type label ("FAT32   ") is blank: blkid still knows the BPB.
        (
            "vfat, blank type label",
            64,
            "mkfs.vfat -F 32 $DEV && printf '        ' | dd of=$DEV bs=1 seek=82 conv=notrunc status=none",
        ),
        ("exfat", 16, "mkfs.exfat $DEV"),
        ("ntfs", 16, "mkfs.ntfs -Q -F $DEV"),
        ("f2fs", 64, "mkfs.f2fs -q -f $DEV"),
        ("jfs", 32, "mkfs.jfs -q $DEV"),
        ("nilfs2", 160, "mkfs.nilfs2 -q -f $DEV"),
        ("reiserfs", 64, "mkfs.reiserfs -q -f $DEV"),
        ("udf", 16, "mkfs.udf $DEV"),
        ("minix", 16, "mkfs.minix $DEV"),
        ("bfs", 16, "mkfs.bfs $DEV"),
        ("swap, 4 KiB pages", 16, "mkswap -p 4096 $DEV"),
        ("swap, 8 KiB pages", 16, "mkswap -p 8192 $DEV"),
        ("swap, 16 KiB pages", 16, "mkswap -p 16384 $DEV"),
        ("swap, 64 KiB pages", 16, "mkswap -p 65536 $DEV"),
        // A swap area holding a hibernation image: its signature replaces SWAPSPACE2.
        (
            "swap with a hibernation image",
            16,
            "mkswap -p 4096 $DEV && printf 'S1SUSPEND\\0' | dd of=$DEV bs=1 seek=4086 conv=notrunc status=none",
        ),
        ("LVM physical volume", 16, "pvcreate -q -f $DEV 3>&- 4>&- 5>&-"),
        ("MBR partition table", 32, "printf 'label: dos\\n,16M,83\\n' | sfdisk -q $DEV"),
        ("GPT partition table", 32, "printf 'label: gpt\\n,16M\\n' | sfdisk -q $DEV"),
        // The primary GPT header zeroed: the backup at the end of the device remains.
        (
            "GPT, primary header damaged",
            32,
            "printf 'label: gpt\\n,16M\\n' | sfdisk -q $DEV && dd if=/dev/zero of=$DEV bs=512 seek=1 count=1 conv=notrunc status=none",
        ),
    ] {
        cases.push((name.into(), size * MIB, cmd.into()));
    }
    cases.push(("LUKS1".into(), 32 * MIB, luks("luks1")));
    cases.push(("LUKS2".into(), 32 * MIB, luks("luks2")));
    // LUKS2's primary header zeroed: the secondary at 16 KiB remains.
    cases.push((
        "LUKS2, primary header damaged".into(),
        32 * MIB,
        format!("{} && dd if=/dev/zero of=$DEV bs=4096 count=1 conv=notrunc status=none", luks("luks2")),
    ));
    cases.push(("squashfs".into(), 16 * MIB, image("mksquashfs $d/src $d/img -noappend -quiet >/dev/null")));
    cases.push(("cramfs".into(), 16 * MIB, image("mkfs.cramfs $d/src $d/img >/dev/null")));
    cases.push(("erofs".into(), 16 * MIB, image("mkfs.erofs $d/img $d/src >/dev/null")));
    let mut blank = 0;
    for (name, size, cmd) in &cases {
        let l = LoopDev::new(*size);
        sh(&format!("DEV={} && {cmd}", l.dev));
        let found = wipefs(&l.dev);
        let before = digest(&l.file);
        let out = iogauge(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "200", "-q"]);
        let err = String::from_utf8_lossy(&out.stderr);
        if found.is_empty() {
            blank += 1;
            assert_eq!(out.status.code(), Some(0), "{name}: wipefs finds nothing, yet iogauge refused: {err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{name}: wipefs finds {found:?}, yet iogauge wrote: {err}");
            assert_eq!(err.lines().count(), 1, "{name}: {err}");
            assert!(err.contains(&format!("--allow-write {}", l.dev)), "{name}: {err}");
            assert_eq!(digest(&l.file), before, "{name}: {} was modified", l.dev);
        }
    }
    // The blank device and random data; every format made by a tool is found.
    assert_eq!(blank, 2, "formats wipefs does not find: the corpus no longer tests them");
}

/// A write test on `dev` is refused naming `found`; the backing file is unchanged.
fn refused(l: &LoopDev, found: &str) {
    let before = digest(&l.file);
    let out = iogauge(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--time", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(found), "{err}");
    assert!(err.contains(&format!("--allow-write {}", l.dev)), "{err}");
    assert_eq!(digest(&l.file), before, "{} was modified", l.dev);
    // Reads are allowed and change nothing.
    ok(&["run", "--target", &l.dev, "--spec", "random-read-4k", "--ios", "2000", "-q"]);
    assert_eq!(digest(&l.file), before);
}

#[test]
fn ext4_is_refused_until_allowed() {
    let l = LoopDev::new(64 << 20);
    sh(&format!("mkfs.ext4 -q -F {}", l.dev));
    refused(&l, &format!("ext4 signature at offset 0x438 on {}", l.dev));
    let before = digest(&l.file);
    ok_in(
        &scratch("cwd"),
        &["run", "--target", &l.dev, "--allow-write", &l.dev, "--spec", "random-write-4k", "--ios", "2000", "-q"],
    );
    assert_ne!(digest(&l.file), before, "allowed writes happened");
}

#[test]
fn partition_tables_are_refused() {
    let l = LoopDev::new(64 << 20);
    sh(&format!("printf 'label: dos\\n,16M,83\\n' | sfdisk -q {}", l.dev));
    refused(&l, "dos partition table");
    let g = LoopDev::new(64 << 20);
    sh(&format!("printf 'label: gpt\\n,16M\\n' | sfdisk -q {}", g.dev));
    refused(&g, "gpt partition table");
}

#[test]
fn a_mounted_filesystem_is_refused() {
    let l = LoopDev::new(64 << 20);
    sh(&format!("mkfs.ext4 -q -F {}", l.dev));
    let mnt = scratch("mnt");
    sh(&format!("mount {} {}", l.dev, mnt.display()));
    let out = iogauge(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--time", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    sh(&format!("umount {}", mnt.display()));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("mounted at") && err.contains("ext4 signature"), "{err}");
}

#[test]
fn an_existing_file_is_not_overwritten() {
    let dir = scratch("foreign");
    let f = dir.join("precious.dat");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let before = digest(&f);
    let path = f.to_str().unwrap();
    let out = iogauge(&["run", "--target", path, "--spec", "random-write-4k", "--time", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("existing file iogauge did not create"), "{err}");
    assert_eq!(digest(&f), before);
    ok(&["run", "--target", path, "--spec", "random-read-4k", "--ios", "100", "-q"]);
    assert_eq!(digest(&f), before);
}

#[test]
fn a_blank_device_may_be_written() {
    let l = LoopDev::new(64 << 20);
    ok(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "1000", "-q"]);
}

#[test]
fn an_lvm_physical_volume_is_refused() {
    let l = LoopDev::new(64 << 20);
    sh(&format!("pvcreate -q -f {} 3>&- 4>&- 5>&-", l.dev));
    refused(&l, &format!("LVM2_member signature at offset 0x218 on {}", l.dev));
}

/// Another process has the device open (a database on a raw device, say): refused while it
/// does, whether or not it holds it exclusively.
#[test]
fn a_device_open_in_another_process_is_refused() {
    for flags in ["os.O_RDONLY", "os.O_RDONLY | os.O_EXCL"] {
        let l = LoopDev::new(64 << 20);
        let script = format!(
            "import os, sys, time\nfd = os.open('{}', {flags})\nprint('open', flush=True)\ntime.sleep(60)\n",
            l.dev
        );
        let mut holder =
            Command::new("python3").args(["-c", &script]).stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.as_mut().unwrap()), &mut line).unwrap();
        assert_eq!(line.trim(), "open");
        refused(&l, &format!("open in process {}", holder.id()));
        holder.kill().unwrap();
        holder.wait().unwrap();
        // Closed: the blank device may be written again.
        ok(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "100", "-q"]);
    }
}

/// A symlink to a device that holds data is the device: refused, and allowed by either name.
#[test]
fn a_symlink_to_a_protected_device_is_refused() {
    let l = LoopDev::new(64 << 20);
    sh(&format!("mkfs.ext4 -q -F {}", l.dev));
    let link = scratch("link").join("disk");
    std::os::unix::fs::symlink(&l.dev, &link).unwrap();
    let link = link.to_str().unwrap();
    let before = digest(&l.file);
    let out = iogauge(&["run", "--target", link, "--spec", "random-write-4k", "--time", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ext4 signature"), "{err}");
    assert_eq!(digest(&l.file), before);
    ok(&["run", "--target", link, "--allow-write", &l.dev, "--spec", "random-write-4k", "--ios", "100", "-q"]);
    assert_ne!(digest(&l.file), before, "allowed by the device's own name");
}

/// Writes an md superblock of metadata `version` on `dev` (of `size` bytes) as mdadm lays it
/// out: 1.2 at 4 KiB, 1.0 at 8 KiB from the end, 0.90 in the last 64 KiB-aligned 64 KiB.
/// (This kernel has no md driver, so mdadm cannot make one; blkid confirms the result.)
fn write_md_superblock(dev: &str, size: u64, version: &str) {
    use std::os::unix::fs::FileExt;
    const MAGIC: u32 = 0xa92b_4efc;
    let put = |b: &mut [u8], at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
    let (offset, sb) = if version == "0.90" {
        let offset = (size & !0xffff) - 0x10000;
        let mut sb = vec![0u8; 4096];
        put(&mut sb, 0, &MAGIC.to_le_bytes());
        put(&mut sb, 8, &90u32.to_le_bytes()); // minor_version
        put(&mut sb, 28, &1u32.to_le_bytes()); // level: RAID 1
        put(&mut sb, 32, &((offset >> 10) as u32).to_le_bytes()); // size in KiB
        put(&mut sb, 36, &2u32.to_le_bytes()); // nr_disks
        put(&mut sb, 40, &2u32.to_le_bytes()); // raid_disks
        (offset, sb)
    } else {
        let offset = if version == "1.2" { 4096 } else { (size & !0xfff) - 0x2000 };
        let max_dev = 2u32;
        let mut sb = vec![0u8; 256 + 2 * max_dev as usize];
        put(&mut sb, 0, &MAGIC.to_le_bytes());
        put(&mut sb, 4, &1u32.to_le_bytes()); // major_version
        put(&mut sb, 16, &[0x5a; 16]); // set_uuid
        put(&mut sb, 32, b"iogauge-test:0");
        put(&mut sb, 72, &1u32.to_le_bytes()); // level: RAID 1
        put(&mut sb, 92, &2u32.to_le_bytes()); // raid_disks
        let data_offset: u64 = if version == "1.2" { 2048 } else { 0 };
        put(&mut sb, 128, &data_offset.to_le_bytes());
        put(&mut sb, 136, &(size / 512 - 2048 - 16).to_le_bytes()); // data_size
        put(&mut sb, 144, &(offset >> 9).to_le_bytes()); // super_offset
        put(&mut sb, 168, &[0xa5; 16]); // device_uuid
        put(&mut sb, 220, &max_dev.to_le_bytes());
        put(&mut sb, 258, &1u16.to_le_bytes()); // dev_roles[1]: this device, role 1
        // The kernel's checksum: 32-bit little-endian words summed in 64 bits, folded.
        let sum: u64 = sb.chunks(4).map(|w| u32::from_le_bytes(w.try_into().unwrap()) as u64).sum();
        put(&mut sb, 216, &(((sum & 0xffff_ffff) + (sum >> 32)) as u32).to_le_bytes());
        (offset, sb)
    };
    let f = std::fs::OpenOptions::new().write(true).open(dev).unwrap();
    f.write_all_at(&sb, offset).unwrap();
    f.sync_all().unwrap();
}

/// md RAID members, whether their superblock is at the start (metadata 1.2, mdadm's default)
/// or near the end (1.0 and 0.90, common on RAID 1 /boot mirrors, where a filesystem may also
/// be seen at the start): blkid names each a linux_raid_member, and iogauge refuses to write.
#[test]
fn md_raid_members_are_refused() {
    for version in ["1.2", "1.0", "0.90"] {
        let size = (64 << 20) + 12345 * 512;
        let l = LoopDev::new(size);
        write_md_superblock(&l.dev, size, version);
        let out = Command::new("blkid").args(["-p", "-o", "export", &l.dev]).output().unwrap();
        let probe = String::from_utf8_lossy(&out.stdout);
        assert!(probe.contains("TYPE=linux_raid_member"), "{version}: blkid says {probe:?}");
        assert!(probe.contains(&format!("VERSION={version}")), "{version}: blkid says {probe:?}");
        refused(&l, "linux_raid_member signature");
    }
}

/// A process that keeps running `script` (Python) until dropped; it prints "ready" first.
struct Holder(std::process::Child);

impl Holder {
    fn new(script: &str) -> Holder {
        let full =
            format!("import os, sys, time, ctypes, mmap\n{script}\nprint('ready', flush=True)\ntime.sleep(60)\n");
        let mut child =
            Command::new("python3").args(["-c", &full]).stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.as_mut().unwrap()), &mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the holder failed to start");
        Holder(child)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A write test on `dev` is refused (exit 2, one line, naming `says`) and changes no byte.
fn refused_as(l: &LoopDev, args: &[&str], says: &str) {
    let before = digest(&l.file);
    let mut all = vec!["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "200", "-q"];
    all.extend(args);
    let out = iogauge(&all);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(says), "expected {says:?}: {err}");
    assert_eq!(digest(&l.file), before, "{} was modified", l.dev);
}

/// In use is a fact about the device, whatever the name it is reached by: a device node made
/// with mknod and opened by another process, a mapping of the device, a loop device stacked
/// on it at an offset, and the whole disk held open while the target is one of its partitions.
#[test]
fn a_device_in_use_under_another_name_is_refused() {
    let l = LoopDev::new(64 << 20);
    let meta = std::fs::metadata(&l.dev).unwrap();
    let rdev = std::os::unix::fs::MetadataExt::rdev(&meta);
    let alias = scratch("alias").join("disk-alias");
    sh(&format!("mknod {} b {} {}", alias.display(), libc::major(rdev), libc::minor(rdev)));
    {
        let h = Holder::new(&format!("fd = os.open('{}', os.O_RDONLY)", alias.display()));
        refused_as(&l, &[], &format!("open in process {}", h.0.id()));
    }
    {
        // Mapped, its descriptor closed: only the mapping shows it.
        let h = Holder::new(&format!(
            "libc = ctypes.CDLL(None); libc.mmap.restype = ctypes.c_void_p\n\
             fd = os.open('{}', os.O_RDONLY)\n\
             p = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)\n\
             assert p not in (None, ctypes.c_void_p(-1).value)\nos.close(fd)",
            l.dev
        ));
        refused_as(&l, &[], &format!("mapped in process {}", h.0.id()));
    }
    {
        let stacked = attach_loop(&l.dev, &["-o", "1048576"]);
        refused_as(&l, &[], &format!("{stacked} is a loop device over it"));
        sh(&format!("losetup -d {stacked}"));
    }
    // Nothing uses it any more: the blank device may be written.
    ok(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "100", "-q"]);

    // A partition of a disk another process holds open.
    let disk = LoopDev::new(64 << 20);
    sh(&format!("printf 'label: gpt\\n,16M\\n,16M\\n' | sfdisk -q {} 2>/dev/null; partx -a {0}", disk.dev));
    // Partitions added by partx outlive the loop device's detach: remove them whatever happens.
    struct Parts<'a>(&'a str);
    impl Drop for Parts<'_> {
        fn drop(&mut self) {
            let _ = Command::new("partx").args(["-d", self.0]).output();
        }
    }
    let _parts = Parts(&disk.dev);
    // No udev here to make /dev/loopNp2: make its node from sysfs.
    let part = scratch("part").join("p2");
    let numbers = std::fs::read_to_string(format!("/sys/class/block/{}p2/dev", disk.name())).unwrap();
    sh(&format!("mknod {} b {}", part.display(), numbers.trim().replace(':', " ")));
    let part = part.to_str().unwrap();
    let h = Holder::new(&format!("fd = os.open('{}', os.O_RDONLY)", disk.dev));
    let out = iogauge(&["run", "--target", part, "--spec", "random-write-4k", "--ios", "100", "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("open in process {}", h.0.id())), "{err}");
}

/// A mounted filesystem needs its own word: --allow-write does not cover it, whether the
/// filesystem is on the device or on a loop device stacked on it; --allow-mounted-write does.
#[test]
fn a_mounted_filesystem_needs_allow_mounted_write() {
    let l = LoopDev::new(64 << 20);
    let stacked = attach_loop(&l.dev, &["-o", "1048576"]);
    let mnt = scratch("mnt-stacked");
    sh(&format!("mkfs.ext4 -q -F {stacked} && mount {stacked} {}", mnt.display()));
    let allow = ["--allow-write", l.dev.as_str()];
    let before = digest(&l.file);
    let out =
        iogauge(&["run", "--target", &l.dev, "--spec", "random-write-4k", "--ios", "200", "-q", allow[0], allow[1]]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let same = digest(&l.file) == before;
    sh(&format!("umount {} && losetup -d {stacked}", mnt.display()));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("mounted at {}", mnt.display())), "{err}");
    assert!(err.contains(&format!("--allow-mounted-write {}", l.dev)), "{err}");
    assert!(same, "a refused test wrote under a mounted filesystem");
    // Named with its own word (a throwaway filesystem), the write goes ahead.
    sh(&format!("mkfs.ext4 -q -F {} && mount {0} {}", l.dev, mnt.display()));
    let out = iogauge(&[
        "run",
        "--target",
        &l.dev,
        "--allow-mounted-write",
        &l.dev,
        "--spec",
        "random-write-4k",
        "--ios",
        "100",
        "-q",
    ]);
    let code = out.status.code();
    sh(&format!("umount {}", mnt.display()));
    assert_eq!(code, Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A filesystem mounted read-only is mounted all the same: writing to its device under it
/// corrupts what the kernel caches and what it reads next, so --allow-write does not cover it
/// (as with read-write: only --allow-mounted-write), and the device keeps every byte.
#[test]
fn a_read_only_mount_needs_allow_mounted_write() {
    let l = LoopDev::new(64 << 20);
    let mnt = scratch("mnt-ro");
    sh(&format!("mkfs.ext4 -q -F {} && mount -o ro {0} {}", l.dev, mnt.display()));
    let before = digest(&l.file);
    let args = ["run", "--target", &l.dev, "--allow-write", &l.dev, "--spec", "random-write-4k", "--ios", "200", "-q"];
    let out = iogauge(&args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let same = digest(&l.file) == before;
    sh(&format!("umount {}", mnt.display()));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("mounted at {}", mnt.display())), "{err}");
    assert!(err.contains(&format!("--allow-mounted-write {}", l.dev)), "{err}");
    assert!(same, "a refused test wrote under a read-only mounted filesystem");
}

/// A study checks every point's targets before its first I/O: a target cycle whose second
/// point reaches a device with a filesystem is refused before the blank device of the first
/// point is written.
#[test]
fn a_study_checks_every_point_before_writing() {
    let (blank, ext4) = (LoopDev::new(64 << 20), LoopDev::new(64 << 20));
    sh(&format!("mkfs.ext4 -q -F {}", ext4.dev));
    let dir = scratch("study-points");
    let job = dir.join("cycle.toml");
    std::fs::write(
        &job,
        format!(
            "[test]\nios = 2000\nrun = [\"random-write-4k\"]\n[[worker]]\ntargets = [\"{}\", \"{}\"]\n\
             [study]\ntargets = [1, 2]\n",
            blank.dev, ext4.dev
        ),
    )
    .unwrap();
    let (b, e) = (digest(&blank.file), digest(&ext4.file));
    let out = iogauge_in(&dir, &["study", job.to_str().unwrap(), "-q"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("study point targets=2") && err.contains("ext4 signature"), "{err}");
    assert_eq!((digest(&blank.file), digest(&ext4.file)), (b, e), "a refused study wrote");
}
