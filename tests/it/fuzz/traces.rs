//! Hostile traces: iogauge's captures, fio's iologs (v3 as fio 3.33 wrote it, and v2 made from
//! it) and blkparse's text, mutated from real samples (tests/fixtures: fio's random mix on a
//! loop device, captured by iogauge, logged by fio, traced by the kernel's blk tracer and
//! printed by blkparse), read whole by `iogauge distil` in a process of its own under a memory
//! bound. Each ends in a job or one line naming the trace (exit 2), never a signal.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use super::{Edit, apply, apply_cells, bounded_binary, cases, cell_edit, edit_with, fixture};

/// A directory of this process's, and a fresh name in it.
fn file(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = DIR.get_or_init(|| crate::common::scratch("fuzz-traces"));
    dir.join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// Reads `text` as a trace with `iogauge distil`, in 256 MiB: a job on stdout, or a refusal
/// that names the trace.
fn distil(text: &[u8], name: &str) {
    let path = file(name);
    std::fs::write(&path, text).unwrap();
    let out = bounded_binary(path.parent().unwrap(), &["distil", path.to_str().unwrap()], 256);
    if out.status.code() == Some(2) {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("");
        assert!(last.contains(path.to_str().unwrap()), "does not name the trace: {err}");
    }
    std::fs::remove_file(&path).unwrap();
}

/// fio's v3 log as v2: the times taken out, the gaps between them as `wait` lines (µs).
fn fio_v2() -> String {
    let v3 = String::from_utf8(fixture("trace-fio-3.33.iolog")).unwrap();
    let mut out = String::from("fio version 2 iolog\n");
    let mut last = 0u64;
    for line in v3.lines().skip(1) {
        let (us, rest) = line.split_once(' ').unwrap();
        let us: u64 = us.parse().unwrap();
        if us > last {
            let file = rest.split(' ').next().unwrap();
            out.push_str(&format!("{file} wait {} 0\n", us - last));
        }
        last = last.max(us);
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// Pieces of lines at the edges of the traces' fields.
const PIECES: &[&str] = &[
    "\n",
    " ",
    ",",
    "0",
    "-1",
    "18446744073709551615",
    "4294967296",
    "99999999999999999999",
    "fio version 3 iolog\n",
    "# iogauge-capture/1\n",
    " wait 18446744073709551 0\n",
    "f read 18446744073709551104 4096\n",
    "  7,0    0        1     0.000000000  1  D   W 18446744073709551615 + 8 [x]\n",
    "\u{1b}[2J",
];

fn text_edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit_with(PIECES), 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn captures_mutated(cells in proptest::collection::vec(cell_edit(), 1..8), text in text_edits()) {
        let seed = fixture("trace-capture.csv");
        distil(&apply_cells(&seed, ',', &cells), "t.csv");
        distil(apply(String::from_utf8(seed).unwrap(), &text).as_bytes(), "t.csv");
    }

    #[test]
    fn fio_iologs_mutated(v2 in any::<bool>(), cells in proptest::collection::vec(cell_edit(), 1..8), text in text_edits()) {
        let seed = if v2 { fio_v2() } else { String::from_utf8(fixture("trace-fio-3.33.iolog")).unwrap() };
        distil(&apply_cells(seed.as_bytes(), ' ', &cells), "t.iolog");
        distil(apply(seed, &text).as_bytes(), "t.iolog");
    }

    #[test]
    fn blkparse_text_mutated(cells in proptest::collection::vec(cell_edit(), 1..8), text in text_edits()) {
        let seed = fixture("trace-blkparse.txt");
        distil(&apply_cells(&seed, ' ', &cells), "t.txt");
        distil(apply(String::from_utf8(seed).unwrap(), &text).as_bytes(), "t.txt");
    }
}
