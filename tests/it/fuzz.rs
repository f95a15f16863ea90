//! Hostile input: random and mutated job files and command lines never panic or hang, and
//! every rejection is one line that says where (property tests, in-process: nothing touches a
//! target). The submodules do the same for every other reader, each from real samples: the
//! documents compare and report read, Iometer's and fio's job files and spec files, traces,
//! verify maps and journals, and the workbench's requests.
//!
//! Each property runs a bounded number of cases (the suite's budget); `PROPTEST_CASES` sets
//! every property's count instead, for a longer run (scripts/fuzz-long).

mod documents;
mod jobs;
mod traces;
mod verify;
pub(crate) mod workbench;

use std::path::Path;
use std::process::Output;

use clap::Parser;
use iogauge::cli::{self, Cli, Command};
use iogauge::job;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// A property's number of cases: `n`, or `PROPTEST_CASES` where it is set.
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(n)
}

/// A file of tests/fixtures.
fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A refusal as the command line says it: one line, naming `name` (the file read), exit
/// status 2.
fn refused_in_one_line(message: &str, code: i32, name: &str) {
    assert!(!message.trim().is_empty() && !message.contains('\n'), "not one line: {message:?}");
    assert!(message.contains(name), "does not name {name}: {message}");
    assert_eq!(code, 2, "{message}");
}

/// Runs a command line in this process, as the binary does: it ends in its output or in one
/// line naming `name` (exit 2), never a panic.
fn command_in_process(args: &[&str], name: &str) -> bool {
    let mut argv = vec!["iogauge"];
    argv.extend(args);
    let cli = Cli::try_parse_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    match cli::main(cli) {
        Ok(_) => true,
        Err(e) => {
            refused_in_one_line(&e.to_string(), e.exit_code(), name);
            false
        }
    }
}

/// What a run of the binary on hostile input may end in: its output (exit 0, or 1 where what
/// it read says an I/O failed), or a refusal (exit 2) said in lines of `iogauge: ...` (warnings,
/// then the one line of the error); never a signal (a panic's abort, a kill for memory or
/// time). The command runs under `mib` MiB of address space and 60 s.
fn bounded_binary(dir: &Path, args: &[&str], mib: u64) -> Output {
    let out = std::process::Command::new("timeout")
        .args(["-s", "KILL", "60", "prlimit", &format!("--as={}", mib << 20), "--", crate::common::bin()])
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .output()
        .expect("timeout and prlimit run (coreutils, util-linux)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0..=2)), "{args:?} ended by {:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.lines().all(|l| l.starts_with("iogauge: ")), "{args:?}: {err}");
    if out.status.code() == Some(2) {
        assert!(err.lines().count() >= 1, "{args:?}: exit 2 without a word");
    }
    out
}

/// A change to a JSON document: a value (any, by its place in a walk of the document)
/// replaced by one at the edge of what a field of its type holds (or, with `any`, of any
/// type), taken out, or an array's first element added again.
#[derive(Debug, Clone)]
enum JsonEdit {
    Replace { place: Index, edge: Index, any: bool },
    Remove(Index),
    Grow(Index),
}

/// Numbers at the edges: past a u32 and a u64, negative, huge, tiny, fractional, a time in ms
/// past the year 9999, a bucket past the histogram's layout.
const NUMBER_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "1e300",
    "-1e300",
    "1e-300",
    "99999999",
    "3776",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "253402300801000",
];

/// Strings at the edges: empty, escapes for a terminal, dates past 9999 and before 1970, a
/// schema, numbers as text.
const STRING_EDGES: &[&str] = &[
    "\"\"",
    "\"x\"",
    "\"\\u001b]0;owned\\u0007\\u001b[2J\\n\"",
    "\"9999-12-31T23:59:59Z\"",
    "\"1969-12-31T23:59:59Z\"",
    "\"log-linear-ns-64\"",
    "\"iogauge.result/2\"",
    "\"4294967296\"",
];

/// Arrays and others: histogram buckets past the layout and summing past 2^64, a window
/// that starts at 0, empties, and every other type.
const OTHER_EDGES: &[&str] = &[
    "[4294967295, 5]",
    "[3776, 1]",
    "[[3775, 18446744073709551615], [0, 1]]",
    "[0, 4]",
    "[3, 1]",
    "[]",
    "[0]",
    "{}",
    "null",
    "true",
];

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        8 => (any::<Index>(), any::<Index>()).prop_map(|(place, edge)| JsonEdit::Replace { place, edge, any: false }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(place, edge)| JsonEdit::Replace { place, edge, any: true }),
        1 => any::<Index>().prop_map(JsonEdit::Remove),
        1 => any::<Index>().prop_map(JsonEdit::Grow),
    ]
}

/// The edges a value may be replaced by: those of its own type, or with `any` every one.
fn edges_for(v: &Value, any: bool) -> Vec<&'static str> {
    match (any, v) {
        (true, _) => [NUMBER_EDGES, STRING_EDGES, OTHER_EDGES].concat(),
        (false, Value::Number(_)) => NUMBER_EDGES.to_vec(),
        (false, Value::String(_)) => STRING_EDGES.to_vec(),
        (false, _) => OTHER_EDGES.to_vec(),
    }
}

