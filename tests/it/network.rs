//! NBD exports reached from userspace (issue 31), against a real server on this machine:
//! nbdkit (Debian's), whose stats filter counts what it served, whose file plugin keeps what
//! was written in a file read back here, whose delay filter sets the latency.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Nbdkit, assert_littles_law, iogauge, num, scratch};
use serde_json::Value;

/// Whether the server's count equals ours and its bytes as printed (3 places) round ours.
fn close((ops, bytes): (u64, f64), ours: (u64, f64)) -> bool {
    ops == ours.0 && (bytes - ours.1).abs() <= ours.1 * 0.005 + 5.0 * 1024.0
}

/// Runs iogauge with `args` and `--json FILE`: its output, and the document if it saved one
/// (checked against the result schema).
pub(crate) fn run_json(args: &[&str]) -> (std::process::Output, Option<Value>) {
    let out_dir = scratch("nbd-out");
    let json = out_dir.join("r.json");
    let mut a = args.to_vec();
    let j = json.to_str().unwrap().to_string();
    a.extend(["--json", &j]);
    let out = iogauge(&a);
    let doc = std::fs::read(&json).ok().map(|b| serde_json::from_slice(&b).unwrap());
    if doc.is_some() {
        common::validate_result(&json).unwrap();
    }
    (out, doc)
}

