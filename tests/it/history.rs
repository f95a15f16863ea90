//! The history database: every run and study saved, found by filters, given back byte for
//! byte, compared by id, and never left unreadable by a killed process.

use crate::common;

use std::path::Path;

use common::*;
use iogauge::format::thousands;
use serde_json::Value;

fn history(dir: &Path, db: &Path, filter: &[&str]) -> Vec<Value> {
    let mut args = vec!["history", "--json", "--db", db.to_str().unwrap()];
    args.extend(filter);
    let out = ok_in(dir, &args);
    serde_json::from_slice::<Vec<Value>>(&out.stdout).expect("history --json prints one JSON array")
}

fn ids(list: &[Value]) -> Vec<i64> {
    list.iter().map(|e| e["id"].as_i64().unwrap()).collect()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap().trim().to_string()
}

#[test]
fn runs_are_saved_and_found_by_target_spec_host_and_date() {
    let dir = scratch("history");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    ok_in(
        &dir,
        &["run", "--target", "null", "--ios", "20000", "--spec", "random-read-4k", "--db", d, "--json", "a.json", "-q"],
    );
    ok_in(
        &dir,
        &["run", "--target", "null", "--ios", "20000", "--spec", "oltp-8k", "--db", d, "--json", "b.json", "-q"],
    );
    let file = dir.join("t.dat");
    let f = file.to_str().unwrap();
    ok_in(&dir, &["run", "--target", f, "--file-size", "8M", "--ios", "2000", "--db", d, "-q"]);

    let all = history(&dir, &db, &[]);
    assert_eq!(ids(&all), [3, 2, 1], "newest first");
    assert_eq!(all[1]["specs"], serde_json::json!(["oltp-8k"]));
    assert_eq!(all[0]["targets"], serde_json::json!([f]));
    let a: Value = serde_json::from_slice(&std::fs::read(dir.join("a.json")).unwrap()).unwrap();
    assert_eq!(all[2]["iops"], a["results"][0]["totals"]["iops"], "the headline is the document's");
    assert_eq!(all[2]["started_at"], a["started_at"]);

    assert_eq!(ids(&history(&dir, &db, &["--spec", "oltp-8k"])), [2]);
    assert_eq!(ids(&history(&dir, &db, &["--target", "t.dat"])), [3]);
    assert_eq!(ids(&history(&dir, &db, &["--target", "null"])), [2, 1]);
    assert_eq!(ids(&history(&dir, &db, &["--host", &hostname()])), [3, 2, 1]);
    assert!(history(&dir, &db, &["--host", "no-such-host"]).is_empty());
    assert_eq!(ids(&history(&dir, &db, &["--since", "1h"])), [3, 2, 1]);
    assert!(history(&dir, &db, &["--since", "2999-01-01"]).is_empty());
    assert!(history(&dir, &db, &["--until", "2000-01-01"]).is_empty());
    let started = a["started_at"].as_str().unwrap();
    assert_eq!(ids(&history(&dir, &db, &["--until", &started[..10]])), [3, 2, 1], "a plain date includes its day");
    assert_eq!(ids(&history(&dir, &db, &["--since", started, "--spec", "random-read-4k"])), [3, 1]);
    assert_eq!(ids(&history(&dir, &db, &["-n", "1"])), [3]);

    // The table lists them too, newest first.
    let table = String::from_utf8(ok_in(&dir, &["history", "--db", d]).stdout).unwrap();
    let rows = table.lines().skip_while(|l| !l.starts_with("---")).skip(1);
    let first_ids: Vec<&str> = rows.map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(first_ids, ["3", "2", "1"], "{table}");

    // export gives the document back byte for byte.
    let exported = ok_in(&dir, &["export", "1", "--db", d]).stdout;
    assert_eq!(exported, std::fs::read(dir.join("a.json")).unwrap());
    ok_in(&dir, &["export", "2", "--db", d, "-o", "b2.json"]);
    assert_eq!(std::fs::read(dir.join("b2.json")).unwrap(), std::fs::read(dir.join("b.json")).unwrap());

    // show prints the run's table.
    let shown = String::from_utf8(ok_in(&dir, &["show", "2", "--db", d]).stdout).unwrap();
    let b: Value = serde_json::from_slice(&std::fs::read(dir.join("b.json")).unwrap()).unwrap();
    let iops = b["results"][0]["totals"]["iops"].as_f64().unwrap();
    assert!(shown.contains("oltp-8k") && shown.contains(&thousands(iops)), "{shown}");
}