/// Every value's place in `v` (a JSON pointer), the root's aside.
fn places(v: &Value, at: &str, out: &mut Vec<String>) {
    let mut visit = |key: String, x: &Value| {
        let place = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        out.push(place.clone());
        places(x, &place, out);
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| visit(k.clone(), x)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| visit(i.to_string(), x)),
        _ => {}
    }
}

/// `text` (JSON) with `edits` made; its JSON text again.
fn apply_json(text: &[u8], edits: &[JsonEdit]) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(text).expect("a sample is JSON");
    for e in edits {
        let mut all = Vec::new();
        places(&v, "", &mut all);
        let (JsonEdit::Replace { place: i, .. } | JsonEdit::Remove(i) | JsonEdit::Grow(i)) = e;
        let Some(place) = (!all.is_empty()).then(|| all[i.index(all.len())].clone()) else { continue };
        let target = v.pointer_mut(&place).unwrap();
        match e {
            JsonEdit::Replace { edge, any, .. } => {
                let edges = edges_for(target, *any);
                *target = serde_json::from_str(edges[edge.index(edges.len())]).unwrap();
            }
            JsonEdit::Grow(_) => {
                if let Value::Array(a) = target {
                    if let Some(first) = a.first().cloned() {
                        a.push(first);
                    }
                }
            }
            JsonEdit::Remove(_) => {
                let (parent, key) = place.rsplit_once('/').unwrap();
                let key = key.replace("~1", "/").replace("~0", "~");
                match v.pointer_mut(parent).unwrap() {
                    Value::Object(m) => drop(m.remove(&key)),
                    Value::Array(a) => drop(a.remove(key.parse::<usize>().unwrap())),
                    _ => unreachable!("a place's parent holds it"),
                }
            }
        }
    }
    serde_json::to_vec(&v).unwrap()
}

/// A change to a text of lines of cells (CSV, a trace, a configuration): a cell (by line
/// and place) replaced by one at the edge, a line taken out or written twice.
#[derive(Debug, Clone)]
enum CellEdit {
    Cell(Index, Index, &'static str),
    Drop(Index),
    Twice(Index),
}

/// Cells at the edges of what a number, a name or a marker holds.
const CELL_EDGES: &[&str] = &[
    "",
    "0",
    "-1",
    "nan",
    "inf",
    "1e308",
    "0.5",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "abc",
    "\u{1b}]0;owned\u{7}\u{1b}[2J",
    "'Results",
    "ALL",
    "DISK",
    "WORKER",
    "read",
    "write",
    "trim",
    "sync",
    "wait",
    "Q",
    "D",
    "C",
    "+",
    ",,,,",
    "\t",
];

fn cell_edit() -> impl Strategy<Value = CellEdit> {
    prop_oneof![
        4 => (any::<Index>(), any::<Index>(), proptest::sample::select(CELL_EDGES)).prop_map(|(l, c, v)| CellEdit::Cell(l, c, v)),
        1 => any::<Index>().prop_map(CellEdit::Drop),
        1 => any::<Index>().prop_map(CellEdit::Twice),
    ]
}

/// `text`'s lines of cells split at `sep`, with `edits` made.
fn apply_cells(text: &[u8], sep: char, edits: &[CellEdit]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for e in edits {
        if lines.is_empty() {
            break;
        }
        match e {
            CellEdit::Cell(l, c, v) => {
                let n = lines.len();
                let line = &mut lines[l.index(n)];
                let mut cells: Vec<&str> = line.split(sep).collect();
                let k = c.index(cells.len());
                cells[k] = v;
                *line = cells.join(&sep.to_string());
            }
            CellEdit::Drop(l) => drop(lines.remove(l.index(lines.len()))),
            CellEdit::Twice(l) => {
                let k = l.index(lines.len());
                lines.insert(k, lines[k].clone());
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}

/// The job files shipped in examples/, and a study, as seeds for mutation.
fn seeds() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut out: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    out.sort();
    out.push(
        "[test]\nrun = [\"oltp-8k\"]\n[[worker]]\nhosts = [\"n*\"]\ntargets = [\"null\"]\n\
         [study]\nmanagers = { start = 1, end = 4, step = 1 }\nlimit = { ms = 20 }\n[storage]\nvolumes = 2\n"
            .into(),
    );
    out
}

/// Pieces of TOML and values that sit at the edges of what the parser accepts.
const PIECES: &[&str] = &[
    "\n",
    "=",
    "[",
    "]",
    "[[worker]]\n",
    "[study]\n",
    "[test]\n",
    "[[spec]]\n",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "#",
    "0",
    "-1",
    "65537",
    "1e400",
    "nan",
    "inf",
    "18446744073709551616",
    "\"4K\"",
    "\"0\"",
    "\"1Q\"",
    "\"10x\"",
    "\"-5s\"",
    "\"\"",
    "true",
    "[]",
    "{}",
    "outstanding = 0\n",
    "count = 100000\n",
    "stroke = 101\n",
    "size = \"3\"\n",
    "share = 200\n",
    "read = -1\n",
    "targets = [\"\"]\n",
    "targets = [\"null\", \"null\"]\n",
    "ios = 0\n",
    "interval = \"1ns\"\n",
    "base = 1.0\n",
    "step = 0\n",
    "repeat = 0\n",
    "managers = 0\n",
    "hosts = [\"\"]\n",
    "ranks = [-1]\n",
    "sync_timeout = \"0s\"\n",
    "on_error = \"maybe\"\n",
    "rate_iops = 0\n",
    "é",
    "\u{0}",
    "\t",
];

/// Parses `text`; a rejection must be one line located in the file.
fn check_job(text: &str) {
    if let Err(e) = job::parse(text, "f.toml") {
        let m = e.to_string();
        assert!(!m.trim().is_empty(), "empty message for {text:?}");
        assert!(!m.contains('\n'), "not one line: {m:?} for {text:?}");
        assert!(m.starts_with("f.toml"), "does not say where: {m:?}");
        assert_eq!(e.exit_code(), 2, "{m}");
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, &'static str),
    Delete(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    edit_with(PIECES)
}

/// An insertion of one of `pieces`, or a deletion, anywhere in a text.
fn edit_with(pieces: &'static [&'static str]) -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), proptest::sample::select(pieces)).prop_map(|(at, p)| Edit::Insert(at, p)),
        (any::<usize>(), 1usize..12).prop_map(|(at, n)| Edit::Delete(at, n)),
    ]
}

