//! `iogauge ui`: the workbench's JSON calls as a script makes them (curl), and its page as a
//! user works it, in headless Chromium driven through the DevTools protocol (over
//! `--remote-debugging-pipe`: no WebSocket library needed). Runs on the null target, and on a
//! loop device holding ext4 for the safety rule, checked against the kernel's counters.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// A workbench of its own, on a free port, with a history of its own.
struct Workbench {
    child: Child,
    /// Its page and its calls list every disk, reading each (common::Disks).
    _listed: common::DisksHeld,
    base: String,
    token: String,
    dir: PathBuf,
}

impl Workbench {
    fn start(tag: &str) -> Workbench {
        Workbench::start_by(tag, None)
    }

    /// A workbench started by `mpirun -np RANKS` when `ranks` is given.
    fn start_by(tag: &str, ranks: Option<usize>) -> Workbench {
        let listed = common::hold_disks(common::Disks::Listed);
        let dir = scratch(tag);
        let db = dir.join("history.sqlite");
        let args = ["ui", "--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()];
        let mut cmd = match ranks {
            None => command_in(&dir, &args),
            Some(n) => {
                let mut c = common::mpirun();
                c.args(["--allow-run-as-root", "--oversubscribe", "-np", &n.to_string(), bin()])
                    .args(args)
                    .current_dir(&dir);
                c
            }
        };
        let mut child = cmd.stdin(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).expect("iogauge ui says where it listens");
        let url = line.strip_prefix("iogauge: workbench at ").unwrap_or_else(|| panic!("{line}"));
        let (base, token) = url.split_once("/?token=").unwrap();
        assert_eq!(token.len(), 32, "a token of 128 bits: {token}");
        Workbench { child, _listed: listed, base: base.into(), token: token.into(), dir }
    }

    /// The page's address, token included.
    fn url(&self) -> String {
        format!("{}/?token={}", self.base, self.token)
    }

    /// curl making a call with `headers` besides none, waiting at most `limit` seconds for
    /// the answer, which it prints followed by a line of its status.
    fn curl(&self, method: &str, path: &str, body: Option<&Value>, headers: &[String], limit: u32) -> Command {
        let mut c = Command::new("curl");
        let limit = limit.to_string();
        c.args(["-s", "-m", &limit, "-X", method, "-w", "\n%{http_code}", &format!("{}{path}", self.base)]);
        for h in headers {
            c.args(["-H", h]);
        }
        if let Some(b) = body {
            c.args(["-H", "Content-Type: application/json", "--data-binary", &b.to_string()]);
        }
        c
    }

    /// A call with `headers` besides none: the status and the answer's JSON (or text).
    fn raw(&self, method: &str, path: &str, body: Option<&Value>, headers: &[String]) -> (u16, Value) {
        let out = self.curl(method, path, body, headers, 20).output().expect("curl runs (scripts/test installs it)");
        answer(&out.stdout)
    }

    /// A call with the token.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.raw(method, path, body, &[format!("Authorization: Bearer {}", self.token)])
    }

