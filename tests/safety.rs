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
