//! Every file a command writes goes through one guard (issue 46): each command's output flags
//! refuse a block device holding a file system, a character device other than /dev/null, the
//! history database and SQLite's journal beside it (also with --no-history, and the default
//! database as well as a --db), another output of the same command, and a file inside an
//! output directory; one line, exit 2, and nothing written to any of them.

use crate::common;

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::process::Command;

use common::*;

/// iogauge in `dir`, its default history database there (the tests' shared one changes as
/// other tests save their runs).
fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    command_in(dir, args).env("XDG_DATA_HOME", dir.join("data")).output().unwrap()
}

/// Succeeds.
fn done(dir: &Path, args: &[&str]) {
    let out = run_in(dir, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// One line on stderr, exit 2.
fn refused(dir: &Path, args: &[&str], needle: &str) {
    let out = run_in(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

#[test]
fn every_output_is_guarded() {
    let dir = scratch("outputs");
    // A result, a stored run (in the default database and in one of our own), a trace.
    done(&dir, &["run", "--target", "null", "--ios", "1000", "--json", "r.json", "-q"]);
    done(&dir, &["run", "--target", "null", "--ios", "1000", "--db", "own.sqlite", "-q"]);
    let trace = dir.join("t.iolog");
    std::fs::write(&trace, "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 0 4096\n").unwrap();
    let (db, own) = (dir.join("data/iogauge/history.sqlite"), dir.join("own.sqlite"));
    let (db_s, own_s, trace_s) = (db.display().to_string(), own.display().to_string(), trace.display().to_string());
    let wal = format!("{db_s}-wal");
    let disk = LoopDev::new(16 << 20);
    assert!(std::process::Command::new("mkfs.ext4").args(["-q", "-F", &disk.dev]).status().unwrap().success());
    let before = [digest(Path::new(&disk.dev)), digest(&db), digest(&own)];

    // Every command and output flag, with what else it needs: the flag's value goes last.
    let run = ["run", "--target", "null", "--ios", "100", "-q"];
    let files: Vec<(Vec<&str>, &str)> = vec![
        (run.to_vec(), "--json"),
        (run.to_vec(), "--csv"),
        (run.to_vec(), "--iometer-csv"),
        (run.to_vec(), "--fio-json"),
        (run.to_vec(), "--live-json"),
        ([&run[..], &["--no-history"]].concat(), "--json"),
        (vec!["report", "r.json"], "-o"),
        (vec!["export", "1"], "-o"),
        (vec!["distil", &trace_s], "-o"),
        (vec!["capture", "--device", &disk.dev, "--time", "1s"], "-o"),
    ];
    for (args, flag) in &files {
        for (value, why) in [
            (disk.dev.as_str(), "is a block device"),
            ("/dev/zero", "is a character device"),
            (db_s.as_str(), "is the history database"),
            (wal.as_str(), "is the history database's journal"),
        ] {
            refused(&dir, &[&args[..], &[*flag, value]].concat(), why);
        }
    }
    // A --db of the command's own: the run and the commands that read a history.
    refused(&dir, &[&run[..], &["--db", &own_s, "--json", &own_s]].concat(), "is the history database");
    refused(&dir, &["export", "1", "--db", &own_s, "-o", &own_s], "is the history database");
    refused(&dir, &["report", "r.json", "--db", &own_s, "-o", &own_s], "is the history database");

    // Two outputs on one file, a file inside an output directory, stdout twice.
    refused(&dir, &[&run[..], &["--json", "a.json", "--csv", "./a.json"]].concat(), "both name");
    // By identity: a hard link to the database, or to another output, is the same file.
    std::fs::hard_link(&db, dir.join("linked.sqlite")).unwrap();
    refused(&dir, &["export", "1", "-o", "linked.sqlite"], "is the history database");
    std::fs::write(dir.join("b.json"), "").unwrap();
    std::fs::hard_link(dir.join("b.json"), dir.join("c.json")).unwrap();
    refused(&dir, &[&run[..], &["--json", "b.json", "--csv", "c.json"]].concat(), "both name");
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    // In a log's name (other files may lie beside the logs).
    refused(
        &dir,
        &[&run[..], &["--log-dir", "logs", "--json", "logs/worker_1_lat.1.log"]].concat(),
        "inside --log-dir",
    );
    refused(&dir, &["report", "r.json", "--charts", "charts", "-o", "charts/r.html"], "inside --charts");
    refused(&dir, &[&run[..], &["--json", "-", "--live-json", "-"]].concat(), "cannot both use stdout");
    refused(&dir, &["man", "--dir", &disk.dev], "is a block device");

    let after = [digest(Path::new(&disk.dev)), digest(&db), digest(&own)];
    assert_eq!(before, after, "a refused output changed the device or a database");
    // The databases are still databases, with their runs.
    for db in [&db, &own] {
        let out = std::process::Command::new("sqlite3").arg(db).arg("select count(*) from runs").output().unwrap();
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).trim() != "0", "{}", db.display());
    }
    // And what may be written is: /dev/null, a file beside the databases.
    done(&dir, &[&run[..], &["--json", "/dev/null", "--live-json", "/dev/null", "--no-history"]].concat());
    done(&dir, &["export", "1", "-o", &format!("{}.json", db_s)]);
}

/// No output is one of the command's own inputs (by identity: a symlink or hard link to it is
/// it), nor replaces a trace, a SQLite database, or a file in an output directory that
/// iogauge did not write; one line, exit 2, and each file as it was.
#[test]
fn no_output_replaces_an_input_a_trace_or_a_database() {
    let dir = scratch("outputs-inputs");
    done(&dir, &["run", "--target", "null", "--ios", "1000", "--json", "r.json", "-q", "--no-history"]);
    let iometer = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/iometer-1.1-cycling.csv");
    std::fs::copy(iometer, dir.join("io.csv")).unwrap();
    std::fs::write(dir.join("t.iolog"), "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 0 4096\n")
        .unwrap();
    let job = "[test]\nrun = [\"random-read-4k\"]\nios = 100\nramp = \"0s\"\n[[worker]]\ntargets = [\"null\"]\n";
    std::fs::write(dir.join("j.toml"), job).unwrap();
    std::fs::write(dir.join("s.toml"), format!("{job}[study]\noutstanding = [1, 2]\n")).unwrap();
    std::fs::write(
        dir.join("specs.toml"),
        "[[spec]]\nname = \"mine\"\nlines = [{ size = \"4K\", read = 100, random = 100 }]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("r.json", dir.join("via-link.json")).unwrap();
    std::fs::hard_link(dir.join("j.toml"), dir.join("hard.toml")).unwrap();
    assert!(
        std::process::Command::new("sqlite3")
            .arg(dir.join("other.db"))
            .arg("create table t(x)")
            .status()
            .unwrap()
            .success()
    );
    std::fs::create_dir(dir.join("charts")).unwrap();
    std::fs::write(dir.join("charts/01-response-time-percentiles.svg"), "<svg xmlns=\"http://www.w3.org/2000/svg\"/>")
        .unwrap();
    let files = [
        "r.json",
        "io.csv",
        "t.iolog",
        "j.toml",
        "s.toml",
        "specs.toml",
        "other.db",
        "charts/01-response-time-percentiles.svg",
    ];
    let before: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();

    let reads = "is a file this command reads";
    refused(&dir, &["report", "r.json", "-o", "r.json"], reads);
    refused(&dir, &["report", "r.json", "-o", "via-link.json"], "via-link.json is a file this command reads (r.json)");
    refused(&dir, &["report", "r.json", "io.csv", "-o", "io.csv"], reads);
    refused(&dir, &["distil", "t.iolog", "-o", "t.iolog"], reads);
    refused(&dir, &["run", "j.toml", "--no-history", "--json", "j.toml"], reads);
    refused(&dir, &["run", "j.toml", "--no-history", "--csv", "hard.toml"], reads);
    refused(
        &dir,
        &["run", "j.toml", "--spec-file", "specs.toml", "--no-history", "--iometer-csv", "specs.toml"],
        reads,
    );
    refused(&dir, &["study", "s.toml", "--no-history", "--json", "s.toml"], reads);
    // Not inputs of the command, but what no report or document replaces.
    refused(&dir, &["report", "r.json", "-o", "t.iolog"], "holds a trace");
    refused(&dir, &["report", "r.json", "-o", "other.db"], "holds a SQLite database");
    refused(&dir, &["run", "j.toml", "--no-history", "--json", "other.db"], "holds a SQLite database");
    refused(&dir, &["report", "r.json", "-o", "r.html", "--charts", "charts"], "is not what iogauge writes there");
    assert!(!dir.join("r.html").exists(), "the report was written though its charts were refused");

    let after: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();
    assert_eq!(before, after, "a refused output changed a file");
    // A chart iogauge wrote is replaced by the same chart made again.
    std::fs::remove_file(dir.join("charts/01-response-time-percentiles.svg")).unwrap();
    done(&dir, &["report", "r.json", "-o", "r.html", "--charts", "charts"]);
    done(&dir, &["report", "r.json", "-o", "r.html", "--charts", "charts"]);
}

/// The job of the tests below: one worker reading the null target for 1 s.
const JOB: &str = "[test]\nramp = \"0s\"\ntime = \"1s\"\n[[worker]]\ntargets = [\"null\"]\nspec = \"random-read-4k\"\n";

/// A log directory holds the logs and whatever else the user puts there: other outputs may
/// lie beside the logs (a fio job's `write_bw_log` logs into the working directory, where its
/// user's `--json` goes too), never in a log's name.
#[test]
fn other_outputs_lie_beside_the_logs_not_in_their_names() {
    let dir = scratch("outputs-beside-logs");
    std::fs::write(dir.join("j.toml"), JOB).unwrap();
    done(&dir, &["run", "j.toml", "--no-history", "--log-dir", ".", "--json", "r.json", "--iolog", "i.iolog"]);
    assert!(dir.join("r.json").exists() && dir.join("i.iolog").exists() && dir.join("worker_1_bw.1.log").exists());
    let args = ["run", "j.toml", "--no-history", "--log-dir", ".", "--json", "worker_1_bw.1.log"];
    refused(&dir, &args, "is inside --log-dir's directory");
}

/// Issue 82: the logs a run writes itself (`--log-dir`, its `--log-name` gathering, `--iolog`)
/// go through the guard: a file already there of a log's name is replaced only when it is a
/// log iogauge wrote, never when it is the job file, a trace, a SQLite database, the `--db`
/// history or a user's file; the iolog only a fio iolog v3. One line, exit 2, every file as it
/// was; a rerun into the same directory and iolog works.
#[test]
fn the_logs_a_run_writes_replace_only_logs() {
    let dir = scratch("outputs-logs");
    std::fs::write(dir.join("j.toml"), JOB).unwrap();
    let v3 = "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 0 4096\n";
    assert!(Command::new("sqlite3").arg(dir.join("o.db")).arg("create table t(x)").status().unwrap().success());
    for d in ["ld2", "ld3", "ld4", "ld5", "ld6", "ld7", "ld8"] {
        std::fs::create_dir(dir.join(d)).unwrap();
    }
    std::fs::copy(dir.join("j.toml"), dir.join("ld2/worker_1_bw.1.log")).unwrap();
    std::fs::write(dir.join("ld3/worker_1_lat.1.log"), "user data\n").unwrap();
    std::fs::write(dir.join("ld4/replay_iops.1.log"), v3).unwrap();
    std::fs::write(dir.join("ld5/worker_1_clat.1.log"), "fio version 2 iolog\n/dev/x add\n").unwrap();
    std::fs::copy(dir.join("o.db"), dir.join("ld7/worker_1_iops.2.log")).unwrap();
    std::fs::write(dir.join("ld8/all_bw.log"), "user data\n").unwrap();
    std::fs::write(dir.join("mine.txt"), "user data\n").unwrap();
    std::fs::write(dir.join("v2.iolog"), "fio version 2 iolog\n/dev/x add\n").unwrap();
    std::fs::create_dir(dir.join("jd")).unwrap();
    // A job that writes a file, as a journal needs, saved under a journal's name.
    let writes =
        "[test]\nios = 10\nfile_size = \"4M\"\n[[worker]]\ntargets = [\"t.tst\"]\nspec = \"random-write-4k\"\n";
    std::fs::write(dir.join("jd/w0.jnl"), writes).unwrap();
    std::fs::write(dir.join("w.toml"), writes).unwrap();
    // The --db history of the attacker's last case, saved into first.
    done(&dir, &["run", "j.toml", "--db", "ld6/worker_1_iops.1.log", "-q"]);
    let files = [
        "j.toml",
        "o.db",
        "ld2/worker_1_bw.1.log",
        "ld3/worker_1_lat.1.log",
        "ld4/replay_iops.1.log",
        "ld5/worker_1_clat.1.log",
        "ld6/worker_1_iops.1.log",
        "ld7/worker_1_iops.2.log",
        "ld8/all_bw.log",
        "mine.txt",
        "v2.iolog",
        "jd/w0.jnl",
    ];
    let before: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();

    let reads = "is a file this command reads";
    let not_log = "is not a log iogauge wrote";
    refused(&dir, &["run", "ld2/worker_1_bw.1.log", "--no-history", "--log-dir", "ld2"], reads);
    refused(&dir, &["run", "j.toml", "--no-history", "--log-dir", "ld3"], not_log);
    refused(&dir, &["replay", "ld4/replay_iops.1.log", "--target", "null", "--no-history", "--log-dir", "ld4"], reads);
    refused(&dir, &["run", "j.toml", "--no-history", "--log-dir", "ld5"], "it holds a trace");
    refused(&dir, &["run", "j.toml", "--db", "ld6/worker_1_iops.1.log", "--log-dir", "ld6"], "is the history database");
    // A log of the second workload, which this one-workload job would not write, is checked
    // all the same: what the test writes is any file of a log's name.
    refused(&dir, &["run", "j.toml", "--no-history", "--log-dir", "ld7"], "it holds a SQLite database");
    refused(&dir, &["run", "j.toml", "--no-history", "--log-dir", "ld8", "--log-name", "all"], not_log);
    refused(&dir, &["run", "j.toml", "--no-history", "--iolog", "mine.txt"], "is not a fio iolog v3");
    refused(&dir, &["run", "j.toml", "--no-history", "--iolog", "j.toml"], reads);
    refused(&dir, &["run", "j.toml", "--no-history", "--iolog", "v2.iolog"], "holds a trace");
    refused(&dir, &["run", "j.toml", "--no-history", "--iolog", "o.db"], "holds a SQLite database");
    // Written at the test's end, said before its start: a directory that is not there.
    refused(
        &dir,
        &["run", "j.toml", "--no-history", "--iolog", "no/such/x.iolog"],
        "--iolog: cannot write no/such/x.iolog",
    );
    // --journal's directory: a file of a journal's name is replaced only where it is one.
    refused(&dir, &["run", "jd/w0.jnl", "--no-history", "--journal", "jd"], reads);
    refused(&dir, &["run", "w.toml", "--no-history", "--journal", "jd"], "is not a file of an iogauge journal");
    refused(&dir, &["run", "w.toml", "--no-history", "--journal", "mine.txt"], "--journal mine.txt: not a directory");
    assert!(!dir.join("t.tst").exists(), "a refused journal's test made its file");
    let after: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();
    assert_eq!(before, after, "a refused log changed a file");
    let runs =
        Command::new("sqlite3").arg(dir.join("ld6/worker_1_iops.1.log")).arg("select count(*) from runs").output();
    assert_eq!(String::from_utf8_lossy(&runs.unwrap().stdout).trim(), "1", "the --db lost its run");

    // What iogauge wrote it replaces: a rerun into the same directory, gathered or not, and iolog.
    let logs = ["run", "j.toml", "--no-history", "-q", "--log-dir", "logs", "--iolog", "io.iolog"];
    for args in [&logs[..], &[&logs[..], &["--log-name", "all"]].concat(), &logs[..]] {
        done(&dir, args);
    }
    for f in ["logs/worker_1_lat.1.log", "logs/all_iops.log"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.lines().count() > 100, "{f}: {} lines", text.lines().count());
    }
    assert!(std::fs::read_to_string(dir.join("io.iolog")).unwrap().starts_with("fio version 3 iolog\n"));

    // A device is written through, never renamed over: `--iolog /dev/null` put a regular file
    // where /dev/null was. A node of /dev/null's number in the scratch directory stands for it,
    // so that the bug, put back, harms no other test.
    let null = dir.join("null");
    assert!(Command::new("mknod").args([null.to_str().unwrap(), "c", "1", "3"]).status().unwrap().success());
    done(&dir, &["run", "j.toml", "--no-history", "-q", "--iolog", "null"]);
    assert!(std::fs::metadata(&null).unwrap().file_type().is_char_device(), "--iolog replaced a device with a file");
    let parts =
        std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".part"));
    assert_eq!(parts.count(), 0, "an iolog's parts were left");
}

