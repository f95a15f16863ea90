//! Hostile configurations: Iometer's `.icf`, fio job files (with `include`s) and spec files
//! (`--spec-file`: `[[spec]]` TOML or an `.icf`), mutated from real samples (Iometer 1.1's
//! configuration, the fio conformance jobs, iogauge's built-in specifications), read as
//! `iogauge convert` and `iogauge run --spec-file` read them, in this process. Each ends in a
//! job or one line naming the file (exit 2), never a panic; and no message quotes a file that
//! is not a job file (an `include` of a password file).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Parser;
use iogauge::cli::{self, Cli, Command};
use proptest::prelude::*;

use super::{PIECES, apply, apply_cells, cases, cell_edit, edit_with, fixture};

/// What the secret file beside the jobs holds: no message may show it.
const SECRET: &str = "SECRET-7f3a9c";

/// A directory of this process's holding a password file (`shadow`), and a fresh name in it.
fn file(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = DIR.get_or_init(|| {
        let dir = crate::common::scratch("fuzz-jobs");
        std::fs::write(dir.join("shadow"), format!("root:$6${SECRET}:20228:0:99999:7:::\nbs={SECRET}\n")).unwrap();
        dir
    });
    dir.join(format!("{}-{name}", N.fetch_add(1, Ordering::Relaxed)))
}

/// Reads `text` as the job file `name` (`iogauge convert`), or refuses it in one line naming
/// the file, never quoting the password file.
fn convert(text: &[u8], name: &str) {
    let path = file(name);
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    if let Err(e) = cli::main(Cli::try_parse_from(["iogauge", "convert", p]).unwrap()) {
        not_quoting_the_secret(&e.to_string(), e.exit_code(), &path);
    }
    std::fs::remove_file(&path).unwrap();
}

/// A refusal in one line that names the file (or one it includes: a file of its directory),
/// and never shows what the password file holds.
fn not_quoting_the_secret(message: &str, code: i32, path: &Path) {
    super::refused_in_one_line(message, code, path.parent().unwrap().to_str().unwrap());
    assert!(!message.contains(SECRET), "quotes the password file: {message}");
}

/// Reads `text` as a spec file (`iogauge run --spec-file FILE`, the test built, nothing run).
fn spec_file(text: &[u8], name: &str) {
    let path = file(name);
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    let argv = ["iogauge", "run", "--spec-file", p, "--target", "null", "--spec", "oltp-8k"];
    let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!("a run") };
    if let Err(e) = cli::run_test(&args) {
        not_quoting_the_secret(&e.to_string(), e.exit_code(), &path);
    }
    std::fs::remove_file(&path).unwrap();
}

/// The fio jobs of the conformance suite and the two-group sample.
fn fio_jobs() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-conformance");
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    out.sort();
    out.push(String::from_utf8(fixture("fio-two-groups.fio")).unwrap());
    out
}

/// Lines and values at the edges of fio's job files, an include of the password file among them.
const FIO_PIECES: &[&str] = &[
    "\n",
    "[x]\n",
    "[global]\n",
    "=",
    ";",
    "include shadow\n",
    "include /dev/zero\n",
    "include .\n",
    "include ${NOPE}\n",
    "${HOME}",
    "numjobs=4096\n",
    "offset_increment=9223372036854775807\n",
    "offset=18446744073709551615\n",
    "size=1%\n",
    "bs=0\n",
    "bssplit=4k/50:8k/60\n",
    "rw=randrw:99999999999999999999\n",
    "iodepth=4294967296\n",
    "runtime=99999999999d\n",
    "time_based\n",
    "stonewall\n",
    "wait_for=x\n",
    "ioengine=nbd\n",
    "filename=a:b\\:c\n",
    "cpus_allowed=99999\n",
    "\u{1b}[2J",
];

/// The library of iogauge's built-in specifications, as `--spec-file` takes it.
fn spec_library() -> String {
    iogauge::job::specs_toml(&iogauge::spec::builtin()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    #[test]
    fn icf_files_mutated(edits in proptest::collection::vec(cell_edit(), 1..8)) {
        convert(&apply_cells(&fixture("iometer-1.1.icf"), ',', &edits), "t.icf");
    }

    #[test]
    fn fio_job_files_mutated(
        seed in proptest::sample::select(fio_jobs()),
        edits in proptest::collection::vec(edit_with(FIO_PIECES), 1..8),
    ) {
        convert(apply(seed, &edits).as_bytes(), "j.fio");
    }

    #[test]
    fn fio_job_values_mutated(
        seed in proptest::sample::select(fio_jobs()),
        edits in proptest::collection::vec(cell_edit(), 1..6),
    ) {
        convert(&apply_cells(seed.as_bytes(), '=', &edits), "j.fio");
    }

    #[test]
    fn spec_files_mutated(
        icf in any::<bool>(),
        toml in proptest::collection::vec(edit_with(PIECES), 1..8),
        cells in proptest::collection::vec(cell_edit(), 1..8),
    ) {
        match icf {
            true => spec_file(&apply_cells(&fixture("iometer-1.1.icf"), ',', &cells), "s.icf"),
            false => spec_file(apply(spec_library(), &toml).as_bytes(), "s.toml"),
        }
    }
}
