//! Ctrl-C (SIGINT) or SIGTERM during a run: recording stops at once, and the results so far
//! are printed, written and saved, marked interrupted; the exit status is 130.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use common::*;
use serde_json::Value;

fn stop_a_run_with(signal: i32) {
    let dir = scratch("interrupt");
    let args = [
        "run",
        "--target",
        "null",
        "--spec",
        "random-read-4k",
        "--spec",
        "oltp-8k",
        "--ramp",
        "500ms",
        "--time",
        "60s",
        "--json",
        "out.json",
        "--iometer-csv",
        "out.csv",
        "--db",
        "h.sqlite",
    ];
    let mut child = command_in(&dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = SystemTime::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let t0 = Instant::now();
    let out = output_of(child);
    assert!(t0.elapsed() < Duration::from_secs(3), "took {:?} to stop", t0.elapsed());
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("marked interrupted"));
    // The table of what was measured is printed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("random-read-4k"));

    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "the second specification never ran");
    // Recorded from the end of ramp-up to the signal (about 1 s, less however long a loaded host
    // took to start it), and the figures are over that time.
    let secs = num(&doc, "results/0/duration_s");
    let started = humantime::parse_rfc3339(doc["results"][0]["started_at"].as_str().unwrap()).unwrap();
    let until_signal = signalled.duration_since(started).unwrap().as_secs_f64();
    // started_at is to the millisecond; the signal is seen within the monitor's next tick.
    assert!(
        secs > until_signal - 0.002 && secs < until_signal + 0.5,
        "recorded {secs} s, {until_signal} s to the signal"
    );
    let (ios, iops) = (num(&doc, "results/0/totals/ios"), num(&doc, "results/0/totals/iops"));
    assert!(ios > 0.0 && ((iops * secs - ios) / ios).abs() < 1e-9, "{ios} I/Os at {iops} IOPS in {secs} s");
    // As Iometer ends an aborted test: no 'End Test, which tells automation all runs are done.
    let csv = std::fs::read_to_string(dir.join("out.csv")).unwrap();
    assert!(csv.ends_with("Aborted test\n") && !csv.contains("'End Test"), "{csv}");

    let list = ok_in(&dir, &["history", "--json", "--db", "h.sqlite"]);
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list[0]["interrupted"], true, "{list}");
}

#[test]
fn ctrl_c_stops_a_run_and_keeps_what_it_measured() {
    stop_a_run_with(libc::SIGINT);
}

#[test]
fn sigterm_does_the_same() {
    stop_a_run_with(libc::SIGTERM);
}

/// SIGHUP (the ssh session dropped) is SIGTERM: the results so far are kept.
#[test]
fn sighup_does_the_same() {
    stop_a_run_with(libc::SIGHUP);
}

/// Stopped during ramp-up, a run has measured nothing: exit 130, and no document, CSV or
/// history entry of a 0-IOPS run.
/// Signals that mean nothing to iogauge, sent by hand to the process a user started (the one
/// that forwards to the test's own session) or to a test in the caller's session, end nothing:
/// the run goes to its end and saves (issue 82: SIGUSR1 or SIGPIPE to the forwarding process
/// ended the run unsaved).
#[test]
fn stray_signals_end_nothing() {
    for session in ["own", "shared"] {
        let dir = scratch("stray-signals");
        let args = ["run", "--target", "null", "--ramp", "0s", "--time", "2s", "--json", "out.json", "--no-history"];
        let mut c = command_in(&dir, &args);
        c.env("IOGAUGE_SESSION", session).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        wait_for_workers(&mut child);
        for sig in [libc::SIGUSR1, libc::SIGPIPE, libc::SIGUSR2, libc::SIGALRM] {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, sig) };
        }
        let out = output_of(child);
        assert_eq!(out.status.code(), Some(0), "{session}: {}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
        assert_eq!(doc["interrupted"], false, "{session}");
    }
}

#[test]
fn a_stop_before_recording_saves_nothing() {
    let dir = scratch("interrupt-ramp");
    let args = ["run", "--target", "null", "--ramp", "5s", "--time", "5s", "--json", "out.json", "--db", "h.sqlite"];
    let mut child = command_in(&dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(700));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = output_of(child);
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.join("out.json").exists(), "a document of nothing was written");
    let list = ok_in(&dir, &["history", "--json", "--db", "h.sqlite"]);
    assert_eq!(serde_json::from_slice::<Value>(&list.stdout).unwrap(), Value::Array(vec![]));
}

