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