fn apply(mut text: String, edits: &[Edit]) -> String {
    for e in edits {
        // Edit at a character boundary.
        let boundary = |at: usize, t: &str| {
            let mut i = at % (t.len() + 1);
            while !t.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match e {
            Edit::Insert(at, p) => {
                let i = boundary(*at, &text);
                text.insert_str(i, p);
            }
            Edit::Delete(at, n) => {
                let i = boundary(*at, &text);
                let j = boundary(i + n, &text).max(i);
                text.replace_range(i..j, "");
            }
        }
    }
    text
}

/// Words of the command line, valid and not.
const WORDS: &[&str] = &[
    "run",
    "profile",
    "study",
    "--target",
    "null",
    "iogauge.tst",
    "/dev/null",
    "{rank}",
    "--qd",
    "--outstanding",
    "--workers",
    "0",
    "1",
    "-1",
    "4",
    "65537",
    "99999999999999999999",
    "--time",
    "--ramp",
    "10x",
    "1ms",
    "0s",
    "--spec",
    "nope",
    "oltp-8k",
    "--stroke",
    "nan",
    "150",
    "--file-size",
    "1Q",
    "512",
    "--interval",
    "--on-error",
    "maybe",
    "stop",
    "--sync-timeout",
    "--json",
    "-",
    "--csv",
    "--seed",
    "--engine",
    "aio",
    "psync",
    "--ios",
    "--bytes",
    "--working-set",
    "--offset",
    "--data",
    "compress:101",
    "repeat:0xZZ",
    "--allow-write",
    "--repeat",
    "--quiet",
    "--no-history",
    "--db",
    "",
    "é",
    "--",
    "-q",
    "--bogus",
    "baseline",
    "seed004-suite",
];

/// Parses a command line and, for run and profile, builds the test it describes (no I/O).
fn check_cli(args: &[&str]) {
    let mut argv = vec!["iogauge"];
    argv.extend(args);
    let Ok(cli) = Cli::try_parse_from(&argv) else { return };
    let built = match &cli.command {
        Command::Run(a) if a.job.is_none() => cli::run_test(a).map(|_| ()),
        Command::Profile(a) => cli::profile_test(a).map(|_| ()),
        _ => Ok(()),
    };
    if let Err(e) = built {
        let m = e.to_string();
        assert!(!m.trim().is_empty() && !m.contains('\n'), "{argv:?}: {m:?}");
        assert_eq!(e.exit_code(), 2, "{argv:?}: {m}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn mutated_job_files(seed in proptest::sample::select(seeds()), edits in proptest::collection::vec(edit(), 1..8)) {
        check_job(&apply(seed, &edits));
    }

    #[test]
    fn random_job_text(text in "\\PC{0,300}") {
        check_job(&text);
    }

    #[test]
    fn jobs_built_from_pieces(pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..40)) {
        check_job(&pieces.concat());
    }

    #[test]
    fn command_lines(args in proptest::collection::vec(proptest::sample::select(WORDS), 0..10)) {
        check_cli(&args);
    }

    #[test]
    fn run_and_profile_flags(
        command in proptest::sample::select(&["run", "profile"][..]),
        flags in proptest::collection::vec(
            (proptest::sample::select(&WORDS[WORDS.len() / 4..]), proptest::sample::select(WORDS)), 0..6),
    ) {
        let mut args = vec![command];
        for (f, v) in flags {
            args.extend([f, v]);
        }
        check_cli(&args);
    }
}