/// A study finishes its current point after the first Ctrl-C; a second one stops that point at
/// once and keeps the study so far, the point marked interrupted; a third leaves at once.
#[test]
fn a_second_ctrl_c_stops_the_point_and_keeps_the_study() {
    let dir = scratch("twice");
    let mut child = start_a_study_of_long_points(&dir);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "the first Ctrl-C lets the point finish");
    let t0 = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    // Well before the 20 s point would have ended, however loaded the host.
    assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
    assert_eq!(status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).expect("the study is saved")).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{doc}");
    let run = &points[0]["runs"][0];
    assert_eq!(run["interrupted"], true, "{run}");
    assert!(num(run, "results/0/totals/ios") > 0.0, "{run}");
    let list = ok_in(&dir, &["history", "--json", "--db", "h.sqlite"]);
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");

    let mut child = command_in(&dir, &["study", "s.toml", "-q", "--no-history"]).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(800));
    let t0 = Instant::now();
    for _ in 0..3 {
        // SAFETY: as above.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        // A signal sent while the same one is pending is lost: each is let arrive first.
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
}

/// SIGTERM (a service manager, a batch system's time limit, the workbench ending) stops a
/// study's point at once, as it stops a run, and keeps the study so far: it does not wait for a
/// point of minutes. Bound: 5 s, where the point had 20 s to go, on a loaded machine.
#[test]
fn sigterm_stops_a_studys_point_at_once_and_keeps_the_study() {
    let dir = scratch("term-study");
    let child = start_a_study_of_long_points(&dir);
    let t0 = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = output_of(child);
    assert!(t0.elapsed() < Duration::from_secs(5), "took {:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).expect("the study is saved")).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{doc}");
    assert_eq!(points[0]["runs"][0]["interrupted"], true);
    assert!(num(&points[0]["runs"][0], "results/0/totals/ios") > 0.0);
    // No I/O was given up: a first stop drains what is in flight.
    assert_eq!(num(&points[0]["runs"][0], "results/0/totals/errors"), 0.0);
    let list = ok_in(&dir, &["history", "--json", "--db", "h.sqlite"]);
    assert_eq!(serde_json::from_slice::<Value>(&list.stdout).unwrap().as_array().map(Vec::len), Some(1));
}

/// A worker waiting to issue its next I/O sees the end of the run and a stop (issue 46): a rate
/// of one I/O in 10 s ends at its 1 s, and a replay whose next row is 30 s on (fio's iolog v3
/// counts µs) stops at a signal, its results saved. Bounds: the run's time plus 1.5 s from the
/// start of recording, for a loaded machine; the stopped replay ends before its next row was
/// due, 30 s after recording began (what a user stopping it relies on: the stop does not wait
/// for the row), where a fixed 1.5 s from the signal measured the host's load.
#[test]
fn waits_for_the_next_io_end_with_the_run_and_at_a_signal() {
    let dir = scratch("paced-end");
    let args = ["run", "--target", "null", "--rate-iops", "0.1", "--ramp", "0s", "--time", "1s", "--json", "-"];
    let out = command_in(&dir, &[&args[..], &["--no-history"]].concat()).output().unwrap();
    let ended = SystemTime::now();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // From the start of recording, whenever a loaded host let the process get there.
    let started = humantime::parse_rfc3339(doc["results"][0]["started_at"].as_str().unwrap()).unwrap();
    let took = ended.duration_since(started).unwrap();
    assert!(took < Duration::from_millis(2500), "a 1 s run at 0.1 IOPS ended {took:?} after recording began");
    assert!(num(&doc, "results/0/totals/ios") <= 1.0, "{}", doc["results"][0]["totals"]);

    let trace = dir.join("far.iolog");
    std::fs::write(
        &trace,
        "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 0 4096\n30000000 /dev/x read 4096 4096\n",
    )
    .unwrap();
    let json = dir.join("replay.json");
    let args =
        ["replay", trace.to_str().unwrap(), "--target", "null", "--json", json.to_str().unwrap(), "--no-history"];
    let mut child = command_in(&dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = output_of(child);
    let ended = SystemTime::now();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).expect("the replay's result is saved")).unwrap();
    let r = &doc["results"][0];
    assert_eq!(num(r, "totals/ios"), 1.0, "{}", r["totals"]);
    assert_eq!(doc["interrupted"], true);
    // The second row is due 30 s after recording began: a stop that waited for it ends later.
    let started = humantime::parse_rfc3339(r["started_at"].as_str().unwrap()).unwrap();
    let took = ended.duration_since(started).unwrap();
    assert!(took < Duration::from_secs(30), "the replay ended {took:?} after recording began: it waited for its row");
}

