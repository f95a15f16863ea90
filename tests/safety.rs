//! Data safety: devices that hold data are refused for writes and stay byte-identical, unless
//! --allow-write names them. Reads are always allowed.

mod common;

use std::process::Command;

use common::*;

fn sh(cmd: &str) {
    let out = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
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
    refused(&l, &format!("ext4 filesystem on {}", l.dev));
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
    refused(&l, "partition table (MBR)");
    let g = LoopDev::new(64 << 20);
    sh(&format!("printf 'label: gpt\\n,16M\\n' | sfdisk -q {}", g.dev));
    refused(&g, "partition table (GPT)");
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
    assert!(err.contains("mounted at") && err.contains("ext4 filesystem"), "{err}");
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
    refused(&l, &format!("LVM physical volume on {}", l.dev));
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
    assert!(err.contains("ext4 filesystem"), "{err}");
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
        refused(&l, &format!("Linux RAID (md) member on {}", l.dev));
    }
}
