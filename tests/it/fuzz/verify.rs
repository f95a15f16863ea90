//! Hostile verify maps and journals: the map and the journal a verified run on a file left,
//! mutated (the JSON head's fields, the entries' and records' bytes, the file cut short),
//! read by `iogauge verify` in a process of its own under a memory bound. Each ends in a
//! verdict (exit 0, or 1 for blocks that do not match) or one line (exit 2), never a signal.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::sample::Index;

use super::{apply_json, bounded_binary, cases, json_edit};

/// The directory of a verified run: its target `t.dat`, its journal `j/`, its map under
/// `data/` (the run's `XDG_DATA_HOME`).
fn run() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::common::scratch("fuzz-verify");
        let t = dir.join("t.dat");
        let out = std::process::Command::new(crate::common::bin())
            .args(["run", "--target", t.to_str().unwrap(), "--file-size", "1M", "--spec", "oltp-8k", "--ios", "400"])
            .args(["--verify", "--journal", dir.join("j").to_str().unwrap(), "-q", "--no-history"])
            .env("XDG_DATA_HOME", dir.join("data"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        dir
    })
}

/// The map the run left.
fn map() -> Vec<u8> {
    let maps = run().join("data/iogauge/maps");
    let file = std::fs::read_dir(&maps).unwrap().next().expect("the run left a map").unwrap().path();
    std::fs::read(file).unwrap()
}

/// A fresh name in the run's directory.
fn fresh(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    run().join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// `bytes` with each (place, byte) set and, with `cut`, cut short there.
fn flip(mut bytes: Vec<u8>, flips: &[(Index, u8)], cut: Option<Index>) -> Vec<u8> {
    if bytes.is_empty() {
        return bytes;
    }
    for (at, b) in flips {
        let i = at.index(bytes.len());
        bytes[i] = *b;
    }
    if let Some(c) = cut {
        bytes.truncate(c.index(bytes.len()));
    }
    bytes
}

fn flips() -> impl Strategy<Value = Vec<(Index, u8)>> {
    proptest::collection::vec((any::<Index>(), any::<u8>()), 0..6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn maps_mutated(
        head in proptest::collection::vec(json_edit(), 0..4),
        entries in flips(),
        cut in proptest::option::of(any::<Index>()),
    ) {
        let map = map();
        let at = map.iter().position(|&b| b == b'\n').unwrap();
        let mut bytes = apply_json(&map[..at], &head);
        bytes.extend(flip(map[at..].to_vec(), &entries, cut));
        let file = fresh("t.map");
        std::fs::write(&file, bytes).unwrap();
        let t = run().join("t.dat");
        bounded_binary(run(), &["verify", "--target", t.to_str().unwrap(), "--map", file.to_str().unwrap()], 512);
        std::fs::remove_file(file).unwrap();
    }

    #[test]
    fn journals_mutated(head in proptest::collection::vec(json_edit(), 0..4), records in flips(), cut in proptest::option::of(any::<Index>())) {
        let dir = fresh("j");
        std::fs::create_dir(&dir).unwrap();
        for e in std::fs::read_dir(run().join("j")).unwrap() {
            let from = e.unwrap().path();
            let bytes = std::fs::read(&from).unwrap();
            let bytes = match from.extension().and_then(|x| x.to_str()) {
                Some("json") => apply_json(&bytes, &head),
                _ => flip(bytes, &records, cut),
            };
            std::fs::write(dir.join(from.file_name().unwrap()), bytes).unwrap();
        }
        bounded_binary(run(), &["verify", "--journal", dir.to_str().unwrap()], 512);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
