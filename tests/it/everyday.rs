//! The small things that cost a user minutes (issue 20): completions and man pages from the
//! CLI definition, a test file's creation said, a near-miss of `null` warned before a file is
//! made, an unknown study named, pipes that close early, the live line's phases.

use crate::common;

use std::process::Command;

use common::*;

fn sh(dir: &std::path::Path, script: &str) -> std::process::Output {
    Command::new("sh").arg("-c").arg(script).current_dir(dir).env("IOGAUGE", bin()).output().unwrap()
}

#[test]
fn completions_and_man_pages_come_from_the_cli() {
    let dir = scratch("compl");
    // bash loads the script and completes commands and flags with it.
    let out = sh(
        &dir,
        r#"bash -c 'source <("$IOGAUGE" completions bash) && COMP_WORDS=(iogauge run --rate-m) COMP_CWORD=2 && _iogauge iogauge --rate-m run && echo "${COMPREPLY[@]}"'"#,
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("--rate-mbps"), "{said} {}", String::from_utf8_lossy(&out.stderr));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let text = String::from_utf8(ok(&["completions", shell]).stdout).unwrap();
        assert!(text.contains("rwmixread"), "{shell}");
    }
    let page = String::from_utf8(ok(&["man"]).stdout).unwrap();
    assert!(page.contains(".TH iogauge 1") && page.contains("iogauge\\-run(1)"), "{page}");
    let run = String::from_utf8(ok(&["man", "run"]).stdout).unwrap();
    assert!(run.contains(".TH iogauge-run 1") && run.contains("\\-\\-rwmixread"), "{run}");
    let out = iogauge(&["man", "nope"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn creating_a_test_file_is_said_and_a_near_null_name_warned_first() {
    let dir = scratch("create");
    let out = ok_in(&dir, &["run", "--file-size", "8M", "--ios", "100", "--no-history", "-q"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("creating test file iogauge.tst (8 MiB") && err.contains("done in"), "{err}");
    // Reused the second time: nothing to say.
    let out = ok_in(&dir, &["run", "--file-size", "8M", "--ios", "100", "--no-history", "-q"]);
    assert!(!String::from_utf8(out.stderr).unwrap().contains("creating"));
    // As a path (a bare word is refused: tests/it/bad_input.rs), a near-null name is a file,
    // said to be so before it is made.
    for typo in ["./nul", "./nulll", "./Null", "./nill"] {
        let out = ok_in(&dir, &["run", "--target", typo, "--file-size", "8M", "--ios", "100", "--no-history", "-q"]);
        let err = String::from_utf8(out.stderr).unwrap();
        let (warned, created) = (err.find("is not the null target"), err.find("creating test file"));
        assert!(warned.is_some() && warned < created, "{typo}: {err}");
    }
}

#[test]
fn an_unknown_study_is_named_with_the_known_ones() {
    let out = iogauge(&["study", "seed001-limt", "--target", "null"]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unknown study 'seed001-limt'") && err.contains("did you mean 'seed001-limit'"), "{err}");
    assert!(err.contains("seed004-suite"), "lists them: {err}");
    let listed = String::from_utf8(ok(&["study"]).stdout).unwrap();
    assert!(listed.contains("002  software vs hardware iSCSI initiators"), "the seeds are described: {listed}");
}

#[test]
fn a_pipe_closed_early_ends_quietly() {
    let dir = scratch("pipe");
    // `true` has exited long before the document is written: every write meets a closed pipe.
    for cmd in ["run --target null --ios 1000 --json - --no-history", "specs", "man", "study"] {
        let out = sh(&dir, &format!("\"$IOGAUGE\" {cmd} 2>err.txt | true; cat err.txt"));
        let err = String::from_utf8_lossy(&out.stdout);
        assert!(!err.contains("Broken pipe") && !err.contains("panicked") && err.trim().is_empty(), "{cmd}: {err}");
    }
}

#[test]
fn the_live_line_shows_ramp_up_and_recording_apart() {
    let dir = scratch("live");
    // `script` gives iogauge a terminal, where it draws the live line.
    let out = sh(
        &dir,
        "script -qec '\"$IOGAUGE\" run --target null --rate-iops 1000 --ramp 2s --time 2s --interval 500ms --no-history' /dev/null",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ramp-up (not recorded) 1/2 s"), "{text}");
    assert!(text.contains("recording 1/2 s"), "{text}");
}