    /// The run `id` once it has ended (within `limit`).
    fn ended(&self, id: u64, limit: Duration) -> Value {
        let until = Instant::now() + limit;
        loop {
            let (code, s) = self.call("GET", &format!("/api/runs/{id}"), None);
            assert_eq!(code, 200, "{s}");
            if s["state"] == "ended" {
                return s;
            }
            assert!(Instant::now() < until, "run {id} did not end: {s}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// What curl printed of a call ([`Workbench::curl`]): its status and the answer's JSON (or text).
fn answer(printed: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(printed).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    let v = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.into()));
    (code.trim().parse().unwrap_or(0), v)
}

impl Drop for Workbench {
    fn drop(&mut self) {
        // Ctrl-C: it stops a run going, lets it save, and ends.
        // SAFETY: kill with a child's pid and a signal number.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let until = Instant::now() + Duration::from_secs(60);
        while Instant::now() < until && self.child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const NULL_JOB: &str = "[test]\nramp = \"0s\"\ntime = \"60s\"\ninterval = \"250ms\"\nrun = [\"oltp-8k\"]\n\n\
                        [[worker]]\ncount = 2\noutstanding = 4\ntargets = [\"null\"]\n";

#[test]
fn a_call_without_the_token_is_refused_and_changes_nothing() {
    let wb = Workbench::start("ui-token");
    let start = json!({ "job": NULL_JOB });
    let wrong = format!("Authorization: Bearer {}", "0".repeat(32));
    for headers in [vec![], vec![wrong.clone()], vec!["Authorization: Bearer ".to_string()]] {
        assert_eq!(wb.raw("POST", "/api/runs", Some(&start), &headers).0, 403, "{headers:?}");
        assert_eq!(wb.raw("GET", "/api/history", None, &headers).0, 403);
        assert_eq!(wb.raw("GET", "/", None, &headers).0, 403, "the page itself");
    }
    assert_eq!(wb.raw("GET", "/?token=nope", None, &[]).0, 403);
    // A page of another origin, even one that learnt the token, starts nothing.
    let foreign = [format!("Authorization: Bearer {}", wb.token), "Origin: http://evil.example".into()];
    assert_eq!(wb.raw("POST", "/api/runs", Some(&start), &foreign).0, 403);
    // A page of another site whose name a DNS server points here (a DNS rebinding) sends that
    // name as its Host: refused, token or not. The loopback's names are this workbench's.
    let port = wb.base.rsplit(':').next().unwrap();
    let token = format!("Authorization: Bearer {}", wb.token);
    let (code, e) = wb.raw("POST", "/api/runs", Some(&start), &[token.clone(), format!("Host: evil.example:{port}")]);
    assert!(code == 403 && e["error"].as_str().unwrap().contains("Host"), "{code} {e}");
    for host in ["localhost", "127.0.0.1", "[::1]"] {
        assert_eq!(wb.raw("GET", "/api/host", None, &[token.clone(), format!("Host: {host}:{port}")]).0, 200, "{host}");
    }
    // Nothing was started, nothing saved, no file written beside it.
    assert_eq!(wb.call("GET", "/api/runs/current", None).0, 404);
    let (code, list) = wb.call("GET", "/api/history", None);
    assert_eq!((code, list), (200, json!([])));
    let files: Vec<_> = std::fs::read_dir(&wb.dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(files.is_empty(), "{files:?}");
    // With the token: the page, and calls.
    let (code, page) = wb.raw("GET", &format!("/?token={}", wb.token), None, &[]);
    assert_eq!(code, 200);
    assert!(page.as_str().unwrap().contains("iogauge workbench"));
    assert_eq!(wb.call("GET", "/api/nothing", None).0, 404);
}

#[test]
fn a_script_runs_a_job_watches_it_stops_it_and_finds_it_in_the_history() {
    let wb = Workbench::start("ui-api");
    // A bad job is refused at once, in one line naming where, and nothing starts.
    let (code, e) = wb.call("POST", "/api/runs", Some(&json!({ "job": "[test]\ntime = \"fast\"\n" })));
    assert_eq!(code, 400, "{e}");
    assert!(e["error"].as_str().unwrap().starts_with("job:2:"), "{e}");
    assert_eq!(wb.call("GET", "/api/runs/current", None).0, 404);

    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": NULL_JOB })));
    assert_eq!(code, 202, "{started}");
    let id = started["id"].as_u64().unwrap();
    // One run at a time.
    assert_eq!(wb.call("POST", "/api/runs", Some(&json!({ "job": NULL_JOB }))).0, 409);
    // Live lines, each worker's counts growing.
    let until = Instant::now() + Duration::from_secs(60);
    let mut seen = 0;
    let mut lines = Vec::new();
    while lines.len() < 4 {
        assert!(Instant::now() < until, "no live lines: {lines:?}");
        let (_, s) = wb.call("GET", &format!("/api/runs/{id}?after={seen}"), None);
        assert_eq!(s["state"], "running", "{s}");
        seen = s["seq"].as_u64().unwrap();
        lines.extend(s["lines"].as_array().unwrap().iter().cloned());
        std::thread::sleep(Duration::from_millis(200));
    }
    let worker_ios = |l: &Value, w: &str| -> u64 {
        l["counts"].as_array().unwrap().iter().filter(|c| c["worker"] == w).map(|c| c["ios"].as_u64().unwrap()).sum()
    };
    let (first, last) = (&lines[0], lines.last().unwrap());
    for w in ["worker 1", "worker 2"] {
        assert!(worker_ios(last, w) > worker_ios(first, w), "{w}: {first} then {last}");
    }
    assert_eq!(wb.call("POST", &format!("/api/runs/{id}/stop"), None).0, 202);
    let end = wb.ended(id, Duration::from_secs(60));
    assert_eq!(end["exit_status"], 130, "{end}");
    let hid = end["history_id"].as_i64().unwrap_or_else(|| panic!("saved: {end}"));
    assert_eq!(wb.call("POST", &format!("/api/runs/{id}/stop"), None).0, 409, "it is not going");

    let (_, list) = wb.call("GET", "/api/history", None);
    assert_eq!(list[0]["id"], hid, "{list}");
    assert_eq!(list[0]["interrupted"], true);
    let (_, doc) = wb.call("GET", &format!("/api/history/{hid}"), None);
    assert_eq!(doc["interrupted"], true);
    // Exact on the null target: the workers' I/Os are the total, and every live count of
    // the last line was already counted in it.
    let totals = &doc["results"][0]["totals"];
    let workers = doc["results"][0]["workers"].as_array().unwrap();
    assert_eq!(workers.iter().map(|w| w["ios"].as_u64().unwrap()).sum::<u64>(), totals["ios"].as_u64().unwrap());
    for w in workers {
        assert!(worker_ios(last, w["name"].as_str().unwrap()) <= w["ios"].as_u64().unwrap());
    }
    // Its job, run again from the command line, is the same test.
    let (_, job) = wb.call("GET", &format!("/api/history/{hid}/job"), None);
    let file = wb.dir.join("again.toml");
    std::fs::write(&file, job["toml"].as_str().unwrap()).unwrap();
    let out = wb.dir.join("again.json");
    ok(&["run", file.to_str().unwrap(), "--time", "1s", "--json", out.to_str().unwrap(), "--no-history", "-q"]);
    let again: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(again["config"]["worker"], doc["config"]["worker"]);
    assert_eq!(again["config"]["spec"], doc["config"]["spec"]);
    // The report and a comparison with the rerun saved through the same history.
    let (code, html) = wb.call("GET", &format!("/api/history/{hid}/report"), None);
    assert_eq!(code, 200);
    assert!(html.as_str().unwrap().contains("<svg"), "a report with charts");
    let (_, s2) = wb.call("POST", "/api/runs", Some(&json!({ "job": NULL_JOB.replace("60s", "1s") })));
    let second = wb.ended(s2["id"].as_u64().unwrap(), Duration::from_secs(60));
    assert_eq!(second["exit_status"], 0, "{second}");
    let (code, cmp) =
        wb.call("GET", &format!("/api/compare?a={hid}&b={}", second["history_id"].as_i64().unwrap()), None);
    assert_eq!(code, 200, "{cmp}");
    assert!(cmp["text"].as_str().unwrap().contains("oltp-8k"), "{cmp}");
}

/// The rows of the workbench's history, by SQLite's own tool: (kind, points or results,
/// whether interrupted).
fn saved(wb: &Workbench) -> Vec<(String, u64, bool)> {
    let db = wb.dir.join("history.sqlite");
    let out = Command::new("sqlite3").arg(&db).arg("SELECT kind, results, interrupted FROM runs ORDER BY id").output();
    let text = String::from_utf8_lossy(&out.unwrap().stdout).into_owned();
    let row = |l: &str| {
        let f: Vec<&str> = l.split('|').collect();
        (f[0].to_string(), f[1].parse().unwrap(), f[2] == "1")
    };
    text.lines().map(row).collect()
}

/// Waits until the run `id` has said a live line of recording with I/Os in it.
fn wait_for_recording(wb: &Workbench, id: u64) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, s) = wb.call("GET", &format!("/api/runs/{id}"), None);
        if s["lines"].as_array().unwrap().iter().any(recording) {
            return;
        }
        assert_eq!(s["state"], "running", "{s}");
        assert!(Instant::now() < until, "no recording line in 60 s: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Stop pressed three times within 300 ms while the target has stopped answering: the first
/// stops the run, the second gives up its I/Os in flight, the third asks nothing more (a third
/// signal would end the command without saving); the run is kept.
#[test]
fn stop_pressed_three_times_on_a_stalled_target_keeps_the_run() {
    let server = Nbdkit::start(&["memory", "16M"]);
    let wb = Workbench::start("ui-stop-thrice");
    let job = format!(
        "[test]\nramp = \"0s\"\ntime = \"60s\"\ninterval = \"100ms\"\nio_timeout = \"60s\"\nrun = [\"random-read-4k\"]\n\n\
         [[worker]]\noutstanding = 8\ntargets = [\"{}\"]\n",
        server.url()
    );
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
    assert_eq!(code, 202, "{started}");
    let id = started["id"].as_u64().unwrap();
    wait_for_recording(&wb, id);
    // SAFETY: signalling the server this test started.
    unsafe { libc::kill(server.pid(), libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let mut states = Vec::new();
    for press in 0..3 {
        let code = wb.call("POST", &format!("/api/runs/{id}/stop"), None).0;
        let state = wb.call("GET", &format!("/api/runs/{id}"), None).1["state"].clone();
        // After the second press the run gives up its I/Os and may have ended by the third:
        // then there is nothing to stop (409), which is no signal either.
        let ended = press > 0 && state == "ended";
        assert!(code == 202 || (code == 409 && ended), "press {}: {code}, then {state}", press + 1);
        states.push(state);
    }
    assert!(t0.elapsed() < Duration::from_secs(5), "three presses took {:?}", t0.elapsed());
    let end = wb.ended(id, Duration::from_secs(60));
    // SAFETY: as above.
    unsafe { libc::kill(server.pid(), libc::SIGCONT) };
    assert_eq!(end["exit_status"], 130, "{end}");
    assert!(end["history_id"].as_i64().is_some(), "saved: {end}");
    // What the page's button offers next: after one press, to stop now; after two, nothing.
    assert_eq!(states[0], "stopping", "{states:?}");
    assert!(states[1..].iter().all(|s| s == "stopping_now" || s == "ended"), "{states:?}");
    assert_eq!(saved(&wb), vec![("run".to_string(), 1, true)]);
}

/// The workbench ended (SIGTERM) during a study of 60 s points: the point going stops as a run
/// does, the study is saved with it, marked interrupted, and the workbench ends, well within
/// a minute.
#[test]
fn a_workbench_ended_during_a_study_saves_the_study() {
    let mut wb = Workbench::start("ui-end-study");
    let job = "[test]\nramp = \"0s\"\ntime = \"60s\"\ninterval = \"100ms\"\nrun = [\"random-read-4k\"]\n\n\
               [[worker]]\ntargets = [\"null\"]\n\n[study]\noutstanding = [1, 2]\n";
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
    assert_eq!(code, 202, "{started}");
    assert_eq!(started["kind"], "study");
    wait_for_recording(&wb, started["id"].as_u64().unwrap());
    let t0 = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(wb.child.id() as i32, libc::SIGTERM) };
    let status = loop {
        if let Some(status) = wb.child.try_wait().unwrap() {
            break status;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "the workbench did not end in a minute");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert_eq!(saved(&wb), vec![("study".to_string(), 1, true)]);
}

/// The workbench killed outright (SIGKILL) during a study: its run, whose pipes now lead
/// nowhere, goes on alone to the study's end and saves it whole.
#[test]
fn a_run_outlives_a_workbench_killed_and_saves() {
    let mut wb = Workbench::start("ui-killed");
    let job = "[test]\nramp = \"0s\"\ntime = \"1s\"\ninterval = \"100ms\"\nrun = [\"random-read-4k\"]\n\n\
               [[worker]]\ntargets = [\"null\"]\n\n[study]\noutstanding = [1, 2, 4]\n";
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
    assert_eq!(code, 202, "{started}");
    wait_for_recording(&wb, started["id"].as_u64().unwrap());
    wb.child.kill().unwrap();
    wb.child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while saved(&wb).first().is_none_or(|(_, _, interrupted)| *interrupted) {
        assert!(Instant::now() < until, "the study was not saved whole within 60 s: {:?}", saved(&wb));
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(saved(&wb), vec![("study".to_string(), 3, false)]);
}

/// Headless Chromium driven through the DevTools protocol on a pipe (fd 3: commands to it,
/// fd 4: its answers and events, each message ending in a NUL).
struct Browser {
    child: Child,
    to: std::fs::File,
    from: mpsc::Receiver<Value>,
    session: String,
    next: u64,
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors it is given; each is owned once, below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors, owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    fn open(url: &str, profile: &Path, downloads: &Path) -> Browser {
        let (cmd_r, cmd_w) = pipe();
        let (ans_r, ans_w) = pipe();
        let (r, w) = (cmd_r.as_raw_fd(), ans_w.as_raw_fd());
        let mut c = Command::new("chromium");
        common::in_own_session(&mut c);
        c.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
            .args(["--remote-debugging-pipe", "--window-size=1280,900", "--hide-scrollbars"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: fcntl and dup2 are async-signal-safe; the descriptors are open in the parent.
        unsafe {
            c.pre_exec(move || {
                // Copied above 10 first: a pipe end that is already 3 or 4 keeps its
                // close-on-exec through dup2 onto itself, and one could overwrite the other.
                let (r, w) = (libc::fcntl(r, libc::F_DUPFD, 10), libc::fcntl(w, libc::F_DUPFD, 10));
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().expect("chromium runs (scripts/test installs it)");
        drop((cmd_r, ans_w));
        let (tx, rx) = mpsc::channel();
        let mut from = std::fs::File::from(ans_r);
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            while let Ok(n @ 1..) = from.read(&mut chunk) {
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|b| *b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice(&msg[..msg.len() - 1]) {
                        let _ = tx.send(v);
                    }
                }
            }
        });
        let mut b = Browser { child, to: std::fs::File::from(cmd_w), from: rx, session: String::new(), next: 1 };
        let downloads = json!({ "behavior": "allow", "downloadPath": downloads.to_str().unwrap() });
        b.send("Browser.setDownloadBehavior", downloads);
        let target = b.send("Target.createTarget", json!({ "url": url }));
        let attached = b.send("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }));
        b.session = attached["sessionId"].as_str().unwrap().into();
        b
    }

    /// Sends a command (to the page once attached) and waits for its answer.
    fn send(&mut self, method: &str, params: Value) -> Value {
        let answer = self.answer(method, params);
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// Sends a command and waits for its answer, an error included.
    fn answer(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.to.write_all(format!("{msg}\0").as_bytes()).unwrap();
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let v = self.from.recv_timeout(left).unwrap_or_else(|_| panic!("chromium did not answer {method}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// The value of a script run in the page (a promise is awaited).
    fn eval(&mut self, js: &str) -> Value {
        let r = self.send("Runtime.evaluate", json!({ "expression": js, "awaitPromise": true, "returnByValue": true }));
        assert!(r.get("exceptionDetails").is_none(), "{js}: {r}");
        r["result"]["value"].clone()
    }

    /// Waits until `js` is true in the page (which may still be loading).
    fn until(&mut self, js: &str, limit: Duration) {
        let until = Instant::now() + limit;
        loop {
            let params = json!({ "expression": js, "returnByValue": true });
            let r = self.answer("Runtime.evaluate", params);
            if r["result"]["result"]["value"] == json!(true) {
                return;
            }
            if Instant::now() > until {
                let state = self
                    .eval("['status', 'error'].map((i) => (document.getElementById(i) || {}).textContent).join(' | ')");
                panic!("never true: {js} ({state}; {r})");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A screenshot of the page, for docs/ui.md's tour, where IOGAUGE_UI_SHOTS names a directory.
    fn shot(&mut self, name: &str) {
        let Some(dir) = std::env::var_os("IOGAUGE_UI_SHOTS") else { return };
        let png = self.send("Page.captureScreenshot", json!({ "format": "png" }));
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), base64_decode(png["data"].as_str().unwrap()))
            .unwrap();
    }
}

/// Standard base64, as DevTools sends a screenshot.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = text.bytes().filter(|c| *c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, c)| n | (value(*c) as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sets an input's value as typing does (its input and change events fire).
fn type_into(id: &str, value: &str) -> String {
    format!(
        "(() => {{ const e = document.getElementById({id:?}); e.value = {value:?}; \
         e.dispatchEvent(new Event('input')); e.dispatchEvent(new Event('change')); return true; }})()"
    )
}

fn click(selector: &str) -> String {
    format!("(() => {{ document.querySelector({selector:?}).click(); return true; }})()")
}

fn text(id: &str) -> String {
    format!("document.getElementById({id:?}).textContent")
}

#[test]
fn a_user_builds_two_workers_runs_watches_stops_and_reruns_the_saved_job() {
    let wb = Workbench::start("ui-browser");
    let downloads = wb.dir.join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium"), &downloads);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    // A second tab, open before the run starts: it follows the run as the first does.
    let mut other = Browser::open(&wb.url(), &scratch("ui-chromium-other"), &downloads);
    other.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    // Two workers on the null target, oltp-8k (the default list), 8 outstanding each.
    b.eval(&type_into("w-outstanding", "8"));
    // The worker's other keys are in its form (src/config/worker.rs), but those with a control
    // of their own: a % and a list typed there reach the job as a job file's keys.
    let (_, worker_keys) = wb.call("GET", "/api/worker-keys", None);
    let rows = b.eval("document.querySelectorAll('#worker-keys tbody tr').length").as_u64().unwrap();
    assert_eq!(rows as usize, worker_keys.as_array().unwrap().len() - 7, "all but 7 with controls of their own");
    b.eval(&type_into("wk-stroke", "50"));
    b.eval(&type_into("wk-cpus", "0, 1"));
    b.eval(&click("#add-worker"));
    assert_eq!(b.eval("document.querySelectorAll('#tree .worker').length"), json!(2));
    assert_eq!(b.eval("document.querySelector('#targets input[data-path=\"null\"]').checked"), json!(true));
    b.shot("1-topology");
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval(
        "(() => { const l = document.getElementById('spec-list'); l.value = 'oltp-8k'; l.onchange(); return true; })()",
    );
    b.shot("2-specs");
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval(&type_into("t-ramp", "0s"));
    b.eval(&type_into("t-time", "120s"));
    b.eval(&type_into("t-interval", "500ms"));
    // Every [test] key is in the form (docs/job-file.md's table, config/settings.rs): a number
    // and a duration typed there reach the job as the command line's flags would set them.
    let (_, keys) = wb.call("GET", "/api/settings", None);
    let rows = b.eval("document.querySelectorAll('#settings tbody tr').length").as_u64().unwrap();
    assert_eq!(rows as usize, keys.as_array().unwrap().len() - 2, "all but run and allow_write");
    b.eval(&type_into("t-completion_batch", "2"));
    b.eval(&type_into("t-io_timeout", "45s"));
    b.shot("3-setup");
    // Double-clicked: Start is disabled from the first press, so the second asks nothing (it
    // answered 'run 1 is still going', said under the header through the run and after).
    let pressed = "(() => { const s = document.getElementById('start'); s.click(); s.click(); return s.disabled; })()";
    assert_eq!(b.eval(pressed), json!(true));
    b.until("!document.getElementById('stop').disabled", Duration::from_secs(60));
    assert_eq!((b.eval("document.getElementById('error').hidden"), b.eval(&text("error"))), (json!(true), json!("")));
    let follows = "!document.getElementById('stop').disabled && document.getElementById('start').disabled";
    other.until(follows, Duration::from_secs(30));
    // Started there before it saw the run: refused in words that name no run's number, until its end.
    other.eval("(() => { start(); return true; })()");
    other.until(
        &format!("{} === 'a run is going: stop it first, or wait for its end'", text("error")),
        Duration::from_secs(30),
    );
    // The Results Display changes while it runs.
    b.until(&format!("{} !== '-'", text("r-iops")), Duration::from_secs(60));
    let first = b.eval(&text("r-where"));
    b.until(&format!("{} !== {first}", text("r-where")), Duration::from_secs(30));
    b.until("document.querySelectorAll('#parts tbody tr').length === 2", Duration::from_secs(30));
    b.shot("4-results");
    b.eval(&click("#stop"));
    b.until("document.getElementById('status').dataset.state === 'ended'", Duration::from_secs(60));
    other.until("document.getElementById('status').dataset.state === 'ended'", Duration::from_secs(60));
    assert_eq!(other.eval("document.getElementById('error').hidden"), json!(true), "the line went with the run");
    assert_eq!(other.eval("document.getElementById('start').disabled"), json!(false));
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(30));
    let final_text = b.eval(&text("final"));
    let hid: i64 = final_text.as_str().unwrap().split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 130"));
    // The result's warnings under its table, each, as the command line prints them under its own.
    let (_, doc) = wb.call("GET", &format!("/api/history/{hid}"), None);
    let said = doc["warnings"].as_array().map_or(0, Vec::len);
    b.until(&format!("document.querySelectorAll('#final ul.warnings li').length === {said}"), Duration::from_secs(30));
    b.shot("5-saved");
    // In the history.
    b.eval(&click("nav button[data-tab=history]"));
    b.until(&format!("!!document.querySelector('#history tr[data-id=\"{hid}\"]')"), Duration::from_secs(30));
    b.shot("6-history");
    // Its job saved as a file, and run from the command line to the same configuration.
    b.eval(&click("nav button[data-tab=job]"));
    b.until("document.getElementById('toml').value.includes('[[worker]]')", Duration::from_secs(30));
    b.shot("7-job");
    b.eval(&click("#job-save"));
    let saved = downloads.join("job.toml");
    let until = Instant::now() + Duration::from_secs(30);
    while !saved.exists() {
        assert!(Instant::now() < until, "the job file was not saved");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, ui_doc) = wb.call("GET", &format!("/api/history/{hid}"), None);
    let out = wb.dir.join("cli.json");
    ok(&["run", saved.to_str().unwrap(), "--time", "1s", "--json", out.to_str().unwrap(), "--no-history", "-q"]);
    let cli: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(cli["config"]["worker"], ui_doc["config"]["worker"]);
    assert_eq!(cli["config"]["spec"], ui_doc["config"]["spec"]);
    for doc in [&cli, &ui_doc] {
        assert_eq!(doc["config"]["test"]["completion_batch"], 2);
        assert_eq!(doc["config"]["test"]["io_timeout"], "45s");
    }
    let workers = cli["config"]["worker"].as_array().unwrap();
    assert_eq!(workers.len(), 2);
    assert_eq!((&workers[0]["stroke"], &workers[0]["cpus"]), (&json!(50.0), &json!([0, 1])), "{workers:?}");
    assert!(workers.iter().all(|w| w["outstanding"] == 8 && w["targets"] == json!(["null"])), "{workers:?}");
}

/// JavaScript that drags the element `from` onto `to` (selectors) as a user's mouse does:
/// dragstart on the one, dragover and drop on the other, with one DataTransfer.
fn drag(from: &str, to: &str) -> String {
    format!(
        "(() => {{ const dt = new DataTransfer(); const a = document.querySelector({from:?}), b = document.querySelector({to:?}); \
         const ev = (t) => new DragEvent(t, {{ dataTransfer: dt, bubbles: true, cancelable: true }}); \
         a.dispatchEvent(ev('dragstart')); const over = !b.dispatchEvent(ev('dragover')); b.dispatchEvent(ev('drop')); \
         a.dispatchEvent(ev('dragend')); return over; }})()"
    )
}

#[test]
fn workers_get_targets_and_specifications_by_dragging() {
    let wb = Workbench::start("ui-drag");
    let file = wb.dir.join("drag.tst");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-drag"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    b.eval(&click("#add-worker"));
    // A file offered as a target (in the list, ticked for no worker), then dragged onto
    // worker 1; the null target dragged onto the manager goes to every worker.
    b.eval(&type_into("other-target", file.to_str().unwrap()));
    b.eval(&click("#add-target"));
    b.until(
        &format!("!!document.querySelector('#targets input[data-path=\"{}\"]')", file.display()),
        Duration::from_secs(30),
    );
    b.eval("(() => { job.worker[0].targets = []; job.worker[1].targets = []; drawWorker(); return true; })()");
    let row = |path: &str| format!("#targets tr:has(input[data-path=\"{path}\"])");
    assert_eq!(
        b.eval(&drag(&row(file.to_str().unwrap()), "#tree .worker:nth-of-type(2)")),
        json!(true),
        "a worker takes a target"
    );
    assert_eq!(b.eval(&drag(&row("null"), "#tree .manager")), json!(true));
    // Specifications: onto the test's list, and onto worker 2 (its own).
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval("(() => { job.test.run = []; drawSpecs(); return true; })()");
    assert_eq!(b.eval(&drag("#spec-list div[data-name='web-server']", "#run-list")), json!(true));
    assert_eq!(b.eval(&drag("#spec-list div[data-name='oltp-8k']", "#spec-workers div:nth-child(2)")), json!(true));
    // A specification is not a target: the tree refuses it.
    assert_eq!(b.eval(&drag("#spec-list div[data-name='oltp-8k']", "#tree .manager")), json!(false));
    let job = b.eval("JSON.stringify(job)");
    let job: Value = serde_json::from_str(job.as_str().unwrap()).unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(job["worker"][0]["targets"], json!([f, "null"]), "{job}");
    assert_eq!(job["worker"][1]["targets"], json!(["null"]), "{job}");
    assert_eq!(job["test"]["run"], json!(["web-server"]), "{job}");
    assert_eq!(job["worker"][1]["spec"], "oltp-8k", "{job}");
    assert!(job["worker"][0].get("spec").is_none(), "{job}");
}

/// Under mpirun every rank is a manager the page shows with its targets, and a run of the page
/// is every rank's: a worker on rank 1 runs there, a stop stops every rank and keeps what was
/// measured, and the workbench goes on.
#[cfg(feature = "mpi")]
#[test]
fn under_mpirun_every_rank_is_a_manager() {
    let wb = Workbench::start_by("ui-mpi", Some(2));
    let (code, host) = wb.call("GET", "/api/host", None);
    assert_eq!(code, 200, "{host}");
    let ranks: Vec<u64> = host["managers"].as_array().unwrap().iter().map(|m| m["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [0, 1], "{host}");
    let (code, targets) = wb.call("GET", "/api/targets?rank=1", None);
    assert_eq!(code, 200, "{targets}");
    assert!(targets.as_array().unwrap().iter().any(|t| t["path"] == "null"), "{targets}");
    // Each rank listed its devices in turn: none saw another rank's momentary open as a user.
    let ranks: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("status")).ok())
        .filter(|st| st.lines().any(|l| l.split_whitespace().eq(["PPid:", &wb.child.id().to_string()])))
        .filter_map(|st| st.lines().find_map(|l| l.strip_prefix("Pid:")).map(|p| format!("process {} ", p.trim())))
        .collect();
    assert_eq!(ranks.len(), 2, "mpirun's two ranks");
    assert!(!targets.to_string().contains(&ranks[0]) && !targets.to_string().contains(&ranks[1]), "{targets}");
    let (code, none) = wb.call("GET", "/api/targets?rank=2", None);
    assert_eq!((code, none.to_string().contains("no manager 2")), (400, true), "{none}");
    let job = |time: &str, ranks: &str| {
        format!(
            "[test]\nramp = \"0s\"\ntime = \"{time}\"\ninterval = \"200ms\"\nrun = [\"oltp-8k\"]\n\
             [[worker]]\nranks = [{ranks}]\ntargets = [\"null\"]\n"
        )
    };
    let start = |job: String| {
        let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
        assert_eq!(code, 202, "{started}");
        started["id"].as_u64().unwrap()
    };
    // A worker on rank 1 only: the page's run is every rank's, saved as one document.
    let ended = wb.ended(start(job("1s", "1")), Duration::from_secs(60));
    assert_eq!(ended["exit_status"], 0, "{ended}");
    assert!(ended["seq"].as_u64().unwrap() > 0, "its live lines reached the page: {ended}");
    let (_, doc) = wb.call("GET", &format!("/api/history/{}", ended["history_id"]), None);
    let workers = doc["results"][0]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{workers:?}");
    assert_eq!(workers[0]["manager"], 1);
    assert!(workers[0]["ios"].as_u64().unwrap() > 0);
    assert_eq!(doc["managers"].as_array().unwrap().len(), 2, "{}", doc["managers"]);
    // Its worker had the host's CPUs, not the one core mpirun bound the rank to.
    assert_eq!(workers[0]["cpus"].as_array().unwrap().len(), online_cpus(), "{workers:?}");
    // Stop: every rank stops, what was measured is kept; the workbench goes on, and runs again.
    let id = start(job("60s", "0, 1"));
    let until = Instant::now() + Duration::from_secs(30);
    while wb.call("GET", &format!("/api/runs/{id}"), None).1["seq"].as_u64().unwrap_or(0) < 2 {
        assert!(Instant::now() < until, "no live line");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, _) = wb.call("POST", &format!("/api/runs/{id}/stop"), None);
    assert_eq!(code, 202);
    let stopped = wb.ended(id, Duration::from_secs(60));
    assert_eq!(stopped["exit_status"], 130, "{stopped}");
    let (_, doc) = wb.call("GET", &format!("/api/history/{}", stopped["history_id"]), None);
    assert_eq!(doc["interrupted"], true);
    let managers: Vec<u64> =
        doc["results"][0]["workers"].as_array().unwrap().iter().map(|w| w["manager"].as_u64().unwrap()).collect();
    assert_eq!(managers, [0, 1]);
    let again = wb.ended(start(job("300ms", "0")), Duration::from_secs(60));
    assert_eq!(again["exit_status"], 0, "{again}");
    // What the command line warns of, the page says too.
    let file = wb.dir.join("buffered.tst");
    let buffered = job("300ms", "0").replace("[test]\n", "[test]\nbuffered = true\nfile_size = \"8M\"\n");
    let warned = wb
        .ended(start(buffered.replace("\"null\"", &format!("{:?}", file.to_str().unwrap()))), Duration::from_secs(60));
    assert_eq!(warned["exit_status"], 0, "{warned}");
    assert!(
        warned["messages"].as_str().unwrap().contains("iogauge: warning: ")
            && warned["messages"].as_str().unwrap().contains("page cache"),
        "{warned}"
    );
    // A job the command line refuses is refused here too, by every rank, and said.
    let refused =
        wb.ended(start(job("1s", "0").replace("\"null\"", "\"/nonexistent/dir/f.tst\"")), Duration::from_secs(60));
    assert_eq!(refused["exit_status"], 2, "{refused}");
    assert!(refused["messages"].as_str().unwrap().contains("/nonexistent/dir"), "{refused}");
    // The page: both managers in the tree, a worker placed on manager 1 by choosing it.
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-mpi"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    assert_eq!(b.eval("document.querySelectorAll('#tree .manager[data-rank]').length"), json!(2));
    b.eval("(() => { const s = document.getElementById('w-manager'); s.value = '1'; s.onchange(); return true; })()");
    assert_eq!(b.eval("JSON.stringify(job.worker[0].ranks)"), json!("[1]"));
    b.shot("9-managers");
    assert_eq!(
        b.eval(
            "document.querySelector('#tree .manager[data-rank=\"1\"]').nextElementSibling.classList.contains('worker')"
        ),
        json!(true)
    );
}

#[test]
fn a_device_holding_ext4_is_written_from_the_page_only_once_its_name_is_typed() {
    let dev = LoopDev::beside_listings(64 << 20);
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F", &dev.dev]).status().unwrap();
    assert!(mkfs.success());
    let wb = Workbench::start("ui-safety");
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-safety"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    let row = format!("#targets input[data-path=\"{}\"]", dev.dev);
    // The Disk Targets tab says what is on it before anything is asked.
    let holds = b.eval(&format!("document.querySelector({row:?}).closest('tr').lastChild.textContent"));
    assert!(holds.as_str().unwrap().contains("ext4"), "{holds}");
    b.eval(&click("#targets input[data-path=\"null\"]"));
    b.eval(&click(&row));
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval("(() => { const l = document.getElementById('spec-list'); l.value = 'random-write-4k'; return true; })()");
    b.eval(&click("#run-list button"));
    b.eval(&click("#spec-add-run"));
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval(&type_into("t-ramp", "0s"));
    b.eval(&type_into("t-time", "1s"));
    let w0 = kernel_ios(dev.name()).2;
    b.eval(&click("#start"));
    b.until("!document.getElementById('refusal').hidden", Duration::from_secs(60));
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 2"));
    let refusal = b.eval(&text("refusal-text"));
    assert!(refusal.as_str().unwrap().contains("ext4"), "{refusal}");
    // Its cure said by the page's own field, not the command line's flag.
    let cure = format!("type {} in Test Setup's 'Allow writing to' (Safety), or in the box below", dev.dev);
    assert!(
        refusal.as_str().unwrap().contains(&cure) && !refusal.as_str().unwrap().contains("--allow-write"),
        "{refusal}"
    );
    b.shot("8-refused");
    // A name that is not the device's allows nothing.
    b.eval(&type_into("refusal-name", "/dev/sda"));
    b.eval(&click("#refusal-allow"));
    assert!(b.eval(&text("error")).as_str().unwrap().contains("exactly"));
    assert_eq!(kernel_ios(dev.name()).2, w0, "nothing was written");
    let blkid = Command::new("blkid").args(["-o", "value", "-s", "TYPE", &dev.dev]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&blkid.stdout).trim(), "ext4");
    // Its name, typed: the test runs and writes.
    b.eval(&type_into("refusal-name", &dev.dev));
    b.eval(&click("#refusal-allow"));
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(60));
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 0"));
    assert!(kernel_ios(dev.name()).2 > w0, "written once allowed");
}

/// Listing the disks reads what the safety checks read but never opens a disk exclusively,
/// as a write's check does for a moment: a `mount` at that instant would fail with EBUSY
/// because a page was drawn. Every open the workbench makes is watched (strace attached).
#[test]
fn listing_the_disks_never_opens_one_exclusively() {
    let dev = LoopDev::beside_listings(16 << 20);
    let wb = Workbench::start("ui-excl");
    let log = wb.dir.join("opens.log");
    let mut strace = Command::new("strace")
        .args(["-f", "-e", "trace=openat,open", "-o", log.to_str().unwrap(), "-p", &wb.child.id().to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // strace says it has attached before it traces anything.
    let mut said = BufReader::new(strace.stderr.take().unwrap()).lines();
    assert!(said.next().unwrap().unwrap().contains("attached"));
    let (code, list) = wb.call("GET", "/api/targets", None);
    // SAFETY: kill with a child's pid and a signal number (strace detaches on SIGINT).
    unsafe { libc::kill(strace.id() as i32, libc::SIGINT) };
    strace.wait().unwrap();
    assert_eq!(code, 200, "{list}");
    let listed = list.to_string();
    assert!(listed.contains(&dev.dev), "{listed}");
    let opens = std::fs::read_to_string(&log).unwrap();
    let of_dev: Vec<&str> = opens.lines().filter(|l| l.contains(&format!("\"{}\"", dev.dev))).collect();
    assert!(!of_dev.is_empty(), "the device was inspected: {opens}");
    assert!(of_dev.iter().all(|l| !l.contains("O_EXCL")), "{of_dev:?}");
}

/// A page listing the disks while a test checks one of them: neither takes the other for a
/// user of the disk. (Each probe saw the other's open descriptor and, to tell a user from a
/// glance, looked again for 300 ms while holding its own: each then saw the other at every
/// look, and the run was refused as "open in process N (iogauge)".)
#[test]
fn a_page_listing_the_disks_never_makes_a_run_refused() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    let dev = LoopDev::beside_listings(16 << 20);
    let wb = Workbench::start("ui-probes");
    let (stop, lists) = (AtomicBool::new(false), AtomicUsize::new(0));
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(Relaxed) {
                let (code, list) = wb.call("GET", "/api/targets", None);
                assert_eq!(code, 200, "{list}");
                lists.fetch_add(1, Relaxed);
            }
        });
        // Runs one after another until the page has listed the disks 8 times, 8 runs at least.
        let run = ["run", "--target", &dev.dev, "--spec", "random-write-4k", "--ios", "2000", "-q", "--no-history"];
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut runs = 0;
        while (runs < 8 || lists.load(Relaxed) < 8) && Instant::now() < deadline {
            let out = iogauge_in(&wb.dir, &run);
            if !out.status.success() {
                stop.store(true, Relaxed);
                panic!("run {}: {}", runs + 1, String::from_utf8_lossy(&out.stderr));
            }
            runs += 1;
        }
        stop.store(true, Relaxed);
        assert!(lists.load(Relaxed) >= 8, "the page listed the disks {} times in 120 s", lists.load(Relaxed));
    });
}

#[test]
fn a_seeds_study_is_set_up_from_the_page_without_a_job_file() {
    let wb = Workbench::start("ui-study");
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-study"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval("(() => { const l = document.getElementById('study-list'); l.value = 'seed001-limit'; l.onchange(); return true; })()");
    assert!(b.eval(&text("study-about")).as_str().unwrap().contains("20 ms"));
    b.eval(&click("#study-use"));
    b.until(&format!("{}.includes('seed001-limit set up')", text("status")), Duration::from_secs(30));
    b.eval(&click("nav button[data-tab=job]"));
    b.until("document.getElementById('toml').value.includes('[study.limit]')", Duration::from_secs(30));
    let toml = b.eval("document.getElementById('toml').value");
    for spec in ["oltp-4k", "oltp-64k", "streaming-read-64k", "file-server", "web-server"] {
        assert!(toml.as_str().unwrap().contains(spec), "{spec} in {toml}");
    }
    // The job it shows is one `iogauge study` runs: it reads, and its points resolve.
    let file = wb.dir.join("seed001.toml");
    std::fs::write(&file, toml.as_str().unwrap()).unwrap();
    ok(&["convert", file.to_str().unwrap()]);
    // And it runs from the page to its end: every specification's search on the worker's
    // target (null: 13 points each, up to 4096 outstanding), short points set in Test Setup.
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval(&type_into("t-ramp", "0s"));
    b.eval(&type_into("t-time", "200ms"));
    b.eval(&click("#start"));
    b.until(&format!("{}.includes('point')", text("r-study")), Duration::from_secs(60));
    b.until("document.getElementById('status').dataset.state === 'ended'", Duration::from_secs(300));
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 0"), "{}", b.eval(&text("messages")));
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(30));
    let final_text = b.eval(&text("final"));
    let hid: i64 = final_text.as_str().unwrap().split_whitespace().nth(4).unwrap().parse().unwrap();
    let (_, doc) = wb.call("GET", &format!("/api/history/{hid}"), None);
    let searches = doc["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 9, "one search per specification of seed 001");
    assert!(searches.iter().all(|s| s["answer"].as_str().unwrap().contains("IOPS")), "{searches:?}");
    assert_eq!(doc["config"]["test"]["time"], "200ms");
}

/// A target typed in the page with its CHAP password in the URL (issue 82, case 8): the page
/// and every answer name it without the password, a wrong one is refused in a line that holds
/// neither, and the run started from the page logs in with it, writing the LUN's file. A job
/// holding the password, loaded or posted by a script, is answered without it too
/// (`GET /api/runs/ID` showed the job as posted).
#[test]
fn a_typed_targets_password_logs_in_and_is_answered_nowhere() {
    let dir = scratch("ui-secrets-lun");
    let file = dir.join("lun.img");
    std::fs::File::create(&file).unwrap().set_len(8 << 20).unwrap();
    let target = crate::iscsi::Tgtd::start();
    target.lun(1, file.to_str().unwrap(), false);
    let (password, core) = crate::secrets::password();
    target.chap("alice", &password);
    let url = target.url(1).replace("iscsi://", &format!("iscsi://alice%{password}@"));
    let shown = target.url(1).replace("iscsi://", "iscsi://alice@");
    let wb = Workbench::start("ui-secrets");
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-secrets"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    // A wrong password: refused, the page saying why without either password.
    b.eval(&type_into("other-target", &url.replace(&core, "zzWrong9")));
    b.eval(&click("#add-target"));
    b.until(&format!("{}.includes('Authentication failure')", text("error")), Duration::from_secs(30));
    let said = b.eval(&text("error")).to_string();
    assert!(!said.contains("zzWrong9") && !said.contains(&core), "{said}");
    // The right one: the worker's target is named without it, and the run logs in with it.
    b.eval(&type_into("other-target", &url));
    b.eval(&click("#add-target"));
    // Added once its row is drawn (the refusal above named it already), then ticked.
    let added = format!("document.querySelector('#targets input[data-path=\"{shown}\"]')");
    b.until(&format!("{added} !== null"), Duration::from_secs(30));
    assert_eq!(b.eval(&format!("(() => {{ {added}.click(); return {added}.checked; }})()")), json!(true));
    b.eval(&click("#targets input[data-path=\"null\"]"));
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval(
        "(() => { const l = document.getElementById('spec-list'); l.value = 'streaming-write-4k'; return true; })()",
    );
    b.eval(&click("#run-list button"));
    b.eval(&click("#spec-add-run"));
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval(&type_into("t-ios", "2048"));
    b.eval(&click("#t-verify"));
    b.eval(&click("#start"));
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(60));
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 0"), "{}", b.eval(&text("messages")));
    let hid: i64 = b.eval(&text("final")).as_str().unwrap().split_whitespace().nth(4).unwrap().parse().unwrap();
    let (_, doc) = wb.call("GET", &format!("/api/history/{hid}"), None);
    assert_eq!(doc["target_info"][0]["path"], shown.as_str(), "{}", doc["config"]);
    assert_eq!(num(&doc["results"][0]["totals"], "write_ios"), 2048.0, "{}", doc["config"]);
    // One sequential pass of verified writes landed in the LUN's file: logged in.
    common::assert_stamped_in_order(&std::fs::read(&file).unwrap());
    let page = b.eval("document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join(' ')");
    assert!(page.as_str().unwrap().contains(&shown), "the page names the target");
    // A job holding the password, loaded as a file and posted by a script.
    let job =
        format!("[test]\nios = 100\nrun = [\"random-read-4k\"]\n[[worker]]\noutstanding = 2\ntargets = [\"{url}\"]\n");
    let mut answers = vec![page];
    answers.push(wb.call("POST", "/api/job/read", Some(&json!({ "name": "j.toml", "text": job }))).1);
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
    assert_eq!(code, 202, "{started}");
    let run = wb.ended(started["id"].as_u64().unwrap(), Duration::from_secs(60));
    assert_eq!(run["exit_status"], 0, "{run}");
    assert!(run["job"].as_str().unwrap().contains(&shown), "{run}");
    answers.push(run.clone());
    let (_, list) = wb.call("GET", "/api/history", None);
    for entry in list.as_array().unwrap() {
        let id = entry["id"].as_i64().unwrap();
        answers.push(wb.call("GET", &format!("/api/history/{id}"), None).1);
        answers.push(wb.call("GET", &format!("/api/history/{id}/job"), None).1);
    }
    answers.push(list);
    let answers = Value::Array(answers).to_string();
    assert!(!answers.contains(&core), "the password is in an answer: {answers}");
    let files = crate::secrets::files_holding(&wb.dir, &core);
    assert!(files.is_empty(), "the password is in {files:?}");
}

/// Targets being inspected hold up none of the workbench's other calls (issue 82: four
/// inspections of a server that never answers held every thread that answers, Stop's call
/// too, for io_timeout, 30 s). Two calls that read what their request names (inspections,
/// jobs, spec files) are in flight at most; more are refused at once, saying why, and a run
/// is stopped while the two wait.
#[test]
fn inspections_of_a_silent_server_hold_up_no_other_call() {
    // Takes connections (the kernel does, for the backlog) and never says a word.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ask = json!({ "path": format!("nbd://{}/", silent.local_addr().unwrap()) });
    let wb = Workbench::start("ui-inspections");
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": NULL_JOB })));
    assert_eq!(code, 202, "{started}");
    let id = started["id"].as_u64().unwrap();
    let token = [format!("Authorization: Bearer {}", wb.token)];
    let mut asked: Vec<Child> = (0..4)
        .map(|_| {
            wb.curl("POST", "/api/targets/inspect", Some(&ask), &token, 60).stdout(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    // Two answered at once, refused; two still waiting for the server.
    let until = Instant::now() + Duration::from_secs(20);
    let mut refused = Vec::new();
    while refused.len() < 2 {
        assert!(Instant::now() < until, "no inspection was refused: every one waits for the server");
        if let Some(i) = asked.iter_mut().position(|c| c.try_wait().unwrap().is_some()) {
            refused.push(answer(&asked.remove(i).wait_with_output().unwrap().stdout));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for (code, e) in &refused {
        assert!(*code == 503 && e["error"].as_str().unwrap().contains("reading files or targets"), "{code} {e}");
    }
    // Meanwhile the run is stopped, and ends as a stopped run does.
    assert_eq!(wb.call("POST", &format!("/api/runs/{id}/stop"), None).0, 202);
    assert_eq!(wb.ended(id, Duration::from_secs(60))["exit_status"], 130);
    for c in &mut asked {
        assert!(c.try_wait().unwrap().is_none(), "an inspection of the silent server ended before its io_timeout");
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// A job started from the page names its files relative to the workbench's working
/// directory, where the workbench's own checks found them (issue 82: the run, reading its job
/// from /dev/stdin, looked for them under /dev). Exact on the null target: every I/O of the
/// trace replayed.
#[test]
fn a_jobs_relative_paths_are_the_workbenchs_working_directorys() {
    let wb = Workbench::start("ui-relative");
    let mut trace = String::from("fio version 3 iolog\n0 f add\n0 f open\n");
    for i in 0..100u64 {
        trace += &format!("{} f read {} 4096\n", i * 200, i * 4096);
    }
    std::fs::write(wb.dir.join("t.iolog"), trace).unwrap();
    let job = "[[worker]]\ntargets = [\"null\"]\nreplay = { trace = \"t.iolog\" }\n";
    let (code, started) = wb.call("POST", "/api/runs", Some(&json!({ "job": job })));
    assert_eq!(code, 202, "{started}");
    let end = wb.ended(started["id"].as_u64().unwrap(), Duration::from_secs(60));
    assert_eq!(end["exit_status"], 0, "{end}");
    let (_, doc) = wb.call("GET", &format!("/api/history/{}", end["history_id"]), None);
    assert_eq!(num(&doc["results"][0]["totals"], "read_ios"), 100.0, "{}", doc["results"][0]["totals"]);
    let trace = doc["config"]["worker"][0]["replay"]["trace"].as_str().unwrap();
    assert_eq!(Path::new(trace), wb.dir.join("t.iolog").canonicalize().unwrap());
}

/// Sets the file input `selector` to `path` as a user choosing it in the dialog does (its
/// change event fires).
fn choose_file(b: &mut Browser, selector: &str, path: &Path) {
    let doc = b.send("DOM.getDocument", json!({}));
    let node = b.send("DOM.querySelector", json!({ "nodeId": doc["root"]["nodeId"], "selector": selector }));
    b.send("DOM.setFileInputFiles", json!({ "nodeId": node["nodeId"], "files": [path] }));
}

/// The job being built on the page.
fn page_job(b: &mut Browser) -> Value {
    serde_json::from_str(b.eval("JSON.stringify(job)").as_str().unwrap()).unwrap()
}

/// A file in `dir` once the browser has saved it there (a download).
fn downloaded(dir: &Path, name: &str) -> Vec<u8> {
    let (file, until) = (dir.join(name), Instant::now() + Duration::from_secs(30));
    while !file.exists() {
        assert!(Instant::now() < until, "{name} was not downloaded");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    std::fs::read(file).unwrap()
}

/// What an Iometer user does in the first hour (issue 84's tour), in order, asserting what the
/// page shows: two workers, a typed target offered but not ticked, an edited built-in kept
/// under a name of its own, outstanding I/Os cycled 1 to 4, the live chart, each point's
/// result labelled by its value, Iometer's CSV downloaded, a worker without a target refused
/// with the Results Display cleared, the test found intact after a reload, and a Windows
/// `.icf` loaded by giving its target a Linux path.
#[test]
fn an_iometer_users_first_hour() {
    let wb = Workbench::start("ui-hour");
    let downloads = wb.dir.join("downloads");
    std::fs::create_dir(&downloads).unwrap();
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-hour"), &downloads);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    topology_says_only_what_holds(&mut b, &wb.dir);
    bad_fields_are_refused_by_their_labels(&mut b, &wb);
    build_two_workers(&mut b, &wb.dir);
    let hid = cycle_outstanding(&mut b);
    // Iometer's results file, downloaded from the Results Display: `iogauge export`'s.
    b.eval(&click("#final a[href*='format=iometer-csv']"));
    let csv = downloaded(&downloads, &format!("iogauge-{hid}-iometer.csv"));
    let db = wb.dir.join("history.sqlite");
    let cli = ok(&["export", &hid.to_string(), "--format", "iometer-csv", "--db", db.to_str().unwrap()]).stdout;
    assert_eq!(csv, cli, "the page's download is iogauge export's file");
    assert!(String::from_utf8_lossy(&csv).contains("'Target Type,Target Name,Access Specification Name"));
    // Read back as Iometer's results file, as `compare` and `report` read one.
    let file = downloads.join(format!("iogauge-{hid}-iometer.csv"));
    ok(&["report", file.to_str().unwrap(), "-o", wb.dir.join("iometer.html").to_str().unwrap()]);
    // In the history, with its downloads.
    b.eval(&click("nav button[data-tab=history]"));
    let row = format!("#history tr[data-id=\"{hid}\"]");
    b.until(&format!("!!document.querySelector('{row} a[href*=\"format=csv\"]')"), Duration::from_secs(30));
    b.eval(&click("#h-compare"));
    b.until(&format!("{}.includes('oltp-8k-custom')", text("h-compared")), Duration::from_secs(30));
    b.shot("6-history");
    refused_without_a_target(&mut b);
    assert!(!wb.dir.join("iogauge.tst").exists(), "a refused worker made no test file in the workbench's directory");
    // Ticked again, started, watched and stopped: what was measured is kept.
    b.eval(&click("#start"));
    b.until(&format!("{}.includes('recording')", text("r-where")), Duration::from_secs(60));
    b.eval(&click("#stop"));
    b.until("document.getElementById('status').dataset.state === 'ended'", Duration::from_secs(60));
    assert!(b.eval(&text("status")).as_str().unwrap().contains("exit 130"), "{}", b.eval(&text("messages")));
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(30));
    // The header's number is the history id the result was saved under (the refused start
    // took none), the live line no longer says it records, the saved block says it stopped early.
    let stopped: i64 = b.eval(&text("final")).as_str().unwrap().split_whitespace().nth(4).unwrap().parse().unwrap();
    assert_eq!(stopped, hid + 1, "the history's next id");
    assert_eq!(b.eval(&text("status")), json!(format!("stopped early, saved as history id {stopped} (exit 130)")));
    let line = b.eval(&text("r-where"));
    assert!(
        line.as_str().unwrap().contains(": stopped early at ") && !line.as_str().unwrap().contains("recording"),
        "{line}"
    );
    b.until("!!document.querySelector('#final p.stopped')", Duration::from_secs(30));
    assert!(
        b.eval("document.querySelector('#final p.stopped').textContent").as_str().unwrap().starts_with("Stopped early")
    );
    // Reloaded (F5): the test is as it was, its custom specification too.
    b.send("Page.reload", json!({}));
    std::thread::sleep(Duration::from_millis(500));
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    let job = page_job(&mut b);
    assert_eq!(job["worker"][1]["name"], "loop side", "{job}");
    assert_eq!(job["spec"][0]["name"], "oltp-8k-custom", "{job}");
    assert_eq!(job["study"]["outstanding"]["end"], 4, "{job}");
    assert_eq!(b.eval("document.getElementById('c-kind').value"), json!("outstanding"));
    load_a_windows_icf(&mut b, &wb.dir);
}

/// What the Topology tab shows holds: no hidden element shows (a lone host's Manager chooser
/// did: a label's display overrode `hidden`), and a target refused leaves no line saying the
/// one before it was added beside its error.
fn topology_says_only_what_holds(b: &mut Browser, dir: &Path) {
    let shown = "[...document.querySelectorAll('[hidden]')].filter((e) => getComputedStyle(e).display !== 'none')\
                 .map((e) => e.id)";
    assert_eq!(b.eval(shown), json!([]));
    assert_eq!(b.eval("document.getElementById('w-manager-label').offsetParent"), Value::Null);
    b.eval(&type_into("other-target", dir.join("first.tst").to_str().unwrap()));
    b.eval(&click("#add-target"));
    b.until(&format!("{}.includes('added to the list')", text("added-target")), Duration::from_secs(30));
    b.eval(&type_into("other-target", "/nonexistent/dir/file.tst"));
    b.eval(&click("#add-target"));
    b.until(&format!("{}.includes('does not exist')", text("error")), Duration::from_secs(30));
    assert_eq!(b.eval(&text("added-target")), json!(""), "no line says the earlier target was added");
}

/// Start pressed with a field that holds what it cannot: refused in one line, `said`, by the
/// field's label; nothing started, Start enabled again.
fn refused_as(b: &mut Browser, wb: &Workbench, said: &str) {
    b.eval(&click("#start"));
    b.until(&format!("{} === {said:?}", text("error")), Duration::from_secs(30));
    assert_eq!(b.eval(&text("status")), json!("refused: nothing was started"));
    assert_eq!(b.eval("document.getElementById('start').disabled"), json!(false));
    assert_eq!(wb.call("GET", "/api/runs/current", None).0, 404, "nothing was started");
}

/// Every field typed wrong is refused on the page, by its label, before anything is sent (the
/// server's JSON reader named neither: `invalid type: string "abc", expected u32 at line 1
/// column 80`, `did not match any variant of untagged enum Steps`; outstanding I/Os and runs of
/// each point became 1 and the run started), and the field keeps what was typed.
fn bad_fields_are_refused_by_their_labels(b: &mut Browser, wb: &Workbench) {
    let whole = |label: &str, t: &str| format!("{label}: '{t}' is not a whole number of 1 or more");
    let outstanding = "worker \"worker 1\"'s Outstanding I/Os per target";
    for t in ["abc", "-1", "0"] {
        b.eval(&type_into("w-outstanding", t));
        refused_as(b, wb, &whole(outstanding, t));
        assert_eq!(b.eval("document.getElementById('w-outstanding').value"), json!(t), "kept as typed");
    }
    b.eval(&type_into("w-outstanding", ""));
    refused_as(b, wb, &format!("{outstanding}: empty: give a whole number of 1 or more"));
    b.eval(&type_into("w-outstanding", "1"));
    b.eval(&click("nav button[data-tab=setup]"));
    b.eval(&type_into("c-repeat", "0"));
    refused_as(b, wb, &whole("Test Setup's Runs of each point", "0"));
    b.eval(&type_into("c-repeat", "1"));
    let cycling = "Test Setup's cycling, ";
    for (id, v) in [("c-kind", "outstanding"), ("c-mode", "step"), ("c-start", "-1")] {
        b.eval(&type_into(id, v));
    }
    refused_as(b, wb, &whole(&format!("{cycling}from"), "-1"));
    b.eval(&type_into("c-start", "1"));
    b.eval(&type_into("c-end", "abc"));
    refused_as(b, wb, &whole(&format!("{cycling}to"), "abc"));
    b.eval(&type_into("c-end", ""));
    refused_as(b, wb, &format!("{cycling}to: empty: give a whole number of 1 or more"));
    b.eval(&type_into("c-end", "4"));
    b.eval(&type_into("c-step", "-2"));
    refused_as(b, wb, &whole(&format!("{cycling}step"), "-2"));
    // Exponential: the page's "step" is the job's base.
    b.eval(&type_into("c-mode", "base"));
    b.eval(&type_into("c-step", "1"));
    refused_as(b, wb, &format!("{cycling}step: '1' is not a number above 1"));
    b.eval(&type_into("c-step", "2"));
    b.eval(&type_into("c-kind", ""));
    bad_spec_fields_are_refused(b);
}

/// A new specification's fields typed wrong: Keep refuses each by the editor's label, keeping
/// nothing (it answered serde's words, and kept a specification named "").
fn bad_spec_fields_are_refused(b: &mut Browser) {
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval(&click("#spec-new"));
    let set = |key: &str, v: &str| {
        format!(
            "(() => {{ const i = document.querySelector('#lines input[data-key={key}]'); i.value = {v:?}; \
             i.dispatchEvent(new Event('input')); return true; }})()"
        )
    };
    let percent = |label: &str, t: &str| format!("Spec line 1, {label}: '{t}' is not a whole number from 0 to 100");
    for (key, v, said) in [
        ("share", "abc", percent("% of access", "abc")),
        ("share", "-1", percent("% of access", "-1")),
        ("read", "101", percent("% read", "101")),
        ("random", "", "Spec line 1, % random: empty: give a whole number from 0 to 100".to_string()),
        ("delay_ms", "x", "Spec line 1, delay ms: 'x' is not a whole number of 0 or more".into()),
        ("burst", "0", "Spec line 1, burst: '0' is not a whole number of 1 or more".into()),
        ("align", "4q", "Spec line 1, align: '4q' is not a size such as 4096 or 8k".into()),
        ("size", "", "Spec line 1, size: empty: give a size such as 4096 or 8k".into()),
    ] {
        b.eval(&set("share", "100"));
        b.eval(&set("read", "100"));
        b.eval(&set("random", "100"));
        for k in ["delay_ms", "burst", "align"] {
            b.eval(&set(k, ""));
        }
        b.eval(&set("size", "4k"));
        b.eval(&set(key, v));
        b.eval(&click("#spec-keep"));
        assert_eq!(b.eval(&text("error")), json!(said));
    }
    b.eval(&set("size", "4k"));
    b.eval(&type_into("s-name", "  "));
    b.eval(&click("#spec-keep"));
    assert_eq!(b.eval(&text("error")), json!("Name: empty: give the specification a name"));
    assert_eq!(page_job(b)["spec"], Value::Null, "nothing kept");
}

/// Two workers, the second renamed (the heading follows), a typed file offered but ticked for
/// no worker, and oltp-8k edited to 50 % reads and kept: under a name of its own, said on the
/// page, in view (the built-in reads 67 %).
fn build_two_workers(b: &mut Browser, dir: &Path) {
    b.eval(&click("#add-worker"));
    b.eval(&type_into("w-name", "loop side"));
    assert_eq!(b.eval(&text("worker-title")), json!("Worker: loop side"));
    let file = dir.join("typed.tst");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    b.eval(&type_into("other-target", file.to_str().unwrap()));
    b.eval(&click("#add-target"));
    let typed = format!("document.querySelector('#targets input[data-path=\"{}\"]')", file.display());
    b.until(&format!("{typed} !== null"), Duration::from_secs(30));
    assert_eq!(b.eval(&format!("{typed}.checked")), json!(false), "offered, not ticked");
    assert_eq!(page_job(b)["worker"][1]["targets"], json!(["null"]));
    b.shot("1-topology");
    b.eval(&click("nav button[data-tab=specs]"));
    b.eval(
        "(() => { const l = document.getElementById('spec-list'); l.value = 'oltp-8k'; l.onchange(); return true; })()",
    );
    b.eval(
        "(() => { const i = document.querySelector('#lines input[data-key=read]'); i.value = '50'; \
         i.dispatchEvent(new Event('input')); return true; })()",
    );
    b.eval(&click("#spec-keep"));
    b.until(&format!("{}.startsWith('Kept as oltp-8k-custom')", text("spec-kept")), Duration::from_secs(30));
    let in_view = "(() => { const r = document.getElementById('spec-kept').getBoundingClientRect(); \
                   return r.top >= 0 && r.bottom <= innerHeight; })()";
    assert_eq!(b.eval(in_view), json!(true), "the confirmation is in view");
    let job = page_job(b);
    assert_eq!(job["spec"].as_array().unwrap().len(), 1, "{job}");
    assert_eq!((&job["spec"][0]["name"], &job["spec"][0]["lines"][0]["read"]), (&json!("oltp-8k-custom"), &json!(50)));
    // Not the built-in's "67 % read": it would misdescribe the copy in the results.
    assert_eq!(job["spec"][0]["description"], "an edited copy of oltp-8k", "{job}");
    b.eval("(() => { job.test.run = ['oltp-8k-custom']; drawSpecs(); return true; })()");
    b.shot("2-specs");
}

/// Outstanding I/Os cycled 1, 2, 4 and started: the live chart has its axes, units, legend,
/// a marker per interval and the ramp-up shaded; the saved result titles each point's block
/// with its value and has a row per worker and target. The history id.
fn cycle_outstanding(b: &mut Browser) -> i64 {
    b.eval(&click("nav button[data-tab=setup]"));
    for (id, v) in [("c-kind", "outstanding"), ("c-start", "1"), ("c-end", "4"), ("c-step", "2"), ("c-mode", "base")] {
        b.eval(&type_into(id, v));
    }
    for (id, v) in [("t-ramp", "1s"), ("t-time", "1s"), ("t-interval", "250ms")] {
        b.eval(&type_into(id, v));
    }
    let engine = b.eval("document.getElementById('t-engine').closest('tr').lastChild.textContent");
    assert!(engine.as_str().unwrap().chars().count() <= 101, "one short line: {engine}");
    b.shot("3-setup");
    b.eval(&click("#start"));
    let chart = "document.getElementById('chart')";
    b.until(
        &format!("{chart}.querySelectorAll('circle').length >= 2 && !!{chart}.querySelector('rect.ramp')"),
        Duration::from_secs(60),
    );
    let ticks = b.eval(&format!("{chart}.querySelectorAll('text.xtick').length")).as_u64().unwrap();
    assert!(ticks >= 3, "{ticks} labels along the time axis");
    // The cycled value said once in the status line (the workload's name and the point said it twice).
    let said = b.eval(&format!("{} + ' ' + {}", text("r-where"), text("r-study")));
    assert_eq!(said.as_str().unwrap().matches("outstanding=").count(), 1, "{said}");
    assert_eq!(said.as_str().unwrap().matches("point ").count(), 1, "{said}");
    let labels = b.eval(&format!("{chart}.textContent"));
    for label in ["I/Os per second", " s", "ramp-up", "oltp-8k-custom"] {
        assert!(labels.as_str().unwrap().contains(label), "{label} in the chart: {labels}");
    }
    assert!(b.eval(&text("parts-title")).as_str().unwrap() == "Per worker and target");
    b.shot("4-results");
    b.until(&format!("{}.includes('Saved as history id')", text("final")), Duration::from_secs(120));
    let hid: i64 = b.eval(&text("final")).as_str().unwrap().split_whitespace().nth(4).unwrap().parse().unwrap();
    assert_eq!(
        b.eval(&text("status")),
        json!(format!("ended, saved as history id {hid} (exit 0)")),
        "{}",
        b.eval(&text("messages"))
    );
    let titles = b.eval("[...document.querySelectorAll('#final tr.block')].map((r) => r.textContent)");
    let want = ["outstanding=1 · oltp-8k-custom", "outstanding=2 · oltp-8k-custom", "outstanding=4 · oltp-8k-custom"];
    assert_eq!(titles, json!(want));
    let parts = b.eval("[...document.querySelectorAll('#final td:nth-child(3)')].map((c) => c.textContent)");
    // A part named as its kind is said once ("worker 1", not "worker worker 1").
    for part in ["all", "worker 1", "worker loop side", "target null"] {
        assert!(parts.as_array().unwrap().contains(&json!(part)), "{part} in {parts}");
    }
    assert_eq!(b.eval("document.querySelector('#final td.point').textContent"), json!("outstanding=1"));
    b.shot("5-saved");
    hid
}

/// The second worker's target unticked: Start is refused, saying which worker, nothing runs,
/// and the Results Display shows nothing of the run before.
fn refused_without_a_target(b: &mut Browser) {
    b.eval(&click("nav button[data-tab=topology]"));
    b.eval(&click("#tree .worker:nth-of-type(3)"));
    b.eval(&click("#targets input[data-path=\"null\"]"));
    assert_eq!(page_job(b)["worker"][1]["targets"], json!([]));
    b.eval(&click("#start"));
    b.until(&format!("{}.includes('has no target')", text("error")), Duration::from_secs(30));
    assert!(b.eval(&text("error")).as_str().unwrap().starts_with("worker \"loop side\" has no target"));
    // The header no longer shows the last run's end as if it were this one's.
    assert_eq!(b.eval(&text("status")), json!("refused: nothing was started"));
    assert_eq!(b.eval(&text("final")), json!("none yet"));
    assert_eq!(b.eval(&text("r-iops")), json!("-"));
    assert_eq!(b.eval("document.getElementById('chart').childElementCount"), json!(0));
    b.eval(&click("#targets input[data-path=\"null\"]"));
}

/// An Iometer configuration saved on Windows, its two workers on two drives, loaded over a
/// changed test: the page asks first, then for the Linux path of each drive (one given alone is
/// kept and the other asked for: the table forgot the one given), and loads it with the paths
/// given; the same file chosen again is read again (the input's change event needs its value reset).
fn load_a_windows_icf(b: &mut Browser, dir: &Path) {
    b.eval(&type_into("w-outstanding", "3"));
    b.eval("(() => { window.asked = []; window.confirm = (m) => { asked.push(m); return asked.length > 1; }; return true; })()");
    b.eval(&click("nav button[data-tab=job]"));
    let icf = dir.join("windows.icf");
    let fixture = std::fs::read_to_string("tests/fixtures/iometer-1.1.icf").unwrap();
    let second = fixture.rfind("PHYSICALDRIVE:1").unwrap();
    std::fs::write(&icf, format!("{}PHYSICALDRIVE:2{}", &fixture[..second], &fixture[second + 15..])).unwrap();
    choose_file(b, "#job-file", &icf);
    b.until("!document.getElementById('map').hidden", Duration::from_secs(30));
    let input = |n: u8| format!("document.querySelector('#map-targets input[data-name=\"PHYSICALDRIVE:{n}\"]')");
    assert_eq!(b.eval(&format!("!!{} && !!{}", input(1), input(2))), json!(true));
    b.eval(&format!("(() => {{ {}.value = 'null'; return true; }})()", input(1)));
    b.eval(&click("#map-load"));
    assert_eq!(b.eval(&text("error")), json!("give a Linux path for every target: PHYSICALDRIVE:2 has none"));
    assert_eq!(b.eval(&format!("{}.value", input(1))), json!("null"), "the path given is kept");
    b.eval(&format!("(() => {{ {}.value = 'null'; return true; }})()", input(2)));
    b.shot("10-icf");
    b.eval(&click("#map-load"));
    b.until("asked.length === 1", Duration::from_secs(30));
    assert!(b.eval("asked[0]").as_str().unwrap().starts_with("Replace the test being built"));
    assert_eq!(page_job(b)["worker"][1]["name"], "loop side", "kept: the user said no");
    assert!(!b.eval("document.getElementById('map').hidden").as_bool().unwrap());
    b.eval(&click("#map-load"));
    b.until("document.getElementById('map').hidden", Duration::from_secs(30));
    let job = page_job(b);
    let workers = job["worker"].as_array().unwrap();
    assert!(workers.iter().all(|w| w["targets"] == json!(["null"])) && workers[1]["name"] != "loop side", "{job}");
    assert!(b.eval("document.getElementById('toml').value").as_str().unwrap().contains("targets = [\"null\"]"));
    b.shot("7-job");
    choose_file(b, "#job-file", &icf);
    b.until("!document.getElementById('map').hidden", Duration::from_secs(30));
}

/// Every disk and partition lsblk lists is in Disk Targets, the ones that cannot be inspected
/// with the reason (the system disk was missing without a word: a failed inspection was
/// skipped). A device attached or detached meanwhile by another test is left out: only those
/// listed before and after the page's call count.
#[test]
fn every_disk_lsblk_lists_is_offered() {
    let wb = Workbench::start("ui-lsblk");
    let lsblk = || -> std::collections::BTreeSet<String> {
        let o = Command::new("lsblk").args(["-lnbo", "KNAME,SIZE"]).output().expect("lsblk runs");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let sized =
            text.lines().filter_map(|l| l.split_once(' ')).filter(|(_, s)| s.trim().parse().unwrap_or(0u64) > 0);
        sized.map(|(n, _)| format!("/dev/{n}")).collect()
    };
    let before = lsblk();
    let (code, offered) = wb.call("GET", "/api/targets", None);
    let listed = before.intersection(&lsblk()).cloned().collect::<Vec<_>>();
    assert_eq!(code, 200, "{offered}");
    let offered = offered.as_array().unwrap();
    for dev in &listed {
        let row = offered.iter().find(|o| o["path"] == dev.as_str());
        let row = row.unwrap_or_else(|| panic!("{dev} is not in Disk Targets: {offered:?}"));
        assert!(row["size_bytes"].as_u64().unwrap() > 0, "{row}");
    }
    assert!(!listed.is_empty(), "lsblk lists a disk");
}

/// Disk Targets are listed again on demand and when the page regains focus: a loop device
/// attached after the page was drawn appears, and one re-attached to a larger image shows its
/// new size (both kept their old rows until the page was reloaded).
#[test]
fn disk_targets_are_listed_again_on_demand_and_on_focus() {
    let wb = Workbench::start("ui-refresh");
    let mut b = Browser::open(&wb.url(), &scratch("ui-chromium-refresh"), &wb.dir);
    b.until("document.body.dataset.ready === '1'", Duration::from_secs(30));
    b.until("document.querySelectorAll('#targets tbody tr').length > 1", Duration::from_secs(30));
    let dev = LoopDev::beside_listings(16 << 20);
    let size = format!(
        "document.querySelector('#targets input[data-path=\"{}\"]')?.closest('tr').cells[2].textContent",
        dev.dev
    );
    assert_eq!(b.eval(&size), Value::Null, "not listed before it was attached");
    b.eval(&click("#targets-refresh"));
    b.until(&format!("{size} === '16 MiB'"), Duration::from_secs(30));
    b.eval(&click(&format!("#targets input[data-path=\"{}\"]", dev.dev)));
    let bigger = wb.dir.join("bigger.img");
    std::fs::File::create(&bigger).unwrap().set_len(32 << 20).unwrap();
    dev.rebind(&bigger);
    b.eval("(() => { window.dispatchEvent(new Event('focus')); return true; })()");
    b.until(&format!("{size} === '32 MiB'"), Duration::from_secs(30));
    // Ticked, then detached: the list says it is gone (it stayed ticked with empty columns), and
    // Start is refused naming it, nothing started.
    let holds = size.replace("cells[2]", "cells[4]");
    dev.detached(|| {
        b.eval(&click("#targets-refresh"));
        b.until(&format!("({holds} || '').startsWith('gone')"), Duration::from_secs(30));
        b.eval(&click("#start"));
        b.until(&format!("{}.includes({:?})", text("error"), dev.dev), Duration::from_secs(30));
    });
    let error = b.eval(&text("error"));
    assert!(error.as_str().unwrap().starts_with(&format!("worker \"worker 1\"'s target {} is", dev.dev)), "{error}");
    assert_eq!(b.eval(&text("status")), json!("refused: nothing was started"));
}