#[test]
fn nbd_counts_equal_the_servers_own_and_obey_littles_law() {
    let server = Nbdkit::start(&["memory", "64M"]);
    let url = server.url();
    let logs = scratch("nbd-logs");
    let (out, doc) = run_json(&[
        "run",
        "--target",
        &url,
        "--bs",
        "4K",
        "--read",
        "70",
        "--random",
        "100",
        "--qd",
        "16",
        "--connections",
        "2",
        "--ios",
        "20000",
        "--log-dir",
        logs.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = doc.unwrap();
    let served = server.stop();
    let t = &doc["results"][0]["totals"];
    let (reads, writes) = (num(t, "read_ios") as u64, num(t, "write_ios") as u64);
    assert_eq!(reads + writes, 20000);
    // Before writing, iogauge read the export's first and last MiB (the safety check): two
    // reads of 1 MiB more than the test's.
    let read = (reads + 2, num(t, "read_bytes") + (2 << 20) as f64);
    assert!(close(served("read"), read), "server {:?}, iogauge {read:?}", served("read"));
    let write = (writes, num(t, "write_bytes"));
    assert!(close(served("write"), write), "server {:?}, iogauge {write:?}", served("write"));
    // A closed loop keeps 16 in flight: Little's law, within its bounds for a counted run.
    assert_littles_law(&doc, &logs, 16);
    let info = &doc["target_info"][0];
    assert_eq!(info["kind"], "nbd");
    assert_eq!(info["size"], 64 << 20);
    assert_eq!(info["network"]["connections"], 2);
    assert_eq!(info["network"]["protocol"], "nbd");
    assert!(info["network"]["server"].as_str().unwrap().starts_with("unix:"));
    let engine = &doc["results"][0]["workers"][0]["engine"];
    assert_eq!(engine, "nbd (libnbd; 2 connections per target)");
}

#[test]
fn every_connection_asked_for_is_opened() {
    let dir = scratch("nbd-log");
    let log = dir.join("log");
    let server = Nbdkit::start(&["--filter=log", "memory", "16M", &format!("logfile={}", log.display())]);
    let url = server.url();
    let out =
        iogauge(&["run", "--target", &url, "--rw", "randread", "--connections", "3", "--qd", "6", "--ios", "3000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drop(server.stop());
    let text = std::fs::read_to_string(&log).unwrap();
    let connects = text.lines().filter(|l| l.contains(" Connect ")).count();
    // One to inspect the export, then the worker's three.
    assert_eq!(connects, 4, "{text}");
}

#[test]
fn latency_set_by_the_server_is_measured() {
    // Every read waits 5 ms in the server: no response time is shorter, and with 4 in flight
    // Little's law holds within the bounds of a counted run (`assert_littles_law`), whatever
    // the machine's load adds.
    let server = Nbdkit::start(&["--filter=delay", "memory", "16M", "rdelay=5ms"]);
    let url = server.url();
    let logs = scratch("nbd-delay-logs");
    let logs_arg = logs.to_str().unwrap();
    let run = ["run", "--target", &url, "--rw", "randread", "--qd", "4", "--ios", "400", "--log-dir", logs_arg];
    let (out, doc) = run_json(&run);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = doc.unwrap();
    let t = &doc["results"][0]["totals"];
    assert!(num(t, "min_response_ms") >= 5.0, "min {} ms", num(t, "min_response_ms"));
    assert_littles_law(&doc, &logs, 4);
    assert_eq!(server.stop()("read").0, 400);
}

#[test]
fn verified_writes_land_in_the_servers_file_as_stamped() {
    let dir = scratch("nbd-file");
    let file = dir.join("disk.img");
    std::fs::File::create(&file).unwrap().set_len(8 << 20).unwrap();
    let server = Nbdkit::start(&["file", file.to_str().unwrap()]);
    let url = server.url();
    // One sequential pass over two connections, every block stamped, then read back and
    // checked by iogauge over the protocol.
    let out = iogauge(&[
        "run",
        "--target",
        &url,
        "--rw",
        "write",
        "--bs",
        "4K",
        "--qd",
        "8",
        "--connections",
        "2",
        "--ios",
        "2048",
        "--verify",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drop(server.stop());
    // Read back from the server's own file, checked apart from iogauge.
    common::assert_stamped_in_order(&std::fs::read(&file).unwrap());
}

#[test]
fn an_export_holding_ext4_is_refused_and_allowed_by_name() {
    let dir = scratch("nbd-ext4");
    let file = dir.join("ext4.img");
    std::fs::File::create(&file).unwrap().set_len(32 << 20).unwrap();
    assert!(Command::new("mkfs.ext4").arg("-q").arg(&file).status().unwrap().success());
    let before = common::digest(&file);
    let server = Nbdkit::start(&["file", file.to_str().unwrap()]);
    let url = server.url();
    let out = iogauge(&["run", "--target", &url, "--rw", "randwrite", "--ios", "100"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("ext4 signature") && err.contains("--allow-write"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert_eq!(common::digest(&file), before, "nothing written");
    // Named by another spelling of the same server and export, it is written.
    let same = url.replace("nbd+unix:///?", "nbd+unix:///?tls=off&");
    let out = iogauge(&["run", "--target", &url, "--rw", "randwrite", "--ios", "100", "--allow-write", &same]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(server.stop()("write").0, 100);
}

#[test]
fn what_the_server_refuses_is_refused_before_any_io() {
    let server = Nbdkit::start(&["-r", "memory", "16M"]);
    let url = server.url();
    let out = iogauge(&["run", "--target", &url, "--rw", "randwrite", "--ios", "100"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("read-only"), "{err}");
    // One engine drives a worker: an export and a local file need a worker each, said with the
    // export's protocol.
    let local = scratch("nbd-mixed").join("f");
    std::fs::write(&local, vec![0u8; 1 << 20]).unwrap();
    let out = iogauge(&["run", "--target", &url, "--target", local.to_str().unwrap(), "--ios", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("an nbd:// target cannot share a worker with targets of another kind"), "{err}");
    assert_eq!(server.stop()("write").0, 0);

    // A server that takes writes and flushes, but neither FUA writes nor trims.
    let server = Nbdkit::start(&[
        "eval",
        "get_size=echo 16777216",
        "pread=dd if=/dev/zero count=$3 iflag=count_bytes 2>/dev/null",
        "pwrite=cat >/dev/null",
        "can_write=exit 0",
        "can_flush=exit 0",
        "can_fua=echo none",
    ]);
    let dir = scratch("nbd-fua");
    let job = dir.join("fua.toml");
    let toml = format!(
        "[test]\nios = 100\nallow_write = [\"{u}\"]\n[[spec]]\nname = \"stable\"\n\
         lines = [{{ size = \"4K\", share = 100, read = 0, random = 100, fua = true }}]\n[[worker]]\nspec = \"stable\"\ntargets = [\"{u}\"]\n",
        u = server.url()
    );
    std::fs::write(&job, toml).unwrap();
    let out = iogauge(&["run", job.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("takes no FUA writes"), "{err}");
    let url = server.url();
    let out = iogauge(&["run", "--target", &url, "--rw", "randtrim", "--ios", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("takes no trims"), "{err}");
    assert_eq!(server.stop()("write").0, 0);
}

#[test]
fn unreachable_servers_are_one_line_each() {
    let dir = scratch("nbd-none");
    let url = format!("nbd+unix:///?socket={}", dir.join("nobody.sock").display());
    let out = iogauge(&["run", "--target", &url, "--rw", "randread", "--ios", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot connect") && err.trim().lines().count() == 1, "{err}");
    // A wrong export name: the server says so at the handshake.
    let server = Nbdkit::start(&["--filter=exportname", "memory", "16M", "exportname=disk", "exportname-strict=true"]);
    let wrong = server.url().replace("nbd+unix:///", "nbd+unix:///other");
    let out = iogauge(&["run", "--target", &wrong, "--rw", "randread", "--ios", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

/// How many times iogauge looked a server's name up (opened /etc/hosts, where glibc finds
/// `localhost`) in a counted read of `url` with `args`, watched by strace.
pub(crate) fn name_lookups(url: &str, args: &[&str]) -> usize {
    let dir = scratch("lookups");
    let trace = dir.join("opens.trace");
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=openat", "-o", trace.to_str().unwrap(), common::bin()])
        .args(["run", "--target", url, "--rw", "randread", "--ios", "400", "--no-history", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&trace).unwrap().lines().filter(|l| l.contains("\"/etc/hosts\"")).count()
}

/// A network target is read once (issue 85): its server's name is looked up by the inspection,
/// and no worker's connection looks it up again (each did, and could reach another server
/// than the one inspected). Eight connections look up what one does.
#[test]
fn a_servers_name_is_looked_up_once_whatever_the_connections() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = scratch("nbd-tcp");
    let pid = dir.join("pid");
    let mut server = common::in_own_session(&mut Command::new("nbdkit"))
        .args(["-f", "--exit-with-parent", "-i", "127.0.0.1", "-p", &port.to_string(), "-P"])
        .arg(&pid)
        .args(["memory", "64M"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !pid.exists() {
        assert!(started.elapsed() < Duration::from_secs(20), "nbdkit did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = format!("nbd://localhost:{port}/");
    let one = name_lookups(&url, &["--connections", "1"]);
    let eight = name_lookups(&url, &["--connections", "4", "--workers", "2"]);
    assert!(one >= 1, "the name was looked up at the inspection ({one} opens of /etc/hosts)");
    assert_eq!(eight, one, "2 workers x 4 connections looked the name up {eight} times, 1 connection {one}");
    // A password in an NBD URL (which has no login with one) is refused, and not shown.
    let out = iogauge(&["run", "--target", &url.replace("localhost", "alice:Pq7secret@localhost"), "--ios", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no login with a password") && err.trim().lines().count() == 1, "{err}");
    assert!(!err.contains("Pq7secret") && err.contains("alice@localhost"), "{err}");
    let _ = server.kill();
    let _ = server.wait();
}

/// Runs a 10 s read test on `url` and sends signal `fault` to its server (process `pid`) 1 s
/// in; returns how long iogauge took, its output and its result document.
pub(crate) fn fault_mid_run(url: &str, pid: i32, fault: i32) -> (Duration, std::process::Output, Value) {
    let args = ["--rw", "randread", "--qd", "8", "--ramp", "0", "--time", "10s", "--io-timeout", "1s"];
    faulted(url, pid, fault, &args, Duration::from_secs(1))
}

#[test]
fn a_server_killed_mid_run_ends_it_with_the_results_saved() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let (took, out, doc) = fault_mid_run(&server.url(), server.pid(), libc::SIGKILL);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    // Within 2 x io_timeout of the kill (and far from the 10 s asked).
    assert!(took < Duration::from_secs(3), "took {took:?}");
    let t = &doc["results"][0]["totals"];
    assert!(num(t, "ios") > 0.0 && num(t, "errors") > 0.0, "{t}");
}

#[test]
fn a_server_that_stops_answering_ends_the_run_within_two_io_timeouts() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let (took, out, doc) = fault_mid_run(&server.url(), server.pid(), libc::SIGSTOP);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    // 1 s in, then io_timeout (1 s) without a completion stops the test, and the I/Os in
    // flight get io_timeout again: 3 s, with a second's margin for a loaded machine.
    assert!(took < Duration::from_secs(4), "took {took:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("stopped answering"), "{said}");
    assert!(num(&doc["results"][0]["totals"], "errors") > 0.0);
}

/// Runs `run --target URL ARGS` and sends its server (process `pid`) `signal` `at` after its
/// workers start; returns how long iogauge took from then, its output and its result document
/// (which must be saved).
fn faulted(url: &str, pid: i32, signal: i32, args: &[&str], at: Duration) -> (Duration, std::process::Output, Value) {
    let dir = scratch("net-fault");
    let json = dir.join("r.json");
    let mut all = vec!["run", "--target", url];
    all.extend(args);
    all.extend(["--json", json.to_str().unwrap(), "--no-history"]);
    let mut child = common::command_in(&dir, &all).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    common::wait_for_workers(&mut child);
    let started = Instant::now();
    std::thread::sleep(at);
    // SAFETY: signalling the server this test started.
    unsafe { libc::kill(pid, signal) };
    let out = common::output_of(child);
    let took = started.elapsed();
    // SAFETY: as above: a stopped server must be able to end.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let doc = serde_json::from_slice(&std::fs::read(&json).expect("the result is saved")).unwrap();
    (took, out, doc)
}

/// [`faulted`] with SIGSTOP: the server stops answering `at` in.
pub(crate) fn stopped_at(url: &str, pid: i32, args: &[&str], at: Duration) -> (Duration, std::process::Output, Value) {
    faulted(url, pid, libc::SIGSTOP, args, at)
}

/// A target that stops answering in the last quarter of a workload, or as the next one starts
/// (issue 46): the run used to wait for the I/Os in flight for good, deaf to signals. Now its
/// end interrupts the workers' waits, which give their I/Os io_timeout (2 s) and stop. Bound:
/// 2 s of run + 2 s of io_timeout + 2 s for a second one (the stalled I/Os of the next workload
/// stop the test after io_timeout without a completion), and margin for a loaded machine.
#[test]
fn a_server_that_stops_answering_near_the_end_ends_the_run_with_its_results() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let run = ["--rw", "randread", "--qd", "8", "--ramp", "0s", "--time", "2s", "--io-timeout", "2s"];
    let (took, out, doc) = stopped_at(&server.url(), server.pid(), &run, Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let t = &doc["results"][0]["totals"];
    assert!(num(t, "ios") > 0.0 && num(t, "errors") > 0.0, "{t}");
    drop(server);

    let server = Nbdkit::start(&["memory", "16M"]);
    let two = ["--spec", "random-read-4k", "--spec", "streaming-read-128k", "--qd", "8", "--ramp", "0s"];
    let two = [&two[..], &["--time", "1s", "--io-timeout", "2s"]].concat();
    let (took, out, doc) = stopped_at(&server.url(), server.pid(), &two, Duration::from_millis(950));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(num(&doc["results"][0]["totals"], "ios") > 0.0, "{doc}");
    // The second workload could not connect (its failure is the document's), or connected and
    // then saw its I/Os time out (its errors are).
    let errors: f64 = doc["results"].as_array().unwrap().iter().map(|r| num(&r["totals"], "errors")).sum();
    assert!(doc.get("failed").is_some() || errors > 0.0, "{}", doc["results"]);
}

/// A target that stops answering at the other moments of a test (issue 46): during ramp-up,
/// in the last interval of recording, and between two points of a study. Each ends within
/// io_timeout and its drain of the stall, exit status 1, with what was measured saved: the
/// recorded time ends where the stall was seen (not at the interval's end), and a study keeps
/// its points done and says why it ended. Bounds: as above, 2 s of margin for a loaded host.
#[test]
fn a_server_that_stops_answering_at_any_moment_ends_the_test_with_what_was_measured() {
    // During ramp-up (2 s): nothing recorded, the 8 I/Os in flight timed out.
    let server = Nbdkit::start(&["memory", "16M"]);
    let ramp = ["--rw", "randread", "--qd", "8", "--ramp", "2s", "--time", "3s", "--io-timeout", "500ms"];
    let (took, out, doc) = stopped_at(&server.url(), server.pid(), &ramp, Duration::from_millis(300));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(4), "took {took:?}");
    let t = &doc["results"][0]["totals"];
    assert_eq!((num(t, "ios"), num(t, "errors")), (0.0, 8.0), "{t}");
    drop(server);

    // In the last of three 1 s intervals: the stall, seen io_timeout (1 s) after the server
    // stopped at 1.3 s, ends recording about 2.3 s in.
    let server = Nbdkit::start(&["memory", "16M"]);
    let last = ["--rw", "randread", "--qd", "8", "--ramp", "0s", "--time", "3s", "--io-timeout", "1s"];
    let (took, out, doc) = stopped_at(&server.url(), server.pid(), &last, Duration::from_millis(1300));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(7), "took {took:?}");
    let r = &doc["results"][0];
    let secs = num(r, "duration_s");
    assert!(secs > 1.0 && secs < 2.9, "recorded {secs} s: the stall ended recording, not the interval's end");
    assert!((num(r, "totals/iops") * secs - num(r, "totals/ios")).abs() < 1.0, "{}", r["totals"]);
    drop(server);

    // Between two points of a study: the first point is kept, the second cannot connect.
    let server = Nbdkit::start(&["memory", "16M"]);
    let dir = scratch("nbd-study-stall");
    std::fs::write(
        dir.join("s.toml"),
        format!(
            "[test]\nramp = \"0s\"\ntime = \"1s\"\nio_timeout = \"1s\"\nrun = [\"random-read-4k\"]\n\
             [[worker]]\ntargets = [\"{}\"]\n[study]\noutstanding = [1, 2, 4, 8]\n",
            server.url()
        ),
    )
    .unwrap();
    let started = Instant::now();
    let child = common::command_in(&dir, &["study", "s.toml", "--json", "s.json", "--db", "h.sqlite", "-q"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first point's document is written, the server stops answering.
    while !dir.join("s.json").exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: signalling the server this test started.
    unsafe { libc::kill(server.pid(), libc::SIGSTOP) };
    let out = common::output_of(child);
    let took = started.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(server.pid(), libc::SIGCONT) };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(took < Duration::from_secs(12), "took {took:?}");
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("s.json")).unwrap()).unwrap();
    let points = doc["points"].as_array().unwrap();
    assert!(!points.is_empty() && points.len() < 4, "{} points", points.len());
    assert_eq!(doc["interrupted"], false);
    let why = doc["failed"].as_str().expect("the study says why it ended");
    assert!(err.contains(why) && err.contains("point(s) before it are kept"), "{err}");
    let list = common::ok_in(&dir, &["history", "--json", "--db", "h.sqlite"]);
    let list: Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "the study is in the history: {list}");
}

/// A target that stopped answering, and the user who will not wait io_timeout (60 s) for its
/// I/Os: the first Ctrl-C stops issuing and waits for them, the second gives them up at once
/// (each an ETIMEDOUT error) and the result is saved. Bound: 3 s after the second signal on a
/// loaded machine (the run's loop looks every 20 ms).
#[test]
fn a_second_ctrl_c_gives_up_the_ios_in_flight_and_saves_the_result() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let dir = scratch("nbd-twice");
    let url = server.url();
    let args = ["run", "--target", &url, "--rw", "randread", "--qd", "8", "--ramp", "0s", "--time", "60s"];
    let args = [&args[..], &["--io-timeout", "60s", "--json", "r.json", "--no-history"]].concat();
    let mut child = common::command_in(&dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    common::wait_for_workers(&mut child);
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signalling the server this test started, then our own child.
    unsafe { libc::kill(server.pid(), libc::SIGSTOP) };
    // All 8 I/Os in flight at the stopped server: the worker has sent what it could and sleeps
    // for the answers. (A loaded pass once found none in flight: the worker, kept from its
    // CPU, had not sent the next ones, and the first Ctrl-C then rightly ended the run at
    // once. The server's unread requests do not tell: its threads may have read them all.)
    let stopped = Instant::now();
    let mut asleep = 0;
    while asleep < 10 {
        assert!(stopped.elapsed() < Duration::from_secs(20), "the worker did not wait for the stopped server in 20 s");
        asleep = if worker_asleep(child.id()) { asleep + 1 } else { 0 };
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(700));
    assert!(!dir.join("r.json").exists(), "the first Ctrl-C waits for the I/Os in flight");
    let t0 = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = common::output_of(child);
    let took = t0.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(server.pid(), libc::SIGCONT) };
    assert!(took < Duration::from_secs(3), "took {took:?} after the second Ctrl-C");
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(dir.join("r.json")).expect("saved")).unwrap();
    assert_eq!(doc["interrupted"], true);
    let t = &doc["results"][0]["totals"];
    assert!(num(t, "ios") > 0.0, "{t}");
    assert_eq!(num(t, "errors"), 8.0, "the 8 I/Os in flight are given up: {t}");
}

/// Whether the worker of the running iogauge `pid` sleeps now (state S), rather than runs or
/// waits for a CPU.
fn worker_asleep(pid: u32) -> bool {
    common::worker_stats(pid).iter().any(|fields| fields.starts_with('S'))
}

#[test]
fn a_fio_job_on_ioengine_nbd_runs_on_its_uri() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let dir = scratch("nbd-fio");
    let job = dir.join("nbd.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nioengine=nbd\nuri={}\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=5000\n[reader]\n",
            server.url()
        ),
    )
    .unwrap();
    let (out, doc) = run_json(&["run", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(num(&doc.unwrap()["results"][0]["totals"], "read_ios"), 5000.0);
    let served = server.stop()("read");
    assert!(close(served, (5000, 5000.0 * 4096.0)), "server {served:?}");
    let job = dir.join("nouri.fio");
    std::fs::write(&job, "[j]\nioengine=nbd\nrw=read\n").unwrap();
    let out = iogauge(&["run", job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ioengine=nbd needs uri="));
}
