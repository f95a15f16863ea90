//! Hostile documents: iogauge's result and study documents, fio's JSON (json and json+) and
//! Iometer's results file, mutated from real samples (tests/fixtures: an iogauge run on the
//! null target, a file-system study, fio 3.33's output of tests/fixtures/fio-two-groups.fio,
//! Iometer 1.1's layout) or random bytes, read by `compare` and `report` in this process.
//! Each ends in their output or one line naming the file (exit 2), never a panic.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use super::{apply, apply_cells, apply_json, cases, cell_edit, edit_with, fixture, json_edit};

/// The samples: (fixture, whether it is JSON).
const SAMPLES: [&str; 5] = [
    "result-1-null.json",
    "study-1-fs.json",
    "fio-3.33-two-groups+.json",
    "fio-3.33-two-groups.json",
    "iometer-1.1-cycling.csv",
];

/// Pieces of JSON and CSV that sit at the edges of what the parsers take.
const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "0",
    "-",
    "1e999",
    "\\u001b",
    "\\",
    "\n",
    "'Results\n",
    ",,",
    "null",
    "\"fio version\"",
];

/// A directory of this process's for the files read, and a fresh name in it.
fn file(ext: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = DIR.get_or_init(|| crate::common::scratch("fuzz-documents"));
    dir.join(format!("doc-{}.{ext}", N.fetch_add(1, Ordering::Relaxed)))
}

/// `bytes` as a document: compared with itself and with a real run, and reported (HTML and
/// the charts' files); or refused in one line naming the file.
fn read_as_document(bytes: &[u8]) {
    let path = file("json");
    std::fs::write(&path, bytes).unwrap();
    let (f, base) = (path.to_str().unwrap(), concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/result-1-null.json"));
    let (html, charts) = (path.with_extension("html"), path.with_extension("charts"));
    let (h, c) = (html.to_str().unwrap(), charts.to_str().unwrap());
    // A document refused by one is refused by all: the others' turn only where the first read it.
    if super::command_in_process(&["report", f, base, "-o", h, "--charts", c, "--detail", "workers"], f) {
        super::command_in_process(&["compare", f, f, "--detail", "workers"], f);
        super::command_in_process(&["compare", f, base, "--detail", "targets"], f);
        let _ = std::fs::remove_dir_all(&charts);
        let _ = std::fs::remove_file(&html);
    }
    std::fs::remove_file(&path).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(100), ..ProptestConfig::default() })]

    #[test]
    fn result_documents_mutated(edits in proptest::collection::vec(json_edit(), 1..6)) {
        read_as_document(&apply_json(&fixture(SAMPLES[0]), &edits));
    }

    #[test]
    fn study_documents_mutated(edits in proptest::collection::vec(json_edit(), 1..6)) {
        read_as_document(&apply_json(&fixture(SAMPLES[1]), &edits));
    }

    #[test]
    fn fio_json_mutated(plus in any::<bool>(), edits in proptest::collection::vec(json_edit(), 1..6)) {
        read_as_document(&apply_json(&fixture(SAMPLES[if plus { 2 } else { 3 }]), &edits));
    }

    #[test]
    fn iometer_csv_mutated(edits in proptest::collection::vec(cell_edit(), 1..8)) {
        read_as_document(&apply_cells(&fixture(SAMPLES[4]), ',', &edits));
    }

    #[test]
    fn documents_edited_as_text(
        sample in proptest::sample::select(&SAMPLES[..]),
        edits in proptest::collection::vec(edit_with(PIECES), 1..8),
    ) {
        let text = String::from_utf8(fixture(sample)).unwrap();
        read_as_document(apply(text, &edits).as_bytes());
    }

    #[test]
    fn random_bytes_as_documents(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        read_as_document(&bytes);
    }
}