/// Ctrl-Z during a run, then `fg`; and a SIGSTOP sent to the test's process, then SIGCONT.
/// Neither ends the run: the Ctrl-Z outlasts the io_timeout (2 s) that times out an I/O in
/// flight and stops a test whose worker completes nothing, and the run goes on. The document
/// says the stops: the Ctrl-Z's length, as timed by the test's process from the stop to the
/// continue, and the untimed SIGSTOP by its count. Bounds: the Ctrl-Z's length is the time
/// between the two signals sent here, give or take how late each reached the test's process
/// (the process that forwards it, then the test's, each waiting for a CPU: under 0.6 s each
/// beside the suite's load and two burners, 608 ms the longest seen): within 1.2 s. The
/// SIGSTOP (0.5 s) is shorter than the io_timeout by more than such a wait: an untimed stop
/// is seen only once its SIGCONT is taken (stops.rs), and the worker may get there first.
#[test]
fn a_stopped_run_goes_on_and_says_how_long_it_was_stopped() {
    let dir = scratch("stopped");
    std::fs::write(
        dir.join("t.toml"),
        "[test]\nramp = \"0s\"\ntime = \"6s\"\nio_timeout = \"2s\"\nrun = [\"random-read-4k\"]\n\
         [[worker]]\ntargets = [\"null\"]\n",
    )
    .unwrap();
    let args = ["run", "t.toml", "--json", "out.json", "--no-history"];
    let mut child = command_in(&dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(500));
    let signal = |pid: u32, sig: i32| {
        // SAFETY: signalling our own child, or the test process it started.
        unsafe { libc::kill(pid as i32, sig) };
    };
    // The terminal's Ctrl-Z reaches the process the user started; `fg` continues it.
    let stopped = Instant::now();
    signal(child.id(), libc::SIGTSTP);
    std::thread::sleep(Duration::from_millis(2500));
    signal(child.id(), libc::SIGCONT);
    let ctrl_z = stopped.elapsed().as_secs_f64() * 1e3;
    std::thread::sleep(Duration::from_millis(500));
    let test = test_process(child.id());
    signal(test, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(500));
    signal(test, libc::SIGCONT);
    let out = output_of(child);
    let said =
        format!("{:?}: {}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    let manager = &doc["results"][0]["managers"][0];
    let ms = manager["stopped_ms"].as_f64().unwrap();
    assert!((ms - ctrl_z).abs() < 1200.0, "stopped {ms} ms by a Ctrl-Z of {ctrl_z} ms");
    assert_eq!(manager["stops_untimed"], 1, "{manager}");
    let warnings = doc["warnings"].to_string();
    assert!(
        warnings.contains("stopped while recording and went on 1 time (SIGCONT)")
            && warnings.contains("Ctrl-Z held it"),
        "{warnings}"
    );
    assert_eq!(doc["results"][0]["first_error"], Value::Null, "no I/O was taken for timed out");
    validate_result(&dir.join("out.json")).unwrap();
}

/// A study of two points of 20 s on the null target (`s.json`, history `h.sqlite` in `dir`),
/// its first point well under way.
fn start_a_study_of_long_points(dir: &Path) -> std::process::Child {
    std::fs::write(
        dir.join("s.toml"),
        "[test]\nramp = \"0s\"\ntime = \"20s\"\nrun = [\"random-read-4k\"]\n[[worker]]\ntargets = [\"null\"]\n\
         [study]\noutstanding = [1, 2]\n",
    )
    .unwrap();
    let args = ["study", "s.toml", "-q", "--json", "s.json", "--db", "h.sqlite"];
    let mut child = command_in(dir, &args).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(800));
    child
}
