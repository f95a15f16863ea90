//! Hostile input: random and mutated job files and command lines never panic or hang, and
//! every rejection is one line that says where (property tests, in-process: nothing touches a
//! target).

use clap::Parser;
use iogauge::cli::{self, Cli, Command};
use iogauge::job;
use proptest::prelude::*;

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
    prop_oneof![
        (any::<usize>(), proptest::sample::select(PIECES)).prop_map(|(at, p)| Edit::Insert(at, p)),
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
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

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