/// Issue 82: `capture -o` replaces an earlier capture, never another tool's trace (a fio
/// iolog, blkparse's text), a database or any other file (a job file); one line, exit 2, the
/// file as it was, nothing captured.
#[test]
fn a_capture_replaces_only_an_earlier_capture() {
    let dir = scratch("outputs-capture");
    let disk = LoopDev::new(16 << 20);
    std::fs::write(dir.join("j.toml"), JOB).unwrap();
    std::fs::write(dir.join("fio.iolog"), "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 0 4096\n")
        .unwrap();
    std::fs::write(dir.join("parsed.txt"), "  7,0    1        1     0.000000000  4242  Q   R 0 + 8 [fio]\n").unwrap();
    assert!(Command::new("sqlite3").arg(dir.join("o.db")).arg("create table t(x)").status().unwrap().success());
    let files = ["j.toml", "fio.iolog", "parsed.txt", "o.db"];
    let before: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();
    let capture = |out: &'static str| vec!["capture", "--device", disk.dev.as_str(), "--time", "1s", "-o", out];
    refused(&dir, &capture("j.toml"), "is not an iogauge capture");
    refused(&dir, &capture("fio.iolog"), "holds a trace");
    refused(&dir, &capture("parsed.txt"), "holds a trace (blkparse's text)");
    refused(&dir, &capture("o.db"), "holds a SQLite database");
    let after: Vec<String> = files.iter().map(|f| digest(&dir.join(f))).collect();
    assert_eq!(before, after, "a refused capture changed a file");
    // An earlier capture is replaced by the next.
    done(&dir, &capture("cap.csv"));
    let first = std::fs::metadata(dir.join("cap.csv")).unwrap().ino();
    done(&dir, &capture("cap.csv"));
    assert_ne!(std::fs::metadata(dir.join("cap.csv")).unwrap().ino(), first, "not written again");
    assert!(std::fs::read_to_string(dir.join("cap.csv")).unwrap().starts_with("# iogauge-capture/1"));
}