#[test]
fn compare_of_stored_runs_equals_compare_of_their_files() {
    let dir = scratch("history-compare");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    for (spec, out) in [("random-read-4k", "a.json"), ("random-read-4k", "b.json")] {
        ok_in(
            &dir,
            &[
                "run", "--target", "null", "--ios", "50000", "--spec", spec, "--spec", "oltp-8k", "--db", d, "--json",
                out, "-q",
            ],
        );
    }
    let rows = |args: &[&str]| -> Vec<String> {
        let out = String::from_utf8(ok_in(&dir, args).stdout).unwrap();
        // The lines naming the inputs differ (ids vs paths); the rows must not.
        out.lines().filter(|l| !l.starts_with("A = ") && !l.starts_with("B = ")).map(String::from).collect()
    };
    let by_id = rows(&["compare", "1", "2", "--db", d]);
    let by_file = rows(&["compare", "a.json", "b.json"]);
    assert_eq!(by_id, by_file);
    assert_eq!(by_id.len(), 9, "header, rule, two workloads of three rows, the % legend: {by_id:?}");
    // An id that is not there, and an argument that is neither file nor id.
    let out = iogauge_in(&dir, &["compare", "1", "99", "--db", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run 99 in history database"));
    let out = iogauge_in(&dir, &["compare", "1", "nothing.json", "--db", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing.json: no such file, and not a history id"));
}

#[test]
fn a_study_is_saved_whole_in_one_entry() {
    let dir = scratch("history-study");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    let job = dir.join("s.toml");
    std::fs::write(
        &job,
        "[test]\nramp = \"0s\"\ntime = \"100ms\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2, 4]\n",
    )
    .unwrap();
    ok_in(&dir, &["study", job.to_str().unwrap(), "--db", d, "--json", "s.json", "-q"]);
    let all = history(&dir, &db, &[]);
    assert_eq!(all.len(), 1, "one entry for the study, saved in place after each point");
    assert_eq!(all[0]["kind"], "study");
    assert_eq!(all[0]["results"], 3, "three points");
    assert_eq!(all[0]["interrupted"], false);
    let exported = ok_in(&dir, &["export", "1", "--db", d]).stdout;
    assert_eq!(exported, std::fs::read(dir.join("s.json")).unwrap(), "the final document, as --json wrote it");
    let shown = String::from_utf8(ok_in(&dir, &["show", "1", "--db", d]).stdout).unwrap();
    assert!(shown.contains("outstanding=4"), "{shown}");
}

#[test]
fn the_default_database_follows_xdg_and_no_history_writes_none() {
    let dir = scratch("history-default");
    let data = dir.join("data");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--target", "null", "--ios", "1000", "-q"];
        args.extend(extra);
        let out = command_in(&dir, &args).env("XDG_DATA_HOME", &data).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run(&["--no-history"]);
    assert!(!data.exists(), "--no-history creates no database");
    run(&[]);
    let db = data.join("iogauge/history.sqlite");
    assert!(db.exists(), "saved under $XDG_DATA_HOME/iogauge/");
    assert_eq!(history(&dir, &db, &[]).len(), 1);
}

#[test]
fn a_bad_database_path_is_one_line_and_runs_nothing() {
    let dir = scratch("history-bad");
    let target = dir.join("never.dat");
    let out = iogauge_in(
        &dir,
        &["run", "--target", target.to_str().unwrap(), "--ios", "10", "--db", "/proc/no/such/dir/h.sqlite"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/proc/no/such/dir"), "{err}");
    assert!(!target.exists(), "no target file created");
    let out = iogauge_in(&dir, &["history", "--since", "last tuesday", "--db", "h.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--since: 'last tuesday' is not a date"));
}

/// The history is never overwritten by an output, under any name, nor made where it was not
/// asked for: `--db` in a missing directory is exit 2 and creates nothing; `history` and `show`
/// of a database that does not exist say so and create nothing.
#[test]
fn the_history_is_never_an_output_nor_made_by_a_reader() {
    let dir = scratch("history-apart");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    ok_in(&dir, &["run", "--target", "null", "--ios", "1000", "--db", d, "-q"]);
    std::os::unix::fs::symlink(&db, dir.join("alias.json")).unwrap();
    let before = digest(&db);
    for args in [["--json", "h.sqlite"], ["--csv", "alias.json"]] {
        let mut all = vec!["run", "--target", "null", "--ios", "1000", "--db", d, "-q"];
        all.extend(args);
        let out = iogauge_in(&dir, &all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("is the history database"), "{err}");
    }
    assert_eq!(digest(&db), before, "the database changed");
    assert_eq!(ids(&history(&dir, &db, &[])), [1]);

    let out = iogauge_in(&dir, &["run", "--target", "null", "--ios", "10", "--db", "nodir/h.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("directory nodir does not exist"));
    for args in [vec!["history", "--db", "none.sqlite"], vec!["show", "1", "--db", "none.sqlite"]] {
        let out = iogauge_in(&dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("no history database at none.sqlite"));
    }
    assert!(!dir.join("nodir").exists() && !dir.join("none.sqlite").exists(), "a reader created a database");
    // A device is never a database: its bytes stay as they were.
    let dev = LoopDev::new(8 << 20);
    let before = digest(&dev.file);
    let out = iogauge_in(&dir, &["run", "--target", "null", "--ios", "10", "--db", &dev.dev]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    assert_eq!(digest(&dev.file), before);
}

#[test]
fn killed_processes_never_leave_the_database_unreadable() {
    let dir = scratch("history-kill");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    let mut finished = 0;
    // Kill at moments spread from before the database opens to after the save.
    for i in 0..16u64 {
        let mut child = command_in(&dir, &["run", "--target", "null", "--ios", "30000", "--db", d, "-q"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(i * 3));
        let _ = child.kill(); // SIGKILL
        if child.wait().unwrap().success() {
            finished += 1;
        }
    }
    // A study killed between points keeps the points saved so far.
    let job = dir.join("s.toml");
    std::fs::write(
        &job,
        "[test]\nramp = \"0s\"\ntime = \"200ms\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2, 4, 8, 16, 32, 64]\n",
    )
    .unwrap();
    let mut child = command_in(&dir, &["study", job.to_str().unwrap(), "--db", d, "-q"]).args(LINES).spawn().unwrap();
    wait_for_line(&dir, &mut child, |l| l["study"]["point"].as_u64() >= Some(2));
    child.kill().unwrap();
    child.wait().unwrap();

    let check = std::process::Command::new("sqlite3").arg(&db).arg("PRAGMA integrity_check;").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok", "the sqlite3 tool finds the file sound");
    let all = history(&dir, &db, &[]);
    let runs = all.iter().filter(|e| e["kind"] == "run").count();
    assert!(runs >= finished && runs <= 16, "every finished run is there: {runs} saved, {finished} finished");
    let study = all.iter().find(|e| e["kind"] == "study").expect("the killed study's points are saved");
    let points = study["results"].as_u64().unwrap();
    assert!((1..7).contains(&points), "{points} of 7 points");
    assert_eq!(study["interrupted"], true, "a study cut short is not reported complete");
    for e in &all {
        let id = e["id"].to_string();
        let doc: Value = serde_json::from_slice(&ok_in(&dir, &["export", &id, "--db", d]).stdout).unwrap();
        assert!(doc["schema"].as_str().unwrap().starts_with("iogauge."));
    }
}

/// Several iogauge processes creating one new database at once (the first use, or the ranks'
/// neighbours on one machine) all save into it: none fails with "database is locked".
#[test]
fn a_new_database_opened_by_many_at_once() {
    let dir = scratch("historyrace");
    for round in 0..10 {
        let db = dir.join(format!("h{round}.sqlite"));
        let children: Vec<_> = (0..6)
            .map(|_| {
                let mut c =
                    command_in(&dir, &["run", "--target", "null", "--ios", "10", "-q", "--db", db.to_str().unwrap()]);
                c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for c in children {
            let out = output_of(c);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        // Every run's row is there: a save that failed and said so in a warning passed
        // before, with its row lost.
        assert_eq!(history(&dir, &db, &[]).len(), 6, "round {round}: a row per run");
    }
}

/// Waits until the run `child` has ended its workers (its save comes next), or has exited.
fn wait_past_the_run(child: &mut std::process::Child) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() && !worker_stats(child.id()).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the run's workers did not end within 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Runs that end while another program holds the database locked (sqlite3 in a transaction of
/// its own, as a user's query or a backup may) wait for the lock and save, every one of them:
/// the rows are counted. The runs open the database (and start their workers) first; then
/// sqlite3 takes the lock, each run is stopped as Ctrl-C stops it (so each ends, and saves,
/// only after the lock is held, however slow the host), and the lock is held until every run
/// has ended its workers, and 2 s more.
#[test]
fn saves_wait_for_a_locked_database() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    let dir = scratch("history-locked");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    ok_in(&dir, &["run", "--target", "null", "--ios", "10", "--db", d, "-q"]);
    let run = ["run", "--target", "null", "--rate-iops", "500", "--ramp", "0s", "--time", "60s", "--db", d, "-q"];
    let mut runs: Vec<_> =
        (0..4).map(|_| command_in(&dir, &run).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()).collect();
    runs.iter_mut().for_each(wait_for_workers);
    let mut holder =
        std::process::Command::new("sqlite3").arg(&db).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut sql = holder.stdin.take().unwrap();
    sql.write_all(b"BEGIN EXCLUSIVE;\n.print locked\n").unwrap();
    let mut said = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap()).read_line(&mut said).unwrap();
    assert_eq!(said.trim(), "locked", "sqlite3 holds the database");
    for r in &runs {
        // SAFETY: signalling a child of this test.
        unsafe { libc::kill(r.id() as i32, libc::SIGINT) };
    }
    runs.iter_mut().for_each(wait_past_the_run);
    std::thread::sleep(std::time::Duration::from_secs(2));
    sql.write_all(b"COMMIT;\n").unwrap();
    drop(sql);
    assert!(holder.wait().unwrap().success());
    for r in runs {
        let out = output_of(r);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(130) && !err.contains("not saved"), "{err}");
    }
    let saved = history(&dir, &db, &[]);
    assert_eq!(saved.len(), 5, "the first run and the four that waited: {saved:?}");
    assert_eq!(saved.iter().filter(|e| e["interrupted"] == true).count(), 4);
}

/// A save that fails once the database is open (here its file system fills up during the
/// run) fails the command, exit 1, with one line after every other output is written; the
/// database keeps what it had.
#[test]
fn a_failed_save_fails_the_command_after_its_outputs() {
    let dir = scratch("history-full");
    let fs = Tmpfs::mount("2M");
    let db = fs.0.join("h.sqlite");
    let d = db.to_str().unwrap();
    ok_in(&dir, &["run", "--target", "null", "--ios", "10", "--db", d, "-q"]);
    let run = ["run", "--target", "null", "--rate-iops", "500", "--ramp", "0s", "--time", "1s", "--db", d];
    let mut child = command_in(&dir, &[&run[..], &["--json", "r.json", "--csv", "r.csv"]].concat())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The database is open once the workers run: then its file system fills.
    wait_for_workers(&mut child);
    let fill = fs.0.join("fill");
    let filled = std::fs::write(&fill, vec![0u8; 2 << 20]);
    assert!(filled.is_err_and(|e| e.raw_os_error() == Some(libc::ENOSPC)), "the tmpfs is full");
    let out = output_of(child);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Beside a warning a loaded host may give (other work on the host), one line of failure.
    let ours: Vec<&str> =
        err.lines().filter(|l| l.starts_with("iogauge:") && !l.starts_with("iogauge: warning:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].starts_with("iogauge: not saved to the history: ") && ours[0].contains(d), "{err}");
    assert_eq!(err.lines().last(), Some(ours[0]), "said last, after the outputs: {err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("IOPS"), "the table is printed");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).unwrap()).unwrap();
    assert!(num(&doc, "results/0/totals/ios") > 0.0);
    assert_eq!(std::fs::read_to_string(dir.join("r.csv")).unwrap().lines().count(), 2, "the CSV is written");
    std::fs::remove_file(&fill).unwrap();
    assert_eq!(history(&dir, &db, &[]).len(), 1, "the database keeps the first run alone");
}

/// Documents an earlier iogauge wrote (`iogauge.result/1`, `iogauge.study/1`: its file-system
/// threads said engine `psync`, 1 outstanding, the directory as their target) still load in
/// compare, report, show and export, from files and from a history database, beside the
/// version 2 documents of the same tests.
#[test]
fn documents_an_older_iogauge_wrote_still_load() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (old_fs, old_run) = (fixtures.join("study-1-fs.json"), fixtures.join("result-1-null.json"));
    let (old_fs, old_run) = (old_fs.to_str().unwrap(), old_run.to_str().unwrap());
    let dir = scratch("history-v1");
    let files = dir.join("files");
    std::fs::create_dir(&files).unwrap();
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    let fs_args = ["--threads", "1", "--size", "1M", "--tests", "write,read", "--db", d, "--json", "fs.json", "-q"];
    ok_in(&dir, &[&["fs", "--dir", files.to_str().unwrap()][..], &fs_args].concat());
    ok_in(&dir, &["run", "--target", "null", "--ios", "20000", "--db", d, "--json", "run.json", "-q"]);
    let new: Value = serde_json::from_slice(&std::fs::read(dir.join("fs.json")).unwrap()).unwrap();
    assert_eq!(new["schema"], "iogauge.study/2");
    let old: Value = serde_json::from_slice(&std::fs::read(old_fs).unwrap()).unwrap();
    assert_eq!(old["points"][0]["runs"][0]["schema"], "iogauge.result/1", "the fixture is a version 1 document");
    assert_eq!(old["points"][0]["runs"][0]["results"][0]["workers"][0]["engine"], "psync");

    // Files: each workload of the old document against the new one's.
    let out = String::from_utf8(ok_in(&dir, &["compare", old_fs, "fs.json"]).stdout).unwrap();
    for w in ["threads=1 write", "threads=1 read", "Overall write"] {
        assert!(out.contains(w), "compare names {w}: {out}");
    }
    let out = String::from_utf8(ok_in(&dir, &["compare", old_run, "run.json"]).stdout).unwrap();
    assert!(out.contains("random-read-4k"), "{out}");
    ok_in(&dir, &["report", old_fs, old_run, "fs.json", "run.json", "-o", "r.html", "--db", d]);
    let html = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(html.contains("threads=1") && html.contains("random-read-4k"), "the report holds both");

    // A history database an older iogauge filled: its documents are version 1.
    let study_id = history(&dir, &db, &[]).iter().find(|e| e["kind"] == "study").unwrap()["id"].as_i64().unwrap();
    let run_id = history(&dir, &db, &[]).iter().find(|e| e["kind"] == "run").unwrap()["id"].as_i64().unwrap();
    for (id, file) in [(study_id, old_fs), (run_id, old_run)] {
        let sql = format!("UPDATE runs SET document = CAST(readfile('{file}') AS TEXT) WHERE id = {id};");
        let st = std::process::Command::new("sqlite3").arg(&db).arg(sql).status().unwrap();
        assert!(st.success());
        let id = id.to_string();
        let exported = ok_in(&dir, &["export", &id, "--db", d]).stdout;
        assert_eq!(exported, std::fs::read(file).unwrap(), "export gives the old document back, byte for byte");
        for detail in ["workers", "targets"] {
            let shown = String::from_utf8(ok_in(&dir, &["show", &id, "--db", d, "--detail", detail]).stdout).unwrap();
            assert!(shown.contains("IOPS"), "{shown}");
        }
    }
    let (s, r) = (study_id.to_string(), run_id.to_string());
    ok_in(&dir, &["report", &s, &r, "-o", "h.html", "--db", d]);
    let out = String::from_utf8(ok_in(&dir, &["compare", &s, "fs.json", "--db", d]).stdout).unwrap();
    assert!(out.contains("threads=1 read"), "{out}");
}

/// A document of several workloads shows its best IOPS and MB/s with the workload each is of
/// (issue 48: the profile's row gave two workloads' figures unlabelled), from the document's
/// own figures; a database of the schema before keeps its rows and gains the labels' columns.
#[test]
fn the_best_figures_of_several_name_their_workload() {
    let dir = scratch("history-best");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    // A database as the first schema made it, with a row: today's, its new columns dropped.
    ok_in(&dir, &["run", "--target", "null", "--ios", "1000", "--db", d, "-q"]);
    let v1 = "ALTER TABLE runs DROP COLUMN iops_of; ALTER TABLE runs DROP COLUMN mbps_of; PRAGMA user_version = 1;";
    let out = std::process::Command::new("sqlite3").arg(&db).arg(v1).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let args = ["run", "--target", "null", "--spec", "random-read-4k", "--spec", "streaming-read-1m", "--ramp", "0s"];
    let doc = json(&[&args[..], &["--time", "500ms", "--db", d]].concat());
    let list = history(&dir, &db, &[]);
    assert_eq!(list.len(), 2, "the old row is kept: {list:?}");
    let best = |k: &str| {
        let r = doc["results"].as_array().unwrap();
        r.iter().max_by(|a, b| num(a, k).total_cmp(&num(b, k))).unwrap()["spec"].as_str().unwrap().to_string()
    };
    assert_eq!(list[0]["iops_of"].as_str(), Some(best("totals/iops").as_str()), "{:?}", list[0]);
    assert_eq!(list[0]["mbps_of"].as_str(), Some(best("totals/mbps").as_str()), "{:?}", list[0]);
    assert!(list[1].get("iops_of").is_none(), "a row of one result has no label");
    let text = String::from_utf8(ok_in(&dir, &["history", "--db", d]).stdout).unwrap();
    assert!(text.contains(&format!(" ({})", best("totals/mbps"))), "{text}");
}

/// `export --format csv` and `--format iometer-csv` write a stored run's and study's files
/// byte for byte as the run's own `--csv` and `--iometer-csv` wrote them (issue 84: Iometer's
/// CSV of a page's run meant running it again); another format is refused, exit 2.
#[test]
fn export_writes_the_csv_and_iometer_files_the_run_wrote() {
    let dir = scratch("history-export-formats");
    let db = dir.join("h.sqlite");
    let d = db.to_str().unwrap();
    let files = ["--csv", "r.csv", "--iometer-csv", "r-iometer.csv", "--db", d, "-q"];
    ok_in(&dir, &[&["run", "--target", "null", "--ios", "20000", "--spec", "oltp-8k"][..], &files].concat());
    let job = dir.join("s.toml");
    std::fs::write(
        &job,
        "[test]\nramp = \"0s\"\ntime = \"100ms\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2]\n",
    )
    .unwrap();
    let study = ["study", job.to_str().unwrap(), "--csv", "s.csv", "--iometer-csv", "s-iometer.csv", "--db", d, "-q"];
    ok_in(&dir, &study);
    for (id, prefix) in [("1", "r"), ("2", "s")] {
        for (format, file) in [("csv", format!("{prefix}.csv")), ("iometer-csv", format!("{prefix}-iometer.csv"))] {
            let exported = ok_in(&dir, &["export", id, "--format", format, "--db", d]).stdout;
            assert_eq!(exported, std::fs::read(dir.join(&file)).unwrap(), "export {id} --format {format}");
        }
    }
    let out = iogauge_in(&dir, &["export", "1", "--format", "xlsx", "--db", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("json, csv or iometer-csv"));
}
